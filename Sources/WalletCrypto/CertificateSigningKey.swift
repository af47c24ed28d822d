internal import COpenSSL

/// A private key that signs certificates in `CertificateBuilder`: an EC key
/// (P-256 / P-384 / P-521, signing with ECDSA over SHA-256 / SHA-384 / SHA-512) or an
/// Ed25519 key. Create one with `.ec(_:)` or `.ed25519(_:)`.
public struct CertificateSigningKey: Sendable {
    let evpKey: EVPKey

    init(evpKey: EVPKey) { self.evpKey = evpKey }
}

extension CertificateSigningKey {
    /// The DER SubjectPublicKeyInfo of the key's public half (what a certificate
    /// for this key carries).
    public var subjectPublicKeyInfoDER: [UInt8] {
        get throws(CryptoError) {
            var der: UnsafeMutablePointer<UInt8>? = nil
            let length = i2d_PUBKEY(evpKey.pointer, &der)
            guard length > 0, let der else { throw backendError(.keyExport) }
            defer { wallet_OPENSSL_free(der) }
            return Array(UnsafeBufferPointer(start: der, count: Int(length)))
        }
    }
}

extension CertificateSigningKey {
    /// An EC signing key; certificates are signed with ECDSA over SHA-256 (P-256),
    /// SHA-384 (P-384) or SHA-512 (P-521).
    public static func ec(_ key: ECPrivateKey) -> CertificateSigningKey {
        CertificateSigningKey(evpKey: key.key)
    }
}

extension CertificateSigningKey {
    /// An Ed25519 signing key (PureEdDSA, no separate digest).
    public static func ed25519(_ key: Ed25519PrivateKey) -> CertificateSigningKey {
        CertificateSigningKey(evpKey: key.key)
    }
}
