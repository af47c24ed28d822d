import WalletRuntime
#if canImport(Glibc)
import Glibc
#if os(Linux)
internal import CEpoll
#endif
#elseif canImport(Darwin)
import Darwin
#endif

/// A POSIX socket descriptor shared by the threads that use it, closed only when the
/// last of them lets go.
///
/// Each user (the thread that reads or accepts, the transport's writer, a connect
/// attempt) holds one ownership, taken with ``retain()`` and given back with
/// ``release()``; the descriptor is closed by the release that drops the count to zero,
/// so no thread can ever read, write, poll or shut down a descriptor number that was
/// closed and reused for another socket. ``shutdown()`` wakes blocked users without
/// closing anything.
final class SocketHandle: Sendable {
    private struct State {
        var owners = 1
        var shutDown = false
        var closed = false
    }

    private let fd: Int32
    private let state = LockedBox(State())

    /// Wraps `fd`; the caller holds the first ownership.
    private init(fd: Int32) {
        self.fd = fd
        #if canImport(Darwin)
        var one: Int32 = 1
        setsockopt(fd, SOL_SOCKET, SO_NOSIGPIPE, &one, socklen_t(MemoryLayout<Int32>.size))
        #endif
    }

    /// Takes another ownership (for a thread that will use the descriptor).
    func retain() { state.withLock { $0.owners += 1 } }

    /// Gives an ownership back; the last one closes the descriptor.
    func release() {
        let close = state.withLock { state -> Bool in
            state.owners -= 1
            guard state.owners == 0, !state.closed else { return false }
            state.closed = true
            return true
        }
        if close { _ = sysClose(fd) }
    }

    /// Stops both directions: blocked reads, writes, polls and accepts return. Only the
    /// first call acts; the caller holds an ownership, so the descriptor is still its own.
    func shutdown() {
        state.withLock { state in
            guard !state.shutDown, !state.closed else { return }
            state.shutDown = true
            _ = sysShutdown(fd, Int32(SHUT_RDWR))
        }
    }

    /// Whether the descriptor is closed on `exec` (`FD_CLOEXEC`; for tests).
    var closesOnExec: Bool { fcntl(fd, F_GETFD) & FD_CLOEXEC != 0 }

    /// Whether the descriptor is in non-blocking mode (for tests).
    var isNonBlocking: Bool { fcntl(fd, F_GETFL) & O_NONBLOCK != 0 }

    /// Whether ``shutdown()`` was called.
    var isShutDown: Bool { state.withLock { $0.shutDown } }

    // MARK: Opening

    private static func failure(_ operation: SocketOperation) -> ProximityError {
        .transportFailed(.socket(operation, errno: errno))
    }

    private static func address(host: String, port: UInt16) -> sockaddr_in? {
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = port.bigEndian
        guard inet_pton(AF_INET, host, &address.sin_addr) == 1 else { return nil }
        return address
    }

