import CBOR
import COSE
import Foundation
import Mdoc
import WalletCrypto
import WalletRuntime

/// The verifier's side of a proximity session, for tests, demos and reader apps: a
/// thin driver around ``ReaderSessionCore``. It engages (from a QR URI, from NFC over
/// an ``APDUChannel`` with static or negotiated handover, or by offering a
/// ReaderEngagement for reverse engagement), sends DeviceRequests, verifies the
/// DeviceResponses with the Mdoc module at the clock's time, and ends the session.
public actor MdocReader {
    private let connector: any MdocTransportConnector
    private let trustAnchors: [X509Certificate]
    private let messageTimeout: Duration
    private let clock: any WalletClock
    private let eReaderKey: ECPrivateKey

    private var transport: (any MdocTransport)?
    private var core: ReaderSessionCore?
    private var listener: (any MdocTransportListener)?
    private var readerEngagement: ReaderEngagement?

    /// The session transcript, once engaged.
    public var sessionTranscript: SessionTranscript? { core?.sessionTranscript }

    /// A reader trusting `trustAnchors` (IACA roots) that reaches holders with `connector`.
    public init(connector: any MdocTransportConnector, trustAnchors: [X509Certificate],
                messageTimeout: Duration = .seconds(30), clock: any WalletClock = SystemClock()) throws(ProximityError) {
        self.connector = connector
        self.trustAnchors = trustAnchors
        self.messageTimeout = messageTimeout
        self.clock = clock
        eReaderKey = try EphemeralKey.generate()
    }

    /// Engages from the holder's `mdoc:` QR code and connects.
    public func engage(qrCodeUri uri: String) async throws(ProximityError) {
        let engagement: DeviceEngagement
        do { engagement = try DeviceEngagement(uri: uri) } catch {
            throw error == .invalidEngagementURI ? .invalidEngagement(.invalidURI) : .invalidEngagement(.unreadable(error))
        }
        try await connect(engagement, methods: engagement.deviceRetrievalMethods, handover: .qr)
    }

    /// Engages from a Handover Select read over NFC (static handover).
    public func engage(nfcHandoverSelect select: [UInt8]) async throws(ProximityError) {
        let parsed = try ConnectionHandover.parseHandoverSelect(select)
        try await connect(parsed.deviceEngagement, methods: Self.methods(of: parsed, readerUUID: nil),
                          handover: .nfc(handoverSelect: select, handoverRequest: nil))
    }

    /// Engages over NFC: reads the mdoc's NDEF file on `channel` (static handover), or
    /// negotiates with `handoverRequest` when the mdoc offers negotiated handover; then
    /// connects with the carrier chosen.
    public func engage(nfc channel: any APDUChannel, handoverRequest: [UInt8]? = nil) async throws(ProximityError) {
        let outcome = try await NFCReaderEngagement.engage(over: channel, request: handoverRequest)
        var readerUUID: UUID?
        if let handoverRequest {
            for carrier in try ConnectionHandover.parseHandoverRequest(handoverRequest).carriers.map(\.carrier) {
                if case .ble(let data) = carrier { readerUUID = data.serviceUUID }
            }
        }
        try await connect(outcome.select.deviceEngagement, methods: Self.methods(of: outcome.select, readerUUID: readerUUID),
                          handover: .nfc(handoverSelect: outcome.select.encodedBytes, handoverRequest: outcome.request))
    }

    private static func methods(of select: HandoverSelect, readerUUID: UUID?) -> [DeviceRetrievalMethod] {
        select.carriers.compactMap { $0.carrier.mdocRetrievalMethod(readerUUID: readerUUID) }
    }

    private func connect(_ engagement: DeviceEngagement, methods: [DeviceRetrievalMethod], handover: Handover) async throws(ProximityError) {
        guard core == nil else { throw .invalidState(.alreadyEngaged) }
        guard let endpoint = methods.lazy.map(TransportEndpoint.init(retrievalMethod:)).first(where: connector.canConnect) else {
            throw .invalidEngagement(.noUsableConnectionMethod)
        }
        // The engagement's key is checked before connecting; the session keys are derived
        // after, while the mdoc accepts the connection and starts its side, so the two overlap.
        _ = try ReaderSessionCore.deviceKey(of: engagement)
        let connection = try await connector.connect(to: endpoint, context: ConnectionContext(eDeviceKeyBytes: engagement.security.eDeviceKeyBytes),
                                                     timeout: messageTimeout)
        do {
            core = try ReaderSessionCore(eReaderKey: eReaderKey, deviceEngagement: engagement, handover: handover)
        } catch {
            await connection.close()
            throw error
        }
        transport = connection
    }

    /// Offers a ReaderEngagement for reverse engagement: listens and returns the `mdoc:`
    /// URI to show as a QR code. Call ``awaitHolder(timeout:)`` next.
    public func offerReverseEngagement() async throws(ProximityError) -> String {
        let listener = try await connector.listen()
        self.listener = listener
        let engagement = ReaderEngagement(security: EngagementSecurity(eDeviceKey: eReaderKey.publicKey),
                                          connectionMethods: [listener.endpoint.retrievalMethod])
        readerEngagement = engagement
        return engagement.uri
    }

    /// Waits for the holder to connect after scanning the reader engagement, and reads
    /// its DeviceEngagement.
    public func awaitHolder(timeout: Duration? = nil) async throws(ProximityError) {
        guard let listener, let readerEngagement else { throw .invalidState(.noReaderEngagementOffered) }
        let connection = try await listener.accept(timeout: timeout)
        await listener.close()
        self.listener = nil
        transport = connection
        let first = try await connection.receive(timeout: messageTimeout)
        let engagement = try ReverseEngagement.parseDeviceEngagementMessage(first)
        core = try ReaderSessionCore(eReaderKey: eReaderKey, deviceEngagement: engagement,
                                     handover: ReverseEngagement.handover(for: readerEngagement))
    }

    /// Sends a request for `items` (reader-authenticated with `readerKey` when given),
    /// waits for the DeviceResponse and verifies it.
    public func request(_ items: [ItemsRequest], readerKey: ReaderAuthenticationKey? = nil) async throws(ProximityError) -> VerifiedResponse {
        guard let transcript = core?.sessionTranscript else { throw .invalidState(.notEngaged) }
        var docRequests: [DocRequest] = []
        for item in items {
            if let readerKey {
                do { docRequests.append(try await DocRequest(itemsRequest: item, readerKey: readerKey, sessionTranscript: transcript)) }
                catch { throw .readerAuthenticationFailed(error) }
            } else {
                docRequests.append(DocRequest(itemsRequest: item))
            }
        }
        return try await send(DeviceRequest(docRequests: docRequests))
    }

    /// Sends `request` and verifies the response.
    public func send(_ request: DeviceRequest) async throws(ProximityError) -> VerifiedResponse {
        let response = try await exchange(request)
        guard let transcript = core?.sessionTranscript else { throw .invalidState(.notEngaged) }
        do {
            return try await DeviceResponseVerifier(trustAnchors: trustAnchors, sessionTranscript: transcript,
                                                    eReaderKey: SoftwareKeyAgreement(eReaderKey)).verify(response, at: clock.now)
        } catch {
            throw .responseVerificationFailed(error)
        }
    }

    /// Sends `request` (SessionEstablishment first, then SessionData) and returns the
    /// DeviceResponse of the answer, unverified.
    public func exchange(_ request: DeviceRequest) async throws(ProximityError) -> DeviceResponse {
        guard let transport, var session = core else { throw .invalidState(.notEngaged) }
        let message = try session.send(request)
        core = session
        try await transport.send(message)
        let reply = try await transport.receive(timeout: messageTimeout)
        let receipt: ReaderSessionCore.Receipt
        do { receipt = try session.receive(reply) } catch {
            core = session
            await transport.close()
            throw error
        }
        core = session
        switch receipt {
        case .ended:
            await transport.close()
            throw .sessionTerminated
        case .response(let response, let ended):
            if ended { await transport.close() }
            return response
        }
    }

    /// Ends the session with status 20 and closes the carrier.
    public func end() async {
        guard let transport else { return }
        if var session = core, let message = session.end() {
            core = session
            try? await transport.send(message)
        }
        await transport.close()
        self.transport = nil
    }

    /// Closes the carrier without a message (the reader went away).
    public func abort() async {
        await transport?.close()
        await listener?.close()
        transport = nil
        listener = nil
    }
}
