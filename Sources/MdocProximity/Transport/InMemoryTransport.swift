import Foundation
import WalletCrypto
import WalletRuntime

/// Two connected ends in one process: what one sends, the other receives.
/// For tests, demos and apps that run holder and reader side by side. Not an
/// ISO 18013-5 carrier (see ``TransportEndpoint``).
public final class InMemoryTransport: MdocTransport {
    /// An in-process "radio": holders listen under a name, readers connect to it.
    public final class Exchange: MdocTransportConnector {
        private let listeners = LockedBox<[String: Listener]>([:])
        private let clock: any WalletClock

        /// An empty exchange whose timeouts run on `clock`.
        public init(clock: any WalletClock = SystemClock()) {
            self.clock = clock
        }

        /// In-memory endpoints only.
        public func canConnect(to endpoint: TransportEndpoint) -> Bool { endpoint.inMemoryName != nil }

        /// Connects to the listener named in `endpoint`.
        public func connect(to endpoint: TransportEndpoint, context: ConnectionContext,
                            timeout: Duration?) async throws(ProximityError) -> any MdocTransport {
            guard let name = endpoint.inMemoryName else { throw .transportFailed(.unsupportedEndpoint) }
            guard let listener = listeners.withLock({ $0[name] }) else { throw .transportFailed(.noListener) }
            let (mine, theirs) = InMemoryTransport.makePair(clock: clock)
            guard listener.offer(theirs) else { throw .transportFailed(.listenerClosed) }
            return mine
        }

        /// Starts listening under a fresh name.
        public func listen(context: ConnectionContext) async throws(ProximityError) -> any MdocTransportListener {
            let listener = Listener(name: SystemRandom().uuid().uuidString, exchange: self, clock: clock)
            listeners.withLock { $0[listener.name] = listener }
            return listener
        }

        fileprivate func remove(_ name: String) { listeners.withLock { _ = $0.removeValue(forKey: name) } }

        /// How many listeners are open (for leak checks).
        public var listenerCount: Int { listeners.withLock { $0.count } }
    }

    /// A listener of an ``Exchange``: pending connections wait in a ``Mailbox``,
    /// so each `accept` owns its timeout.
    public final class Listener: MdocTransportListener {
        fileprivate let name: String
        private let onClose: @Sendable () -> Void
        private let incoming: Mailbox<InMemoryTransport>

        fileprivate init(name: String, exchange: Exchange, clock: any WalletClock) {
            self.name = name
            self.incoming = Mailbox(clock: clock)
            self.onClose = { [weak exchange] in exchange?.remove(name) }
        }

        /// `.inMemory(name:)`.
        public var endpoint: TransportEndpoint { .inMemory(name: name) }

        /// Hands a connection to the next accept; `false` once closed.
        fileprivate func offer(_ transport: InMemoryTransport) -> Bool { incoming.push(transport) }

        /// Waits for a connection.
        public func accept(timeout: Duration?) async throws(ProximityError) -> any MdocTransport {
            try await incoming.next(timeout: timeout)
        }

        /// Stops listening; pending accepts fail with ``ProximityError/connectionClosed``
        /// and connections not yet accepted are closed.
        public func close() async {
            onClose()
            for transport in incoming.finishDiscarding(.connectionClosed) { await transport.close() }
        }
    }

    private let inbox: Mailbox<[UInt8]>
    private let outbox: Mailbox<[UInt8]>
    private let maxMessageSize: Int

    private init(inbox: Mailbox<[UInt8]>, outbox: Mailbox<[UInt8]>, maxMessageSize: Int) {
        self.inbox = inbox
        self.outbox = outbox
        self.maxMessageSize = maxMessageSize
    }

    /// Two connected ends; receive timeouts run on `clock`.
    public static func makePair(maxMessageSize: Int = TCPTransport.defaultMaxMessageSize,
                                clock: any WalletClock = SystemClock()) -> (InMemoryTransport, InMemoryTransport) {
        let a = Mailbox<[UInt8]>(clock: clock), b = Mailbox<[UInt8]>(clock: clock)
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
        guard !inbox.isFinished, outbox.push(message) else { throw .connectionClosed }
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
