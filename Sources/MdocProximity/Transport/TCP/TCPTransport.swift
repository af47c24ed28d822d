import Foundation
import WalletRuntime

/// Session messages over a TCP socket, each framed by a 4-byte big-endian length.
///
/// **Not an ISO 18013-5 carrier**: the standard defines BLE, NFC and Wi-Fi Aware for
/// device retrieval, and no TCP. This one is the SDK's own, for desktop tools, tests
/// and loopback demos; engagements announce it with a private method type that
/// standard readers ignore, and nothing in the SDK uses it unless asked to.
///
/// A read loop on ``BlockingIO`` reads frames into a ``Mailbox``, so no cooperative
/// thread blocks on the socket. A frame is written by the sending task itself when the
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

    /// Takes over `socket` (the caller's ownership becomes the writer's).
    init(socket: SocketHandle, maxMessageSize: Int, clock: any WalletClock) {
        self.socket = socket
        self.maxMessageSize = maxMessageSize
        self.inbox = Mailbox(clock: clock)
        socket.retain()   // the read loop's ownership
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

    /// Connects with `dial`, or (`nil`) with a connect started here that a
    /// ``BlockingIO`` thread finishes only when the handshake is not already done (on
    /// loopback it is, and the session starts without a thread switch); gives up after
    /// `timeout` of `clock`.
    static func connect(host: String, port: UInt16, timeout: Duration?, maxMessageSize: Int, clock: any WalletClock,
                        dial: Dial?) async throws(ProximityError) -> TCPTransport {
        let wait: @Sendable () -> Result<SocketHandle, ProximityError>
        if let dial {
            wait = { dial(host, port) }
        } else {
            switch SocketHandle.startConnect(host: host, port: port) {
            case .connected(let socket): return TCPTransport(socket: socket, maxMessageSize: maxMessageSize, clock: clock)
            case .failed(let error): throw error
            case .pending(let socket): wait = socket.finishConnect
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
    /// the reader thread when it sees the end.
    public func close() async {
        inbox.finish()
        shutDownAndRelease()
    }

    private func shutDownAndRelease() {
        let first = writing.withLock { state -> Bool in
            defer { state.closed = true }
            return !state.closed
        }
        guard first else { return }
        socket.shutdown()
        writer.async { [socket] in socket.release() }
    }

    private static func readLoop(socket: SocketHandle, inbox: Mailbox<[UInt8]>, maxMessageSize: Int) {
        var header = [UInt8](repeating: 0, count: 4)
        while true {
            switch socket.readExactly(into: &header, count: 4) {
            case .closed: inbox.finish(); return
            case .failed(let error): inbox.finish(error); return
            case .done: break
            }
            let length = Int(header[0]) << 24 | Int(header[1]) << 16 | Int(header[2]) << 8 | Int(header[3])
            // Enforce the limit before allocating the body.
            guard length <= maxMessageSize else {
                inbox.finish(.malformedFrame(.declaredLengthTooLarge(declared: length, limit: maxMessageSize)))
                socket.shutdown()
                return
            }
            var body = [UInt8](repeating: 0, count: length)
            switch socket.readExactly(into: &body, count: length) {
            case .closed: inbox.finish(.malformedFrame(.lengthMismatch(declared: length, actual: 0))); return
            case .failed(let error): inbox.finish(error); return
            case .done: guard inbox.push(body) else { return }
            }
        }
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
/// One loop on ``BlockingIO`` accepts for the listener's lifetime and hands connections
/// to a ``Mailbox``, so each `accept` owns its timeout; closing shuts the socket down,
/// and the accept loop, which owns the descriptor with the listener, lets go of it last.
public final class TCPListener: MdocTransportListener {
    private let socket: SocketHandle
    private let host: String
    private let port: UInt16
    private let maxMessageSize: Int
    private let clock: any WalletClock
    private let incoming: Mailbox<SocketHandle>
    private let closed = LockedBox(false)

    /// Binds `host:port` (port 0 picks a free one) and listens.
    public init(host: String = "127.0.0.1", port: UInt16 = 0, maxMessageSize: Int = TCPTransport.defaultMaxMessageSize,
                clock: any WalletClock = SystemClock()) throws(ProximityError) {
        let (socket, bound) = try SocketHandle.listen(host: host, port: port).get()
        self.socket = socket
        self.host = host
        self.port = bound
        self.maxMessageSize = maxMessageSize
        self.clock = clock
        self.incoming = Mailbox(clock: clock)
        socket.retain()   // the accept loop's ownership
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
        return TCPTransport(socket: accepted, maxMessageSize: maxMessageSize, clock: clock)
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
        socket.shutdown()
        socket.release()
    }

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
