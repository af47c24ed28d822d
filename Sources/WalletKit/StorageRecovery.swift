#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import Foundation
import OpenID4VCI
import WalletStorage

/// What opening the wallet repaired after an interrupted run (a crash, a kill, a
/// failing secure area): key deletions finished, and keys swept that an issuance
/// created but never stored a credential for.
public struct StorageRecovery: Sendable, Equatable {
    /// Key deletions the store had recorded and finished now (spent one-time
    /// instances, deleted credentials).
    public let finishedKeyDeletions: Int
    /// Aliases of the keys deleted because no credential references them.
    public let removedOrphanKeys: [String]
    /// True when another wallet (another process, or another `Wallet` on the same
    /// folder) had the storage folder open, so that no repair ran: a key it may be using
    /// is never deleted from under it. The first opening that has the folder alone repairs.
    public let isPostponed: Bool
    /// True when a stored credential could not be read (a row altered on disk, or secrets
    /// wrapped under another key than this wallet's): the wallet opens, but keys no
    /// readable credential names were not swept, since the unreadable one may name them.
    /// Reading the credentials (`wallet.credentials.list()`) reports that record's error;
    /// ``Wallet/verifyStorage()`` checks the database.
    public let foundUnreadableRecords: Bool

    /// A recovery report.
    public init(finishedKeyDeletions: Int, removedOrphanKeys: [String], isPostponed: Bool = false,
                foundUnreadableRecords: Bool = false) {
        self.finishedKeyDeletions = finishedKeyDeletions
        self.removedOrphanKeys = removedOrphanKeys
        self.isPostponed = isPostponed
        self.foundUnreadableRecords = foundUnreadableRecords
    }

    /// No repair ran: another wallet has the folder open.
    static let postponed = StorageRecovery(finishedKeyDeletions: 0, removedOrphanKeys: [], isPostponed: true)

    /// Whether anything needed repair.
    public var repairedAnything: Bool { finishedKeyDeletions > 0 || !removedOrphanKeys.isEmpty }
}

/// A consistency check of the wallet's storage (``Wallet/verifyStorage()``): the
/// database's own check, and the agreement between credentials and the secure area.
public struct StorageReport: Sendable, Equatable {
    /// `PRAGMA integrity_check` of the credential database: `["ok"]` when sound.
    public let integrity: [String]
    /// Keys the SDK's issuance created (holder and DPoP keys) that no credential
    /// references: what an interrupted issuance leaves until the next opening sweeps it.
    public let orphanKeys: [String]
    /// Key aliases that a credential still needs (an instance not yet spent, a DPoP key,
    /// a deferred issuance's proof keys) but that the secure area does not have.
    public let missingKeys: [String]
    /// How many credentials the store holds.
    public let credentialCount: Int

    /// A report.
    public init(integrity: [String], orphanKeys: [String], missingKeys: [String], credentialCount: Int) {
        self.integrity = integrity
        self.orphanKeys = orphanKeys
        self.missingKeys = missingKeys
        self.credentialCount = credentialCount
    }

    /// Whether the database is sound and keys and credentials agree.
    public var isConsistent: Bool { integrity == ["ok"] && orphanKeys.isEmpty && missingKeys.isEmpty }
}

/// Opening the storage a configuration names, and keeping keys and credentials in step.
enum WalletStorageSetup {
    /// The folder of a file-backed configuration, nil for in-memory storage.
    static func folder(for storage: WalletConfig.Storage) throws(WalletError) -> URL? {
        switch storage {
        case .inMemory:
            return nil
        case .sqlite(let url):
            return url
        case .applicationSupport:
            guard let base = FileManager.default.urls(for: .applicationSupportDirectory, in: .userDomainMask).first else {
                throw .noApplicationSupportFolder
            }
            return base.appendingPathComponent("wallet", isDirectory: true)
        }
    }

