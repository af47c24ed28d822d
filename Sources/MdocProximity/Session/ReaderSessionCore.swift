import COSE
import Mdoc
import WalletCrypto

/// The reader's side of one ISO 18013-5 session (§9.1.1) as a value: requests in,
/// messages to send out; received messages in, DeviceResponses (or the end) out. No
/// I/O: ``MdocReader`` moves the bytes.
public struct ReaderSessionCore: Sendable {
    /// What a received message meant.
    public enum Receipt: Equatable, Sendable {
        /// A DeviceResponse; `sessionEnded` when it came with status 20.
        case response(DeviceResponse, sessionEnded: Bool)
        /// The mdoc ended the session (status 20 without data).
        case ended
    }

    /// The session transcript both sides bind to.
    public let sessionTranscript: SessionTranscript
    /// The reader's ephemeral key, as its COSE_Key bytes go into the transcript.
    public let eReaderKeyEncoded: [UInt8]
    /// Whether the session has ended.
    public private(set) var isEnded = false
    /// Whether a request is waiting for its response.
    public private(set) var awaitingResponse = false

    private let eReaderKey: ECPublicKey
    private var encryption: SessionEncryption
    private var established = false

    /// A session with the mdoc whose engagement is `deviceEngagement`, set up by `handover`.
    public init(eReaderKey: ECPrivateKey, deviceEngagement: DeviceEngagement, handover: Handover) throws(ProximityError) {
        self.eReaderKey = eReaderKey.publicKey
        let keyBytes = COSEKey(publicKey: .ec(eReaderKey.publicKey)).encoded()
        eReaderKeyEncoded = keyBytes
        let transcript = SessionTranscript(deviceEngagement: deviceEngagement, eReaderKeyEncoded: keyBytes, handover: handover)
        sessionTranscript = transcript
        let deviceKey = try Self.deviceKey(of: deviceEngagement)
        do throws(MdocError) {
            let secret: SharedSecret
            do { secret = try eReaderKey.sharedSecret(with: deviceKey) } catch { throw .crypto(error) }
            encryption = SessionEncryption(role: .reader, keys: try SessionKeys(sharedSecret: secret, sessionTranscript: transcript),
                                           sessionTranscript: transcript)
        } catch {
            throw .sessionEncryptionFailed(error)
        }
    }

    /// The engagement's EDeviceKey as an EC key: what a session with it agrees keys
    /// with, or the error such a session fails with (checked before connecting).
    static func deviceKey(of engagement: DeviceEngagement) throws(ProximityError) -> ECPublicKey {
        do { return try engagement.security.ecPublicKey() } catch { throw .sessionEncryptionFailed(error) }
    }

    /// The message carrying `request`: SessionEstablishment first, SessionData after.
    public mutating func send(_ request: DeviceRequest) throws(ProximityError) -> [UInt8] {
        guard !isEnded else { throw .invalidState(.sessionEnded) }
        guard !awaitingResponse else { throw .invalidState(.noResponseExpected) }
        let ciphertext: [UInt8]
        do { ciphertext = try encryption.encrypt(request.encodedBytes) } catch { throw .sessionEncryptionFailed(error) }
        awaitingResponse = true
        defer { established = true }
        return established ? SessionData(data: ciphertext).encodedBytes
            : SessionEstablishment(eReaderKey: eReaderKey, data: ciphertext).encodedBytes
    }

    /// Reads the mdoc's message.
    public mutating func receive(_ bytes: [UInt8]) throws(ProximityError) -> Receipt {
        guard !isEnded else { throw .invalidState(.sessionEnded) }
        let data: SessionData
        do { data = try SessionData(encoded: bytes) } catch { throw .invalidMessage(.sessionData(error)) }
        awaitingResponse = false
        let opened: [UInt8]?
        do { opened = try encryption.open(data) } catch {
            isEnded = true
            switch error {
            case .sessionTerminated: return .ended
            case .peerReportedError(let status): throw .peerReportedError(status: status)
            default: throw .sessionEncryptionFailed(error)
            }
        }
        guard let plaintext = opened else { isEnded = true; return .ended }
        if data.status == .sessionTermination { isEnded = true }
        do { return .response(try DeviceResponse(encoded: plaintext), sessionEnded: isEnded) } catch {
            throw .invalidMessage(.deviceResponse(error))
        }
    }

    /// The status-20 message that ends the session, once.
    public mutating func end() -> [UInt8]? {
        guard !isEnded else { return nil }
        isEnded = true
        encryption.terminate()
        return SessionData(status: .sessionTermination).encodedBytes
    }
}
