internal import COpenSSL

/// An Ed25519 private key (RFC 8032). Its `description` never shows key material.
/// Wrap it in `SoftwareSigner` to use it as a `Signer`.
public struct Ed25519PrivateKey: Sendable, CustomStringConvertible, CustomDebugStringConvertible, CustomReflectable {
    /// The libcrypto key (used by the X.509 code to sign certificates).
    let key: EVPKey
    /// The matching public key.
    public let publicKey: Ed25519PublicKey

    /// Generates a new random key.
    public static func generate() throws(CryptoError) -> Ed25519PrivateKey {
        guard let context = EVP_PKEY_CTX_new_from_name(nil, "ED25519", nil) else { throw backendError(.keyGeneration) }
        defer { EVP_PKEY_CTX_free(context) }
        guard EVP_PKEY_keygen_init(context) == 1 else { throw backendError(.keyGeneration) }
        var generated: OpaquePointer? = nil
        guard EVP_PKEY_generate(context, &generated) == 1, let generated else { throw backendError(.keyGeneration) }
        return try Ed25519PrivateKey(key: EVPKey(taking: generated))
    }

    /// Imports the raw 32-byte private key (the RFC 8032 seed).
    public init(rawRepresentation raw: [UInt8]) throws(CryptoError) {
        guard raw.count == 32 else { throw .invalidLength(.ed25519PrivateKey, actual: raw.count) }
        guard let imported = EVP_PKEY_new_raw_private_key_ex(nil, "ED25519", nil, raw, raw.count) else {
            ERR_clear_error()
            throw .invalidKey(.malformed)
        }
        try self.init(key: EVPKey(taking: imported))
    }

    /// Imports a DER PKCS#8 PrivateKeyInfo holding an Ed25519 key.
    public init(pkcs8DER: [UInt8]) throws(CryptoError) {
        let decoded = try EVPKey.fromPrivateKeyDER(pkcs8DER)
        guard decoded.isA("ED25519") else { throw .unsupportedKey(expected: .ed25519) }
        try self.init(key: decoded)
    }

    /// Imports a PEM "PRIVATE KEY" block holding an Ed25519 key. Encrypted PEM is refused.
    public init(pem: String) throws(CryptoError) {
        let decoded = try EVPKey.fromPEM(pem, private: true)
        guard decoded.isA("ED25519") else { throw .unsupportedKey(expected: .ed25519) }
        try self.init(key: decoded)
    }

    private init(key: EVPKey) throws(CryptoError) {
        self.key = key
        self.publicKey = try Ed25519PublicKey(rawRepresentation: key.rawKey(private: false))
    }

    /// EXPORTS SECRET KEY MATERIAL: the raw 32-byte private key. Exists for persisting
    /// software keys (SoftwareSecureArea); callers must protect and clear the returned bytes.
    public func rawRepresentation() throws(CryptoError) -> [UInt8] { try key.rawKey(private: true) }

    /// EXPORTS SECRET KEY MATERIAL: the key as DER PKCS#8 PrivateKeyInfo. Exists for
    /// persisting software keys (SoftwareSecureArea); callers must protect the returned bytes.
    public func pkcs8DER() throws(CryptoError) -> [UInt8] {
        try key.privateKeyInfoDER()
    }

    /// The 64-byte Ed25519 signature of `message` (pure EdDSA, no pre-hash).
    public func signature(for message: [UInt8]) throws(CryptoError) -> [UInt8] {
        try key.sign(message, digest: nil)
    }

    /// A redacted description, never key material.
    public var description: String { "Ed25519PrivateKey(<redacted>)" }

    /// A redacted description, never key material.
    public var debugDescription: String { description }

    /// A mirror without children, so `dump` cannot reveal key material.
    public var customMirror: Mirror { Mirror(self, children: [:]) }
}
