/// The one error type of `WalletCrypto`: every failure of a primitive, a key
/// import, a certificate parse or a chain validation is one of these cases.
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
    /// A certificate chain that did not validate, with the typed reason.
    case chainValidationFailed(ChainValidationFailure)
}

/// Why an X.509 chain was rejected (mapped from OpenSSL's `X509_V_ERR_*` codes).
public enum ChainValidationFailure: Equatable, Sendable {
    /// A certificate's notAfter is before the validation time; `depth` 0 is the leaf.
    case expired(depth: Int)
    /// A certificate's notBefore is after the validation time.
    case notYetValid(depth: Int)
    /// No configured anchor issued the chain.
    case unknownAnchor
    /// A signature in the chain does not verify.
    case badSignature(depth: Int)
    /// A certificate used as an issuer is not a CA (basicConstraints cA false or absent).
    case notCA(depth: Int)
    /// The chain is longer than a pathLenConstraint (or the configured maximum) allows.
    case pathTooLong(depth: Int)
    /// The chain is empty.
    case emptyChain
    /// Any other OpenSSL verification error, with its code and text.
    case other(code: Int, reason: String, depth: Int)
}
