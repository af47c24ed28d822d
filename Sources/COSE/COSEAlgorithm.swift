import WalletCrypto

/// The COSE algorithms this module implements, with their IANA identifiers
/// (RFC 9053 §2 for signatures, §3.1 for HMAC).
public enum COSEAlgorithm: Int, Sendable, Hashable, CaseIterable {
    /// ECDSA with SHA-256 on P-256.
    case es256 = -7
    /// ECDSA with SHA-384 on P-384.
    case es384 = -35
    /// ECDSA with SHA-512 on P-521.
    case es512 = -36
    /// EdDSA; this module supports the Ed25519 curve.
    case edDSA = -8
    /// HMAC with SHA-256, tag truncated to 64 bits ("HMAC 256/64").
    case hmac256Truncated64 = 4
    /// HMAC with SHA-256, full 256-bit tag ("HMAC 256/256").
    case hmac256 = 5
    /// HMAC with SHA-384 ("HMAC 384/384").
    case hmac384 = 6
    /// HMAC with SHA-512 ("HMAC 512/512").
    case hmac512 = 7

    /// Maps an integer identifier to an algorithm, throwing `unsupportedAlgorithm` when
    /// it is not one this module implements.
    public init(identifier: Int) throws(COSEError) {
        guard let algorithm = COSEAlgorithm(rawValue: identifier) else { throw .unsupportedAlgorithm(identifier) }
        self = algorithm
    }

    /// True for the signature algorithms (ES256/384/512, EdDSA).
    public var isSignature: Bool { signatureAlgorithm != nil }

    /// True for the HMAC algorithms.
    public var isMAC: Bool { macHash != nil }

    /// The `WalletCrypto` signature algorithm, or nil for a MAC algorithm.
    public var signatureAlgorithm: SignatureAlgorithm? {
        switch self {
        case .es256: .es256
        case .es384: .es384
        case .es512: .es512
        case .edDSA: .edDSA
        default: nil
        }
    }

    /// The COSE identifier of a `WalletCrypto` signature algorithm.
    public init(_ algorithm: SignatureAlgorithm) {
        switch algorithm {
        case .es256: self = .es256
        case .es384: self = .es384
        case .es512: self = .es512
        case .edDSA: self = .edDSA
        }
    }

    /// The hash function of an HMAC algorithm, or nil for a signature algorithm.
    public var macHash: HashAlgorithm? {
        switch self {
        case .hmac256Truncated64, .hmac256: .sha256
        case .hmac384: .sha384
        case .hmac512: .sha512
        default: nil
        }
    }

    /// The length in bytes of an HMAC algorithm's tag (8 for 256/64), or nil.
    public var macTagLength: Int? {
        switch self {
        case .hmac256Truncated64: 8
        case .hmac256: 32
        case .hmac384: 48
        case .hmac512: 64
        default: nil
        }
    }
}
