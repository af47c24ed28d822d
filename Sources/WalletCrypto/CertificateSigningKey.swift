import COpenSSL

/// A private key that signs certificates in `CertificateBuilder`: an EC key
/// (P-256 / P-384 / P-521, signing with ECDSA over SHA-256 / SHA-384 / SHA-512) or an
/// Ed25519 key. Create one with `.ec(_:)` or `.ed25519(_:)`.
public struct CertificateSigningKey: Sendable {
    let evpKey: EVPKey

    init(evpKey: EVPKey) { self.evpKey = evpKey }
}
