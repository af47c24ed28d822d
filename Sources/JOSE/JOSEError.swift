import Foundation
import WalletCrypto
import WalletEncoding

/// The one error type of the `JOSE` module: every failure to parse, sign, verify,
/// validate, encrypt or decrypt a JOSE object is one of these cases.
public enum JOSEError: Error, Equatable, Sendable {
    /// The input is not a well-formed JOSE object (wrong part count, bad base64url,
    /// JSON that does not parse, a member of the wrong type ...); the text says what.
    case malformed(String)
    /// A part that must be JSON (`part`: "protected header", "JWK", "JWT claims" ...) does
    /// not parse, or is not an object.
    case invalidJSON(part: String, JSONError)
    /// An algorithm (`alg`, `enc`, `zip`) or key type this module does not implement.
    case unsupportedAlgorithm(String)
    /// An algorithm that is never accepted, whatever the key (`none`).
    case algorithmNotAllowed(String)
    /// The `alg` of the object does not fit the key type (ES256 with an Ed25519 key, HS256 with an EC key ...).
    case algorithmKeyMismatch(algorithm: String, keyType: String)
    /// The key is on another curve than the algorithm or the peer key requires.
    case wrongCurve(expected: String, actual: String)
    /// A signature that has the wrong length for its algorithm (truncated or padded).
    case malformedSignature(expectedLength: Int, actualLength: Int)
    /// A signature or MAC that does not verify over the received signing input.
    case invalidSignature
    /// `crit` lists header parameters the caller did not declare as understood (RFC 7515 §4.1.11).
    case unknownCriticalHeader([String])
    /// `crit` itself is malformed: empty, not strings, lists a standard parameter or one that is absent.
    case invalidCriticalHeader(String)
    /// The JWT `exp` (with skew) lies before `now`.
    case expired(exp: Date, now: Date)
    /// The JWT `nbf` (with skew) lies after `now`.
    case notYetValid(nbf: Date, now: Date)
    /// The JWT `iat` (with skew) lies after `now`.
    case issuedInFuture(iat: Date, now: Date)
    /// The JWT `aud` does not contain the expected audience.
    case audienceMismatch(expected: String, actual: [String])
    /// The JWT `iss` is not the expected issuer.
    case issuerMismatch(expected: String, actual: String?)
    /// The header `typ` is not the expected type.
    case typeMismatch(expected: String, actual: String?)
    /// A claim the caller requires is absent.
    case missingClaim(String)
    /// A claim is present with the wrong JSON type (`exp` as a string ...).
    case invalidClaim(String)
    /// Key material that is not a usable key (wrong coordinate length, off the curve, missing member ...).
    case invalidKey(String)
    /// A private-key operation was asked of a JWK that holds only a public key.
    case missingPrivateKey
    /// The JWE does not decrypt: wrong key, tampered header, IV, ciphertext or tag.
    case decryptionFailed
    /// The JWE was not made for this recipient key (its `kid` names another key).
    case keyMismatch(expectedKeyID: String?, actualKeyID: String?)
    /// Decompressing a `zip: DEF` payload would exceed the allowed size.
    case decompressedSizeExceeded(limit: Int)
    /// The `x5c` chain is not trusted for this use: absent, unparsable, not validating to
    /// the trust anchors, or its certificates do not meet the policy.
    case untrusted(TrustFailure)
    /// The caller's `Signer` or `KeyAgreement` failed (a cancelled authentication prompt
    /// arrives here unchanged as `.keyOperation(.userCancelled)`).
    case keyOperation(KeyOperationError)
    /// The caller's key resolver knows no key for the header (its `kid`, when present, is given).
    case unknownKey(keyID: String?)
    /// A `WalletCrypto` primitive failed.
    case crypto(CryptoError)
}

extension JSONValue {
    /// Parses `bytes` as a JSON object for the JOSE part named `part`.
    static func parseObject(_ bytes: [UInt8], what part: String) throws(JOSEError) -> JSONObject {
        do {
            return try parseObject(bytes)
        } catch {
            throw .invalidJSON(part: part, error)
        }
    }
}
