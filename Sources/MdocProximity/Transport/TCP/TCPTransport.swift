import Foundation
import WalletRuntime

/// Session messages over a TCP socket, each framed by a 4-byte big-endian length.
///
/// **Not an ISO 18013-5 carrier**: the standard defines BLE, NFC and Wi-Fi Aware for
/// device retrieval, and no TCP. This one is the SDK's own, for desktop tools, tests
/// and loopback demos; engagements announce it with a private method type that
/// standard readers ignore, and nothing in the SDK uses it unless asked to.
///
/// Frames are read into a ``Mailbox`` as they arrive, on Linux by the carrier's one
/// ``SocketReactor`` thread (epoll), elsewhere by a read loop on ``BlockingIO``, so no
/// cooperative thread blocks on the socket. A frame is written by the sending task itself when the
/// socket's buffer takes all of it at once (the usual case), and otherwise by a serial
/// queue, which then also takes every later frame until it has caught up, so frames keep
/// their order. The descriptor is shared by the reader and the writer and closed by
/// whichever lets go last (see ``SocketHandle``).
public final class TCPTransport: MdocTransport {
    /// The largest message accepted unless configured otherwise (16 MiB).
    public static let defaultMaxMessageSize = 16 * 1024 * 1024

    private let socket: SocketHandle
    private let inbox: Mailbox<[UInt8]>
    private let writer = DispatchQueue(label: "MdocProximity.TCPTransport.write")
    private let maxMessageSize: Int
    private let writing = LockedBox(WriteState())
    /// The token of the reactor's watch that reads the socket (Linux; internal for tests).
    let watchToken: UInt64?

    /// Whether the transport was closed, and how many frames wait for the writer queue.
    /// A direct write happens under this lock, so a close cannot release the writer's
    /// ownership of the descriptor during it, and only while nothing waits, so it cannot
    /// overtake an earlier frame.
    private struct WriteState {
        var closed = false
        var queued = 0
    }

    /// What a send does after trying the socket directly.
    private enum DirectWrite {
        case done
        case failed(ProximityError)
        case queued(QueuedWrite)
    }

    /// Takes over `socket` (the caller's ownership becomes the writer's). With `watched`
    /// (the default) the reactor reads where there is one; without, a ``BlockingIO`` loop
    /// (tests of that path).
    init(socket: SocketHandle, maxMessageSize: Int, clock: any WalletClock, watched: Bool = true) {
        self.socket = socket
        self.maxMessageSize = maxMessageSize
        self.inbox = Mailbox(clock: clock)
        socket.retain()   // the reader's ownership
        #if os(Linux)
        let partial = LockedBox(PartialFrame())
        if watched, let reactor = SocketReactor.shared, let token = reactor.watch(socket, handler: { [socket, inbox] in
            partial.withLock { TCPTransport.readAvailable(socket: socket, inbox: inbox, maxMessageSize: maxMessageSize, frame: &$0) }
        }) {
            watchToken = token
            return
        }
        #endif
        watchToken = nil
        BlockingIO.shared.run { [socket, inbox] in
            TCPTransport.readLoop(socket: socket, inbox: inbox, maxMessageSize: maxMessageSize)
            socket.release()
        }
    }

    deinit { shutDownAndRelease() }

    /// Connects to `host:port` (an IPv4 address such as `127.0.0.1`), giving up after
    /// `timeout` of `clock`; a connect that completes later is closed at once.
    public static func connect(host: String, port: UInt16, timeout: Duration? = nil,
                               maxMessageSize: Int = defaultMaxMessageSize,
                               clock: any WalletClock = SystemClock()) async throws(ProximityError) -> TCPTransport {
        try await connect(host: host, port: port, timeout: timeout, maxMessageSize: maxMessageSize, clock: clock, dial: nil)
    }

    /// The blocking connect, run on ``BlockingIO`` (tests hold it to reproduce a peer
    /// that never answers).
    typealias Dial = @Sendable (_ host: String, _ port: UInt16) -> Result<SocketHandle, ProximityError>

