import WalletCrypto

/// Which side of a session a party plays.
public enum SessionRole: Sendable, Hashable {
    /// The holder's device (encrypts with SKDevice, identifier ...01).
    case mdoc
    /// The reader (encrypts with SKReader, identifier ...00).
    case reader
}

/// The two session keys of ISO 18013-5 §9.1.1.5, and the derivations that share their
/// inputs (EMacKey, §9.1.3.5).
///
/// The keys are opaque ``SymmetricKey`` values: wiped when released, never printed.
public struct SessionKeys: Sendable, CustomStringConvertible, CustomReflectable {
    /// The key the reader encrypts with (32 bytes).
    public let skReader: SymmetricKey
    /// The key the mdoc encrypts with (32 bytes).
    public let skDevice: SymmetricKey

    /// Keys given directly (tests, or keys derived elsewhere).
    public init(skReader: SymmetricKey, skDevice: SymmetricKey) {
        self.skReader = skReader
        self.skDevice = skDevice
    }

    /// HKDF-SHA-256 of the ECDH secret `zab`, salt SHA-256(SessionTranscriptBytes), info
    /// "SKReader" / "SKDevice", 32 bytes each (§9.1.1.5).
    public init(sharedSecret zab: SharedSecret, sessionTranscript: SessionTranscript) throws(MdocError) {
        skReader = try Self.derive(zab, transcript: sessionTranscript, info: "SKReader")
        skDevice = try Self.derive(zab, transcript: sessionTranscript, info: "SKDevice")
    }

    /// Derives the keys from this side's ephemeral key and the peer's public key.
    public static func derive(privateKey: any KeyAgreement, peerPublicKey: ECPublicKey,
                              sessionTranscript: SessionTranscript) async throws(MdocError) -> SessionKeys {
        try SessionKeys(sharedSecret: try await sharedSecret(privateKey, peerPublicKey), sessionTranscript: sessionTranscript)
    }

    /// EMacKey for deviceMac (§9.1.3.5): HKDF-SHA-256 of ECDH(SDeviceKey, EReaderKey),
    /// salt SHA-256(SessionTranscriptBytes), info "EMacKey", 32 bytes. The mdoc uses its
    /// device key and the reader's ephemeral public key; the reader uses its ephemeral
    /// private key and the MSO's device key.
    public static func eMacKey(privateKey: any KeyAgreement, peerPublicKey: ECPublicKey,
                               sessionTranscript: SessionTranscript) async throws(MdocError) -> SymmetricKey {
        try derive(try await sharedSecret(privateKey, peerPublicKey), transcript: sessionTranscript, info: "EMacKey")
    }

    static func sharedSecret(_ privateKey: any KeyAgreement, _ peer: ECPublicKey) async throws(MdocError) -> SharedSecret {
        do { return try await privateKey.sharedSecret(with: peer) } catch { throw .keyOperation(error) }
    }

    static func derive(_ zab: SharedSecret, transcript: SessionTranscript, info: String) throws(MdocError) -> SymmetricKey {
        let salt = HashAlgorithm.sha256.digest(transcript.taggedBytes)
        do {
            return try zab.hkdfDerivedSymmetricKey(salt: salt, info: Array(info.utf8), outputByteCount: 32)
        } catch {
            throw .crypto(error)
        }
    }

    /// Names the two keys, never their bytes.
    public var description: String { "SessionKeys(skReader: \(skReader), skDevice: \(skDevice))" }
    /// A mirror without children, so `dump` cannot reveal key material.
    public var customMirror: Mirror { Mirror(self, children: [:]) }
}