    /// Creates `folder` owner-only when it does not exist.
    static func prepare(_ folder: URL) throws(WalletError) {
        var isDirectory: ObjCBool = false
        if FileManager.default.fileExists(atPath: folder.path, isDirectory: &isDirectory) {
            guard isDirectory.boolValue else { throw .storageFolderUnavailable(path: folder.path) }
            return
        }
        do {
            try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true,
                                                    attributes: [.posixPermissions: 0o700])
        } catch {
            throw .storageFolderUnavailable(path: folder.path)
        }
    }

    /// The secure area and store of `config`, and the lock of its folder (none in memory).
    static func open(_ config: WalletConfig) throws(WalletError) -> (any SecureArea, CredentialStore, StorageFolderLock?) {
        let location = try folder(for: config.storage)
        if let location { try prepare(location) }
        do throws(StorageError) {
            let lock = try location.map { (folder) throws(StorageError) in try StorageFolderLock(folder: folder) }
            let keys = location?.appendingPathComponent("keys.sqlite")
            let wrapping: any KeyWrappingProvider
            if let given = config.keyWrapping {
                wrapping = given
            } else if let keys {
                wrapping = try KeyFileWrappingProvider(nextTo: keys)
            } else {
                wrapping = try EphemeralWrappingProvider()
            }
            let area: any SecureArea
            if let given = config.secureArea {
                area = given
            } else {
                area = try SoftwareSecureArea(location: keys.map { .file($0) } ?? .inMemory, wrapping: wrapping, clock: config.clock)
            }
            let credentials = location.map { StorageLocation.file($0.appendingPathComponent("credentials.sqlite")) } ?? .inMemory
            let store = try CredentialStore(location: credentials, secureArea: area, wrapping: wrapping, clock: config.clock,
                                            folderLock: lock)
            return (area, store, lock)
        } catch {
            throw .storage(error)
        }
    }

    /// The aliases each stored credential still needs, and those whose key should exist.
    private static func referencedAliases(_ credentials: [StoredCredential]) -> (all: Set<String>, needed: Set<String>) {
        var all = Set<String>()
        var needed = Set<String>()
        for credential in credentials {
            for instance in credential.instances {
                all.insert(instance.keyAlias)
                // A spent one-time instance's key is deleted when it is handed out.
                if credential.policy.use == .rotate || instance.useCount == 0 { needed.insert(instance.keyAlias) }
            }
            for alias in credential.issuanceKeyAliases {
                all.insert(alias)
                needed.insert(alias)
            }
        }
        return (all, needed)
    }

    /// Keys with an issuance prefix that no credential references. Keys an app made in
    /// the same area under other aliases are never touched.
    private static func orphans(in area: any SecureArea, credentials: [StoredCredential]) async throws(StorageError) -> [String] {
        let referenced = referencedAliases(credentials).all
        return try await area.listKeys().map(\.alias).filter { alias in
            IssuanceKeyAlias.prefixes.contains { alias.hasPrefix($0) } && !referenced.contains(alias)
        }
    }

    /// Finishes interrupted key deletions and sweeps orphan keys, when no other wallet
    /// has the folder open (`lock` taken exclusively; in memory, always): before this
    /// wallet's sessions can create keys, and never while another's may use them.
    static func recover(area: any SecureArea, store: CredentialStore, lock: StorageFolderLock?)
        async throws(StorageError) -> StorageRecovery {
        guard let lock else { return try await recover(area: area, store: store) }
        return try await lock.whileAlone { () throws(StorageError) in try await recover(area: area, store: store) } ?? .postponed
    }

    /// The repairs themselves.
    private static func recover(area: any SecureArea, store: CredentialStore) async throws(StorageError) -> StorageRecovery {
        let finished = try await store.purgeSpentKeys()
        // One record that does not decode must not keep the wallet from opening; nor may
        // the sweep run without it, as every key only it names would look orphaned.
        let credentials: [StoredCredential]
        do {
            credentials = try await store.list()
        } catch .corruptRecord, .unwrapFailed {
            return StorageRecovery(finishedKeyDeletions: finished, removedOrphanKeys: [], foundUnreadableRecords: true)
        }
        let orphans = try await orphans(in: area, credentials: credentials)
        try await area.deleteKeys(aliases: orphans)
        return StorageRecovery(finishedKeyDeletions: finished, removedOrphanKeys: orphans)
    }

    /// The consistency report.
    static func report(area: any SecureArea, store: CredentialStore) async throws(StorageError) -> StorageReport {
        let integrity = try await store.integrityCheck()
        let credentials = try await store.list()
        let keys = Set(try await area.listKeys().map(\.alias))
        let needed = referencedAliases(credentials).needed
        return StorageReport(integrity: integrity, orphanKeys: try await orphans(in: area, credentials: credentials),
                             missingKeys: needed.subtracting(keys).sorted(), credentialCount: credentials.count)
    }
}
