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
    /// A stored row that does not have the expected shape (a corrupted or foreign database):
    /// `table` is where it was read, `key` the row's id or alias when known.
    case corruptRecord(table: String, key: String?)
    /// No key with this alias exists in the secure area.
    case keyNotFound(alias: String)
    /// A key with this alias already exists.
    case keyAlreadyExists(alias: String)
    /// An alias that is empty, longer than the area allows, or contains NUL.
    case invalidAlias(String)
    /// A batch of keys was asked for with a count below 1.
    case invalidBatchSize(Int)
    /// The operation needs another kind of key (ECDH asked of an Ed25519 key ...).
    case unsupportedKeyOperation(alias: String, operation: SecureAreaOperation)
    /// The key is protected and no unlock data, a wrong one, or one of a kind this area
    /// does not know was given (or the platform's authentication has expired).
    case authenticationRequired(alias: String)
    /// The user dismissed the authentication prompt the key required.
    case userCancelled(alias: String)
    /// The key can no longer be used (invalidated by the platform, e.g. biometrics changed).
    case keyInvalidated(alias: String)
    /// The area cannot protect a key this way (e.g. platform user authentication in the
    /// software area).
    case unsupportedKeyProtection(KeyProtection.Kind)
    /// A wrapped secret (a private key, a refresh token, claim values) did not decrypt:
    /// wrong wrapping key, or the stored bytes were altered.
    case unwrapFailed
    /// The key file or salt file is unusable; `path` is the file, `problem` what is wrong.
    case keyFile(path: String, problem: KeyFileProblem)
    /// No credential with this id is stored.
    case credentialNotFound(id: String)
    /// No transaction-log entry with this id is stored.
    case transactionNotFound(id: String)
    /// A credential that cannot be stored as given.
    case invalidCredential(InvalidCredentialReason)
    /// Every instance of a `.oneTime` credential has been handed out.
    case noInstancesLeft(credentialId: String)
    /// The credential is deferred and has no instances to hand out yet.
    case credentialDeferred(credentialId: String)
    /// A `WalletCrypto` primitive failed.
    case crypto(CryptoError)
    /// The store was closed and can no longer be used.
    case closed
    /// The storage folder's lock file (``StorageFolderLock``) could not be opened or
    /// locked; `errno` is the system's reason.
    case lockFile(path: String, errno: Int32)
}

/// A secure-area operation (``StorageError/unsupportedKeyOperation(alias:operation:)``).
public enum SecureAreaOperation: String, Hashable, Sendable {
    /// Creating the key.
    case generate
    /// Signing with it.
    case sign
    /// ECDH with it.
    case keyAgreement
}

/// What is wrong with a key or salt file (``StorageError/keyFile(path:problem:)``).
/// `errno` values are POSIX error numbers.
public enum KeyFileProblem: Hashable, Sendable {
    /// The file could not be created.
    case cannotCreate(errno: Int32)
    /// Writing it failed.
    case cannotWrite(errno: Int32)
    /// Flushing it to disk failed.
    case cannotSync(errno: Int32)
    /// Linking it into place failed (and no file published by another process was found).
    case cannotPublish(errno: Int32)
    /// Opening it failed.
    case cannotOpen(errno: Int32)
    /// `fstat` failed.
    case cannotStat(errno: Int32)
    /// Reading it failed.
    case cannotRead(errno: Int32)
    /// It is not a regular file.
    case notRegularFile
    /// It belongs to another user.
    case ownedByAnotherUser
    /// Its group or other permission bits are set.
    case accessibleByOthers
    /// It does not have the expected size.
    case wrongSize(expected: Int, actual: Int)
    /// It ended before the expected size.
    case shortRead
}

/// Why a credential cannot be stored (``StorageError/invalidCredential(_:)``).
public enum InvalidCredentialReason: Hashable, Sendable {
    /// The id is empty.
    case emptyId
    /// The policy's batch size is below 1.
    case batchSizeBelowOne
    /// An issued credential has no instances.
    case noInstances
    /// Two instances share a key alias.
    case duplicateKeyAlias
    /// Two instances share an index.
    case duplicateIndex
    /// An instance has a negative use count or an empty key alias.
    case invalidInstance
    /// The key alias is already used by an instance of another credential.
    case keyAliasInUse(String)
    /// The key alias belongs to an instance the credential no longer has, whose key is
    /// being deleted: a save made from a record read before another save replaced that
    /// instance (two renewals of one credential at once), which would otherwise bring a
    /// spent one-time instance back as unused.
    case keyAliasBeingDeleted(String)
}

extension StorageError {
    /// Runs a `WalletCrypto` call, wrapping its error as `StorageError.crypto`.
    static func wrap<T>(_ body: () throws(CryptoError) -> T) throws(StorageError) -> T {
        do { return try body() } catch { throw .crypto(error) }
    }
}
