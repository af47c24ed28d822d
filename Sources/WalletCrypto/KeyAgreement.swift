/// Something that performs ECDH for a key it does not reveal: a software key or a secure-area key.
public protocol KeyAgreement: Sendable {
    /// The public key of the agreement key.
    var publicKey: ECPublicKey { get }
    /// The ECDH shared secret (the x coordinate of the shared point) with `peer`, as an
    /// opaque value to derive keys from.
    func sharedSecret(with peer: ECPublicKey) async throws(KeyOperationError) -> SharedSecret
}

/// A `KeyAgreement` backed by an in-memory `ECPrivateKey` (ephemeral session keys, tests).
public struct SoftwareKeyAgreement: KeyAgreement, CustomStringConvertible, CustomReflectable {
    private let key: ECPrivateKey

    /// Agrees keys with `key`.
    public init(_ key: ECPrivateKey) { self.key = key }

    /// The public key of the wrapped private key.
    public var publicKey: ECPublicKey { key.publicKey }

    /// ECDH with `peer`, which must be on the same curve.
    public func sharedSecret(with peer: ECPublicKey) async throws(KeyOperationError) -> SharedSecret {
        do { return try key.sharedSecret(with: peer) } catch { throw .crypto(error) }
    }

    /// The curve only, never key material.
    public var description: String { "SoftwareKeyAgreement(\(key.curve.rawValue))" }
    /// A mirror without children, so `dump` cannot reveal key material.
    public var customMirror: Mirror { Mirror(self, children: [:]) }
}
