import CBOR
import WalletCrypto

/// The one error type of the `COSE` module: every failure to parse, build, sign or
/// verify a COSE structure or key is one of these cases.
public enum COSEError: Error, Equatable, Sendable {
    /// The bytes are not well-formed CBOR, or exceed the decoder's limits.
    case cbor(CBORError)
    /// Well-formed CBOR that does not have the shape COSE requires.
    case malformed(COSEMalformation)
    /// The structure carries a CBOR tag other than the one expected (18 for COSE_Sign1,
    /// 17 for COSE_Mac0).
    case unexpectedTag(UInt64)
    /// No `alg` header parameter (label 1) is present.
    case missingAlgorithm
    /// `alg` is only in the unprotected bucket, where the signature or tag does not cover
    /// it, and the caller requires it protected (ISO/IEC 18013-5 does).
    case algorithmNotProtected
    /// An integer algorithm identifier this module does not implement.
    case unsupportedAlgorithm(Int)
    /// A text algorithm identifier; this module implements none.
    case unsupportedAlgorithmName(String)
    /// The algorithm cannot be used with the key: ES256 needs a P-256 key, ES384 P-384,
    /// ES512 P-521, EdDSA Ed25519, HMAC a symmetric key; or a signer's algorithm
    /// differs from the `alg` header.
    case algorithmKeyMismatch
    /// A raw ECDSA or EdDSA signature whose length is not the one the algorithm fixes.
    case invalidSignatureLength(expected: Int, actual: Int)
    /// The signature does not verify over the Sig_structure.
    case invalidSignature
    /// The authentication tag does not match the MAC_structure.
    case invalidMAC
    /// The payload is detached (nil) and none was supplied, or both were.
    case missingPayload
    /// A detached payload was supplied for a structure that carries its own.
    case unexpectedDetachedPayload
    /// The `crit` header lists a label this implementation does not understand, or a
    /// label that is not present in the protected bucket.
    case unknownCriticalHeader(COSEHeaderLabel)
    /// The same header label appears in both the protected and unprotected bucket
    /// (RFC 9052 §3).
    case duplicateHeaderLabel(COSEHeaderLabel)
    /// A COSE_Key that is inconsistent, of unsupported type, or with wrong lengths, or a
    /// key unfit for the operation.
    case invalidKey(COSEKeyFailure)
    /// The `x5chain` header is absent, empty, or holds a certificate that does not parse
    /// (reading it; a verification against trust anchors fails with `untrusted` instead).
    case invalidCertificate
    /// The `x5chain` is not trusted for this use: it did not validate to the trust anchors,
    /// or its certificates do not meet the policy.
    case untrusted(TrustFailure)
    /// A primitive in `WalletCrypto` failed.
    case crypto(CryptoError)
    /// The caller's `Signer` failed (a cancelled authentication prompt arrives here
    /// unchanged as `.keyOperation(.userCancelled)`).
    case keyOperation(KeyOperationError)
}

/// An element of a COSE_Sign1 or COSE_Mac0 array.
public enum COSEMessageElement: Hashable, Sendable {
    /// The protected header (a byte string).
    case protectedHeader
    /// The unprotected header (a map).
    case unprotectedHeader
    /// The payload (a byte string, or nil when detached).
    case payload
    /// The signature (COSE_Sign1) or tag (COSE_Mac0), a byte string.
    case signatureOrTag
}

/// How a COSE structure departs from RFC 9052 (``COSEError/malformed(_:)``).
public enum COSEMalformation: Hashable, Sendable {
    /// The message is not an array.
    case notAnArray
    /// The message array has `actual` elements instead of `expected`.
    case wrongElementCount(expected: Int, actual: Int)
    /// An element of the message has the wrong CBOR type.
    case wrongElementType(COSEMessageElement)
    /// A header bucket (or the decoded protected header) is not a map.
    case headerNotAMap
    /// A header label is neither an integer nor a text string.
    case invalidHeaderLabel
    /// A header label appears twice in one bucket.
    case repeatedHeaderLabel(COSEHeaderLabel)
    /// A registered header parameter has a value of the wrong type or range (RFC 9052 §3.1,
    /// RFC 9360 §2).
    case invalidHeaderValue(COSEHeaderLabel)
    /// Both IV and Partial IV are present.
    case bothIVs
    /// `crit` is in the unprotected bucket.
    case criticalInUnprotectedBucket
}

/// Why a COSE_Key is rejected, or unfit for the operation (``COSEError/invalidKey(_:)``).
public enum COSEKeyFailure: Hashable, Sendable {
    /// The COSE_Key is not a map.
    case notAMap
    /// A required parameter is absent (`kty`, `crv`, `x`, `y`, `k`).
    case missingParameter(String)
    /// A parameter has the wrong type (`kid` not a byte string, `alg` not an integer,
    /// `key_ops` not a non-empty array ...).
    case invalidParameter(String)
    /// A `kty` this module does not implement.
    case unsupportedKeyType
    /// A `crv` this module does not implement, or one that does not go with the key type.
    case unsupportedCurve
    /// A `key_ops` value this module does not know.
    case unsupportedKeyOperation
    /// A parameter of the wrong length for the curve.
    case parameterLength(String, expected: Int, actual: Int)
    /// The public point is not on the curve (EC2), or not a valid Ed25519 key (OKP).
    case invalidPublicKey
    /// `d` is not a valid private key for the curve.
    case invalidPrivateKey
    /// `d` does not belong to the public key given with it.
    case privateKeyMismatch
    /// The operation needs another key type (a private EC2 or OKP key, a public key, a
    /// signing key); `expected` is the type it needs.
    case wrongKeyType(expected: COSEKey.KeyType)
    /// A symmetric key (`k`, or a MAC key) that is empty.
    case emptySymmetricKey
}
