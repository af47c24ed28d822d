/// A public key of any supported type, as found in certificates and JWK/COSE_Key structures.
public enum PublicKey: Sendable, Equatable {
    /// An ECDSA/ECDH key on P-256, P-384 or P-521.
    case ec(ECPublicKey)
    /// An Ed25519 key.
    case ed25519(Ed25519PublicKey)

    /// Imports a DER SubjectPublicKeyInfo (EC on a supported curve, or Ed25519);
    /// other key types throw `CryptoError.unsupportedKey`.
    public init(spkiDER: [UInt8]) throws(CryptoError) {
        if let known = SubjectPublicKeyInfoPrefix.importKnown(spkiDER) {
            self = known
            return
        }
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

/// The DER SubjectPublicKeyInfo of the keys certificates carry almost always: an EC key on
/// a named curve with an uncompressed point, or an Ed25519 key. Each is a fixed prefix and
/// a fixed-length key, so these are imported straight from their key bytes (which are then
/// validated as any point or raw key is), and the SDK's own keys are exported the same way;
/// OpenSSL 3's generic SPKI decoder and encoder set up a context per call, which costs more
/// than an ECDSA verification. Anything else read (compressed points, explicit parameters,
/// other key types) takes the generic decoder.
enum SubjectPublicKeyInfoPrefix {
    /// `SEQUENCE { SEQUENCE { id-ecPublicKey, <curve OID> }, BIT STRING (0 unused bits) }`
    /// up to the point, per curve (RFC 5480 §2); the point follows.
    static let ec: [(curve: ECCurve, prefix: [UInt8])] = [
        (.p256, [0x30, 0x59, 0x30, 0x13, 0x06, 0x07, 0x2A, 0x86, 0x48, 0xCE, 0x3D, 0x02, 0x01,
                 0x06, 0x08, 0x2A, 0x86, 0x48, 0xCE, 0x3D, 0x03, 0x01, 0x07, 0x03, 0x42, 0x00]),
        (.p384, [0x30, 0x76, 0x30, 0x10, 0x06, 0x07, 0x2A, 0x86, 0x48, 0xCE, 0x3D, 0x02, 0x01,
                 0x06, 0x05, 0x2B, 0x81, 0x04, 0x00, 0x22, 0x03, 0x62, 0x00]),
        (.p521, [0x30, 0x81, 0x9B, 0x30, 0x10, 0x06, 0x07, 0x2A, 0x86, 0x48, 0xCE, 0x3D, 0x02, 0x01,
                 0x06, 0x05, 0x2B, 0x81, 0x04, 0x00, 0x23, 0x03, 0x81, 0x86, 0x00]),
    ]
    /// `SEQUENCE { SEQUENCE { id-Ed25519 }, BIT STRING (0 unused bits) }` (RFC 8410 §4).
    static let ed25519: [UInt8] = [0x30, 0x2A, 0x30, 0x05, 0x06, 0x03, 0x2B, 0x65, 0x70, 0x03, 0x21, 0x00]

    /// The DER SubjectPublicKeyInfo of `key`: its curve's prefix, then the uncompressed point.
    static func der(of key: ECPublicKey) -> [UInt8] {
        // Every supported curve has a prefix; the table is indexed by what `ECCurve` can be.
        let prefix = ec.first { $0.curve == key.curve }?.prefix ?? []
        return prefix + key.sec1Uncompressed
    }

    /// The key of `der` when it is one of the fixed forms above (whole input, nothing after
    /// it) and valid; nil otherwise, and then the generic decoder decides, so an invalid key
    /// is refused with the same error either way.
    static func importKnown(_ der: [UInt8]) -> PublicKey? {
        for (curve, prefix) in ec where der.count == prefix.count + 1 + 2 * curve.coordinateByteCount
            && der.starts(with: prefix) && der[prefix.count] == 0x04 {
            return (try? ECPublicKey(x963Representation: Array(der[prefix.count...]), curve: curve)).map { .ec($0) }
        }
        if der.count == ed25519.count + 32, der.starts(with: ed25519) {
            return (try? Ed25519PublicKey(rawRepresentation: Array(der[ed25519.count...]))).map { .ed25519($0) }
        }
        return nil
    }
}
