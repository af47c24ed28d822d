import Foundation
import Mdoc
import WalletCrypto
import WalletEncoding

/// The holder's side of one ISO 18013-5 session (§9.1.1) as a value: carrier messages,
/// timer firings and the app's decisions in; messages to send, events to publish,
/// timers to start and the carrier to close out. No I/O, no clock, no tasks: the time
/// a message arrived is part of its input, and ``TransferManager`` performs the effects.
///
/// The session waits for SessionEstablishment, derives the session keys from the
/// ephemeral device key and the reader's key, decrypts the DeviceRequest (checking
/// reader authentication against the configured anchors), pauses for the user's
/// decision, then sends the DeviceResponse (by default with status 20, ending the
/// session). A message that does not decrypt is answered with status 10, one that is
/// not the expected CBOR with status 11 (§9.1.1.5); either ends the session.
public struct HolderSessionCore: Sendable {
    /// Where the session stands.
    public enum Phase: String, Hashable, Sendable {
        /// Waiting for SessionEstablishment.
        case awaitingEstablishment
        /// A request waits for the user's decision.
        case awaitingConsent
        /// The user accepted; the response is being built.
        case responding
        /// A response was sent without ending the session; waiting for another request or the end.
        case responded
        /// Finished (see ``HolderSessionCore/ending``).
        case ended
    }

    /// How the session ended.
    public enum Ending: Equatable, Sendable {
        /// The response was sent with status 20.
        case completed
        /// The user declined.
        case declined
        /// The app cancelled it.
        case cancelled
        /// The reader ended it (status 20 or a closed carrier).
        case endedByReader(afterResponse: Bool)
        /// It failed.
        case failed(ProximityError)
    }

    /// The timers a session uses.
    public enum Timer: String, Hashable, Sendable {
        /// The reader's next message.
        case message
        /// The document provider building the response.
        case provider
    }

    /// What happened.
    public enum Input: Sendable {
        /// A whole message from the reader, and when it arrived.
        case received([UInt8], at: Date)
        /// The carrier closed (the reader went away).
        case carrierClosed
        /// The carrier failed.
        case carrierFailed(ProximityError)
        /// A timer started by ``Effect/startTimer(_:_:generation:)`` fired.
        case timerFired(Timer, generation: Int)
        /// The user accepted the request; the app builds the response.
        case accepted
        /// The response to send; with `terminate` it carries status 20 and ends the session.
        case respond(DeviceResponse, terminate: Bool)
        /// Building the response failed.
        case responseFailed(ProximityError)
        /// The user declined the request.
        case declined
        /// The app cancelled the session.
        case cancelled
    }

    /// What to do.
    public enum Effect: Equatable, Sendable {
        /// Send this message on the carrier.
        case send([UInt8])
        /// Publish this event.
        case publish(MdocRetrievalEvent.Kind)
        /// Start (or restart) a timer; report it with this generation when it fires.
        case startTimer(Timer, Duration, generation: Int)
        /// Stop a timer.
        case cancelTimer(Timer)
        /// Close the carrier.
        case closeCarrier
    }

    /// Where the session stands.
    public private(set) var phase: Phase = .awaitingEstablishment
    /// How it ended, once ``phase`` is `.ended`.
    public private(set) var ending: Ending?
    /// The session transcript, once established.
    public private(set) var sessionTranscript: SessionTranscript?
    /// The request waiting for the user (or the last one answered).
    public private(set) var deviceRequest: DeviceRequest?

    private let eDeviceKey: ECPrivateKey
    private let deviceEngagement: DeviceEngagement
    private let handover: Handover
    private let expectedReaderKey: [UInt8]?
    private let readerTrustAnchors: [X509Certificate]?
    private let requireReaderAuthentication: Bool
    private let messageTimeout: Duration
    private let providerTimeout: Duration
    private var encryption: SessionEncryption?
    private var responded = false
    private var generations: [Timer: Int] = [:]

