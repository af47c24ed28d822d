import WalletCrypto

/// The one error type of `WalletStorage`: every failure of the secure area, the key
/// wrapping and the credential store is one of these cases.
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
    /// The key is protected and no unlock data, a wrong one, or one of a kind this area
    /// does not know was given (or the platform's authentication has expired).
    case authenticationRequired(alias: String)
    /// The user dismissed the authentication prompt the key required.
    case userCancelled(alias: String)
    /// The key can no longer be used (invalidated by the platform, e.g. biometrics changed).
    case keyInvalidated(alias: String)
    /// The area cannot protect a key this way (e.g. platform user authentication in the software area).
    case unsupportedKeyProtection(String)
    /// A wrapped key (or refresh token) did not decrypt: wrong wrapping key or passphrase,
    /// or the stored bytes were altered.
    case unwrapFailed(what: String)
    /// The key file or salt file is missing, unreadable, of the wrong size, or readable by
    /// others than its owner.
    case keyFile(path: String, reason: String)
    /// No credential with this id is stored.
    case credentialNotFound(id: String)
    /// No transaction-log entry with this id is stored.
    case transactionNotFound(id: String)
    /// A credential that cannot be stored as given (no instances, duplicate key aliases ...).
    case invalidCredential(String)
    /// Every instance of a `.oneTime` credential has been handed out.
    case noInstancesLeft(credentialId: String)
    /// The credential is deferred and has no instances to hand out yet.
    case credentialDeferred(credentialId: String)
    /// A `WalletCrypto` primitive failed.
    case crypto(CryptoError)
    /// The store was closed and can no longer be used.
    case closed
}

extension StorageError {
    /// Runs a `WalletCrypto` call, wrapping its error as `StorageError.crypto`.
    static func wrap<T>(_ body: () throws(CryptoError) -> T) throws(StorageError) -> T {
        do { return try body() } catch { throw .crypto(error) }
    }
}
