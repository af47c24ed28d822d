import CBOR
import COSE
import Foundation
import Mdoc
import WalletCrypto

/// The verifier's side of a proximity session, for tests, demos and reader
/// apps: engage (from a QR URI, an NFC Handover Select, or by offering a
/// ReaderEngagement for reverse engagement), send DeviceRequests, verify the
/// DeviceResponses with the Mdoc module, end the session.
public actor MdocReader {
    private let connector: any MdocTransportConnector
    private let trustAnchors: [X509Certificate]
    private let messageTimeout: Duration
    private let eReaderKey: ECPrivateKey

    private var transport: (any MdocTransport)?
    private var encryption: SessionEncryption?
    private var deviceEngagement: DeviceEngagement?
    private var handover: Handover = .qr
    private var established = false
    private var listener: (any MdocTransportListener)?
    private var readerEngagement: ReaderEngagement?

    /// The session transcript, once engaged.
    public private(set) var sessionTranscript: SessionTranscript?

    /// A reader trusting `trustAnchors` (IACA roots) and using `connector`.
    public init(connector: any MdocTransportConnector = TCPConnector(), trustAnchors: [X509Certificate],
                messageTimeout: Duration = .seconds(30)) throws(ProximityError) {
        self.connector = connector
        self.trustAnchors = trustAnchors
        self.messageTimeout = messageTimeout
        do { eReaderKey = try ECPrivateKey.generate(curve: .p256) } catch { throw .transportFailed("ephemeral key: \(error)") }
    }

    private var eReaderKeyEncoded: [UInt8] { COSEKey(publicKey: .ec(eReaderKey.publicKey)).encoded() }

    /// Engages from the holder's `mdoc:` QR code and connects.
    public func engage(qrCodeUri uri: String) async throws(ProximityError) {
        let engagement: DeviceEngagement
        do { engagement = try DeviceEngagement(uri: uri) } catch { throw .invalidEngagement("\(error)") }
        try await connect(engagement, handover: .qr)
    }

    /// Engages from an NFC static handover: the Handover Select read from the holder.
    public func engage(nfcHandoverSelect select: [UInt8]) async throws(ProximityError) {
        let (engagement, _) = try NDEFMessage.parseHandoverSelect(select)
        try await connect(engagement, handover: .nfc(handoverSelect: select, handoverRequest: nil))
    }

    private func connect(_ engagement: DeviceEngagement, handover: Handover) async throws(ProximityError) {
        guard let endpoint = engagement.deviceRetrievalMethods.lazy.compactMap(TransportEndpoint.init(retrievalMethod:)).first else {
            throw .invalidEngagement("no retrieval method this reader can use")
        }
        transport = try await connector.connect(to: endpoint, timeout: messageTimeout)
        try setUp(engagement, handover: handover)
    }

    private func setUp(_ engagement: DeviceEngagement, handover: Handover) throws(ProximityError) {
        deviceEngagement = engagement
        self.handover = handover
        sessionTranscript = SessionTranscript(deviceEngagement: engagement, eReaderKeyEncoded: eReaderKeyEncoded, handover: handover)
    }

    /// Offers a ReaderEngagement for reverse engagement: listens and returns the
    /// `mdoc-reader:` URI to show as a QR code. Call ``awaitHolder(timeout:)`` next.
    public func offerReverseEngagement() async throws(ProximityError) -> String {
        let listener = try await connector.listen()
        self.listener = listener
        let engagement = ReaderEngagement(security: EngagementSecurity(eDeviceKey: eReaderKey.publicKey),
                                          connectionMethods: [listener.endpoint.retrievalMethod])
        readerEngagement = engagement
        return engagement.uri
    }

    /// Waits for the holder to connect after scanning the reader engagement.
    public func awaitHolder(timeout: Duration? = nil) async throws(ProximityError) {
        guard let listener, let readerEngagement else { throw .invalidState("no reader engagement offered") }
        let connection = try await listener.accept(timeout: timeout)
        await listener.close()
        self.listener = nil
        transport = connection
        let first = try await connection.receive(timeout: messageTimeout)
        let engagement = try ReaderEngagementURI.parseDeviceEngagementMessage(first)
        try setUp(engagement, handover: ReaderEngagementURI.handover(for: readerEngagement))
    }

    /// Sends a request for `items` (reader-authenticated with `readerKey` when given),
    /// waits for the DeviceResponse and verifies it.
    public func request(_ items: [ItemsRequest], readerKey: ReaderAuthenticationKey? = nil) async throws(ProximityError) -> VerifiedResponse {
        guard let transcript = sessionTranscript else { throw .invalidState("not engaged") }
        var docRequests: [DocRequest] = []
        for item in items {
            if let readerKey {
                do { docRequests.append(try await DocRequest(itemsRequest: item, readerKey: readerKey, sessionTranscript: transcript)) }
                catch { throw .invalidMessage("reader authentication: \(error)") }
            } else {
                docRequests.append(DocRequest(itemsRequest: item))
            }
        }
        return try await send(DeviceRequest(docRequests: docRequests))
    }

    /// Sends `request` and verifies the response.
    public func send(_ request: DeviceRequest) async throws(ProximityError) -> VerifiedResponse {
        let response = try await exchange(request.encodedBytes)
        guard let transcript = sessionTranscript else { throw .invalidState("not engaged") }
        do {
            return try await DeviceResponseVerifier(trustAnchors: trustAnchors, sessionTranscript: transcript,
                                                    eReaderKey: SoftwareKeyAgreement(eReaderKey)).verify(response, at: Date())
        } catch {
            throw .responseVerificationFailed("\(error)")
        }
    }

    /// Encrypts and sends `plaintext` (SessionEstablishment first, then SessionData)
    /// and returns the decoded DeviceResponse of the answer.
    public func exchange(_ plaintext: [UInt8]) async throws(ProximityError) -> DeviceResponse {
        guard let transport, let deviceEngagement, let transcript = sessionTranscript else { throw .invalidState("not engaged") }
        let session: SessionEncryption
        if let encryption {
            session = encryption
        } else {
            do {
                session = try await SessionEncryption(role: .reader, privateKey: SoftwareKeyAgreement(eReaderKey),
                                                      peerPublicKey: try deviceEngagement.security.ecPublicKey(),
                                                      sessionTranscript: transcript)
            } catch { throw .sessionEncryptionFailed("\(error)") }
            encryption = session
        }
        let message: [UInt8]
        do {
            let ciphertext = try await session.encrypt(plaintext)
            message = established ? SessionData(data: ciphertext).encodedBytes
                : SessionEstablishment(eReaderKey: eReaderKey.publicKey, data: ciphertext).encodedBytes
        } catch { throw .sessionEncryptionFailed("\(error)") }
        established = true
        try await transport.send(message)
        let reply = try await transport.receive(timeout: messageTimeout)
        let data: SessionData
        do { data = try SessionData(encoded: reply) } catch { throw .invalidMessage("SessionData: \(error)") }
        let opened: [UInt8]?
        do { opened = try await session.open(data) } catch {
            switch error {
            case .sessionTerminated: await transport.close(); throw .sessionTerminated
            case .peerReportedError(let status): await transport.close(); throw .peerReportedError(status: status)
            default: throw .sessionEncryptionFailed("\(error)")
            }
        }
        guard let bytes = opened else { throw .sessionTerminated }
        if data.status == .sessionTermination { await transport.close() }
        do { return try DeviceResponse(encoded: bytes) } catch { throw .invalidMessage("DeviceResponse: \(error)") }
    }

    /// Ends the session with status 20 and closes the carrier.
    public func end() async {
        guard let transport else { return }
        try? await transport.send(SessionData(status: .sessionTermination).encodedBytes)
        await transport.close()
        if let encryption { await encryption.terminate() }
        self.transport = nil
    }

    /// Closes the carrier without a message (the reader went away).
    public func abort() async {
        await transport?.close()
        await listener?.close()
        transport = nil
    }
}
