internal import COpenSSL

/// An elliptic-curve private key on P-256, P-384 or P-521 for ECDSA signing and ECDH.
///
/// Its `description` never shows key material. Wrap it in `SoftwareSigner` to use it as a
/// `Signer`, in `SoftwareKeyAgreement` to use it as a `KeyAgreement`.
public struct ECPrivateKey: Sendable, CustomStringConvertible, CustomDebugStringConvertible,
    CustomReflectable
{
    /// The libcrypto key pair (used by the X.509 code to sign certificates).
    let key: EVPKey
    /// The curve of the key.
    public let curve: ECCurve
    /// The matching public key.
    public let publicKey: ECPublicKey

    /// Generates a new random key on `curve`.
    public static func generate(curve: ECCurve) throws(CryptoError) -> ECPrivateKey {
        try ECPrivateKey(key: curve.generateKey(), curve: curve)
    }

    /// Imports the private scalar d: exactly `curve.coordinateByteCount` big-endian bytes with
    /// 0 < d < n. The public key is computed from it.
    public init(rawRepresentation scalar: [UInt8], curve: ECCurve) throws(CryptoError) {
        let (key, point) = try curve.importPrivateScalar(scalar)
        // The point d·G was just computed from the scalar: import it as the public key
        // rather than read it back from the key pair.
        self.key = key
        self.curve = curve
        self.publicKey = try ECPublicKey(x963Representation: point, curve: curve)
    }

    /// Same as `init(rawRepresentation:curve:)`.
    public init(d scalar: [UInt8], curve: ECCurve) throws(CryptoError) {
        try self.init(rawRepresentation: scalar, curve: curve)
    }

    /// Imports a DER PKCS#8 PrivateKeyInfo (an RFC 5915 ECPrivateKey is accepted too).
    public init(pkcs8DER: [UInt8]) throws(CryptoError) {
        try self.init(decoded: EVPKey.fromPrivateKeyDER(pkcs8DER))
    }

    /// Imports a PEM "PRIVATE KEY" (or "EC PRIVATE KEY") block. Encrypted PEM is refused.
    public init(pem: String) throws(CryptoError) {
        try self.init(decoded: EVPKey.fromPEM(pem, private: true))
    }

    /// Re-imports a decoded key from its scalar so that the stored key is canonical.
    private init(decoded: EVPKey) throws(CryptoError) {
        let curve = try ECCurve(of: decoded)
        var scalar = try decoded.integerParameter("priv", width: curve.coordinateByteCount)
        defer { wipe(&scalar) }
        try self.init(rawRepresentation: scalar, curve: curve)
    }

    private init(key: EVPKey, curve: ECCurve) throws(CryptoError) {
        let n = curve.coordinateByteCount
        self.key = key
        self.curve = curve
        // One encoded-point read is one affine conversion in libcrypto; reading `qx` and `qy`
        // as integers converted twice (a third of a key generation). The public key gets a
        // key object of its own, without the private scalar, as any imported point does.
        let point = try key.octetParameter("encoded-pub-key", maxLength: 1 + 2 * n)
        if point.count == 1 + 2 * n, point[0] == 0x04 {
            self.publicKey = try ECPublicKey(x963Representation: point, curve: curve)
        } else {
            self.publicKey = try ECPublicKey(
                x: key.integerParameter("qx", width: n), y: key.integerParameter("qy", width: n), curve: curve)
        }
    }

    /// EXPORTS SECRET KEY MATERIAL: the private scalar d as `curve.coordinateByteCount` bytes.
    /// Exists for persisting software keys (SoftwareSecureArea); callers must protect and
    /// clear the returned bytes.
    public func rawScalar() throws(CryptoError) -> [UInt8] {
        try key.integerParameter("priv", width: curve.coordinateByteCount)
    }

    /// EXPORTS SECRET KEY MATERIAL: the key as DER PKCS#8 PrivateKeyInfo. Exists for
    /// persisting software keys (SoftwareSecureArea); callers must protect the returned bytes.
    public func pkcs8DER() throws(CryptoError) -> [UInt8] {
        try key.privateKeyInfoDER()
    }

    /// The JOSE algorithm that signs with this key's curve and its natural hash.
    public var signatureAlgorithm: SignatureAlgorithm {
        switch curve {
        case .p256: .es256
        case .p384: .es384
        case .p521: .es512
        }
    }

    /// Signs `message` with ECDSA, hashing it with the curve's hash (P-256: SHA-256,
    /// P-384: SHA-384, P-521: SHA-512).
    public func signature(for message: [UInt8]) throws(CryptoError) -> ECDSASignature {
        try signature(for: message, hash: curve.signatureHashAlgorithm)
    }

    /// Signs `message` with ECDSA, hashing it with `hash`.
    public func signature(for message: [UInt8], hash: HashAlgorithm) throws(CryptoError) -> ECDSASignature {
        try ECDSASignature(derRepresentation: key.sign(message, digest: hash.evpMD))
    }

    /// ECDH: the x coordinate of d·Peer (`curve.coordinateByteCount` bytes) as an opaque
    /// ``SharedSecret``. The peer must be on the same curve (`invalidKey(.curveMismatch)`
    /// otherwise); peer keys were validated on import.
    public func sharedSecret(with peer: ECPublicKey) throws(CryptoError) -> SharedSecret {
        guard peer.curve == curve else { throw .invalidKey(.curveMismatch(expected: curve, actual: peer.curve)) }
        guard let context = EVP_PKEY_CTX_new_from_pkey(nil, key.pointer, nil) else { throw backendError(.keyAgreement) }
        defer { EVP_PKEY_CTX_free(context) }
        guard EVP_PKEY_derive_init(context) == 1 else { throw backendError(.keyAgreement) }
        // validate_peer 0: `peer` was checked on import (on the curve, not the point at infinity),
        // which on these prime-order curves (cofactor 1) is the whole check. The default
        // validation repeats it with an n·Q = O test, a second scalar multiplication per ECDH.
        guard EVP_PKEY_derive_set_peer_ex(context, peer.key.pointer, 0) == 1 else {
            ERR_clear_error()
            throw .invalidKey(.peerKeyRejected)
        }
        var length = 0
        guard EVP_PKEY_derive(context, nil, &length) == 1 else { throw backendError(.keyAgreement) }
        var secret = [UInt8](repeating: 0, count: length)
        guard EVP_PKEY_derive(context, &secret, &length) == 1, length == curve.coordinateByteCount else {
            wipe(&secret)
            throw backendError(.keyAgreement)
        }
        return SharedSecret(consuming: &secret)
    }

    /// A redacted description: the curve only, never key material.
    public var description: String { "ECPrivateKey(\(curve.rawValue), <redacted>)" }

    /// A redacted description: the curve only, never key material.
    public var debugDescription: String { description }

    /// A mirror without children, so `dump` cannot reveal key material.
    public var customMirror: Mirror { Mirror(self, children: [:]) }
}
