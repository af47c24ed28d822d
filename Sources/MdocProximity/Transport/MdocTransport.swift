import CBOR
import Mdoc

/// A carrier for the messages of one session (SessionEstablishment, SessionData):
/// whole messages in, whole messages out, in order.
///
/// The SDK ships the ISO 18013-5 carriers as sans-IO state machines with thin drivers
/// (``BLETransport`` over a platform's GATT callbacks, ``NFCHostCardEmulation`` over a
/// platform's APDUs) and, for tests and tools only, an in-memory pair and TCP. A
/// platform radio plugs in through the BLE and NFC seams rather than by conforming
/// here, but anything that moves whole messages may conform.
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

/// One side of a carrier before the peer connects: what to announce in the
/// engagement, and a way to wait for the connection.
public protocol MdocTransportListener: Sendable {
    /// Where the peer connects (goes into the engagement's retrieval methods).
    var endpoint: TransportEndpoint { get }
    /// Waits for the peer to connect.
    func accept(timeout: Duration?) async throws(ProximityError) -> any MdocTransport
    /// Stops listening; a pending accept fails with ``ProximityError/connectionClosed``.
    func close() async
}

/// Opens transports to endpoints (the reader in forward engagement, the holder in
/// reverse engagement) and listens for them (the other way round).
public protocol MdocTransportConnector: Sendable {
    /// Whether this connector can reach `endpoint` (the reader picks the first
    /// retrieval method of an engagement that its connector can use).
    func canConnect(to endpoint: TransportEndpoint) -> Bool
    /// Connects to `endpoint`, failing with ``ProximityError/timeout(seconds:)`` after `timeout`.
    func connect(to endpoint: TransportEndpoint, context: ConnectionContext,
                 timeout: Duration?) async throws(ProximityError) -> any MdocTransport
    /// Starts listening.
    func listen(context: ConnectionContext) async throws(ProximityError) -> any MdocTransportListener
}

extension MdocTransportConnector {
    /// Connects to `endpoint` without engagement context.
    public func connect(to endpoint: TransportEndpoint, timeout: Duration?) async throws(ProximityError) -> any MdocTransport {
        try await connect(to: endpoint, context: ConnectionContext(), timeout: timeout)
    }

    /// Starts listening without engagement context.
    public func listen() async throws(ProximityError) -> any MdocTransportListener {
        try await listen(context: ConnectionContext())
    }
}

/// What a carrier may need to know about the engagement it serves.
public struct ConnectionContext: Hashable, Sendable {
    /// The mdoc's `EDeviceKeyBytes` (`#6.24(bstr .cbor COSE_Key)`) when known: BLE
    /// derives the Ident characteristic from it (ISO 18013-5 §8.3.3.1.1.4).
    public var eDeviceKeyBytes: [UInt8]?

    /// A context.
    public init(eDeviceKeyBytes: [UInt8]? = nil) { self.eDeviceKeyBytes = eDeviceKeyBytes }
}

/// Where a peer can be reached: a retrieval method as an engagement announces it
/// (ISO 18013-5 §8.2.1.1). Open: a platform connector announces whatever it supplies
/// (BLE with its UUID, PSM and address, NFC with its APDU limits, Wi-Fi Aware).
///
/// TCP and in-memory endpoints are the SDK's own, for tests and tools: they are not
/// ISO 18013-5 carriers, use a private method type (``sdkRetrievalMethodType``) that
/// standard readers ignore, and are never a default of the SDK.
public struct TransportEndpoint: Hashable, Sendable {
    /// The retrieval method type the SDK uses for its test carriers (not an ISO type).
    public static let sdkRetrievalMethodType = 0x7E55

    /// The method as announced.
    public let retrievalMethod: DeviceRetrievalMethod

    /// An endpoint for an announced method.
    public init(retrievalMethod: DeviceRetrievalMethod) {
        self.retrievalMethod = retrievalMethod
    }

    /// The SDK's TCP test carrier at `host:port` (not an ISO 18013-5 carrier).
    public static func tcp(host: String, port: UInt16) -> TransportEndpoint {
        TransportEndpoint(retrievalMethod: .other(type: sdkRetrievalMethodType, version: 1,
                                                  options: [0: "tcp", 1: .textString(host), 2: CBOR(Int(port))]))
    }

    /// The SDK's in-process test carrier (an ``InMemoryTransport/Exchange`` mailbox).
    public static func inMemory(name: String) -> TransportEndpoint {
        TransportEndpoint(retrievalMethod: .other(type: sdkRetrievalMethodType, version: 1,
                                                  options: [0: "inMemory", 3: .textString(name)]))
    }

    /// A BLE endpoint (ISO 18013-5 §8.3.3.1.1).
    public static func ble(_ options: DeviceRetrievalMethod.BLEOptions) -> TransportEndpoint {
        TransportEndpoint(retrievalMethod: .ble(options))
    }

    /// An NFC endpoint with the mdoc's APDU data limits (ISO 18013-5 §8.3.3.1.2).
    public static func nfc(maxCommandDataLength: UInt64, maxResponseDataLength: UInt64) -> TransportEndpoint {
        TransportEndpoint(retrievalMethod: .nfc(DeviceRetrievalMethod.NFCOptions(
            maxCommandDataLength: maxCommandDataLength, maxResponseDataLength: maxResponseDataLength)))
    }

    /// A host and port.
    public struct TCPAddress: Hashable, Sendable {
        /// A numeric IPv4 address.
        public let host: String
        /// The port.
        public let port: UInt16
    }

    /// The address of an SDK TCP endpoint.
    public var tcpAddress: TCPAddress? {
        guard case .other(let type, _, let options) = retrievalMethod, type == Self.sdkRetrievalMethodType,
              options[0]?.stringValue == "tcp", let host = options[1]?.stringValue,
              let port = options[2]?.intValue, (1...65_535).contains(port) else { return nil }
        return TCPAddress(host: host, port: UInt16(port))
    }

    /// The mailbox name of an SDK in-memory endpoint.
    public var inMemoryName: String? {
        guard case .other(let type, _, let options) = retrievalMethod, type == Self.sdkRetrievalMethodType,
              options[0]?.stringValue == "inMemory" else { return nil }
        return options[3]?.stringValue
    }

    /// The BLE options of a BLE endpoint.
    public var bleOptions: DeviceRetrievalMethod.BLEOptions? {
        if case .ble(_, let options) = retrievalMethod { return options }
        return nil
    }

    /// The carrier, when the method is one the SDK knows.
    public var transmissionType: TransmissionType? {
        switch retrievalMethod {
        case .ble: return .ble
        case .nfc: return .nfc
        case .wifiAware: return .wifiAware
        case .other:
            if tcpAddress != nil { return .tcp }
            if inMemoryName != nil { return .inMemory }
            return nil
        }
    }

    /// Whether the endpoint is an ISO 18013-5 carrier (BLE, NFC, Wi-Fi Aware).
    public var isISOCarrier: Bool {
        switch retrievalMethod {
        case .ble, .nfc, .wifiAware: return true
        case .other: return false
        }
    }
}
