import Foundation
import WalletEncoding
import JOSE
import WalletCrypto

/// The one error type of the `SDJWT` module: every failure to parse, process, verify,
/// present or issue an SD-JWT (VC) is one of these cases.
public enum SDJWTError: Error, Equatable, Sendable {
    /// The compact form is not `<issuer JWT>~<disclosure>~...~<KB-JWT or nothing>`, or
    /// a structural member (`_sd`, `...`) has the wrong JSON type; the text says what.
    case malformed(String)
    /// The input exceeds a limit enforced before processing (size, disclosure count, nesting).
    case limitExceeded(String)
    /// The issuer-signed JWT does not parse as a JWT.
    case invalidIssuerJWT(JOSEError)
    /// A disclosure is not base64url of a JSON array `[salt, name, value]` or `[salt, value]`.
    case malformedDisclosure(String)
    /// A disclosure's decoded bytes are not JSON.
    case disclosureNotJSON(JSONError)
    /// `_sd_alg` (or `transaction_data_hashes_alg`) names a hash this module does not implement.
    case unsupportedHashAlgorithm(String)
    /// The same disclosure (same digest) appears twice in the SD-JWT (RFC 9901 §7.1).
    case duplicateDisclosure(digest: String)
    /// A digest appears more than once across `_sd` arrays and array elements (RFC 9901 §7.1).
    case duplicateDigest(String)
    /// A disclosure is not referenced by any digest of the payload or of another disclosure (RFC 9901 §7.1).
    case unreferencedDisclosure(digest: String)
    /// A disclosure, or an issuance plan, uses `_sd` or `...` as a claim name (RFC 9901 §4.2.1).
    case reservedClaimName(String)
    /// A disclosed claim would replace a claim already present at that level (RFC 9901 §7.1).
    case claimOverwritten(String)
    /// An object-property disclosure is referenced from an array, or an array-element one from `_sd`.
    case disclosureKindMismatch(digest: String)
    /// The issuer signature does not verify (wrong key, tampered JWT, key not fit for `alg`).
    case invalidIssuerSignature(JOSEError)
    /// The `x5c` chain of the issuer-signed JWT is missing, malformed, or not trusted for
    /// issuing this credential.
    case untrustedIssuer(TrustFailure)
    /// The application's key resolver did not produce a key for the issuer.
    case issuerKeyUnavailable(String)
    /// The header `typ` is not an accepted SD-JWT VC type (`dc+sd-jwt`; `vc+sd-jwt` with the legacy flag).
    case invalidCredentialType(String?)
    /// A claim the profile requires is absent (`vct`, `cnf` ...).
    case missingClaim(String)
    /// A claim has the wrong type or a value the caller does not accept; the text says which.
    case invalidClaim(String)
    /// `iss` is not the issuer the caller expects.
    case issuerMismatch(expected: String, actual: String?)
    /// The credential's `exp` (plus skew) lies before the verification time.
    case expired(exp: Date, now: Date)
    /// The credential's `nbf` (minus skew) lies after the verification time.
    case notYetValid(nbf: Date, now: Date)
    /// The credential's `iat` (minus skew) lies after the verification time.
    case issuedInFuture(iat: Date, now: Date)
    /// `cnf` is absent or holds no usable `jwk`, but key binding needs the holder key.
    case missingHolderKey
    /// The `cnf.jwk` is not a valid public key.
    case invalidHolderKey(JOSEError)
    /// Key binding was required but the presentation carries no KB-JWT.
    case missingKeyBinding
    /// The KB-JWT does not parse as a JWT.
    case invalidKeyBindingJWT(JOSEError)
    /// The KB-JWT `typ` is not `kb+jwt`.
    case invalidKeyBindingType(String?)
    /// The KB-JWT signature does not verify with the `cnf` key.
    case invalidKeyBindingSignature(JOSEError)
    /// The KB-JWT `aud` is not the verifier.
    case audienceMismatch(expected: String, actual: [String])
    /// The KB-JWT `nonce` is not the verifier's nonce.
    case nonceMismatch(expected: String, actual: String?)
    /// The KB-JWT `sd_hash` is absent or not the hash of the presented SD-JWT.
    case sdHashMismatch(expected: String, actual: String?)
    /// The KB-JWT `iat` is absent or outside `[now - maximumAge - skew, now + skew]`.
    case keyBindingIssuedAtOutsideWindow(iat: Date?, now: Date)
    /// `transaction_data_hashes` does not match the transaction data of the request (OpenID4VP 1.0 §8.4).
    case transactionDataMismatch(String)
    /// A claim path selects nothing in the credential (OpenID4VP 1.0 §7.3).
    case claimPathNotFound(ClaimPath)
    /// A claim path is not a valid DCQL claims path pointer.
    case invalidClaimPath(String)
    /// The signer given for key binding is not the key the credential is bound to.
    case holderKeyMismatch
    /// An issuance plan names a claim that is not there, or a claim that must stay visible.
    case invalidPlan(String)
    /// Signing (issuer JWT or KB-JWT) failed in the caller's `Signer` or in JOSE.
    case signingFailed(JOSEError)
    /// The random source failed while drawing salts or decoys.
    case randomSourceFailed(String)
}
