import JOSE
import WalletCrypto

/// The one error type of `WalletStorage`: every failure of the secure area, the key
/// wrapping, the credential store and key attestations is one of these cases.
/// No case ever carries key material.
public enum StorageError: Error, Equatable, Sendable {
    /// SQLite reported an error; `code` is the extended result code, `message` its text
    /// and `operation` what the store was doing.
    case database(operation: String, code: Int32, message: String)
    /// The database was written by a newer schema than this SDK knows (`found` > `supported`).
    case schemaTooNew(found: Int, supported: Int)
    /// A stored row that does not have the expected shape (a corrupted or foreign database).
    case corruptRecord(String)
    /// No key with this alias exists in the secure area.
    case keyNotFound(alias: String)
    /// A key with this alias already exists.
    case keyAlreadyExists(alias: String)
    /// An alias that is empty, too long or not valid UTF-8 text.
    case invalidAlias(String)
    /// The operation needs another kind of key (ECDH asked of an Ed25519 key ...).
    case unsupportedKeyOperation(alias: String, operation: String)
    /// The key is protected by a per-key passphrase and none was given.
    case passphraseRequired(alias: String)
    /// A wrapped key (or refresh token) did not decrypt: wrong wrapping key or passphrase,
    /// or the stored bytes were altered.
    case unwrapFailed(what: String)
    /// The key file or salt file is missing, unreadable, of the wrong size, or readable by
    /// others than its owner.
    case keyFile(path: String, reason: String)
    /// An attestation challenge was given but this secure area has no wallet-provider attester.
    case attestationUnavailable
    /// A key attestation that is malformed or fails a check; `reason` says which.
    case invalidKeyAttestation(KeyAttestationFailure)
    /// No credential with this id is stored.
    case credentialNotFound(id: String)
    /// A credential that cannot be stored as given (no instances, duplicate key aliases ...).
    case invalidCredential(String)
    /// Every instance of a `.oneTime` credential has been handed out.
    case noInstancesLeft(credentialId: String)
    /// The credential is deferred and has no instances to hand out yet.
    case credentialDeferred(credentialId: String)
    /// A `WalletCrypto` primitive failed.
    case crypto(CryptoError)
    /// A `JOSE` operation failed.
    case jose(JOSEError)
    /// The store was closed and can no longer be used.
    case closed
}

/// Why a key attestation was rejected by `KeyAttestationVerifier`.
public enum KeyAttestationFailure: Equatable, Sendable {
    /// The JWT does not parse or a claim has the wrong JSON type.
    case malformed(String)
    /// The header `typ` is not `key-attestation+jwt`.
    case wrongType(String?)
    /// The `x5c` chain is absent or unparsable, does not lead to a trust anchor, or its
    /// leaf is not a key-attestation signing certificate.
    case untrusted(TrustFailure)
    /// The signature does not verify with the `x5c` leaf key.
    case invalidSignature
    /// `exp` is missing or in the past.
    case expired
    /// `iat` is missing or in the future.
    case issuedInFuture
    /// The nonce is absent or differs from the expected one.
    case nonceMismatch
    /// `attested_keys` is missing, empty or holds something that is not a public JWK.
    case invalidAttestedKeys(String)
}

extension StorageError {
    /// Runs a `WalletCrypto` or `JOSE` call (untyped `throws`), mapping its failure.
    static func wrap<T>(_ body: () throws -> T) throws(StorageError) -> T {
        do {
            return try body()
        } catch let error as StorageError {
            throw error
        } catch let error as CryptoError {
            throw .crypto(error)
        } catch let error as JOSEError {
            throw .jose(error)
        } catch {
            throw .crypto(.openSSL(function: "unknown", reason: String(describing: error)))
        }
    }

    /// The async form of `wrap(_:)`.
    static func wrapAsync<T>(_ body: () async throws -> T) async throws(StorageError) -> T {
        do {
            return try await body()
        } catch let error as StorageError {
            throw error
        } catch let error as CryptoError {
            throw .crypto(error)
        } catch let error as JOSEError {
            throw .jose(error)
        } catch {
            throw .crypto(.openSSL(function: "unknown", reason: String(describing: error)))
        }
    }
}