    /// A session for the engagement `deviceEngagement` (whose ephemeral key is
    /// `eDeviceKey`) set up by `handover`. In reverse engagement, `expectedReaderKey` is
    /// the COSE_Key bytes of the scanned ReaderEngagement: a SessionEstablishment with
    /// another key is refused. With `readerTrustAnchors`, every readerAuth a request
    /// carries is verified under them; with `requireReaderAuthentication`, every document
    /// request must carry one that verifies (see ``EngagementConfig``).
    public init(eDeviceKey: ECPrivateKey, deviceEngagement: DeviceEngagement, handover: Handover,
                expectedReaderKey: [UInt8]? = nil, readerTrustAnchors: [X509Certificate]? = nil,
                requireReaderAuthentication: Bool = false, messageTimeout: Duration, providerTimeout: Duration) {
        self.eDeviceKey = eDeviceKey
        self.deviceEngagement = deviceEngagement
        self.handover = handover
        self.expectedReaderKey = expectedReaderKey
        self.readerTrustAnchors = readerTrustAnchors
        self.requireReaderAuthentication = requireReaderAuthentication
        self.messageTimeout = messageTimeout
        self.providerTimeout = providerTimeout
    }

    /// Starts waiting for SessionEstablishment.
    public mutating func start() -> [Effect] {
        [startTimer(.message, messageTimeout)]
    }

    /// Applies one input. Throws only for a decision the app may not make now
    /// (``ProximityError/invalidState(_:)``); protocol failures end the session instead.
    public mutating func handle(_ input: Input) throws(ProximityError) -> [Effect] {
        switch input {
        case .received(let bytes, let time):
            guard phase != .ended else { return [] }
            return received(bytes, at: time)
        case .carrierClosed:
            guard phase != .ended else { return [] }
            return end(.endedByReader(afterResponse: responded), publishing: .sessionTerminationReceived(afterResponse: responded))
        case .carrierFailed(let error):
            guard phase != .ended else { return [] }
            return fail(error, status: nil)
        case .timerFired(let timer, let generation):
            guard phase != .ended, generations[timer] == generation else { return [] }
            switch (timer, phase) {
            case (.message, .awaitingEstablishment), (.message, .responded):
                return fail(.timeout(seconds: messageTimeout.timeInterval), status: .sessionTermination)
            case (.provider, .responding):
                return fail(.timeout(seconds: providerTimeout.timeInterval), status: .sessionTermination)
            default:
                return []
            }
        case .accepted:
            guard phase == .awaitingConsent else { throw phase == .ended ? .invalidState(.sessionEnded) : .invalidState(.noRequestPending) }
            phase = .responding
            return [.publish(.documentsSelectionProcessAccepted), startTimer(.provider, providerTimeout)]
        case .respond(let response, let terminate):
            guard phase == .awaitingConsent || phase == .responding else {
                throw phase == .ended ? .invalidState(.sessionEnded) : .invalidState(.noResponseExpected)
            }
            return respond(response, terminate: terminate)
        case .responseFailed(let error):
            guard phase == .responding else { return [] }
            return fail(error, status: .sessionTermination)
        case .declined:
            guard phase == .awaitingConsent || phase == .responding else {
                throw phase == .ended ? .invalidState(.sessionEnded) : .invalidState(.noRequestPending)
            }
            return [.cancelTimer(.provider), .send(SessionData(status: .sessionTermination).encodedBytes)]
                + end(.declined, publishing: .documentsSelectionProcessDeclined)
        case .cancelled:
            guard phase != .ended else { return [] }
            return [.send(SessionData(status: .sessionTermination).encodedBytes)] + end(.cancelled, publishing: .cancelled)
        }
    }

    // MARK: Messages

    private mutating func received(_ bytes: [UInt8], at time: Date) -> [Effect] {
        if encryption == nil { return establish(bytes, at: time) }
        let data: SessionData
        do { data = try SessionData(encoded: bytes) } catch {
            return fail(.invalidMessage(.sessionData(error)), status: .cborDecodingError)
        }
        if let status = data.status, status != .sessionTermination {
            return fail(.peerReportedError(status: status.rawValue), status: nil)
        }
        if data.status == .sessionTermination {
            // The reader ends the session (ISO/IEC 18013-5 §9.1.1.4), whatever data it sends
            // with the status: never a new request to put before the user.
            return end(.endedByReader(afterResponse: responded), publishing: .sessionTerminationReceived(afterResponse: responded))
        }
        guard let ciphertext = data.data, phase == .responded else {
            // Data while a request waits for the user: not a message the session expects.
            return fail(.invalidMessage(.unexpectedData), status: .sessionTermination)
        }
        return [.publish(.sessionDataReceived(byteCount: bytes.count))] + request(ciphertext, at: time)
    }

