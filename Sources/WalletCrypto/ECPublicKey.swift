import WalletEncoding
internal import COpenSSL

/// An elliptic-curve public key on P-256, P-384 or P-521, validated on import
/// (on the curve, not the point at infinity), which protects ECDH against invalid-curve attacks.
public struct ECPublicKey: Sendable, Equatable, CustomStringConvertible {
    /// The libcrypto key (used by the X.509 code to build certificates).
    let key: EVPKey
    /// The curve of the key.
    public let curve: ECCurve
    /// The uncompressed SEC1 point 0x04 || X || Y.
    public let sec1Uncompressed: [UInt8]

    /// Imports a SEC1 / X9.63 point: uncompressed (0x04 || X || Y) or compressed (0x02/0x03 || X,
    /// decompressed here). Throws `CryptoError.invalidKey` for a point that is not on `curve`.
    public init(x963Representation point: [UInt8], curve: ECCurve) throws(CryptoError) {
        let n = curve.coordinateByteCount
        switch point.first {
        case 0x04 where point.count == 1 + 2 * n: break
        case 0x02 where point.count == 1 + n, 0x03 where point.count == 1 + n: break
        default: throw .invalidKey(.malformed)
        }
        let key = try curve.importPublicPoint(point)
        if point[0] == 0x04 {
            // The import validated this point on the curve; it is already the canonical form,
            // so reading the coordinates back from libcrypto (two BIGNUM exports) is not needed.
            self.init(validatedKey: key, curve: curve, sec1Uncompressed: point)
        } else {
            try self.init(key: key, curve: curve)
        }
    }

    /// Wraps a key libcrypto validated from `sec1Uncompressed`.
    private init(validatedKey key: EVPKey, curve: ECCurve, sec1Uncompressed: [UInt8]) {
        self.key = key
        self.curve = curve
        self.sec1Uncompressed = sec1Uncompressed
    }

    /// Same as `init(x963Representation:curve:)`.
    public init(sec1Representation point: [UInt8], curve: ECCurve) throws(CryptoError) {
        try self.init(x963Representation: point, curve: curve)
    }

    /// Imports affine coordinates. Each must be exactly `curve.coordinateByteCount` bytes
    /// (big-endian, left-padded by the encoder; short values are not padded here).
    public init(x: [UInt8], y: [UInt8], curve: ECCurve) throws(CryptoError) {
        let n = curve.coordinateByteCount
        guard x.count == n else { throw .invalidLength(.ecCoordinate(curve), actual: x.count) }
        guard y.count == n else { throw .invalidLength(.ecCoordinate(curve), actual: y.count) }
        try self.init(x963Representation: [0x04] + x + y, curve: curve)
    }

    /// Imports a DER SubjectPublicKeyInfo holding an EC key on a supported curve.
    public init(spkiDER: [UInt8]) throws(CryptoError) {
        if case .ec(let known)? = SubjectPublicKeyInfoPrefix.importKnown(spkiDER) {
            self = known
            return
        }
        let decoded = try EVPKey.fromSubjectPublicKeyInfo(spkiDER)
        try self.init(decoded: decoded)
    }

    /// Imports a PEM "PUBLIC KEY" block holding an EC key on a supported curve.
    public init(pem: String) throws(CryptoError) {
        try self.init(decoded: EVPKey.fromPEM(pem, private: false))
    }

    /// Re-imports a decoded key from its coordinates so the stored key is canonical and validated.
    init(decoded: EVPKey) throws(CryptoError) {
        let curve = try ECCurve(of: decoded)
        let n = curve.coordinateByteCount
        let x = try decoded.integerParameter("qx", width: n)
        let y = try decoded.integerParameter("qy", width: n)
        try self.init(x: x, y: y, curve: curve)
    }

    /// Wraps an already validated key; reads its coordinates.
    init(key: EVPKey, curve: ECCurve) throws(CryptoError) {
        let n = curve.coordinateByteCount
        let x = try key.integerParameter("qx", width: n)
        let y = try key.integerParameter("qy", width: n)
        self.key = key
        self.curve = curve
        self.sec1Uncompressed = [0x04] + x + y
    }

    /// The X coordinate, `curve.coordinateByteCount` bytes.
    public var x: [UInt8] { Array(sec1Uncompressed[1...curve.coordinateByteCount]) }

    /// The Y coordinate, `curve.coordinateByteCount` bytes.
    public var y: [UInt8] { Array(sec1Uncompressed[(1 + curve.coordinateByteCount)...]) }

    /// Same as `sec1Uncompressed`.
    public var x963Representation: [UInt8] { sec1Uncompressed }

    /// The DER SubjectPublicKeyInfo (id-ecPublicKey with a named curve, uncompressed point).
    /// Never throws; written from the curve's fixed prefix and the point (the bytes
    /// `i2d_PUBKEY` gives, without OpenSSL 3's per-call encoder set-up).
    public var spkiDER: [UInt8] {
        get throws(CryptoError) { SubjectPublicKeyInfoPrefix.der(of: self) }
    }

    /// The PEM "PUBLIC KEY" encoding.
    public var pem: String {
        get throws(CryptoError) { try key.subjectPublicKeyInfoPEM() }
    }

    /// Whether `signature` is a valid ECDSA signature of `message` hashed with the curve's
    /// hash (`curve.signatureHashAlgorithm`).
    public func isValidSignature(_ signature: ECDSASignature, for message: [UInt8]) -> Bool {
        isValidSignature(signature, for: message, hash: curve.signatureHashAlgorithm)
    }

    /// Whether `signature` is a valid ECDSA signature of `message` hashed with `hash`.
    public func isValidSignature(_ signature: ECDSASignature, for message: [UInt8], hash: HashAlgorithm) -> Bool {
        key.verify(signature.derRepresentation, message: message, digest: hash.evpMD)
    }

    /// Throws `CryptoError.invalidSignature` unless `signature` verifies over `message`
    /// (with `hash`, by default the curve's hash).
    public func verifySignature(_ signature: ECDSASignature, for message: [UInt8], hash: HashAlgorithm? = nil) throws(CryptoError) {
        guard isValidSignature(signature, for: message, hash: hash ?? curve.signatureHashAlgorithm) else {
            throw .invalidSignature
        }
    }

    /// Keys are equal when they are on the same curve and have the same point.
    public static func == (lhs: ECPublicKey, rhs: ECPublicKey) -> Bool {
        lhs.curve == rhs.curve && lhs.sec1Uncompressed == rhs.sec1Uncompressed
    }

    /// The curve and the uncompressed point in hex.
    public var description: String {
        "ECPublicKey(\(curve.rawValue), \(Hex.encode(sec1Uncompressed)))"
    }
}