    /// A new TCP socket in non-blocking mode (a connect started, or a listener), closed
    /// on `exec` where the platform can say so at creation: with Glibc both come with the
    /// `socket` call itself, elsewhere non-blocking mode takes two `fcntl` calls.
    private static func makeNonBlockingSocket() -> Int32 {
        #if canImport(Glibc)
        return socket(AF_INET, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue) | Int32(SOCK_NONBLOCK.rawValue), 0)
        #else
        let fd = socket(AF_INET, SOCK_STREAM, 0)
        guard fd >= 0 else { return fd }
        guard setBlocking(fd, false) else {
            let saved = errno
            _ = sysClose(fd)
            errno = saved
            return -1
        }
        return fd
        #endif
    }

    private static func setNoDelay(_ fd: Int32) {
        var one: Int32 = 1
        setsockopt(fd, Int32(IPPROTO_TCP), TCP_NODELAY, &one, socklen_t(MemoryLayout<Int32>.size))
    }

    /// Connects (blocking) to `host:port`, a numeric IPv4 address.
    static func connect(host: String, port: UInt16) -> Result<SocketHandle, ProximityError> {
        switch startConnect(host: host, port: port) {
        case .connected(let socket): .success(socket)
        case .pending(let socket): socket.finishConnect()
        case .failed(let error): .failure(error)
        }
    }

    /// How a connect started without blocking stands.
    enum ConnectStart {
        /// Connected (the descriptor is back in blocking mode).
        case connected(SocketHandle)
        /// The handshake is under way; ``finishConnect()`` waits for it.
        case pending(SocketHandle)
        case failed(ProximityError)
    }

    /// Starts a connect to `host:port` (a numeric IPv4 address) without blocking, and
    /// finishes it at once when the handshake is already done by then: on loopback the
    /// kernel completes it as the `connect` call returns, so the caller needs no thread
    /// to wait on. Otherwise the connect is left pending.
    static func startConnect(host: String, port: UInt16) -> ConnectStart {
        guard var address = address(host: host, port: port) else { return .failed(.transportFailed(.invalidAddress(host))) }
        let fd = makeNonBlockingSocket()
        guard fd >= 0 else { return .failed(failure(.socket)) }
        let status = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { sysConnect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
        }
        // EINTR: the connect goes on asynchronously, as with EINPROGRESS.
        if status != 0 && errno != EINPROGRESS && errno != EINTR {
            let error = failure(.connect)
            _ = sysClose(fd)
            return .failed(error)
        }
        let socket = SocketHandle(fd: fd)
        if status != 0 {
            var poller = pollfd(fd: fd, events: Int16(POLLOUT), revents: 0)
            guard poll(&poller, 1, 0) > 0 else { return .pending(socket) }
        }
        switch socket.completeConnect() {
        case .success: return .connected(socket)
        case .failure(let error): return .failed(error)
        }
    }

    /// Waits (blocking) for a connect ``startConnect(host:port:)`` left pending. On
    /// failure the descriptor is closed.
    func finishConnect() -> Result<SocketHandle, ProximityError> {
        var poller = pollfd(fd: fd, events: Int16(POLLOUT), revents: 0)
        while poll(&poller, 1, -1) < 0 {
            guard errno == EINTR else {
                let error = Self.failure(.poll)
                release()
                return .failure(error)
            }
        }
        return completeConnect().map { self }
    }

    /// After the descriptor became writable: the connect's outcome (`SO_ERROR`); when
    /// connected, the descriptor goes back to blocking mode for the read loop. On
    /// failure the descriptor is closed.
    private func completeConnect() -> Result<Void, ProximityError> {
        let outcome = connectOutcome()
        if case .failure = outcome { release() }
        return outcome
    }

    /// After the descriptor of a pending connect became writable (or failed): the
    /// connect's outcome (`SO_ERROR`); when connected, the descriptor is back in blocking
    /// mode, with `TCP_NODELAY`. Closes nothing.
    func connectOutcome() -> Result<Void, ProximityError> {
        var code: Int32 = 0
        var length = socklen_t(MemoryLayout<Int32>.size)
        if getsockopt(fd, SOL_SOCKET, SO_ERROR, &code, &length) != 0 { code = errno }
        if code == 0, !Self.setBlocking(fd, true) { code = errno }
        guard code == 0 else { return .failure(.transportFailed(.socket(.connect, errno: code))) }
        Self.setNoDelay(fd)
        return .success(())
    }

    private static func setBlocking(_ fd: Int32, _ blocking: Bool) -> Bool {
        #if canImport(Glibc)
        // The SDK's sockets carry no file status flag but O_NONBLOCK (the access mode is
        // not one F_SETFL changes), so one call sets the mode without reading the flags.
        return fcntl(fd, F_SETFL, blocking ? 0 : O_NONBLOCK) == 0
        #else
        let flags = fcntl(fd, F_GETFL)
        guard flags >= 0 else { return false }
        return fcntl(fd, F_SETFL, blocking ? flags & ~O_NONBLOCK : flags | O_NONBLOCK) == 0
        #endif
    }

    /// Binds `host:port` (port 0: any free one) and listens; returns the bound port.
    static func listen(host: String, port: UInt16, backlog: Int32 = 128) -> Result<(SocketHandle, UInt16), ProximityError> {
        guard var address = address(host: host, port: port) else { return .failure(.transportFailed(.invalidAddress(host))) }
        let fd = makeNonBlockingSocket()
        guard fd >= 0 else { return .failure(failure(.socket)) }
        var one: Int32 = 1
        setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, socklen_t(MemoryLayout<Int32>.size))
        let bound = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
        }
        guard bound == 0, sysListen(fd, backlog) == 0 else {
            let error = failure(.listen)
            _ = sysClose(fd)
            return .failure(error)
        }
        var actual = sockaddr_in()
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        _ = withUnsafeMutablePointer(to: &actual) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(fd, $0, &length) }
        }
        return .success((SocketHandle(fd: fd), UInt16(bigEndian: actual.sin_port)))
    }

    // MARK: Using (the caller holds an ownership)

    /// How a read of an exact count ended: all of it, the stream's end after `received`
    /// of the bytes asked for, or a failure.
    enum ReadOutcome { case done, closed(received: Int), failed(ProximityError) }
    enum AcceptOutcome { case accepted(SocketHandle), idle, stopped, failed(ProximityError) }

    /// Waits up to `pollMilliseconds` for a connection and accepts it. `.idle` when none
    /// came, `.stopped` once the socket was shut down.
    func acceptOnce(pollMilliseconds: Int32) -> AcceptOutcome {
        if isShutDown { return .stopped }
        var poller = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
        let ready = poll(&poller, 1, pollMilliseconds)
        if isShutDown { return .stopped }
        if ready < 0 { return errno == EINTR ? .idle : .failed(Self.failure(.poll)) }
        guard ready > 0 else { return .idle }
        return acceptWithoutBlocking()
    }

    /// Reads exactly `count` (at most `buffer.count`) bytes into the start of `buffer`.
    func readExactly(into buffer: inout [UInt8], count: Int) -> ReadOutcome {
        readExactly(into: &buffer, 0..<count)
    }

    /// Fills `range` (within `buffer`) with the stream's next bytes.
    func readExactly(into buffer: inout [UInt8], _ range: Range<Int>) -> ReadOutcome {
        var offset = range.lowerBound
        while offset < range.upperBound {
            switch receive(into: &buffer, offset..<range.upperBound, waiting: true) {
            case .received(let n): offset += n
            case .closed: return .closed(received: offset - range.lowerBound)
            case .failed(let error): return .failed(error)
            case .wouldBlock: return .failed(Self.failure(.receive))   // not returned when waiting
            }
        }
        return .done
    }

    /// One `recv` into `range` (not empty) of `buffer`, again after an interruption;
    /// without `waiting`, `.wouldBlock` when nothing has arrived. A reset, or an error
    /// after this side's shutdown, reads as the stream's end.
    private func receive(into buffer: inout [UInt8], _ range: Range<Int>, waiting: Bool) -> ReceiveOutcome {
        let flags = waiting ? 0 : Int32(MSG_DONTWAIT)
        while true {
            let n = buffer.withUnsafeMutableBytes { raw in
                let target = UnsafeMutableRawBufferPointer(rebasing: raw[range])
                return recv(fd, target.baseAddress, target.count, flags)
            }
            if n > 0 { return .received(n) }
            if n == 0 { return .closed }
            if errno == EINTR { continue }
            if !waiting, errno == EAGAIN || errno == EWOULDBLOCK { return .wouldBlock }
            if isShutDown || errno == ECONNRESET { return .closed }
            return .failed(Self.failure(.receive))
        }
    }

    /// Writes every byte (after a shutdown: connection closed).
    func writeAll(_ bytes: ArraySlice<UInt8>) -> Result<Void, ProximityError> {
        if isShutDown { return .failure(.connectionClosed) }
        var offset = 0
        while offset < bytes.count {
            let n = bytes.withUnsafeBytes { raw in sysSend(fd, raw.baseAddress.map { $0 + offset }, bytes.count - offset, 0) }
            if n < 0 {
                if errno == EINTR { continue }
                return .failure(sendFailure())
            }
            offset += n
        }
        return .success(())
    }

    /// Writes what the socket's send buffer takes now, without waiting for room: the
    /// count written (zero when the buffer is full), or the failure. Never blocks, so a
    /// caller may hold a lock across it.
    func writeWithoutBlocking(_ bytes: [UInt8]) -> Result<Int, ProximityError> {
        if isShutDown { return .failure(.connectionClosed) }
        var offset = 0
        while offset < bytes.count {
            let n = bytes.withUnsafeBytes { raw in
                sysSend(fd, raw.baseAddress.map { $0 + offset }, bytes.count - offset, Int32(MSG_DONTWAIT))
            }
            if n < 0 {
                if errno == EINTR { continue }
                if errno == EAGAIN || errno == EWOULDBLOCK { break }
                return .failure(sendFailure())
            }
            offset += n
        }
        return .success(offset)
    }

    // MARK: Without waiting (the reactor's thread; the caller holds an ownership)

    /// What a read that does not wait found.
    enum ReceiveOutcome {
        /// This many bytes (at least one).
        case received(Int)
        /// Nothing has arrived yet.
        case wouldBlock
        /// The stream ended (the peer's end, a reset, or this side's shutdown).
        case closed
        case failed(ProximityError)
    }

    /// Reads what has arrived into `buffer` from `offset` (before its end) on, without
    /// waiting. Errors are those of ``readExactly(into:count:)``.
    func receiveWithoutBlocking(into buffer: inout [UInt8], from offset: Int) -> ReceiveOutcome {
        receive(into: &buffer, offset..<buffer.count, waiting: false)
    }

    /// Accepts a waiting connection without waiting (a listening descriptor is made in
    /// non-blocking mode): `.idle` when none waits. The accepted descriptor is in blocking
    /// mode, and on Linux closed on `exec`.
    func acceptWithoutBlocking() -> AcceptOutcome {
        if isShutDown { return .stopped }
        let client = sysAccept(fd)
        if client < 0 {
            if errno == EINTR || errno == EAGAIN || errno == EWOULDBLOCK || errno == ECONNABORTED { return .idle }
            return isShutDown ? .stopped : .failed(Self.failure(.accept))
        }
        #if !os(Linux)
        // BSD sockets inherit the listener's non-blocking mode.
        guard Self.setBlocking(client, true) else {
            let error = Self.failure(.accept)
            _ = sysClose(client)
            return .failed(error)
        }
        #endif
        Self.setNoDelay(client)
        return .accepted(SocketHandle(fd: client))
    }

    #if os(Linux)
    /// Adds the descriptor to the epoll instance `epoll` with `token`, level-triggered,
    /// reporting input and the peer's end, or (`connecting`) the end of a pending
    /// connect: writable, or an error.
    func addWatch(to epoll: Int32, token: UInt64, connecting: Bool) -> Bool {
        var event = epoll_event()
        event.events = connecting ? EPOLLOUT.rawValue : EPOLLIN.rawValue | EPOLLRDHUP.rawValue
        event.data.u64 = token
        return epoll_ctl(epoll, Int32(EPOLL_CTL_ADD), fd, &event) == 0
    }

    /// Takes the descriptor out of `epoll` (before the ownership that watched it is released).
    func removeWatch(from epoll: Int32) {
        var event = epoll_event()
        _ = epoll_ctl(epoll, Int32(EPOLL_CTL_DEL), fd, &event)
    }
    #endif

    private func sendFailure() -> ProximityError {
        errno == EPIPE || errno == ECONNRESET || isShutDown ? .connectionClosed : Self.failure(.send)
    }
}

