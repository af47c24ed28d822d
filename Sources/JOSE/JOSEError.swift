import Foundation
import WalletCrypto
import WalletEncoding

/// The one error type of the `JOSE` module: every failure to parse, sign, verify,
/// validate, encrypt or decrypt a JOSE object is one of these cases.
public enum JOSEError: Error, Equatable, Sendable {
    /// The input is not a well-formed JOSE object (wrong part count, bad base64url, a
    /// header member of the wrong type ...).
    case malformed(JOSEMalformation)
    /// A part that must be a JSON object does not parse, or is not an object.
    case invalidJSON(part: JOSEPart, JSONError)
    /// An algorithm (`alg`, `enc`, `zip`), key type (`kty`) or curve (`crv`) this module
    /// does not implement; `value` is the one received.
    case unsupportedAlgorithm(JOSEAlgorithmParameter, value: String)
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
    case invalidCriticalHeader(CriticalHeaderFailure)
    /// The JWT's `exp`, `nbf` or `iat` does not hold at the verification time.
    case invalidTime(JWTTimeFailure)
    /// The JWT `aud` does not contain the expected audience.
    case audienceMismatch(expected: String, actual: [String])
    /// The JWT `iss` is not the expected issuer.
    case issuerMismatch(expected: String, actual: String?)
    /// The header `typ` is not the expected type.
    case typeMismatch(expected: String, actual: String?)
    /// A claim the caller requires is absent.
    case missingClaim(String)
    /// The claim of this name is present with the wrong JSON type (`exp` as a string ...).
    case invalidClaim(String)
    /// A JWK (or key bytes for one) that is not a usable key.
    case invalidKey(JWKFailure)
    /// A private-key operation was asked of a JWK that holds only a public key.
    case missingPrivateKey
    /// The JWE does not decrypt: wrong key, tampered header, IV, ciphertext or tag.
    case decryptionFailed
    /// The JWE was not made for this recipient key (its `kid` names another key).
    case keyMismatch(expectedKeyID: String?, actualKeyID: String?)
    /// Decompressing a `zip: DEF` payload would exceed the allowed size.
    case decompressedSizeExceeded(limit: Int)
    /// zlib could not compress a plaintext (`zip: DEF`); no input causes this.
    case compressionFailed
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

/// A part of a compact JOSE object, or a JSON document JOSE reads.
public enum JOSEPart: String, Hashable, Sendable {
    /// The protected header.
    case protectedHeader
    /// The JWS payload.
    case payload
    /// The JWS signature.
    case signature
    /// The JWE encrypted key (empty with direct key agreement).
    case encryptedKey
    /// The JWE initialization vector.
    case initializationVector
    /// The JWE ciphertext.
    case ciphertext
    /// The JWE authentication tag.
    case authenticationTag
    /// A JWK.
    case jwk
    /// A JWK Set.
    case jwkSet
    /// The JWT claims set.
    case jwtClaims
}

/// The header parameter whose value is not implemented (``JOSEError/unsupportedAlgorithm(_:value:)``).
public enum JOSEAlgorithmParameter: String, Hashable, Sendable {
    /// `alg`.
    case alg
    /// `enc`.
    case enc
    /// `zip`.
    case zip
    /// A JWK's `kty`.
    case kty
    /// A JWK's `crv`.
    case crv
}

/// How a compact JOSE object is malformed (``JOSEError/malformed(_:)``).
public enum JOSEMalformation: Hashable, Sendable {
    /// The compact form has `actual` dot-separated parts instead of `expected`.
    case partCount(expected: Int, actual: Int)
    /// The part is not (canonical, unpadded) base64url.
    case notBase64URL(JOSEPart)
    /// The part has the wrong length.
    case partLength(JOSEPart, expected: Int, actual: Int)
    /// The part must be empty here (a detached payload, the encrypted key of direct key agreement).
    case partNotEmpty(JOSEPart)
    /// The protected header is empty.
    case emptyProtectedHeader
    /// A header parameter the object needs is absent (`alg`, `enc`, `epk`).
    case missingHeader(String)
    /// A header parameter has the wrong JSON type or encoding.
    case invalidHeader(String)
    /// An additional header may not set this parameter; the encryption sets it itself.
    case reservedHeader(String)
    /// A JWK Set without a `keys` array of objects.
    case notAJWKSet
    /// The `zip: DEF` content does not inflate, or has data after the DEFLATE stream.
    case invalidCompressedContent
}

/// Why `crit` is rejected (RFC 7515 §4.1.11; ``JOSEError/invalidCriticalHeader(_:)``).
public enum CriticalHeaderFailure: Hashable, Sendable {
    /// `crit` is not an array of strings.
    case notStringArray
    /// `crit` is empty.
    case empty
    /// `crit` lists a name twice.
    case repeated
    /// `crit` lists a parameter the JOSE specifications register.
    case registeredParameter(String)
    /// `crit` lists a parameter the header does not carry.
    case absentParameter(String)
}

/// Why a JWK, or key bytes for one, is rejected (``JOSEError/invalidKey(_:)``).
public enum JWKFailure: Hashable, Sendable {
    /// A required member is absent or not a string.
    case missingMember(String)
    /// A member has the wrong type, or is not canonical unpadded base64url.
    case invalidMember(String)
    /// A member decodes to the wrong number of bytes.
    case memberLength(String, expected: Int, actual: Int)
    /// The public point is not on the curve (EC), or the public key is not valid (Ed25519).
    case invalidPublicKey
    /// The private key (`d`) is not valid for the curve.
    case invalidPrivateKey
    /// `d` does not belong to the public key given with it.
    case privateKeyMismatch
    /// A symmetric key (or HMAC key) that is empty.
    case emptySymmetricKey
    /// An RSA key whose `n`/`e` are not minimal big-endian or whose modulus is under 2048 bits.
    case weakRSAKey
    /// The member holds key material and cannot be replaced by `adding(_:)`.
    case keyMaterialNotReplaceable(String)
    /// The operation needs a key of another type.
    case wrongKeyType(expected: JWK.KeyType)
    /// A symmetric key has no public form.
    case noPublicForm
    /// A key that must be public (a header `jwk`, a JWE `epk`) holds private material.
    case unexpectedPrivateKey
    /// The header carries no `jwk` where one is required.
    case missingHeaderKey
}

extension JSONValue {
    /// Parses `bytes` as a JSON object for the JOSE part named `part`.
    static func parseObject(_ bytes: [UInt8], what part: JOSEPart) throws(JOSEError) -> JSONObject {
        do {
            return try parseObject(bytes)
        } catch {
            throw .invalidJSON(part: part, error)
        }
    }
}