    /// Connects with `dial`, or (`nil`) with a connect started here, which completes on
    /// the calling task when the handshake is already done (on loopback it is, and the
    /// session starts without a thread switch), and otherwise is waited for by the
    /// ``SocketReactor`` (a ``BlockingIO`` thread where there is none); gives up after
    /// `timeout` of `clock`, and a connect given up is closed at once.
    static func connect(host: String, port: UInt16, timeout: Duration?, maxMessageSize: Int, clock: any WalletClock,
                        dial: Dial?) async throws(ProximityError) -> TCPTransport {
        let wait: @Sendable () -> Result<SocketHandle, ProximityError>
        if let dial {
            wait = { dial(host, port) }
        } else {
            switch SocketHandle.startConnect(host: host, port: port) {
            case .connected(let socket): return TCPTransport(socket: socket, maxMessageSize: maxMessageSize, clock: clock)
            case .failed(let error): throw error
            case .pending(let socket):
                #if os(Linux)
                if let reactor = SocketReactor.shared,
                   let connected = try await awaitConnect(socket, reactor: reactor, timeout: timeout, clock: clock) {
                    return TCPTransport(socket: connected, maxMessageSize: maxMessageSize, clock: clock)
                }
                #endif
                wait = socket.finishConnect
            }
        }
        let outcome = Mailbox<Result<SocketHandle, ProximityError>>(clock: clock)
        BlockingIO.shared.run {
            let result = wait()
            if !outcome.push(result), case .success(let socket) = result { socket.release() }   // abandoned
        }
        let result: Result<SocketHandle, ProximityError>
        do {
            result = try await outcome.next(timeout: timeout)
        } catch {
            for late in outcome.finishDiscarding(error) { if case .success(let socket) = late { socket.release() } }
            throw error
        }
        outcome.finish()
        return TCPTransport(socket: try result.get(), maxMessageSize: maxMessageSize, clock: clock)
    }

    #if os(Linux)
    /// Waits for the pending connect of `socket` (the caller's ownership) on the reactor,
    /// with no thread held: the socket when connected; `nil` when the reactor refused
    /// the watch (the caller then waits on a ``BlockingIO`` thread). On a failure or the
    /// timeout the watch ends and the descriptor is closed, so a connect given up leaves
    /// nothing behind (a thread in `poll` used to wait until the kernel gave up, minutes
    /// for a peer that never answers).
    private static func awaitConnect(_ socket: SocketHandle, reactor: SocketReactor, timeout: Duration?,
                                     clock: any WalletClock) async throws(ProximityError) -> SocketHandle? {
        let outcome = Mailbox<Result<Void, ProximityError>>(clock: clock)
        socket.retain()   // the watch's ownership
        guard let token = reactor.watch(socket, connecting: true, handler: {
            outcome.push(socket.connectOutcome())
            return false   // one report is the outcome: the watch ends
        }) else {
            socket.release()
            return nil
        }
        let result: Result<Void, ProximityError>
        do {
            result = try await outcome.next(timeout: timeout)
        } catch {
            reactor.end(token)
            socket.release()
            throw error
        }
        switch result {
        case .success: return socket
        case .failure(let error):
            socket.release()
            throw error
        }
    }
    #endif

    /// `.tcp`.
    public var transmissionType: TransmissionType { .tcp }