/// `send(2)` that never raises SIGPIPE (Linux: per call; Darwin: `SO_NOSIGPIPE` at creation).
@inline(__always) private func sysSend(_ fd: Int32, _ buffer: UnsafeRawPointer?, _ count: Int, _ flags: Int32) -> Int {
    #if canImport(Glibc)
    send(fd, buffer, count, flags | Int32(MSG_NOSIGNAL))
    #else
    send(fd, buffer, count, flags)
    #endif
}

// Module-qualified names clash with methods of the same name; these route to libc.
@inline(__always) private func sysConnect(_ fd: Int32, _ address: UnsafePointer<sockaddr>, _ length: socklen_t) -> Int32 {
    connect(fd, address, length)
}
@inline(__always) private func sysClose(_ fd: Int32) -> Int32 { close(fd) }
@inline(__always) private func sysListen(_ fd: Int32, _ backlog: Int32) -> Int32 { listen(fd, backlog) }
/// `accept(2)`; on Linux `accept4`, so that the connection is closed on `exec` as the
/// listener is (and in blocking mode whatever the listener's mode: Linux does not pass it
/// on). Elsewhere ``SocketHandle/acceptWithoutBlocking()`` puts it in blocking mode.
@inline(__always) private func sysAccept(_ fd: Int32) -> Int32 {
    #if os(Linux)
    accept4(fd, nil, nil, Int32(SOCK_CLOEXEC.rawValue))
    #else
    accept(fd, nil, nil)
    #endif
}
@inline(__always) private func sysShutdown(_ fd: Int32, _ how: Int32) -> Int32 { shutdown(fd, how) }
