import CBOR
import COSE
import Foundation
import Mdoc
import WalletCrypto

/// The holder's side of one session (ISO 18013-5 §9.1.1): waits for the
/// reader's SessionEstablishment, decrypts the DeviceRequest, pauses for
/// consent, then sends the DeviceResponse and ends the session with status 20.
///
/// Every step is published to the ``MdocEventHub``. Errors follow §9.1.1.5:
/// a message that does not decrypt is answered with status 10, one that is not
/// the expected CBOR with status 11, and the session ends.
public actor TransferManager {
    /// The phase of the session.
    public enum Phase: Sendable, Hashable {
        /// Waiting for SessionEstablishment.
        case establishing
        /// A request waits for the user's decision.
        case awaitingConsent
        /// The response is being built or sent.
        case responding
        /// After a response, waiting for another request or the end.
        case responded
        /// Finished.
        case ended
    }

    /// The engagement this session belongs to.
    public nonisolated let engagementId: EngagementID
    /// The carrier.
    public nonisolated let transmissionType: TransmissionType

    private let transport: any MdocTransport
    private let hub: MdocEventHub
    private let config: EngagementConfig
    private let eDeviceKey: ECPrivateKey
    private let deviceEngagement: DeviceEngagement
    private let handover: Handover
    private var encryption: SessionEncryption?
    private var responded = false
    private var receiver: Task<Void, Never>?

    /// The session transcript, once established.
    public private(set) var sessionTranscript: SessionTranscript?
    /// The request waiting for consent (or the last one answered).
    public private(set) var deviceRequest: DeviceRequest?
    /// Where the session stands.
    public private(set) var phase: Phase = .establishing

    init(engagementId: EngagementID, transport: any MdocTransport, hub: MdocEventHub, config: EngagementConfig,
         eDeviceKey: ECPrivateKey, deviceEngagement: DeviceEngagement, handover: Handover) {
        self.engagementId = engagementId
        self.transmissionType = transport.transmissionType
        self.transport = transport
        self.hub = hub
        self.config = config
        self.eDeviceKey = eDeviceKey
        self.deviceEngagement = deviceEngagement
        self.handover = handover
    }

    /// Starts reading the reader's messages.
    func start() {
        hub.publish(MdocRetrievalEvent(engagementId: engagementId, kind: .transmissionTypeSelected(transmissionType)))
        receiver = Task { await self.receiveLoop() }
    }

    /// Waits until the session has ended.
    public func waitUntilEnded() async { await receiver?.value }

    // MARK: Consent

    /// Builds the response to `deviceRequest` with the provider's credentials and
    /// consent (the user accepted). Publishes `documentsSelectionProcessAccepted`.
    public func createResponse(deviceRequest: DeviceRequest, documentProvider: any MdocDocumentProvider)
        async throws(ProximityError) -> DeviceResponse {
        guard phase == .awaitingConsent, let transcript = sessionTranscript else {
            throw .invalidState("no request is waiting for consent")
        }
        phase = .responding
        publish(.documentsSelectionProcessAccepted)
        do {
            let credentials = try await documentProvider.credentials(for: deviceRequest)
            let consent = await documentProvider.consent(for: deviceRequest)
            return try await DeviceResponseBuilder.respond(
                to: deviceRequest, with: credentials, sessionTranscript: transcript, consented: consent,
                authentication: { documentProvider.authentication(for: $0) })
        } catch {
            let failure = ProximityError.responseCreationFailed("\(error)")
            await fail(failure, status: nil)
            throw failure
        }
    }

    /// Sends `response` encrypted; with `terminate` (the default) the same message
    /// carries status 20 and the session ends (ISO 18013-5 §9.1.1.4).
    public func sendDeviceResponse(_ response: DeviceResponse, terminate: Bool = true) async throws(ProximityError) {
        guard phase == .responding || phase == .awaitingConsent, let encryption else {
            throw .invalidState("no response is expected now")
        }
        if phase == .awaitingConsent { publish(.documentsSelectionProcessAccepted) }
        let message: SessionData
        do {
            message = try await encryption.sessionData(response.encodedBytes, status: terminate ? .sessionTermination : nil)
        } catch {
            throw .sessionEncryptionFailed("\(error)")
        }
        let bytes = message.encodedBytes
        // Update the state before suspending on the send: the receive loop runs on this
        // actor too, and a reader that closes right after reading the response must find
        // the session already answered (and, with `terminate`, ended).
        responded = true
        phase = terminate ? .ended : .responded
        publish(.sessionDataSend(byteCount: bytes.count))
        do {
            try await transport.send(bytes)
        } catch {
            phase = .responding
            await fail(error, status: nil)
            throw error
        }
        if terminate {
            await encryption.terminate()
            publish(.sessionTerminationSend)
            await shutdown()
        }
    }

    /// Declines the request: ends the session with status 20 and no documents.
    public func decline() async {
        guard phase != .ended else { return }
        phase = .ended
        publish(.documentsSelectionProcessDeclined)
        try? await transport.send(SessionData(status: .sessionTermination).encodedBytes)
        await shutdown()
    }

    /// Ends the session from the holder's side without a response (the app closed it).
    public func close() async {
        guard phase != .ended else { return }
        if phase == .awaitingConsent { await decline(); return }
        phase = .ended
        try? await transport.send(SessionData(status: .sessionTermination).encodedBytes)
        publish(.error(.cancelled))
        await shutdown()
    }

    // MARK: Receiving

    private func receiveLoop() async {
        while phase != .ended {
            // No timeout while the user decides.
            let timeout: Duration? = phase == .awaitingConsent || phase == .responding ? nil : config.messageTimeout
            let message: [UInt8]
            do {
                message = try await transport.receive(timeout: timeout)
            } catch {
                guard phase != .ended else { return }
                if error == .connectionClosed {
                    phase = .ended
                    publish(.sessionTerminationReceived(afterResponse: responded))
                    await shutdown()
                } else {
                    await fail(error, status: nil)
                }
                return
            }
            guard phase != .ended else { return }
            if encryption == nil {
                await establish(message)
            } else {
                await handleSessionData(message)
            }
        }
    }

    private func establish(_ bytes: [UInt8]) async {
        let establishment: SessionEstablishment
        do { establishment = try SessionEstablishment(encoded: bytes) } catch {
            await fail(.invalidMessage("SessionEstablishment: \(error)"), status: .cborDecodingError)
            return
        }
        let transcript = SessionTranscript(deviceEngagement: deviceEngagement,
                                           eReaderKeyEncoded: establishment.eReaderKeyEncoded, handover: handover)
        do {
            let session = try await SessionEncryption(role: .mdoc, privateKey: SoftwareKeyAgreement(eDeviceKey),
                                                      peerPublicKey: try establishment.eReaderPublicKey(),
                                                      sessionTranscript: transcript)
            encryption = session
            sessionTranscript = transcript
        } catch {
            await fail(.sessionEncryptionFailed("\(error)"), status: .sessionEncryptionError)
            return
        }
        publish(.connected)
        await handleRequest(ciphertext: establishment.data, first: true)
    }

    private func handleSessionData(_ bytes: [UInt8]) async {
        let data: SessionData
        do { data = try SessionData(encoded: bytes) } catch {
            await fail(.invalidMessage("SessionData: \(error)"), status: .cborDecodingError)
            return
        }
        if data.status == .sessionTermination && data.data == nil {
            phase = .ended
            publish(.sessionTerminationReceived(afterResponse: responded))
            await shutdown()
            return
        }
        if let status = data.status, status != .sessionTermination {
            await fail(.peerReportedError(status: Int(status.rawValue)), status: nil)
            return
        }
        guard let ciphertext = data.data else { return }
        publish(.sessionDataReceived(byteCount: bytes.count))
        await handleRequest(ciphertext: ciphertext, first: false)
    }

    private func handleRequest(ciphertext: [UInt8], first: Bool) async {
        guard let encryption else { return }
        let plaintext: [UInt8]
        do { plaintext = try await encryption.decrypt(ciphertext) } catch {
            await fail(.sessionEncryptionFailed("\(error)"), status: .sessionEncryptionError)
            return
        }
        let request: DeviceRequest
        do { request = try DeviceRequest(encoded: plaintext) } catch {
            await fail(.invalidMessage("DeviceRequest: \(error)"), status: .cborDecodingError)
            return
        }
        if let anchors = config.readerTrustAnchors, let transcript = sessionTranscript {
            for docRequest in request.docRequests where docRequest.readerAuth != nil {
                do {
                    _ = try docRequest.verifyReaderAuthentication(sessionTranscript: transcript, trustAnchors: anchors, at: Date())
                } catch {
                    await fail(.invalidMessage("reader authentication: \(error)"), status: .cborDecodingError)
                    return
                }
            }
        }
        deviceRequest = request
        phase = .awaitingConsent
        publish(.documentsSelectionProcessStart(data: plaintext))
    }

    // MARK: Helpers

    private func publish(_ kind: MdocRetrievalEvent.Kind) {
        hub.publish(MdocRetrievalEvent(engagementId: engagementId, kind: kind))
    }

    private func fail(_ error: ProximityError, status: SessionData.Status?) async {
        guard phase != .ended else { return }
        phase = .ended
        if let status { try? await transport.send(SessionData(status: status).encodedBytes) }
        publish(.error(error))
        await shutdown()
    }

    private func shutdown() async {
        if let encryption { await encryption.terminate() }
        await transport.close()
    }
}
