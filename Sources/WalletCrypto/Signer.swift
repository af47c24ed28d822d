/// Something that signs for a key it does not reveal: a software key or a secure-area key.
/// Formats (JOSE, COSE, SD-JWT, mdoc) sign through this protocol only.
public protocol Signer: Sendable {
    /// The algorithm of the signatures produced.
    var algorithm: SignatureAlgorithm { get }
    /// The public key that verifies the signatures.
    var publicKey: PublicKey { get }
    /// Signs `message` (hashing as the algorithm requires); ECDSA output is raw r||s.
    /// A key behind user authentication fails with ``KeyOperationError/userCancelled``
    /// or ``KeyOperationError/authenticationRequired``, which callers pass on unchanged.
    func sign(_ message: [UInt8]) async throws(KeyOperationError) -> [UInt8]
}

/// A `Signer` backed by an in-memory private key (`ECPrivateKey` or `Ed25519PrivateKey`).
public struct SoftwareSigner: Signer {
    private enum Backing: Sendable {
        case ec(ECPrivateKey)
        case ed25519(Ed25519PrivateKey)
    }

    private let backing: Backing
    /// ES256/ES384/ES512 by the key's curve, or EdDSA.
    public let algorithm: SignatureAlgorithm
    /// The public key of the wrapped private key.
    public let publicKey: PublicKey

    /// Signs with an EC key, using the curve's natural algorithm (P-256: ES256, P-384: ES384, P-521: ES512).
    public init(_ key: ECPrivateKey) {
        backing = .ec(key)
        algorithm = key.signatureAlgorithm
        publicKey = .ec(key.publicKey)
    }

    /// Signs with an Ed25519 key (EdDSA).
    public init(_ key: Ed25519PrivateKey) {
        backing = .ed25519(key)
        algorithm = .edDSA
        publicKey = .ed25519(key.publicKey)
    }

    /// Signs `message`: raw r||s for ECDSA, 64 bytes for EdDSA.
    public func sign(_ message: [UInt8]) async throws(KeyOperationError) -> [UInt8] {
        do throws(CryptoError) {
            switch backing {
            case .ec(let key): return try key.signature(for: message).rawRepresentation(curve: key.curve)
            case .ed25519(let key): return try key.signature(for: message)
            }
        } catch {
            throw .crypto(error)
        }
    }
}

extension SoftwareSigner: CustomStringConvertible, CustomDebugStringConvertible, CustomReflectable {
    /// The algorithm only, never key material.
    public var description: String { "SoftwareSigner(\(algorithm.rawValue))" }
    /// The algorithm only, never key material.
    public var debugDescription: String { description }
    /// A mirror without children, so `dump` cannot reveal key material.
    public var customMirror: Mirror { Mirror(self, children: [:]) }
}