    /// Writes one length-prefixed frame.
    public func send(_ message: [UInt8]) async throws(ProximityError) {
        guard message.count <= maxMessageSize else {
            throw .messageTooLarge(size: message.count, limit: maxMessageSize)
        }
        // The peer ended the stream (the read loop saw its end).
        guard !inbox.isFinished else { throw .connectionClosed }
        let length = UInt32(message.count)
        var frame = [UInt8]()
        frame.reserveCapacity(4 + message.count)
        frame.append(contentsOf: [UInt8(length >> 24), UInt8(length >> 16 & 0xff), UInt8(length >> 8 & 0xff), UInt8(length & 0xff)])
        frame.append(contentsOf: message)
        // Deciding, writing directly and queueing all happen under the lock, so frames
        // reach the queue in the order they took the lock.
        let direct = writing.withLock { state -> DirectWrite in
            guard !state.closed else { return .failed(.connectionClosed) }
            var rest = frame[...]
            if state.queued == 0 {
                switch socket.writeWithoutBlocking(frame) {
                case .failure(let error): return .failed(error)
                case .success(let written) where written == frame.count: return .done
                case .success(let written): rest = frame[written...]
                }
            }
            state.queued += 1
            let outcome = QueuedWrite()
            writer.async { [socket, writing, rest] in
                let result = socket.writeAll(rest)
                writing.withLock { $0.queued -= 1 }
                outcome.deliver(result)
            }
            return .queued(outcome)
        }
        switch direct {
        case .done: return
        case .failed(let error): throw error
        case .queued(let outcome): try await outcome.result().get()
        }
    }

    /// The next frame.
    public func receive(timeout: Duration?) async throws(ProximityError) -> [UInt8] {
        try await inbox.next(timeout: timeout)
    }

    /// Shuts the socket down; the writer lets go of it once its pending writes are done,
    /// the reactor's watch at once (a read loop, where there is no reactor, when it sees
    /// the end).
    public func close() async {
        inbox.finish()
        shutDownAndRelease()
    }

    private func shutDownAndRelease() {
        // nil: closed before; true: frames still wait for the writer queue.
        let writesQueued = writing.withLock { state -> Bool? in
            defer { state.closed = true }
            return state.closed ? nil : state.queued > 0
        }
        guard let writesQueued else { return }
        #if os(Linux)
        // The reader's ownership: ended here, and before the shutdown, whose end of stream
        // would otherwise wake the reactor.
        if let watchToken { SocketReactor.shared?.end(watchToken) }
        #endif
        socket.shutdown()
        // With nothing queued the writer holds no write in flight, and none can start
        // after `closed`: its ownership is released here, without a queue hop.
        if writesQueued { writer.async { [socket] in socket.release() } } else { socket.release() }
    }

    /// The most a frame's body is given before its bytes arrive (64 KiB). A frame that
    /// announces more gets room as they come, doubling up to the announced length, so the
    /// memory a peer makes the reader hold stays within twice what it sent: a 4-byte header
    /// announcing 16 MiB, then silence, costs 64 KiB and not 16 MiB.
    static let initialBodyAllocation = 64 * 1024

    /// The room a body of `length` bytes gets next, once its `current` room (shorter than
    /// `length`) is full: doubled, or `length` when that is nearer. The first room is
    /// `min(length, initialBodyAllocation)`.
    static func nextBodyAllocation(current: Int, length: Int) -> Int {
        min(length, max(2 * current, initialBodyAllocation))
    }

    /// `body` (full, shorter than `length`) grown by ``nextBodyAllocation(current:length:)``.
    private static func grow(_ body: inout [UInt8], toward length: Int) {
        body.append(contentsOf: repeatElement(0, count: nextBodyAllocation(current: body.count, length: length) - body.count))
    }

    /// A frame partly read by ``readAvailable(socket:inbox:maxMessageSize:frame:)``: its
    /// header, then (`inBody`) its body: `length` bytes announced, of which `bodyCount`
    /// have arrived into `body`, allocated once the length is within the limit and grown
    /// as the bytes come (``initialBodyAllocation``).
    private struct PartialFrame {
        var header: [UInt8] = [0, 0, 0, 0]
        var headerCount = 0
        var inBody = false
        var length = 0
        var body: [UInt8] = []
        var bodyCount = 0
    }

