import Foundation
import WalletEncoding
import JOSE
import WalletCrypto

/// The one error type of the `SDJWT` module: every failure to parse, process, verify,
/// present or issue an SD-JWT (VC) is one of these cases.
///
/// Failures of one concern are nested: ``DisclosureFailure`` for disclosures and their
/// digests, ``KeyBindingFailure`` for the holder key and the KB-JWT; trust decisions about
/// the issuer carry the shared ``TrustFailure``. A signer's own failure (a cancelled
/// authentication prompt) arrives unchanged as ``keyOperation(_:)``.
public enum SDJWTError: Error, Equatable, Sendable {
    // MARK: Structure

    /// The compact form or the payload does not have the shape RFC 9901 requires.
    case malformed(SDJWTMalformation)
    /// The input exceeds a limit enforced before processing.
    case limitExceeded(SDJWTLimit)
    /// The issuer-signed JWT does not parse as a JWT.
    case invalidIssuerJWT(JOSEError)
    /// `_sd_alg` (or `transaction_data_hashes_alg`) names a hash this module does not implement.
    case unsupportedHashAlgorithm(String)
    /// A disclosure, or how the payload references disclosures, is not valid.
    case disclosure(DisclosureFailure)

    // MARK: Issuer and trust

    /// The issuer signature does not verify (wrong key, tampered JWT, key not fit for `alg`).
    case invalidIssuerSignature(JOSEError)
    /// The `x5c` chain of the issuer-signed JWT is missing, malformed, or not trusted for
    /// issuing this credential.
    case untrustedIssuer(TrustFailure)
    /// The application's key resolver has no key for the issuer (the header's `kid`, if any).
    case issuerKeyUnavailable(keyID: String?)

    // MARK: Credential claims

    /// The header `typ` is not an accepted SD-JWT VC type (`dc+sd-jwt`; `vc+sd-jwt` with the legacy flag).
    case invalidCredentialType(String?)
    /// A claim the profile requires is absent (`vct`, `iss` ...).
    case missingClaim(String)
    /// A claim is present but not acceptable.
    case invalidClaim(InvalidClaimReason)
    /// `iss` is not the issuer the caller expects.
    case issuerMismatch(expected: String, actual: String?)
    /// The credential's `exp`, `nbf` or `iat` (after disclosure) does not hold at the
    /// verification time.
    case invalidTime(JWTTimeFailure)

    // MARK: Key binding

    /// The holder key or the Key Binding JWT does not hold.
    case keyBinding(KeyBindingFailure)

    // MARK: Presentation and issuance

    /// A claim path selects nothing in the credential (OpenID4VP 1.0 §7.3).
    case claimPathNotFound(ClaimPath)
    /// A claim path is not a valid DCQL claims path pointer.
    case invalidClaimPath(ClaimPathFailure)
    /// An issuance plan that cannot be applied to the claims.
    case invalidPlan(PlanFailure)
    /// Building or signing a JWT (the issuer JWT or a KB-JWT) failed in JOSE.
    case signingFailed(JOSEError)
    /// The caller's `Signer` failed; a cancelled authentication prompt arrives here
    /// unchanged as `.keyOperation(.userCancelled)`.
    case keyOperation(KeyOperationError)
    /// The random source failed while drawing salts or decoys.
    case randomSourceFailed(CryptoError)
}

/// How an SD-JWT or its payload is malformed (``SDJWTError/malformed(_:)``).
public enum SDJWTMalformation: Hashable, Sendable {
    /// The text is not printable ASCII without whitespace.
    case notPrintableASCII
    /// There is no `~` after the issuer-signed JWT.
    case missingSeparator
    /// Two `~` follow each other: an empty disclosure.
    case emptyDisclosure
    /// `_sd_alg` is not a string.
    case hashAlgorithmNotString
    /// The payload is not a JSON object.
    case payloadNotObject
    /// `_sd` is not an array.
    case digestsNotArray
    /// An `_sd` entry (or, when `arrayElement`, a `...` value) is not a string.
    case digestNotString(arrayElement: Bool)
}

/// A limit an SD-JWT exceeded (``SDJWTError/limitExceeded(_:)``).
public enum SDJWTLimit: Hashable, Sendable {
    /// The compact form is longer than `maximum` bytes.
    case length(maximum: Int)
    /// There are more than `maximum` disclosures.
    case disclosureCount(maximum: Int)
    /// The claims nest deeper than `maximum` levels.
    case nestingDepth(maximum: Int)
}

/// Why a disclosure, or the way the payload refers to it, is rejected (RFC 9901 §7.1).
public enum DisclosureFailure: Equatable, Sendable {
    /// A disclosure that is not base64url of a JSON array `[salt, name, value]` or `[salt, value]`.
    case malformed(DisclosureMalformation)
    /// A disclosure's decoded bytes are not JSON.
    case notJSON(JSONError)
    /// The same disclosure (same digest) appears twice.
    case duplicate(digest: String)
    /// A digest appears more than once across `_sd` arrays and array elements.
    case duplicateDigest(String)
    /// A disclosure is not referenced by any digest of the payload or of another disclosure.
    case unreferenced(digest: String)
    /// A disclosure, or an issuance plan, uses `_sd` or `...` as a claim name (RFC 9901 §4.2.1).
    case reservedClaimName(String)
    /// A disclosed claim would replace a claim already present at that level.
    case claimOverwritten(String)
    /// An object-property disclosure is referenced from an array, or an array-element one from `_sd`.
    case kindMismatch(digest: String)
}

