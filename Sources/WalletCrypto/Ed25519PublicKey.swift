import WalletEncoding
internal import COpenSSL

/// An Ed25519 public key (RFC 8032).
public struct Ed25519PublicKey: Sendable, Equatable, CustomStringConvertible {
    /// The length of a raw public key in bytes.
    public static let byteCount = 32

    /// The libcrypto key (used by the X.509 code).
    let key: EVPKey
    /// The raw 32-byte public key.
    public let rawRepresentation: [UInt8]

    /// Imports a raw 32-byte public key.
    public init(rawRepresentation raw: [UInt8]) throws(CryptoError) {
        guard raw.count == Self.byteCount else { throw .invalidLength(.ed25519PublicKey, actual: raw.count) }
        guard let imported = EVP_PKEY_new_raw_public_key_ex(nil, "ED25519", nil, raw, raw.count) else {
            ERR_clear_error()
            throw .invalidKey(.malformed)
        }
        self.key = EVPKey(taking: imported)
        self.rawRepresentation = raw
    }

    /// Imports a DER SubjectPublicKeyInfo holding an Ed25519 key.
    public init(spkiDER: [UInt8]) throws(CryptoError) {
        try self.init(decoded: EVPKey.fromSubjectPublicKeyInfo(spkiDER))
    }

    /// Wraps a decoded key after checking its type.
    init(decoded: EVPKey) throws(CryptoError) {
        guard decoded.isA("ED25519") else { throw .unsupportedKey(expected: .ed25519) }
        try self.init(rawRepresentation: decoded.rawKey(private: false))
    }

    /// The DER SubjectPublicKeyInfo. Never throws; written from the fixed RFC 8410 prefix
    /// and the raw key.
    public var spkiDER: [UInt8] {
        get throws(CryptoError) { SubjectPublicKeyInfoPrefix.ed25519 + rawRepresentation }
    }

    /// Whether `signature` (64 bytes) is a valid Ed25519 signature of `message`.
    public func isValidSignature(_ signature: [UInt8], for message: [UInt8]) -> Bool {
        guard signature.count == 64 else { return false }
        return key.verify(signature, message: message, digest: nil)
    }

    /// Keys are equal when their raw bytes are.
    public static func == (lhs: Ed25519PublicKey, rhs: Ed25519PublicKey) -> Bool {
        lhs.rawRepresentation == rhs.rawRepresentation
    }

    /// The raw key in hex.
    public var description: String { "Ed25519PublicKey(\(Hex.encode(rawRepresentation)))" }
}
