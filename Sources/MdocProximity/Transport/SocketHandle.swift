import Foundation
import WalletRuntime
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// A POSIX socket descriptor with the few blocking operations the TCP transport
/// needs. Shutting down wakes a blocked reader; only the reader closes the
/// descriptor, so it is never reused while a thread still uses it.
final class SocketHandle: Sendable {
    enum ReadOutcome { case done, closed, failed(ProximityError) }

    private let fd: Int32
    private let state = LockedBox((closed: false, shutdown: false))

    init(fd: Int32) {
        self.fd = fd
        #if canImport(Darwin)
        var one: Int32 = 1
        setsockopt(fd, SOL_SOCKET, SO_NOSIGPIPE, &one, socklen_t(MemoryLayout<Int32>.size))
        #endif
    }

    private static func errorText(_ what: String) -> ProximityError {
        .transportFailed("\(what): \(String(cString: strerror(errno)))")
    }

    private static func address(host: String, port: UInt16) -> sockaddr_in? {
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = port.bigEndian
        guard inet_pton(AF_INET, host, &address.sin_addr) == 1 else { return nil }
        return address
    }

    private static func makeSocket() -> Int32 {
        #if canImport(Glibc)
        return socket(AF_INET, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        #else
        return socket(AF_INET, SOCK_STREAM, 0)
        #endif
    }

    static func connect(host: String, port: UInt16) -> Result<SocketHandle, ProximityError> {
        guard var address = address(host: host, port: port) else { return .failure(.transportFailed("bad IPv4 address \(host)")) }
        let fd = makeSocket()
        guard fd >= 0 else { return .failure(errorText("socket")) }
        let status = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                Glibc_connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
            }
        }
        guard status == 0 else {
            let error = errorText("connect")
            _ = Glibc_close(fd)
            return .failure(error)
        }
        var one: Int32 = 1
        setsockopt(fd, Int32(IPPROTO_TCP), TCP_NODELAY, &one, socklen_t(MemoryLayout<Int32>.size))
        return .success(SocketHandle(fd: fd))
    }

    static func listen(host: String, port: UInt16) -> Result<(SocketHandle, UInt16), ProximityError> {
        guard var address = address(host: host, port: port) else { return .failure(.transportFailed("bad IPv4 address \(host)")) }
        let fd = makeSocket()
        guard fd >= 0 else { return .failure(errorText("socket")) }
        var one: Int32 = 1
        setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, socklen_t(MemoryLayout<Int32>.size))
        let bound = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
        }
        guard bound == 0, Glibc_listen(fd, 128) == 0 else {
            let error = errorText("bind/listen")
            _ = Glibc_close(fd)
            return .failure(error)
        }
        var actual = sockaddr_in()
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        _ = withUnsafeMutablePointer(to: &actual) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(fd, $0, &length) }
        }
        return .success((SocketHandle(fd: fd), UInt16(bigEndian: actual.sin_port)))
    }

    /// Accepts one connection, polling every 50 ms so that a closed listener or
    /// a timeout ends the wait.
    func accept(timeout: Double?) -> Result<SocketHandle, ProximityError> {
        let deadline = timeout.map { Date().addingTimeInterval($0) }
        while true {
            if state.withLock({ $0.closed }) { return .failure(.connectionClosed) }
            if let deadline, Date() >= deadline { return .failure(.timeout(seconds: timeout ?? 0)) }
            var poller = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
            let ready = poll(&poller, 1, 50)
            if ready < 0 && errno != EINTR { return .failure(Self.errorText("poll")) }
            guard ready > 0 else { continue }
            let client = Glibc_accept(fd)
            if client < 0 {
                if errno == EINTR || errno == EAGAIN || errno == ECONNABORTED { continue }
                return .failure(Self.errorText("accept"))
            }
            var one: Int32 = 1
            setsockopt(client, Int32(IPPROTO_TCP), TCP_NODELAY, &one, socklen_t(MemoryLayout<Int32>.size))
            return .success(SocketHandle(fd: client))
        }
    }

    func readExactly(into buffer: inout [UInt8], count: Int) -> ReadOutcome {
        var offset = 0
        while offset < count {
            let n = buffer.withUnsafeMutableBytes { raw in
                recv(fd, raw.baseAddress.map { $0 + offset }, count - offset, 0)
            }
            if n == 0 { return .closed }
            if n < 0 {
                if errno == EINTR { continue }
                if state.withLock({ $0.shutdown }) { return .closed }
                return .failed(Self.errorText("recv"))
            }
            offset += n
        }
        return .done
    }

    func writeAll(_ bytes: [UInt8]) -> Result<Void, ProximityError> {
        if state.withLock({ $0.shutdown }) { return .failure(.connectionClosed) }
        var offset = 0
        while offset < bytes.count {
            let n = bytes.withUnsafeBytes { raw in
                #if canImport(Glibc)
                send(fd, raw.baseAddress.map { $0 + offset }, bytes.count - offset, Int32(MSG_NOSIGNAL))
                #else
                send(fd, raw.baseAddress.map { $0 + offset }, bytes.count - offset, 0)
                #endif
            }
            if n < 0 {
                if errno == EINTR { continue }
                return .failure(errno == EPIPE || errno == ECONNRESET ? .connectionClosed : Self.errorText("send"))
            }
            offset += n
        }
        return .success(())
    }

    /// Stops both directions (wakes a blocked reader).
    func shutdown() {
        let first = state.withLock { state -> Bool in
            defer { state.shutdown = true }
            return !state.shutdown
        }
        if first { _ = Glibc_shutdown(fd, Int32(SHUT_RDWR)) }
    }

    /// For listeners: stop accepting and close the descriptor.
    func markClosed() {
        let first = state.withLock { state -> Bool in
            defer { state.closed = true }
            return !state.closed
        }
        if first { _ = Glibc_close(fd) }
    }

    /// Closes the descriptor (once).
    func closeDescriptor() { markClosed() }
}

// Module-qualified names clash with methods of the same name; these route to libc.
@inline(__always) private func Glibc_connect(_ fd: Int32, _ address: UnsafePointer<sockaddr>, _ length: socklen_t) -> Int32 {
    connect(fd, address, length)
}
@inline(__always) private func Glibc_close(_ fd: Int32) -> Int32 { close(fd) }
@inline(__always) private func Glibc_listen(_ fd: Int32, _ backlog: Int32) -> Int32 { listen(fd, backlog) }
@inline(__always) private func Glibc_accept(_ fd: Int32) -> Int32 { accept(fd, nil, nil) }
@inline(__always) private func Glibc_shutdown(_ fd: Int32, _ how: Int32) -> Int32 { shutdown(fd, how) }
