import WalletCrypto

/// The JWS `alg` values this module signs and verifies (RFC 7518 §3, RFC 8037 §3.1).
public enum JWSAlgorithm: String, Sendable, CaseIterable, Hashable {
    /// ECDSA with P-256 and SHA-256.
    case es256 = "ES256"
    /// ECDSA with P-384 and SHA-384.
    case es384 = "ES384"
    /// ECDSA with P-521 and SHA-512.
    case es512 = "ES512"
    /// Ed25519.
    case edDSA = "EdDSA"
    /// HMAC with SHA-256.
    case hs256 = "HS256"

    /// Reads an `alg` value: `none` is never allowed; unknown names are unsupported.
    public init(header value: String) throws(JOSEError) {
        if value.lowercased() == "none" { throw .algorithmNotAllowed(value) }
        guard let algorithm = JWSAlgorithm(rawValue: value) else { throw .unsupportedAlgorithm(.alg, value: value) }
        self = algorithm
    }

    /// The JWS algorithm of a `WalletCrypto` signature algorithm.
    public init(_ algorithm: SignatureAlgorithm) {
        switch algorithm {
        case .es256: self = .es256
        case .es384: self = .es384
        case .es512: self = .es512
        case .edDSA: self = .edDSA
        }
    }

    /// The curve an ECDSA algorithm requires.
    public var curve: ECCurve? {
        switch self {
        case .es256: .p256
        case .es384: .p384
        case .es512: .p521
        case .edDSA, .hs256: nil
        }
    }

    /// The exact length of a signature of this algorithm (raw r||s for ECDSA).
    public var signatureByteCount: Int {
        switch self {
        case .es256: 64
        case .es384: 96
        case .es512: 132
        case .edDSA: 64
        case .hs256: 32
        }
    }

    /// Throws unless `key` is the kind (and curve) this algorithm needs.
    func checkKey(_ key: PublicKey) throws(JOSEError) {
        switch (self, key) {
        case (.edDSA, .ed25519): return
        case (.es256, .ec(let ecKey)), (.es384, .ec(let ecKey)), (.es512, .ec(let ecKey)):
            guard let curve, ecKey.curve == curve else {
                throw .wrongCurve(expected: curve?.rawValue ?? "?", actual: ecKey.curve.rawValue)
            }
        case (_, .ec(let ecKey)): throw .algorithmKeyMismatch(algorithm: rawValue, keyType: "EC \(ecKey.curve.rawValue)")
        case (_, .ed25519): throw .algorithmKeyMismatch(algorithm: rawValue, keyType: "OKP Ed25519")
        }
    }
}
