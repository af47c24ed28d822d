/// The one error type of `WalletCrypto`: every failure of a primitive, a key
/// import, or a certificate parse is one of these cases (trust decisions fail with
/// `TrustFailure`).
///
/// The cases say what was wrong in terms a caller can act on (which input had the wrong
/// length, why a key was refused); they never name the crypto backend's functions, so
/// the same values come from any backend behind this module's API.
public enum CryptoError: Error, Equatable, Sendable {
    /// The crypto backend failed an operation for a reason no input explains (it could not
    /// allocate memory, or reported an internal error); `operation` is what was being done.
    case backendFailure(CryptoOperation)
    /// Key bytes that do not describe a valid key, or a key unfit for the operation.
    case invalidKey(InvalidKeyReason)
    /// A key type or curve this SDK does not implement (an RSA key, an EC key on an
    /// unsupported curve), or a key of another type than the operation needs.
    case unsupportedKey(expected: KeyKind)
    /// An input of a length the operation does not accept; `actual` is the length given.
    case invalidLength(CryptoInput, actual: Int)
    /// A parameter outside the range the algorithm allows.
    case invalidParameter(CryptoParameter)
    /// A signature that is malformed or does not verify.
    case invalidSignature
    /// AES-GCM authentication failed: a wrong key, nonce, AAD or a tampered ciphertext/tag.
    case authenticationFailed
    /// Encoded input that could not be parsed as the structure named.
    case malformedEncoding(EncodedStructure)
    /// A certificate that could not be parsed or built; the text describes the certificate
    /// content at fault (it never carries another error).
    case invalidCertificate(String)
}

/// What the crypto backend was doing when it failed (``CryptoError/backendFailure(_:)``).
public enum CryptoOperation: Hashable, Sendable {
    /// Drawing random bytes.
    case randomGeneration
    /// Generating a key pair.
    case keyGeneration
    /// Importing key bytes (a point, a scalar, DER or PEM).
    case keyImport
    /// Exporting a key's bytes or encodings.
    case keyExport
    /// Computing a signature.
    case signing
    /// Computing an ECDH shared secret.
    case keyAgreement
    /// Deriving keys (HKDF, scrypt, Concat KDF).
    case keyDerivation
    /// AES-GCM encryption.
    case encryption
    /// AES-GCM decryption.
    case decryption
    /// Computing an HMAC.
    case authenticationCode
    /// Hashing.
    case hashing
    /// Encoding or decoding a signature.
    case signatureEncoding
    /// Parsing, building or validating an X.509 certificate.
    case certificateProcessing
}

/// Why key bytes were refused (``CryptoError/invalidKey(_:)``).
public enum InvalidKeyReason: Hashable, Sendable {
    /// The bytes are not an encoding of a key of this type (a SEC1 point with the wrong
    /// prefix or length, raw Ed25519 bytes the backend refuses).
    case malformed
    /// The point does not lie on the curve, is the point at infinity, or has a
    /// coordinate out of range.
    case notOnCurve
    /// A private scalar that is zero or not below the group order.
    case scalarOutOfRange
    /// The two keys of an ECDH agreement are on different curves.
    case curveMismatch(expected: ECCurve, actual: ECCurve)
    /// The key agreement refused the peer's public key.
    case peerKeyRejected
}

/// The kind of key an operation needs (``CryptoError/unsupportedKey(expected:)``).
public enum KeyKind: Hashable, Sendable {
    /// An EC key on P-256, P-384 or P-521.
    case ec
    /// An Ed25519 key.
    case ed25519
    /// Either of the two kinds this SDK implements.
    case ecOrEd25519
}

/// The input whose length was refused (``CryptoError/invalidLength(_:actual:)``); each
/// case documents the lengths that are accepted.
public enum CryptoInput: Hashable, Sendable {
    /// An AES key: 16, 24 or 32 bytes.
    case aesKey
    /// An AES-GCM nonce: at least 1 byte.
    case aesGCMNonce
    /// An AES-GCM tag: 16 bytes.
    case aesGCMTag
    /// AES-GCM `ciphertext || tag`: at least 16 bytes.
    case aesGCMCiphertextAndTag
    /// A message, AAD, password or other input: at most 2^31 - 1 bytes.
    case message
    /// An HKDF output: 1 to 255 digests long.
    case hkdfOutput
    /// An HKDF pseudorandom key: at least one digest long.
    case hkdfPseudoRandomKey
    /// A Concat KDF output: 1 to 64 bytes.
    case concatKDFOutput
    /// A scrypt output: at least 1 byte.
    case scryptOutput
    /// A scrypt salt: at least 16 bytes where a caller requires it.
    case scryptSalt
    /// An affine EC coordinate: `coordinateByteCount` bytes of the curve.
    case ecCoordinate(ECCurve)
    /// An EC private scalar: `coordinateByteCount` bytes of the curve.
    case ecPrivateScalar(ECCurve)
    /// A raw r||s ECDSA signature: twice `coordinateByteCount` bytes of the curve.
    case ecdsaSignature(ECCurve)
    /// A raw Ed25519 private key: 32 bytes.
    case ed25519PrivateKey
    /// A raw Ed25519 public key: 32 bytes.
    case ed25519PublicKey
    /// A number of random bytes: 0 to 2^31 - 1.
    case randomByteCount
}

/// An algorithm parameter outside its range (``CryptoError/invalidParameter(_:)``).
public enum CryptoParameter: Hashable, Sendable {
    /// scrypt N must be a power of two above 1.
    case scryptCost
    /// scrypt r and p must be at least 1.
    case scryptBlockSizeOrParallelism
    /// scrypt N·r·p needs more memory than can be addressed.
    case scryptMemory
}

/// The encoded structure that did not parse (``CryptoError/malformedEncoding(_:)``).
public enum EncodedStructure: Hashable, Sendable {
    /// A DER SubjectPublicKeyInfo.
    case subjectPublicKeyInfo
    /// A DER PKCS#8 PrivateKeyInfo (or RFC 5915 ECPrivateKey).
    case privateKeyInfo
    /// A PEM document or block (including an encrypted one, which is refused).
    case pem
    /// A DER ECDSA-Sig-Value (strict DER, non-negative integers, no trailing bytes).
    case ecdsaSignature
    /// An X.509 certificate or one of its parts (a Name, PEM CERTIFICATE blocks).
    case certificate
}
