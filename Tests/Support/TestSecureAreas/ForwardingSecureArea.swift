import WalletCrypto
import WalletStorage

/// A secure area for tests: every requirement goes to a `SoftwareSecureArea`, except the
/// signer, the key agreement and key deletion, which come from the closures given (the
/// inner area's when none is). It has no `unlockedKey` of its own, so the protocol's default serves
/// it: what tests of that default, and of signers that fail, need.
public struct ForwardingSecureArea: SecureArea {
    /// Makes the signer for an alias and its unlock data.
    public typealias SignerSource = @Sendable (String, (any KeyUnlockData)?) async throws(StorageError) -> any Signer
    /// Makes the key agreement for an alias and its unlock data.
    public typealias KeyAgreementSource = @Sendable (String, (any KeyUnlockData)?) async throws(StorageError) -> any KeyAgreement
    /// Deletes the key of an alias (or fails to).
    public typealias DeleteSource = @Sendable (String) async throws(StorageError) -> Void

    /// The area that holds the keys.
    public let inner: SoftwareSecureArea
    /// The name reported.
    public let name: String
    private let makeSigner: SignerSource?
    private let makeKeyAgreement: KeyAgreementSource?
    private let delete: DeleteSource?

    /// An area over `inner`; `signer`, `keyAgreement` and `deleteKey` replace the inner
    /// area's operations.
    public init(inner: SoftwareSecureArea, name: String, signer: SignerSource? = nil, keyAgreement: KeyAgreementSource? = nil,
                deleteKey: DeleteSource? = nil) {
        self.inner = inner
        self.name = name
        self.makeSigner = signer
        self.makeKeyAgreement = keyAgreement
        self.delete = deleteKey
    }

    public func createKey(alias: String, options: KeyCreationOptions) async throws(StorageError) -> KeyInfo {
        try await inner.createKey(alias: alias, options: options)
    }

    public func createKeys(count: Int, aliasPrefix: String, options: KeyCreationOptions) async throws(StorageError) -> [KeyInfo] {
        try await inner.createKeys(count: count, aliasPrefix: aliasPrefix, options: options)
    }

    public func keyInfo(alias: String) async throws(StorageError) -> KeyInfo { try await inner.keyInfo(alias: alias) }

    public func signer(for alias: String, unlock: (any KeyUnlockData)?) async throws(StorageError) -> any Signer {
        if let makeSigner { return try await makeSigner(alias, unlock) }
        return try await inner.signer(for: alias, unlock: unlock)
    }

    public func keyAgreement(for alias: String, unlock: (any KeyUnlockData)?) async throws(StorageError) -> any KeyAgreement {
        if let makeKeyAgreement { return try await makeKeyAgreement(alias, unlock) }
        return try await inner.keyAgreement(for: alias, unlock: unlock)
    }

    public func deleteKey(alias: String) async throws(StorageError) {
        if let delete { return try await delete(alias) }
        try await inner.deleteKey(alias: alias)
    }

    public func listKeys() async throws(StorageError) -> [KeyInfo] { try await inner.listKeys() }
}
