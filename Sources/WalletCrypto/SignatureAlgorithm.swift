/// A signature algorithm by its JOSE name (COSE maps these to -7, -35, -36 and -8).
public enum SignatureAlgorithm: String, Sendable, CaseIterable {
    /// ECDSA on P-256 with SHA-256.
    case es256 = "ES256"
    /// ECDSA on P-384 with SHA-384.
    case es384 = "ES384"
    /// ECDSA on P-521 with SHA-512.
    case es512 = "ES512"
    /// EdDSA; here always Ed25519.
    case edDSA = "EdDSA"

    /// The curve an ECDSA algorithm requires, or nil for EdDSA.
    public var curve: ECCurve? {
        switch self {
        case .es256: .p256
        case .es384: .p384
        case .es512: .p521
        case .edDSA: nil
        }
    }

    /// The hash an ECDSA algorithm applies to the message, or nil for EdDSA.
    public var hashAlgorithm: HashAlgorithm? { curve?.signatureHashAlgorithm }
}
