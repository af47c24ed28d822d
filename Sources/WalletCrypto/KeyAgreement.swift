/// Something that performs ECDH for a key it does not reveal: a software key or a secure-area key.
public protocol KeyAgreement: Sendable {
    /// The public key of the agreement key.
    var publicKey: ECPublicKey { get }
    /// The raw ECDH shared secret (the x coordinate) with `peer`.
    func sharedSecret(with peer: ECPublicKey) async throws -> [UInt8]
}
