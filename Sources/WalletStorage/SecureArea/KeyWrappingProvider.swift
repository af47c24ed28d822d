import Foundation
import WalletCrypto

/// Where the key that encrypts stored private keys (and refresh tokens) comes from.
///
/// A provider wraps and unwraps small secrets with authenticated encryption bound to
/// `aad`; it never hands its key out, so a platform keystore (Android Keystore, a
/// Keychain item, a KMS) can implement it without exporting anything.
public protocol KeyWrappingProvider: Sendable {
    /// Encrypts and authenticates `plaintext`, binding `aad`; the output is self-contained.
    func wrap(_ plaintext: [UInt8], aad: [UInt8]) throws(StorageError) -> [UInt8]
    /// Reverses `wrap`; a wrong key, a different `aad` or altered bytes throw `unwrapFailed`.
    func unwrap(_ wrapped: [UInt8], aad: [UInt8]) throws(StorageError) -> [UInt8]
}

/// AES-256-GCM under a 32-byte ``SymmetricKey`` (wiped when released). Output layout:
/// version byte 0x01, 12-byte nonce, ciphertext, 16-byte tag.
struct AESKeyWrapper: Sendable {
    static let formatVersion: UInt8 = 1
    let key: SymmetricKey

    init(key: SymmetricKey) { self.key = key }

    func wrap(_ plaintext: [UInt8], aad: [UInt8]) throws(StorageError) -> [UInt8] {
        let box = try StorageError.wrap { () throws(CryptoError) in try AESGCM.seal(plaintext, key: key, aad: aad) }
        return [Self.formatVersion] + box.nonce + box.ciphertext + box.tag
    }

    func unwrap(_ wrapped: [UInt8], aad: [UInt8]) throws(StorageError) -> [UInt8] {
        let nonceCount = AESGCM.defaultNonceByteCount
        guard wrapped.count >= 1 + nonceCount + AESGCM.tagByteCount, wrapped.first == Self.formatVersion else {
            throw .unwrapFailed
        }
        let nonce = Array(wrapped[1..<(1 + nonceCount)])
        let combined = Array(wrapped[(1 + nonceCount)...])
        do {
            return try AESGCM.open(combined: combined, key: key, nonce: nonce, aad: aad)
        } catch {
            throw .unwrapFailed
        }
    }
}

/// The wrapping key is 32 random bytes in a file next to the database, created with
/// owner-only permissions (0600, atomically, never replacing an existing file).
///
/// Protects the database file when it is copied alone (a backup, a sync folder, a
/// leaked disk image without the key file). It does NOT protect against anyone who can
/// read files as the same user: they read the key file too.
public struct KeyFileWrappingProvider: KeyWrappingProvider {
    private let wrapper: AESKeyWrapper
    /// The key file's location.
    public let fileURL: URL

    /// Loads the key from `fileURL`, creating it (32 random bytes, mode 0600) when absent.
    /// Refuses a file that is not a 32-byte regular file owned by this user with no
    /// group/other permissions.
    public init(fileURL: URL) throws(StorageError) {
        self.fileURL = fileURL
        let key = try OwnerOnlyFile.readOrCreate(fileURL, count: 32) { () throws(StorageError) in
            try SystemRandomBytes.bytes(32)
        }
        wrapper = AESKeyWrapper(key: SymmetricKey(secret: key))
    }

    /// Uses the key file `<database>.key` next to `databaseURL`.
    public init(nextTo databaseURL: URL) throws(StorageError) {
        try self.init(fileURL: databaseURL.appendingPathExtension("key"))
    }

    /// AES-256-GCM under the file's key.
    public func wrap(_ plaintext: [UInt8], aad: [UInt8]) throws(StorageError) -> [UInt8] {
        try wrapper.wrap(plaintext, aad: aad)
    }

    /// Opens what `wrap` produced under the same key file.
    public func unwrap(_ wrapped: [UInt8], aad: [UInt8]) throws(StorageError) -> [UInt8] {
        try wrapper.unwrap(wrapped, aad: aad)
    }
}

/// The wrapping key is stretched from a passphrase with scrypt (memory-hard, through
/// OpenSSL) and a 16-byte random salt kept in a file next to the database.
///
/// Nothing on disk suffices to unwrap keys: an attacker with the files must guess the
/// passphrase at scrypt's cost per guess. While the wallet runs, the derived key is in
/// process memory.
public struct PassphraseWrappingProvider: KeyWrappingProvider {
    private let wrapper: AESKeyWrapper

    /// Derives the key from `passphrase` (UTF-8) and `salt` (at least 16 bytes).
    public init(passphrase: String, salt: [UInt8], parameters: ScryptParameters = .interactive) throws(StorageError) {
        guard salt.count >= 16 else { throw .crypto(.invalidLength(.scryptSalt, actual: salt.count)) }
        var derived = try parameters.deriveKey(password: Array(passphrase.utf8), salt: salt)
        wrapper = AESKeyWrapper(key: SymmetricKey(consuming: &derived))
    }

    /// Derives the key with the salt in `<database>.salt` next to `databaseURL`, created
    /// (16 random bytes, mode 0600) on first use.
    public init(passphrase: String, nextTo databaseURL: URL, parameters: ScryptParameters = .interactive) throws(StorageError) {
        let salt = try OwnerOnlyFile.readOrCreate(databaseURL.appendingPathExtension("salt"), count: 16) {
            () throws(StorageError) in try SystemRandomBytes.bytes(16)
        }
        try self.init(passphrase: passphrase, salt: salt.withBytes { $0 }, parameters: parameters)
    }

    /// AES-256-GCM under the derived key.
    public func wrap(_ plaintext: [UInt8], aad: [UInt8]) throws(StorageError) -> [UInt8] {
        try wrapper.wrap(plaintext, aad: aad)
    }

    /// Opens what `wrap` produced; a wrong passphrase throws `unwrapFailed`.
    public func unwrap(_ wrapped: [UInt8], aad: [UInt8]) throws(StorageError) -> [UInt8] {
        try wrapper.unwrap(wrapped, aad: aad)
    }
}

/// A random wrapping key that lives only in memory: for in-memory stores and tests.
/// Anything it wrapped is unreadable once it is gone.
public struct EphemeralWrappingProvider: KeyWrappingProvider {
    private let wrapper: AESKeyWrapper

    /// Draws a fresh 32-byte key.
    public init() throws(StorageError) {
        wrapper = AESKeyWrapper(key: try StorageError.wrap { () throws(CryptoError) in try SymmetricKey.random(byteCount: 32) })
    }

    /// AES-256-GCM under the in-memory key.
    public func wrap(_ plaintext: [UInt8], aad: [UInt8]) throws(StorageError) -> [UInt8] {
        try wrapper.wrap(plaintext, aad: aad)
    }

    /// Opens what `wrap` produced.
    public func unwrap(_ wrapped: [UInt8], aad: [UInt8]) throws(StorageError) -> [UInt8] {
        try wrapper.unwrap(wrapped, aad: aad)
    }
}