    private mutating func establish(_ bytes: [UInt8], at time: Date) -> [Effect] {
        let establishment: SessionEstablishment
        do { establishment = try SessionEstablishment(encoded: bytes) } catch {
            return fail(.invalidMessage(.sessionEstablishment(error)), status: .cborDecodingError)
        }
        if let expectedReaderKey, establishment.eReaderKeyEncoded != expectedReaderKey {
            return fail(.invalidEngagement(.readerKeyMismatch), status: .sessionEncryptionError)
        }
        let transcript = SessionTranscript(deviceEngagement: deviceEngagement, eReaderKeyEncoded: establishment.eReaderKeyEncoded,
                                           handover: handover)
        do throws(MdocError) {
            let readerKey = try establishment.eReaderPublicKey()
            let secret: SharedSecret
            do { secret = try eDeviceKey.sharedSecret(with: readerKey) } catch { throw .crypto(error) }
            let keys = try SessionKeys(sharedSecret: secret, sessionTranscript: transcript)
            encryption = SessionEncryption(role: .mdoc, keys: keys, sessionTranscript: transcript)
            sessionTranscript = transcript
        } catch {
            return fail(.sessionEncryptionFailed(error), status: .sessionEncryptionError)
        }
        return [.publish(.connected)] + request(establishment.data, at: time)
    }

    private mutating func request(_ ciphertext: [UInt8], at time: Date) -> [Effect] {
        guard var session = encryption else { return fail(.invalidState(.notEngaged), status: nil) }
        let plaintext: [UInt8]
        do { plaintext = try session.decrypt(ciphertext) } catch {
            encryption = session
            return fail(.sessionEncryptionFailed(error), status: .sessionEncryptionError)
        }
        encryption = session
        let request: DeviceRequest
        do { request = try DeviceRequest(encoded: plaintext) } catch {
            return fail(.invalidMessage(.deviceRequest(error)), status: .cborDecodingError)
        }
        if let transcript = sessionTranscript {
            // With anchors (or when required), the chain and the signature; without, the
            // signature under the certificate the request carries, so that no request
            // shows another reader's (public) certificate as its own.
            let checksChain = readerTrustAnchors != nil || requireReaderAuthentication
            for docRequest in request.docRequests where docRequest.readerAuth != nil || requireReaderAuthentication {
                do {
                    if checksChain {
                        _ = try docRequest.verifyReaderAuthentication(sessionTranscript: transcript,
                                                                      trustAnchors: readerTrustAnchors ?? [], at: time)
                    } else {
                        _ = try docRequest.verifyReaderSignature(sessionTranscript: transcript)
                    }
                } catch {
                    return fail(.readerAuthenticationFailed(error), status: .cborDecodingError)
                }
            }
        }
        deviceRequest = request
        phase = .awaitingConsent
        return [.cancelTimer(.message), .publish(.documentsSelectionProcessStart(data: plaintext))]
    }

    private mutating func respond(_ response: DeviceResponse, terminate: Bool) -> [Effect] {
        guard var session = encryption else { return fail(.invalidState(.notEngaged), status: nil) }
        var effects: [Effect] = []
        if phase == .awaitingConsent { effects.append(.publish(.documentsSelectionProcessAccepted)) }
        let message: SessionData
        do { message = try session.sessionData(response.encodedBytes, status: terminate ? .sessionTermination : nil) } catch {
            encryption = session
            return effects + fail(.sessionEncryptionFailed(error), status: nil)
        }
        if terminate { session.terminate() }
        encryption = session
        responded = true
        let bytes = message.encodedBytes
        effects += [.cancelTimer(.provider), .send(bytes), .publish(.sessionDataSend(byteCount: bytes.count))]
        if terminate { return effects + end(.completed, publishing: .sessionTerminationSend) }
        phase = .responded
        return effects + [startTimer(.message, messageTimeout)]
    }

    // MARK: Helpers

    private mutating func startTimer(_ timer: Timer, _ duration: Duration) -> Effect {
        let generation = (generations[timer] ?? 0) + 1
        generations[timer] = generation
        return .startTimer(timer, duration, generation: generation)
    }

    private mutating func fail(_ error: ProximityError, status: SessionData.Status?) -> [Effect] {
        (status.map { [Effect.send(SessionData(status: $0).encodedBytes)] } ?? []) + end(.failed(error), publishing: .error(error))
    }

    private mutating func end(_ ending: Ending, publishing kind: MdocRetrievalEvent.Kind) -> [Effect] {
        phase = .ended
        self.ending = ending
        if var session = encryption {
            session.terminate()
            encryption = session
        }
        generations.removeAll()
        return [.cancelTimer(.message), .cancelTimer(.provider), .publish(kind), .closeCarrier]
    }
}