    /// The reactor's handler: reads what has arrived into `frame`, delivers each frame
    /// as it completes, and returns `false` once the stream has ended (the same ends,
    /// errors and limit as ``readLoop(socket:inbox:maxMessageSize:)``).
    private static func readAvailable(socket: SocketHandle, inbox: Mailbox<[UInt8]>, maxMessageSize: Int,
                                      frame: inout PartialFrame) -> Bool {
        while true {
            if !frame.inBody {
                let have = frame.headerCount
                switch socket.receiveWithoutBlocking(into: &frame.header, from: have) {
                case .wouldBlock: return true
                case .closed: inbox.finish(); return false
                case .failed(let error): inbox.finish(error); return false
                case .received(let count): frame.headerCount = have + count
                }
                guard frame.headerCount == 4 else { continue }
                switch bodyLength(header: frame.header, limit: maxMessageSize) {
                case .failure(let error):
                    inbox.finish(error)
                    socket.shutdown()
                    return false
                case .success(let length):
                    frame.length = length
                    frame.body = [UInt8](repeating: 0, count: min(length, initialBodyAllocation))
                    frame.inBody = true
                }
            } else if frame.bodyCount < frame.length {
                if frame.bodyCount == frame.body.count { grow(&frame.body, toward: frame.length) }
                let have = frame.bodyCount
                switch socket.receiveWithoutBlocking(into: &frame.body, from: have) {
                case .wouldBlock: return true
                case .closed:
                    inbox.finish(.malformedFrame(.lengthMismatch(declared: frame.length, actual: have)))
                    return false
                case .failed(let error): inbox.finish(error); return false
                case .received(let count): frame.bodyCount = have + count
                }
            }
            if frame.inBody, frame.bodyCount == frame.length {
                let body = frame.body
                frame = PartialFrame()
                guard inbox.push(body) else { return false }
            }
        }
    }

    /// The length a frame's 4-byte big-endian header announces, refused above `limit`
    /// (checked before the body is allocated).
    private static func bodyLength(header: [UInt8], limit: Int) -> Result<Int, ProximityError> {
        let length = header.reduce(0) { $0 << 8 | Int($1) }
        guard length <= limit else { return .failure(.malformedFrame(.declaredLengthTooLarge(declared: length, limit: limit))) }
        return .success(length)
    }

    /// The read loop where no reactor serves (other platforms, or no epoll instance):
    /// blocking reads on a ``BlockingIO`` thread.
    private static func readLoop(socket: SocketHandle, inbox: Mailbox<[UInt8]>, maxMessageSize: Int) {
        var header = [UInt8](repeating: 0, count: 4)
        while true {
            switch socket.readExactly(into: &header, count: 4) {
            case .closed: inbox.finish(); return
            case .failed(let error): inbox.finish(error); return
            case .done: break
            }
            let length: Int
            switch bodyLength(header: header, limit: maxMessageSize) {
            case .failure(let error):
                inbox.finish(error)
                socket.shutdown()
                return
            case .success(let announced): length = announced
            }
            guard let body = readBody(socket: socket, inbox: inbox, length: length) else { return }
            guard inbox.push(body) else { return }
        }
    }

    /// The blocking loop's body of `length` bytes, in room grown as they arrive (see
    /// ``initialBodyAllocation``); nil once the stream has ended, with the inbox finished.
    private static func readBody(socket: SocketHandle, inbox: Mailbox<[UInt8]>, length: Int) -> [UInt8]? {
        var body = [UInt8](repeating: 0, count: min(length, initialBodyAllocation))
        var have = 0
        while have < length {
            if have == body.count { grow(&body, toward: length) }
            switch socket.readExactly(into: &body, have..<body.count) {
            case .done: have = body.count
            case .closed(let received):
                inbox.finish(.malformedFrame(.lengthMismatch(declared: length, actual: have + received)))
                return nil
            case .failed(let error): inbox.finish(error); return nil
            }
        }
        return body
    }
}

