import CBOR
import WalletCrypto

/// The one error type of the `COSE` module: every failure to parse, build, sign or
/// verify a COSE structure or key is one of these cases.
public enum COSEError: Error, Equatable, Sendable {
    /// The bytes are not well-formed CBOR, or exceed the decoder's limits.
    case cbor(CBORError)
    /// Well-formed CBOR that does not have the shape COSE requires; the string says where.
    case malformed(String)
    /// The structure carries a CBOR tag other than the one expected (18 for COSE_Sign1,
    /// 17 for COSE_Mac0).
    case unexpectedTag(UInt64)
    /// No `alg` header parameter (label 1) is present.
    case missingAlgorithm
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
    /// A COSE_Key that is inconsistent, of unsupported type, or with wrong lengths.
    case invalidKey(String)
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
