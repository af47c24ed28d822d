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

    /// Imports a raw 32-byte public key. A point of small order is refused
    /// (``InvalidKeyReason/smallOrder``): RFC 8032 verification, as OpenSSL runs it, does
    /// not reject one, and with the identity as the key `R` = identity, `S` = 0 verifies
    /// for any message. Anyone could then sign as a holder whose proof of possession
    /// named such a key.
    public init(rawRepresentation raw: [UInt8]) throws(CryptoError) {
        guard raw.count == Self.byteCount else { throw .invalidLength(.ed25519PublicKey, actual: raw.count) }
        guard !Self.hasSmallOrder(raw) else { throw .invalidKey(.smallOrder) }
        guard let imported = EVP_PKEY_new_raw_public_key_ex(nil, "ED25519", nil, raw, raw.count) else {
            ERR_clear_error()
            throw .invalidKey(.malformed)
        }
        self.key = EVPKey(taking: imported)
        self.rawRepresentation = raw
    }

    /// The encodings of the small-order points with the x sign bit cleared: y = 0 (order
    /// 4), y = 1 (the identity), the two y of the order-8 points, y = p - 1 (order 2),
    /// and the non-canonical y = p and p + 1 (0 and 1 again). The same list as libsodium's
    /// `ge25519_has_small_order`; each was checked to be on the curve with the stated order.
    private static let smallOrderEncodings: [[UInt8]] = [
        [UInt8](repeating: 0, count: 32),
        [0x01] + [UInt8](repeating: 0, count: 31),
        [0x26, 0xe8, 0x95, 0x8f, 0xc2, 0xb2, 0x27, 0xb0, 0x45, 0xc3, 0xf4, 0x89, 0xf2, 0xef, 0x98, 0xf0,
         0xd5, 0xdf, 0xac, 0x05, 0xd3, 0xc6, 0x33, 0x39, 0xb1, 0x38, 0x02, 0x88, 0x6d, 0x53, 0xfc, 0x05],
        [0xc7, 0x17, 0x6a, 0x70, 0x3d, 0x4d, 0xd8, 0x4f, 0xba, 0x3c, 0x0b, 0x76, 0x0d, 0x10, 0x67, 0x0f,
         0x2a, 0x20, 0x53, 0xfa, 0x2c, 0x39, 0xcc, 0xc6, 0x4e, 0xc7, 0xfd, 0x77, 0x92, 0xac, 0x03, 0x7a],
        [0xEC] + [UInt8](repeating: 0xFF, count: 30) + [0x7F],
        [0xED] + [UInt8](repeating: 0xFF, count: 30) + [0x7F],
        [0xEE] + [UInt8](repeating: 0xFF, count: 30) + [0x7F],
    ]

    /// Whether `raw` (32 bytes) encodes a point of small order, whatever its x sign bit.
    static func hasSmallOrder(_ raw: [UInt8]) -> Bool {
        var masked = raw
        masked[31] &= 0x7F
        return smallOrderEncodings.contains(masked)
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
