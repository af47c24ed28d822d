import Foundation
import WalletRuntime

/// Two connected ends in one process: what one sends, the other receives.
/// For tests, demos and apps that run holder and reader side by side.
public final class InMemoryTransport: MdocTransport {
    /// An in-process "radio": holders listen under a name, readers connect to it.
    public final class Exchange: MdocTransportConnector {
        private let listeners = LockedBox<[String: Listener]>([:])

        /// An empty exchange.
        public init() {}

        /// Connects to the listener named in `endpoint`.
        public func connect(to endpoint: TransportEndpoint, timeout: Duration?) async throws(ProximityError) -> any MdocTransport {
            guard case .inMemory(let name) = endpoint else {
                throw .transportFailed("not an in-memory endpoint")
            }
            guard let listener = listeners.withLock({ $0[name] }) else {
                throw .transportFailed("nobody listens at \(name)")
            }
            let (mine, theirs) = InMemoryTransport.makePair()
            try listener.offer(theirs)
            return mine
        }

        /// Starts listening under a fresh name.
        public func listen() async throws(ProximityError) -> any MdocTransportListener {
            let listener = Listener(name: UUID().uuidString, exchange: self)
            listeners.withLock { $0[listener.name] = listener }
            return listener
        }

        fileprivate func remove(_ name: String) { listeners.withLock { _ = $0.removeValue(forKey: name) } }

        /// How many listeners are open (for leak checks).
        public var listenerCount: Int { listeners.withLock { $0.count } }
    }

    /// A listener of an ``Exchange``.
    public final class Listener: MdocTransportListener {
        fileprivate let name: String
        private let onClose: @Sendable () -> Void
        private let incoming = LockedBox<(queue: [InMemoryTransport], waiter: CheckedContinuation<Result<any MdocTransport, ProximityError>, Never>?, closed: Bool)>(([], nil, false))

        fileprivate init(name: String, exchange: Exchange) {
            self.name = name
            self.onClose = { [weak exchange] in exchange?.remove(name) }
        }

        /// `.inMemory(name:)`.
        public var endpoint: TransportEndpoint { .inMemory(name: name) }

        fileprivate func offer(_ transport: InMemoryTransport) throws(ProximityError) {
            let waiter = incoming.withLock { state -> CheckedContinuation<Result<any MdocTransport, ProximityError>, Never>?? in
                if state.closed { return .none }
                if let waiter = state.waiter { state.waiter = nil; return .some(waiter) }
                state.queue.append(transport)
                return .some(nil)
            }
            switch waiter {
            case .none: throw .transportFailed("listener closed")
            case .some(let continuation): continuation?.resume(returning: .success(transport))
            }
        }

        /// Waits for a connection.
        public func accept(timeout: Duration?) async throws(ProximityError) -> any MdocTransport {
            let result = await withCheckedContinuation { (continuation: CheckedContinuation<Result<any MdocTransport, ProximityError>, Never>) in
                let immediate = incoming.withLock { state -> Result<any MdocTransport, ProximityError>? in
                    if !state.queue.isEmpty { return .success(state.queue.removeFirst()) }
                    if state.closed { return .failure(.connectionClosed) }
                    state.waiter = continuation
                    return nil
                }
                if let immediate { continuation.resume(returning: immediate); return }
                if let timeout {
                    let seconds = Double(timeout.components.seconds) + Double(timeout.components.attoseconds) / 1e18
                    DispatchQueue.global().asyncAfter(deadline: .now() + seconds) { [weak self] in
                        let waiter = self?.incoming.withLock { state -> CheckedContinuation<Result<any MdocTransport, ProximityError>, Never>? in
                            defer { state.waiter = nil }
                            return state.waiter
                        }
                        waiter?.resume(returning: .failure(.timeout(seconds: seconds)))
                    }
                }
            }
            return try result.get()
        }

        /// Stops listening; a pending accept fails with ``ProximityError/connectionClosed``.
        public func close() async {
            onClose()
            let (waiter, queued) = incoming.withLock { state in
                state.closed = true
                defer { state.waiter = nil; state.queue.removeAll() }
                return (state.waiter, state.queue)
            }
            waiter?.resume(returning: .failure(.connectionClosed))
            for transport in queued { await transport.close() }
        }
    }

    private let inbox: MessageQueue
    private let outbox: MessageQueue
    private let maxMessageSize: Int

    private init(inbox: MessageQueue, outbox: MessageQueue, maxMessageSize: Int) {
        self.inbox = inbox
        self.outbox = outbox
        self.maxMessageSize = maxMessageSize
    }

    /// Two connected ends.
    public static func makePair(maxMessageSize: Int = TCPTransport.defaultMaxMessageSize) -> (InMemoryTransport, InMemoryTransport) {
        let a = MessageQueue(), b = MessageQueue()
        return (InMemoryTransport(inbox: a, outbox: b, maxMessageSize: maxMessageSize),
                InMemoryTransport(inbox: b, outbox: a, maxMessageSize: maxMessageSize))
    }

    /// `.inMemory`.
    public var transmissionType: TransmissionType { .inMemory }

    /// Delivers `message` to the other end.
    public func send(_ message: [UInt8]) async throws(ProximityError) {
        guard message.count <= maxMessageSize else {
            throw .messageTooLarge(size: message.count, limit: maxMessageSize)
        }
        guard !outbox.isFinished, !inbox.isFinished else { throw .connectionClosed }
        outbox.push(message)
    }

    /// The next message from the other end.
    public func receive(timeout: Duration?) async throws(ProximityError) -> [UInt8] {
        try await inbox.next(timeout: timeout)
    }

    /// Closes both directions.
    public func close() async {
        outbox.finish()
        inbox.finish()
    }
}