/// How a disclosure string is malformed (``DisclosureFailure/malformed(_:)``).
public enum DisclosureMalformation: Hashable, Sendable {
    /// The disclosure is empty.
    case empty
    /// Not unpadded base64url.
    case notBase64URL
    /// The JSON is not an array.
    case notArray
    /// The array has `elementCount` elements; 2 or 3 are allowed.
    case wrongElementCount(Int)
    /// The salt is missing or not a string.
    case saltNotString
    /// The claim name is not a string.
    case claimNameNotString
}

/// Why a claim of the credential is not acceptable (``SDJWTError/invalidClaim(_:)``).
public enum InvalidClaimReason: Hashable, Sendable {
    /// The claim must stay visible in an SD-JWT VC but was selectively disclosed.
    case selectivelyDisclosed(String)
    /// The claim has the wrong JSON type.
    case wrongType(String)
    /// `vct` is not one of the types the caller accepts.
    case typeNotAccepted(String)
}

/// Why the holder key or the Key Binding JWT does not hold (``SDJWTError/keyBinding(_:)``).
public enum KeyBindingFailure: Equatable, Sendable {
    /// `cnf` is absent or holds no usable `jwk`, but key binding needs the holder key.
    case missingHolderKey
    /// The `cnf.jwk` is not a valid JWK.
    case invalidHolderKey(JOSEError)
    /// The signer given for key binding is not the key the credential is bound to.
    case holderKeyMismatch
    /// The `cnf.jwk` is a valid JWK but not a key a holder may prove possession with: key
    /// binding needs a public asymmetric signature key (RFC 9901 §4.1.2, RFC 7800).
    case unsupportedHolderKey(HolderKeyRejection)
    /// Key binding was required but the presentation carries no KB-JWT.
    case missing
    /// The KB-JWT does not parse as a JWT.
    case invalidJWT(JOSEError)
    /// The KB-JWT `typ` is not `kb+jwt`.
    case invalidType(String?)
    /// The KB-JWT signature does not verify with the `cnf` key.
    case invalidSignature(JOSEError)
    /// The KB-JWT `aud` is not the single string naming the verifier (an array, even one
    /// that contains the verifier, is refused).
    case audienceMismatch(expected: String, actual: [String])
    /// The KB-JWT `nonce` is not the verifier's nonce.
    case nonceMismatch(expected: String, actual: String?)
    /// The KB-JWT `sd_hash` is absent or not the hash of the presented SD-JWT.
    case sdHashMismatch(expected: String, actual: String?)
    /// The KB-JWT's `iat` is absent or outside `[now - maximumAge - skew, now + skew]`, or
    /// another of its time claims does not hold.
    case invalidTime(JWTTimeFailure)
    /// `transaction_data_hashes` does not match the request (OpenID4VP 1.0 §8.4).
    case transactionDataMismatch(TransactionDataMismatch)
}

/// How `transaction_data_hashes` fails to match the request (``KeyBindingFailure/transactionDataMismatch(_:)``).
public enum TransactionDataMismatch: Hashable, Sendable {
    /// Hashes are present but the request carried no transaction data.
    case unexpectedHashes
    /// The request carried transaction data but the hashes are absent or not an array.
    case missingHashes
    /// `transaction_data_hashes_alg` is not a string.
    case algorithmNotString
    /// A hash is not a string.
    case hashNotString
    /// The hashes are not those of the request's transaction data.
    case hashesDiffer
}

/// Why a claims path is invalid (``SDJWTError/invalidClaimPath(_:)``).
public enum ClaimPathFailure: Hashable, Sendable {
    /// The path is empty (or not a non-empty array).
    case empty
    /// An array index is negative or too large.
    case indexOutOfRange(Int64)
    /// A component is not a string, a non-negative integer or null.
    case invalidComponent
}

/// Why an issuance plan cannot be applied (``SDJWTError/invalidPlan(_:)``).
public enum PlanFailure: Hashable, Sendable {
    /// The claim must stay visible in an SD-JWT VC (`iss`, `vct`, `cnf` ...).
    case mustStayVisible(String)
    /// The claims carry a member the issuer writes itself (`_sd`, `_sd_alg`, `cnf`).
    case reservedForIssuer(String)
    /// The top level was marked selectively disclosable.
    case topLevelDisclosable
    /// The plan names a claim the claims do not have; `location` is the parent's path.
    case noSuchClaim(String, location: String)
    /// The plan names an element index the array does not have.
    case noSuchElement(Int, location: String)
    /// The plan has members for a value that is not an object.
    case notAnObject(location: String)
    /// The plan has elements for a value that is not an array.
    case notAnArray(location: String)
    /// The plan has members or elements for a value that is neither an object nor an array.
    case notAContainer(location: String)
}

/// Why a `cnf.jwk` cannot bind a credential to its holder.
public enum HolderKeyRejection: Hashable, Sendable {
    /// A symmetric `oct` key: anyone who can read the credential could compute the "proof".
    case symmetricKey
    /// The JWK carries private key members.
    case privateKeyMaterial
    /// A key type or curve that cannot sign a KB-JWT here (`RSA`, `X25519` ...); the value
    /// is the `kty`, with the `crv` after a slash when there is one.
    case unsupportedKeyType(String)
}
