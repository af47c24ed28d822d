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
    /// A certificate that could not be parsed or built; the reason names the content at fault.
    case invalidCertificate(InvalidCertificateReason)
}

/// What is wrong with a certificate that could not be parsed, or with the content a
/// certificate was to be built from (``CryptoError/invalidCertificate(_:)``).
public enum InvalidCertificateReason: Hashable, Sendable {
    /// The version is not v1, v2 or v3; the value is the version number found.
    case unsupportedVersion(Int)
    /// A field every certificate carries is absent.
    case missingField(CertificateField)
    /// A field is present but does not decode (a validity time that is not a valid
    /// UTCTime or GeneralizedTime).
    case malformedField(CertificateField)
    /// An extension cannot be read, or a known extension's value does not decode; `oid`
    /// names it, nil when not even its identifier could be read.
    case malformedExtension(oid: String?)
    /// An extension appears more than once (RFC 5280 §4.2).
    case duplicateExtension(oid: String)
    /// More extensions than a certificate is read with (RFC 5280 sets no limit; real
    /// certificates carry about ten).
    case tooManyExtensions(limit: Int)
    /// A basicConstraints pathLenConstraint that is negative or out of range.
    case invalidPathLengthConstraint
    /// An entry of a Name (subject, issuer, a directoryName) that cannot be read.
    case malformedName
    /// An object identifier in the certificate that cannot be written in dotted form.
    case malformedObjectIdentifier
    /// A GeneralName whose content is absent (an empty directoryName or registeredID).
    case emptyGeneralName
    /// To build: a text that is not a valid dotted object identifier (a name attribute
    /// type or an extended key usage).
    case invalidObjectIdentifier(String)
    /// To build: a name attribute value its type cannot hold.
    case unencodableAttribute(DistinguishedName.AttributeType)
    /// To build: a GeneralName that cannot be encoded: an email, dNSName or URI that is
    /// not ASCII (IA5String), an iPAddress not 4 or 16 bytes long, a registeredID that is
    /// not an object identifier, or other-name DER that does not decode.
    case invalidGeneralName(GeneralName)
    /// To build: the signing key is not the key of the issuer certificate.
    case signingKeyMismatch
    /// To build: notBefore is after notAfter.
    case validityPeriodReversed
    /// To build: a serial number that is zero or longer than 20 bytes (RFC 5280 §4.1.2.2).
    case invalidSerialNumber
}

/// A field of the certificate structure (RFC 5280 §4.1), as named by
/// ``InvalidCertificateReason``.
public enum CertificateField: Hashable, Sendable {
    /// `serialNumber`.
    case serialNumber
    /// `subject`.
    case subject
    /// `issuer`.
    case issuer
    /// `validity.notBefore`.
    case notBefore
    /// `validity.notAfter`.
    case notAfter
    /// `subjectPublicKeyInfo`.
    case subjectPublicKeyInfo
    /// `signatureValue`.
    case signature
    /// `signatureAlgorithm`.
    case signatureAlgorithm
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
    /// An Ed25519 point of small order (in the 8-element torsion subgroup): no private
    /// key stands behind it, and a signature that verifies under it for every message
    /// is easy to make.
    case smallOrder
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
