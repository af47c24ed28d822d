/// A carrier for the messages of one session (SessionEstablishment, SessionData):
/// whole messages in, whole messages out, in order.
///
/// The SDK ships an in-memory pair and TCP; a platform radio plugs in by
/// conforming: a CoreBluetooth GATT peripheral, say, feeds received
/// characteristic writes to a ``BLEMessageReassembler`` and delivers each
/// complete message from ``receive(timeout:)``, and sends with
/// ``BLEMessageFramer``; an Android NFC host-card-emulation service does the
/// same with ``NFCEnvelopeAssembler`` and ``NFCDataTransfer``.
public protocol MdocTransport: Sendable {
    /// The carrier this transport uses.
    var transmissionType: TransmissionType { get }
    /// Sends one message.
    func send(_ message: [UInt8]) async throws(ProximityError)
    /// The next message; throws ``ProximityError/connectionClosed`` once the peer
    /// closed and every message before that was read, ``ProximityError/timeout(seconds:)``
    /// when `timeout` passes first.
    func receive(timeout: Duration?) async throws(ProximityError) -> [UInt8]
    /// Closes the carrier; pending and later receives on both sides end.
    func close() async
}

/// The holder's side of a carrier before a reader connects: what to announce in
/// the DeviceEngagement, and a way to wait for the connection.
public protocol MdocTransportListener: Sendable {
    /// Where the reader connects (goes into the engagement's retrieval methods).
    var endpoint: TransportEndpoint { get }
    /// Waits for a reader to connect.
    func accept(timeout: Duration?) async throws(ProximityError) -> any MdocTransport
    /// Stops listening.
    func close() async
}

/// Where a peer can be reached.
public enum TransportEndpoint: Hashable, Sendable {
    /// A TCP port on a host.
    case tcp(host: String, port: UInt16)
    /// A mailbox in this process's ``InMemoryTransport/Exchange``.
    case inMemory(name: String)
}

/// Opens transports to endpoints (the reader in forward engagement, the holder
/// in reverse engagement).
public protocol MdocTransportConnector: Sendable {
    /// Connects to `endpoint`.
    func connect(to endpoint: TransportEndpoint, timeout: Duration?) async throws(ProximityError) -> any MdocTransport
    /// Starts listening (the reader in reverse engagement, the holder in forward engagement).
    func listen() async throws(ProximityError) -> any MdocTransportListener
}