/// The outcome of a frame left to the writer queue, handed to the sending task once written.
private final class QueuedWrite: Sendable {
    private struct State {
        var result: Result<Void, ProximityError>?
        var waiter: CheckedContinuation<Result<Void, ProximityError>, Never>?
    }
    private let state = LockedBox(State())

    /// Called once, by the writer queue.
    func deliver(_ result: Result<Void, ProximityError>) {
        let waiter = state.withLock { state -> CheckedContinuation<Result<Void, ProximityError>, Never>? in
            guard let waiter = state.waiter else {
                state.result = result
                return nil
            }
            return waiter
        }
        waiter?.resume(returning: result)
    }

    /// Waits for the write (as a write before it did, not cut short by cancellation).
    func result() async -> Result<Void, ProximityError> {
        await withCheckedContinuation { continuation in
            let ready = state.withLock { state -> Result<Void, ProximityError>? in
                if let result = state.result { return result }
                state.waiter = continuation
                return nil
            }
            if let ready { continuation.resume(returning: ready) }
        }
    }
}

/// Listens on a TCP port of `127.0.0.1` (or another IPv4 address) for the SDK's TCP
/// test carrier (not an ISO 18013-5 carrier; see ``TCPTransport``).
///
/// Connections are accepted as they come for the listener's lifetime (on Linux by the
/// ``SocketReactor``, elsewhere by a loop on ``BlockingIO``) and handed to a
/// ``Mailbox``, so each `accept` owns its timeout; closing shuts the socket down, and
/// the accepting side, which owns the descriptor with the listener, lets go of it last.
public final class TCPListener: MdocTransportListener {
    private let socket: SocketHandle
    private let host: String
    private let port: UInt16
    private let maxMessageSize: Int
    private let clock: any WalletClock
    private let incoming: Mailbox<SocketHandle>
    private let closed = LockedBox(false)
    private let watched: Bool
    /// The token of the reactor's watch that accepts in place of the accept loop (Linux;
    /// internal for tests).
    let watchToken: UInt64?

    /// Binds `host:port` (port 0 picks a free one) and listens.
    public convenience init(host: String = "127.0.0.1", port: UInt16 = 0, maxMessageSize: Int = TCPTransport.defaultMaxMessageSize,
                            clock: any WalletClock = SystemClock()) throws(ProximityError) {
        try self.init(host: host, port: port, maxMessageSize: maxMessageSize, clock: clock, watched: true)
    }

    /// A listener that accepts with the reactor where there is one (`watched`), or with a
    /// ``BlockingIO`` loop, and whose connections read the same way (tests of both paths).
    init(host: String, port: UInt16, maxMessageSize: Int, clock: any WalletClock, watched: Bool) throws(ProximityError) {
        let (socket, bound) = try SocketHandle.listen(host: host, port: port).get()
        self.watched = watched
        self.socket = socket
        self.host = host
        self.port = bound
        self.maxMessageSize = maxMessageSize
        self.clock = clock
        self.incoming = Mailbox(clock: clock)
        socket.retain()   // the accept loop's ownership
        #if os(Linux)
        if watched, let reactor = SocketReactor.shared, let token = reactor.watch(socket, handler: { [socket, incoming] in
            TCPListener.acceptAvailable(socket: socket, incoming: incoming)
        }) {
            watchToken = token
            return
        }
        #endif
        watchToken = nil
        BlockingIO.shared.run { [socket, incoming] in
            TCPListener.acceptLoop(socket: socket, incoming: incoming)
            socket.release()
        }
    }

    deinit { stop() }

    /// `.tcp(host:port:)` with the bound port.
    public var endpoint: TransportEndpoint { .tcp(host: host, port: port) }

    /// Waits for a connection.
    public func accept(timeout: Duration?) async throws(ProximityError) -> any MdocTransport {
        let accepted = try await incoming.next(timeout: timeout)
        return TCPTransport(socket: accepted, maxMessageSize: maxMessageSize, clock: clock, watched: watched)
    }

