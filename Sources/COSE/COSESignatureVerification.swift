import WalletCrypto

/// Signature checks shared by the COSE structures that carry signatures.
enum COSESignatureVerification {
    /// The raw signature length an algorithm fixes for a key (RFC 9053 §2.1: r||s, each
    /// the curve's coordinate length; §2.2: 64 bytes for Ed25519).
    static func signatureLength(for key: PublicKey) -> Int {
        switch key {
        case .ec(let ecKey): 2 * ecKey.curve.coordinateByteCount
        case .ed25519: 64
        }
    }

    static func verify(_ signature: [UInt8], over message: [UInt8], algorithm: COSEAlgorithm,
                       publicKey: PublicKey) throws(COSEError) {
        guard let signatureAlgorithm = algorithm.signatureAlgorithm, publicKey.supports(signatureAlgorithm) else {
            throw .algorithmKeyMismatch
        }
        let expected = signatureLength(for: publicKey)
        guard signature.count == expected else {
            throw .invalidSignatureLength(expected: expected, actual: signature.count)
        }
        guard publicKey.verify(signature: signature, for: message, algorithm: signatureAlgorithm) else {
            throw .invalidSignature
        }
    }
}
