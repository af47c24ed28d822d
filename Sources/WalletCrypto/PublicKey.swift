/// A public key of any supported type, as found in certificates and JWK/COSE_Key structures.
public enum PublicKey: Sendable, Equatable {
    /// An ECDSA/ECDH key on P-256, P-384 or P-521.
    case ec(ECPublicKey)
    /// An Ed25519 key.
    case ed25519(Ed25519PublicKey)

    /// Imports a DER SubjectPublicKeyInfo (EC on a supported curve, or Ed25519);
    /// other key types throw `CryptoError.unsupportedKey`.
    public init(spkiDER: [UInt8]) throws(CryptoError) {
        let decoded = try EVPKey.fromSubjectPublicKeyInfo(spkiDER)
        if decoded.isA("EC") {
            self = try .ec(ECPublicKey(decoded: decoded))
        } else if decoded.isA("ED25519") {
            self = try .ed25519(Ed25519PublicKey(decoded: decoded))
        } else {
            throw .unsupportedKey(expected: .ecOrEd25519)
        }
    }

    /// Imports a PEM "PUBLIC KEY" block (EC on a supported curve, or Ed25519).
    public init(pem: String) throws(CryptoError) {
        let decoded = try EVPKey.fromPEM(pem, private: false)
        try self.init(spkiDER: decoded.subjectPublicKeyInfoDER())
    }

    /// The DER SubjectPublicKeyInfo.
    public var spkiDER: [UInt8] {
        get throws(CryptoError) {
            switch self {
            case .ec(let key): try key.spkiDER
            case .ed25519(let key): try key.spkiDER
            }
        }
    }

    /// The libcrypto key behind either case (used by the X.509 code).
    var evpKey: EVPKey {
        switch self {
        case .ec(let key): key.key
        case .ed25519(let key): key.key
        }
    }

    /// Whether this key can check signatures of `algorithm` (ES256 needs a P-256 key, and so on).
    public func supports(_ algorithm: SignatureAlgorithm) -> Bool {
        switch (self, algorithm) {
        case (.ec(let key), _): algorithm.curve == key.curve
        case (.ed25519, .edDSA): true
        case (.ed25519, _): false
        }
    }

    /// Verifies a signature in the JOSE/COSE form of `algorithm` (raw r||s for ECDSA, 64 bytes
    /// for EdDSA). Returns false if the signature is malformed, does not verify, or if the key
    /// does not match the algorithm (ES256 requires P-256, ES384 P-384, ES512 P-521, EdDSA Ed25519).
    public func verify(signature: [UInt8], for message: [UInt8], algorithm: SignatureAlgorithm) -> Bool {
        guard supports(algorithm) else { return false }
        switch self {
        case .ec(let key):
            guard let parsed = try? ECDSASignature(rawRepresentation: signature, curve: key.curve),
                  let hash = algorithm.hashAlgorithm
            else { return false }
            return key.isValidSignature(parsed, for: message, hash: hash)
        case .ed25519(let key):
            return key.isValidSignature(signature, for: message)
        }
    }
}