    /// Accepts waiting for a connection now (for tests).
    var waitingAcceptCount: Int { incoming.waiterCount }

    /// Stops listening: pending accepts fail with ``ProximityError/connectionClosed``,
    /// connections not yet accepted are closed.
    public func close() async { stop() }

    private func stop() {
        let first = closed.withLock { closed -> Bool in
            defer { closed = true }
            return !closed
        }
        guard first else { return }
        for pending in incoming.finishDiscarding(.connectionClosed) {
            pending.shutdown()
            pending.release()
        }
        #if os(Linux)
        // The reactor's watch ends here (a shut-down listening socket may report nothing,
        // or report its hang-up until the watch ends).
        if let watchToken { SocketReactor.shared?.end(watchToken) }
        #endif
        socket.shutdown()
        socket.release()
    }

    /// The reactor's handler: accepts every connection waiting, and returns `false` once
    /// the listener was closed or failed (as ``acceptLoop(socket:incoming:)`` ends).
    private static func acceptAvailable(socket: SocketHandle, incoming: Mailbox<SocketHandle>) -> Bool {
        while true {
            switch socket.acceptWithoutBlocking() {
            case .idle: return true
            case .stopped: incoming.finish(.connectionClosed); return false
            case .failed(let error): incoming.finish(error); return false
            case .accepted(let client):
                if !incoming.push(client) { client.release(); return false }
            }
        }
    }

    /// The accept loop where no reactor serves: polls on a ``BlockingIO`` thread.
    private static func acceptLoop(socket: SocketHandle, incoming: Mailbox<SocketHandle>) {
        while true {
            switch socket.acceptOnce(pollMilliseconds: 100) {
            case .idle: continue
            case .stopped: incoming.finish(.connectionClosed); return
            case .failed(let error): incoming.finish(error); return
            case .accepted(let client):
                if !incoming.push(client) { client.release(); return }
            }
        }
    }
}

/// Connects and listens over the SDK's TCP test carrier (not an ISO 18013-5 carrier;
/// never a default: pass it explicitly, for tests and tools).
public struct TCPConnector: MdocTransportConnector {
    /// The address listeners bind.
    public let host: String
    /// The largest message accepted.
    public let maxMessageSize: Int
    private let clock: any WalletClock
    private let dial: TCPTransport.Dial?

    /// A connector binding `host` (loopback by default), with timeouts on `clock`.
    public init(host: String = "127.0.0.1", maxMessageSize: Int = TCPTransport.defaultMaxMessageSize,
                clock: any WalletClock = SystemClock()) {
        self.init(host: host, maxMessageSize: maxMessageSize, clock: clock, dial: nil)
    }

    /// A connector whose connects go through `dial` (tests: a peer that never answers),
    /// or the standard connect (`nil`).
    init(host: String = "127.0.0.1", maxMessageSize: Int = TCPTransport.defaultMaxMessageSize, clock: any WalletClock,
         dial: TCPTransport.Dial?) {
        self.host = host
        self.maxMessageSize = maxMessageSize
        self.clock = clock
        self.dial = dial
    }

    /// TCP endpoints only.
    public func canConnect(to endpoint: TransportEndpoint) -> Bool { endpoint.tcpAddress != nil }

    /// Connects to a TCP endpoint, failing with a timeout after `timeout`.
    public func connect(to endpoint: TransportEndpoint, context: ConnectionContext,
                        timeout: Duration?) async throws(ProximityError) -> any MdocTransport {
        guard let address = endpoint.tcpAddress else { throw .transportFailed(.unsupportedEndpoint) }
        return try await TCPTransport.connect(host: address.host, port: address.port, timeout: timeout,
                                              maxMessageSize: maxMessageSize, clock: clock, dial: dial)
    }

    /// Listens on a free port.
    public func listen(context: ConnectionContext) async throws(ProximityError) -> any MdocTransportListener {
        try TCPListener(host: host, maxMessageSize: maxMessageSize, clock: clock)
    }
}
