import WalletCrypto

/// The encryption of one session, for one side (ISO 18013-5 §9.1.1.5).
///
/// AES-256-GCM with the sender's key; the 12-byte IV is an 8-byte identifier (all zero for
/// the reader's messages, `00..01` for the mdoc's) followed by the 4-byte big-endian
/// message counter of that direction, starting at 1. Each direction's counter only moves
/// forward, so a replayed, reordered or tampered message fails to decrypt (status 10).
///
/// A value: the session core that owns it is the only one to encrypt with it, and every
/// operation that uses a counter is `mutating`, so a counter can never be used twice by
/// the same value. (Copying it and encrypting with both copies would reuse IVs; the
/// proximity sessions keep exactly one.)
public struct SessionEncryption: Sendable {
    /// The side this value encrypts for.
    public let role: SessionRole
    /// The transcript the keys were derived from.
    public let sessionTranscript: SessionTranscript

    private let sendKey: SymmetricKey
    private let receiveKey: SymmetricKey
    private var sendCounter: UInt32 = 1
    private var receiveCounter: UInt32 = 1
    private var terminated = false

    /// A session for `role` with known keys.
    public init(role: SessionRole, keys: SessionKeys, sessionTranscript: SessionTranscript) {
        self.role = role
        self.sessionTranscript = sessionTranscript
        switch role {
        case .mdoc: sendKey = keys.skDevice; receiveKey = keys.skReader
        case .reader: sendKey = keys.skReader; receiveKey = keys.skDevice
        }
    }

    /// A session for `role`: ECDH of this side's ephemeral key with the peer's
    /// (EReaderKey for the mdoc, EDeviceKey for the reader), then the HKDF derivations.
    public init(role: SessionRole, privateKey: any KeyAgreement, peerPublicKey: ECPublicKey,
                sessionTranscript: SessionTranscript) async throws(MdocError) {
        let keys = try await SessionKeys.derive(privateKey: privateKey, peerPublicKey: peerPublicKey,
                                                sessionTranscript: sessionTranscript)
        self.init(role: role, keys: keys, sessionTranscript: sessionTranscript)
    }

    /// The IV for `counter` of the messages sent by `sender` (§9.1.1.5).
    public static func nonce(sender: SessionRole, counter: UInt32) -> [UInt8] {
        var iv = [UInt8](repeating: 0, count: 12)
        if sender == .mdoc { iv[7] = 1 }
        iv[8] = UInt8(counter >> 24)
        iv[9] = UInt8((counter >> 16) & 0xff)
        iv[10] = UInt8((counter >> 8) & 0xff)
        iv[11] = UInt8(counter & 0xff)
        return iv
    }

    /// The next message counter this side will encrypt with.
    public var nextSendCounter: UInt32 { sendCounter }
    /// The counter the next received message must have been encrypted with.
    public var nextReceiveCounter: UInt32 { receiveCounter }

    /// Encrypts the next outgoing message (ciphertext || 16-byte tag).
    /// - Throws: `sessionTerminated` after ``terminate()``, `counterExhausted`, `crypto`.
    public mutating func encrypt(_ plaintext: [UInt8]) throws(MdocError) -> [UInt8] {
        guard !terminated else { throw .sessionTerminated }
        guard sendCounter != 0 else { throw .counterExhausted }
        let nonce = Self.nonce(sender: role, counter: sendCounter)
        let sealed: [UInt8]
        do { sealed = try AESGCM.sealCombined(plaintext, key: sendKey, nonce: nonce) } catch { throw .crypto(error) }
        sendCounter &+= 1  // wraps to 0, which is then refused
        return sealed
    }

    /// Decrypts the next incoming message. The counter advances only on success, so a
    /// rejected message does not disturb the ones that follow.
    /// - Throws: `decryptionFailed` (status 10) for a wrong key, a changed ciphertext or
    ///   tag, a replayed or reordered message; `sessionTerminated`; `counterExhausted`.
    public mutating func decrypt(_ message: [UInt8]) throws(MdocError) -> [UInt8] {
        guard !terminated else { throw .sessionTerminated }
        guard receiveCounter != 0 else { throw .counterExhausted }
        let peer: SessionRole = role == .mdoc ? .reader : .mdoc
        let nonce = Self.nonce(sender: peer, counter: receiveCounter)
        guard message.count >= AESGCM.tagByteCount else { throw .decryptionFailed(counter: receiveCounter) }
        let plaintext: [UInt8]
        do {
            plaintext = try AESGCM.open(combined: message, key: receiveKey, nonce: nonce)
        } catch {
            throw .decryptionFailed(counter: receiveCounter)
        }
        receiveCounter &+= 1
        return plaintext
    }

    /// Encrypts `plaintext` into a SessionData message, optionally with a status.
    public mutating func sessionData(_ plaintext: [UInt8], status: SessionData.Status? = nil) throws(MdocError) -> SessionData {
        SessionData(data: try encrypt(plaintext), status: status)
    }

    /// Reads a received SessionData: returns the decrypted data (nil when the message
    /// carries only a status). A status of 20 ends the session after its data is read;
    /// any other (10, 11, or one Table 20 does not define) is `peerReportedError`.
    public mutating func open(_ message: SessionData) throws(MdocError) -> [UInt8]? {
        let plaintext = try message.data.map { data throws(MdocError) in try decrypt(data) }
        if let status = message.status {
            if status == .sessionTermination {
                terminated = true
                if plaintext == nil { throw .sessionTerminated }
            } else {
                throw .peerReportedError(status: status.rawValue)
            }
        }
        return plaintext
    }

    /// Ends the session: no more messages are encrypted or decrypted.
    public mutating func terminate() { terminated = true }

    /// True once the session ended.
    public var isTerminated: Bool { terminated }
}
