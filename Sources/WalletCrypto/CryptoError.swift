/// The one error type of `WalletCrypto`: every failure of a primitive, a key
/// import, or a certificate parse is one of these cases (trust decisions fail with
/// `TrustFailure`).
public enum CryptoError: Error, Equatable, Sendable {
    /// OpenSSL reported a failure; `function` is the libcrypto call and `reason`
    /// the text of the first queued OpenSSL error (never key material).
    case openSSL(function: String, reason: String)
    /// Key bytes that do not describe a valid key (wrong length, off the curve, bad encoding).
    case invalidKey(String)
    /// A curve, algorithm or key type the operation does not support.
    case unsupportedAlgorithm(String)
    /// An input of the wrong length (a nonce, a tag, a signature, a derived-key size).
    case invalidLength(what: String, expected: String, actual: Int)
    /// A signature that is malformed or does not verify.
    case invalidSignature
    /// AES-GCM authentication failed: a wrong key, nonce, AAD or a tampered ciphertext/tag.
    case authenticationFailed
    /// Encoded input (DER, PEM, PKCS#8 ...) that could not be parsed.
    case malformedEncoding(String)
    /// A certificate that could not be parsed or built.
    case invalidCertificate(String)
}
