import Foundation
import WalletCrypto
import WalletEncoding
import WalletRuntime

/// The wallet's credentials on SQLite, with their holder keys in a `SecureArea`.
///
/// An actor: calls from any number of tasks are serialised, and every database change
/// is one transaction (`BEGIN IMMEDIATE`, so another process sharing the file waits on
/// the busy timeout rather than failing mid-way). WAL journal, foreign keys and
/// `synchronous = FULL`: a `save` that returned survives a crash of the process.
/// Refresh tokens are encrypted by the `KeyWrappingProvider` (AAD bound to the id).
///
/// Keys live in another database than the credentials; when a credential or a one-time
/// instance goes away, its key aliases are recorded in the same transaction as pending
/// deletions, so that `purgeSpentKeys()` can finish the job after a crash.
public actor CredentialStore {
    let connection: SQLiteConnection
    private let secureArea: any SecureArea
    let wrapping: any KeyWrappingProvider
    private let clock: any WalletClock
    /// Aliases whose key is being unwrapped by an in-flight `consumeInstance`, with how many.
    private var inFlight: [String: Int] = [:]

    /// The newest schema version this code writes.
    static let schemaVersion = CredentialSchema.latest

    /// The storage folder's lock, kept held for as long as the store exists: a session
    /// still using the store after its wallet went keeps the folder shared, so that no
    /// other opening's repairs delete the keys it works with.
    private let folderLock: StorageFolderLock?

    /// Opens (or creates, or upgrades in place) the store at `location`, keeping
    /// `folderLock` (its folder's, see ``StorageFolderLock``) held while it exists.
    public init(location: StorageLocation, secureArea: any SecureArea, wrapping: any KeyWrappingProvider,
                clock: any WalletClock = SystemClock(), folderLock: StorageFolderLock? = nil) throws(StorageError) {
        try self.init(location: location, secureArea: secureArea, wrapping: wrapping, clock: clock, schemaVersion: nil,
                      folderLock: folderLock)
    }

    /// Opens the store migrated up to `schemaVersion` only (tests build old databases with it).
    init(location: StorageLocation, secureArea: any SecureArea, wrapping: any KeyWrappingProvider,
         clock: any WalletClock, schemaVersion: Int?, folderLock: StorageFolderLock? = nil) throws(StorageError) {
        let connection = try SQLiteConnection(location: location)
        try connection.migrate(CredentialSchema.migrations, upTo: schemaVersion)
        // A deleted credential or log entry (claim values in the clear in `raw`) is
        // overwritten in the main file's pages, not left in free space (the WAL keeps it
        // until the next checkpoint).
        try connection.execute("PRAGMA secure_delete = ON")
        self.connection = connection
        self.secureArea = secureArea
        self.wrapping = wrapping
        self.clock = clock
        self.folderLock = folderLock
    }

    /// Closes the database; later calls throw `StorageError.closed`.
    public func close() { connection.close() }

    /// `PRAGMA user_version` of the open database.
    public func schemaVersion() throws(StorageError) -> Int { try connection.userVersion() }

    /// `PRAGMA integrity_check`: `["ok"]` for a sound database, otherwise the problems.
    public func integrityCheck() throws(StorageError) -> [String] {
        try connection.query("PRAGMA integrity_check").compactMap { $0.first?.string }
    }

    // MARK: Save

    /// `token` encrypted as credential `id`'s refresh token.
    private func wrapRefreshToken(_ token: String, of id: String) throws(StorageError) -> [UInt8] {
        try wrapping.wrap(Array(token.utf8), aad: Self.refreshTokenAAD(id))
    }

    /// Credential `id`'s refresh token from its encrypted form, the plaintext bytes wiped.
    private func unwrapRefreshToken(_ wrapped: [UInt8], of id: String) throws(StorageError) -> String {
        var plain = try wrapping.unwrap(wrapped, aad: Self.refreshTokenAAD(id))
        defer { wipe(&plain) }
        return String(decoding: plain, as: UTF8.self)
    }

    static func refreshTokenAAD(_ id: String) -> [UInt8] {
        Array("WalletStorage.CredentialStore.refresh_token".utf8) + [0] + Array(id.utf8)
    }

    static func issuanceContextAAD(_ id: String) -> [UInt8] {
        Array("WalletStorage.CredentialStore.issuance_context".utf8) + [0] + Array(id.utf8)
    }

    private static func validate(_ credential: StoredCredential) throws(StorageError) {
        guard !credential.id.isEmpty else { throw .invalidCredential(.emptyId) }
        guard credential.policy.batchSize >= 1 else { throw .invalidCredential(.batchSizeBelowOne) }
        if case .issued = credential.state, credential.instances.isEmpty {
            throw .invalidCredential(.noInstances)
        }
        guard Set(credential.instances.map(\.keyAlias)).count == credential.instances.count else {
            throw .invalidCredential(.duplicateKeyAlias)
        }
        guard Set(credential.instances.map(\.index)).count == credential.instances.count else {
            throw .invalidCredential(.duplicateIndex)
        }
        guard credential.instances.allSatisfy({ $0.useCount >= 0 && !$0.keyAlias.isEmpty }) else {
            throw .invalidCredential(.invalidInstance)
        }
    }

    private static func json(_ display: [DisplayMetadata]) -> String {
        JSONValue.array(display.map(\.jsonValue)).serialized
    }

    private static func display(_ text: String) -> [DisplayMetadata]? {
        guard let entries = try? JSONValue.parse(text).arrayValue else { return nil }
        var display: [DisplayMetadata] = []
        for entry in entries {
            guard let members = entry.objectValue, let metadata = try? DisplayMetadata(json: members) else { return nil }
            display.append(metadata)
        }
        return display
    }

    /// Saves `credential`, replacing any stored one with the same id (a reissuance);
    /// keys of replaced instances that the new version no longer uses are deleted (when
    /// the secure area fails to delete one, the save still succeeds and the key waits for
    /// ``purgeSpentKeys()``). Returns the credential as stored, with its timestamps.
    ///
    /// An instance whose key alias the replaced record already had keeps what the store
    /// recorded of its uses: the larger of the two use counts, its last use, and whether
    /// its key was deleted. A caller that read the record earlier (a renewal that keeps
    /// the unused instances of a one-time batch) thus cannot undo a presentation made in
    /// the meantime, and a one-time instance is never handed out twice.
    @discardableResult
    public func save(_ credential: StoredCredential) async throws(StorageError) -> StoredCredential {
        try await write(credential, mustExist: false)
    }

    /// Saves `credential` over the stored one with the same id, as ``save(_:)`` does, and
    /// only if one is still stored: for a renewal, which read the record earlier and must
    /// not bring back a credential the user deleted meanwhile.
    /// - Parameter keepingStoredRefreshToken: keep the refresh token the record holds now
    ///   rather than `credential.refreshToken`: for a session that obtained no new token,
    ///   whose copy may be one another session has since rotated (and so spent).
    /// - Throws: `credentialNotFound` when no credential has the id (the store is left
    ///   unchanged); otherwise as ``save(_:)``.
    @discardableResult
    public func replace(_ credential: StoredCredential, keepingStoredRefreshToken: Bool = false)
        async throws(StorageError) -> StoredCredential {
        try await write(credential, mustExist: true, keepingStoredRefreshToken: keepingStoredRefreshToken)
    }

    private func write(_ credential: StoredCredential, mustExist: Bool, keepingStoredRefreshToken: Bool = false)
        async throws(StorageError) -> StoredCredential {
        try Self.validate(credential)
        let now = clock.now
        var token = try credential.refreshToken.map { (token) throws(StorageError) in try wrapRefreshToken(token, of: credential.id) }
        let context = try credential.issuanceContext.map { (context) throws(StorageError) in
            try wrapping.wrap(context, aad: Self.issuanceContextAAD(credential.id))
        }
        let display = Self.json(credential.display)
        let issuerDisplay = Self.json(credential.issuer.display)
        let (createdAt, dropped, instances) = try connection.transaction { () throws(StorageError) -> (Date, [String], [CredentialInstance]) in
            let existing = try connection.query("SELECT created_at FROM credentials WHERE id = ?", [.text(credential.id)])
            let createdAt = existing.first?.first?.double.map(Date.init(timeIntervalSince1970:)) ?? now
            // A new id has no instances (the foreign key keeps instances with their
            // credential), so there is nothing to read back or delete for it.
            let replacing = !existing.isEmpty
            guard replacing || !mustExist else { throw .credentialNotFound(id: credential.id) }
            if keepingStoredRefreshToken {
                // The record's own token (wrapped for this id), read in the transaction that
                // writes it back.
                token = try connection.query("SELECT refresh_token FROM credentials WHERE id = ?", [.text(credential.id)])
                    .first?.first?.bytes
            }
            let oldInstances = replacing ? try connection.query(
                "SELECT key_alias, use_count, last_used_at, key_deleted FROM credential_instances WHERE credential_id = ?",
                [.text(credential.id)]) : []
            var recordedUse: [String: (useCount: Int, lastUsed: SQLValue, keyDeleted: Int64)] = [:]
            for row in oldInstances {
                guard row.count == 4, let alias = row[0].string else { continue }
                recordedUse[alias] = (Int(row[1].int64 ?? 0), row[2], row[3].int64 ?? 0)
            }
            let oldAliases = oldInstances.compactMap { $0.first?.string }
            // An alias the record no longer has and whose key waits for deletion comes from
            // a stale read: the instance was replaced (and may have been presented) since.
            for instance in credential.instances where replacing && recordedUse[instance.keyAlias] == nil {
                guard try !isPendingDeletion(instance.keyAlias) else { throw .invalidCredential(.keyAliasBeingDeleted(instance.keyAlias)) }
            }
            for instance in credential.instances {
                let owners = try connection.query(
                    "SELECT credential_id FROM credential_instances WHERE key_alias = ? AND credential_id <> ?",
                    [.text(instance.keyAlias), .text(credential.id)])
                guard owners.isEmpty else {
                    throw .invalidCredential(.keyAliasInUse(instance.keyAlias))
                }
            }
            if replacing { try connection.run("DELETE FROM credentials WHERE id = ?", [.text(credential.id)]) }
            let (state, transactionId, retryAfter): (String, SQLValue, SQLValue) =
                switch credential.state {
                case .issued: ("issued", .null, .null)
                case .deferred(let id, let retry): ("deferred", .text(id), retry.map { .real($0.timeIntervalSince1970) } ?? .null)
                }
            try connection.run(
                """
                INSERT INTO credentials (id, format, type, issuer_id, issuer_display, display, batch_size, key_use, state,
                    transaction_id, retry_after, refresh_token, created_at, updated_at, issuance_context)
                VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
                """,
                [.text(credential.id), .text(credential.format.rawValue), .text(credential.type),
                 .text(credential.issuer.identifier), .text(issuerDisplay), .text(display),
                 .integer(Int64(credential.policy.batchSize)), .text(credential.policy.use.rawValue), .text(state),
                 transactionId, retryAfter, token.map { .blob($0) } ?? .null,
                 .real(createdAt.timeIntervalSince1970), .real(now.timeIntervalSince1970),
                 context.map { .blob($0) } ?? .null])
            var stored: [CredentialInstance] = []
            stored.reserveCapacity(credential.instances.count)
            for instance in credential.instances {
                let recorded = recordedUse[instance.keyAlias]
                let useCount = max(instance.useCount, recorded?.useCount ?? 0)
                try connection.run(
                    """
                    INSERT INTO credential_instances (credential_id, idx, key_alias, raw, use_count, last_used_at, key_deleted)
                    VALUES (?, ?, ?, ?, ?, ?, ?)
                    """,
                    [.text(credential.id), .integer(Int64(instance.index)), .text(instance.keyAlias), .blob(instance.raw),
                     .integer(Int64(useCount)), recorded?.lastUsed ?? .null, .integer(recorded?.keyDeleted ?? 0)])
                stored.append(useCount == instance.useCount ? instance
                    : CredentialInstance(index: instance.index, keyAlias: instance.keyAlias, raw: instance.raw, useCount: useCount))
            }
            let kept = Set(credential.instances.map(\.keyAlias))
            let dropped = oldAliases.filter { !kept.contains($0) }
            for alias in dropped {
                try connection.run("INSERT OR IGNORE INTO pending_key_deletions (alias) VALUES (?)", [.text(alias)])
            }
            return (createdAt, dropped, stored)
        }
        // The record is committed and the dropped aliases are queued: a secure area that
        // fails to delete one now leaves it to ``purgeSpentKeys()``, not to the caller,
        // who would otherwise take a saved credential for one that was not.
        try? await deleteKeys(dropped)
        var refreshToken = credential.refreshToken
        if keepingStoredRefreshToken {
            // Committed already: a token that does not unwrap (an altered record) reads as
            // none here, as it will fail to read later, rather than fail a saved write.
            refreshToken = token.flatMap { try? unwrapRefreshToken($0, of: credential.id) }
        }
        return StoredCredential(
            id: credential.id, format: credential.format, type: credential.type, issuer: credential.issuer,
            display: credential.display, instances: instances, policy: credential.policy,
            state: credential.state, refreshToken: refreshToken, issuanceContext: credential.issuanceContext,
            createdAt: createdAt, updatedAt: now)
    }

    /// Stores `refreshToken` (encrypted, as ``save(_:)`` does) as the refresh token of
    /// credential `id`, changing nothing else: for a renewal whose authorization server
    /// rotated the token, which must keep the new one even when the renewal then fails
    /// (the old one is spent, and a server that detects its reuse revokes the grant).
    /// - Throws: `credentialNotFound` when no credential has the id.
    public func updateRefreshToken(of id: String, to refreshToken: String) throws(StorageError) {
        let wrapped = try wrapRefreshToken(refreshToken, of: id)
        let changed = try connection.run("UPDATE credentials SET refresh_token = ?, updated_at = ? WHERE id = ?",
                                         [.blob(wrapped), .real(clock.now.timeIntervalSince1970), .text(id)])
        guard changed == 1 else { throw .credentialNotFound(id: id) }
    }

    // MARK: Read

    private static let columns = """
        id, format, type, issuer_id, issuer_display, display, batch_size, key_use, state, transaction_id, retry_after,
        refresh_token, created_at, updated_at, issuance_context
        """

    /// How many credential ids one instance query of ``list(_:)`` binds.
    private static let idsPerInstanceQuery = 64
    /// The instances of ``idsPerInstanceQuery`` credential ids.
    private static let instancesOfIds = """
        SELECT credential_id, idx, key_alias, raw, use_count FROM credential_instances
        WHERE credential_id IN (\(Array(repeating: "?", count: idsPerInstanceQuery).joined(separator: ", ")))
        ORDER BY credential_id, idx
        """

    /// The credential `id`, or nil.
    public func credential(id: String) throws(StorageError) -> StoredCredential? {
        let rows = try connection.query("SELECT \(Self.columns) FROM credentials WHERE id = ?", [.text(id)])
        guard let row = rows.first else { return nil }
        let instances = try connection.query(
            "SELECT credential_id, idx, key_alias, raw, use_count FROM credential_instances WHERE credential_id = ? ORDER BY idx",
            [.text(id)])
        return try decode(row, instances: instances.map(Self.decodeInstance))
    }

    /// The credentials matching `filter`, ordered by creation time then id.
    public func list(_ filter: CredentialFilter = CredentialFilter()) throws(StorageError) -> [StoredCredential] {
        // Only the filters that are set go into the WHERE clause, one scan of the small
        // credentials rows (schema version 5 has no index for them: each would cost every
        // save a page); each combination is its own cached statement.
        var clauses: [String] = []
        var bindings: [SQLValue] = []
        if let format = filter.format { clauses.append("format = ?"); bindings.append(.text(format.rawValue)) }
        if let type = filter.type { clauses.append("type = ?"); bindings.append(.text(type)) }
        if let issuer = filter.issuer { clauses.append("issuer_id = ?"); bindings.append(.text(issuer)) }
        let condition = clauses.isEmpty ? "1" : clauses.joined(separator: " AND ")
        let rows = try connection.transaction(immediate: false) { () throws(StorageError) in
            let credentials = try connection.query(
                "SELECT \(Self.columns) FROM credentials WHERE \(condition) ORDER BY created_at, id", bindings)
            // The instances of the ids just read, through the primary key: the credentials
            // table is scanned once (a sub-select on the same condition would scan it again).
            var instances: [[SQLValue]] = []
            let ids = credentials.compactMap(\.first)
            for start in stride(from: 0, to: ids.count, by: Self.idsPerInstanceQuery) {
                let chunk = ids[start..<min(start + Self.idsPerInstanceQuery, ids.count)]
                // One statement for every chunk: a short chunk repeats its last id, which
                // `IN` treats as the one id it is.
                let padding = Array(repeating: chunk[chunk.endIndex - 1], count: Self.idsPerInstanceQuery - chunk.count)
                instances += try connection.query(Self.instancesOfIds, Array(chunk) + padding)
            }
            return (credentials, instances)
        }
        var grouped: [String: [CredentialInstance]] = [:]
        for row in rows.1 {
            guard let id = row.first?.string else { throw .corruptRecord(table: "credential_instances", key: nil) }
            grouped[id, default: []].append(try Self.decodeInstance(row))
        }
        var result: [StoredCredential] = []
        result.reserveCapacity(rows.0.count)
        for row in rows.0 {
            let id = row.first?.string ?? ""
            result.append(try decode(row, instances: grouped[id] ?? []))
        }
        return result
    }

    private static func decodeInstance(_ row: [SQLValue]) throws(StorageError) -> CredentialInstance {
        guard row.count == 5, let index = row[1].int64, let alias = row[2].string, let raw = row[3].bytes,
              let uses = row[4].int64, let index = Int(exactly: index), let uses = Int(exactly: uses) else {
            throw .corruptRecord(table: "credential_instances", key: nil)
        }
        return CredentialInstance(index: index, keyAlias: alias, raw: raw, useCount: uses)
    }

    private func decode(_ row: [SQLValue], instances: [CredentialInstance]) throws(StorageError) -> StoredCredential {
        guard row.count == 15, let id = row[0].string, let format = row[1].string.flatMap(CredentialFormat.init(rawValue:)),
              let type = row[2].string, let issuerId = row[3].string, let issuerDisplay = row[4].string,
              let display = row[5].string, let batch = row[6].int64, let batchSize = Int(exactly: batch),
              let use = row[7].string.flatMap(KeyUse.init(rawValue:)), let stateName = row[8].string,
              let created = row[12].double, let updated = row[13].double else {
            throw .corruptRecord(table: "credentials", key: nil)
        }
        let state: CredentialState
        switch stateName {
        case "issued": state = .issued
        case "deferred":
            guard let transactionId = row[9].string else { throw .corruptRecord(table: "credentials", key: id) }
            state = .deferred(transactionId: transactionId, retryAfter: row[10].double.map(Date.init(timeIntervalSince1970:)))
        default: throw .corruptRecord(table: "credentials", key: id)
        }
        let refreshToken = try row[11].bytes.map { (wrapped) throws(StorageError) in try unwrapRefreshToken(wrapped, of: id) }
        let issuanceContext = try row[14].bytes.map { (wrapped) throws(StorageError) in
            try wrapping.unwrap(wrapped, aad: Self.issuanceContextAAD(id))
        }
        guard let displayValue = Self.display(display), let issuerDisplayValue = Self.display(issuerDisplay) else {
            throw .corruptRecord(table: "credentials", key: id)
        }
        return StoredCredential(
            id: id, format: format, type: type, issuer: IssuerInfo(identifier: issuerId, display: issuerDisplayValue),
            display: displayValue, instances: instances, policy: CredentialPolicy(batchSize: batchSize, use: use),
            state: state, refreshToken: refreshToken, issuanceContext: issuanceContext,
            createdAt: Date(timeIntervalSince1970: created),
            updatedAt: Date(timeIntervalSince1970: updated))
    }

    // MARK: Delete

    /// Deletes the credential `id` and then the keys of all its instances from the secure area.
    ///
    /// Throws only when the record is not deleted (``StorageError/credentialNotFound(id:)``
    /// or a database failure). Once the deletion is committed, a key the secure area fails
    /// to delete stays queued for ``purgeSpentKeys()``: the caller is not told that a
    /// credential it deleted is still there.
    public func delete(id: String) async throws(StorageError) {
        let aliases = try connection.transaction { () throws(StorageError) -> [String] in
            let aliases = try connection.query(
                "SELECT key_alias FROM credential_instances WHERE credential_id = ? AND key_deleted = 0", [.text(id)]
            ).compactMap { $0.first?.string }
            guard try connection.run("DELETE FROM credentials WHERE id = ?", [.text(id)]) == 1 else {
                throw .credentialNotFound(id: id)
            }
            for alias in aliases {
                try connection.run("INSERT OR IGNORE INTO pending_key_deletions (alias) VALUES (?)", [.text(alias)])
            }
            return aliases
        }
        try? await deleteKeys(aliases)
    }

    /// Whether the key `alias` waits in the pending deletions.
    private func isPendingDeletion(_ alias: String) throws(StorageError) -> Bool {
        try !connection.query("SELECT 1 FROM pending_key_deletions WHERE alias = ?", [.text(alias)]).isEmpty
    }

    /// Deletes the key `alias` if its deletion is pending (best effort: a failure leaves
    /// it pending), whatever uses of it are in flight: for the last of them.
    private func deletePending(_ alias: String) async {
        guard (try? isPendingDeletion(alias)) == true else { return }
        do { try await secureArea.deleteKey(alias: alias) } catch .keyNotFound {} catch { return }
        _ = try? connection.run("DELETE FROM pending_key_deletions WHERE alias = ?", [.text(alias)])
    }

    /// Deletes keys from the secure area, forgetting each pending deletion once done. A
    /// key already gone counts as deleted. The first other failure is thrown after trying
    /// every alias; those aliases stay pending for `purgeSpentKeys()`.
    private func deleteKeys(_ aliases: [String]) async throws(StorageError) {
        var firstError: StorageError?
        for alias in aliases where inFlight[alias] == nil {
            do {
                try await secureArea.deleteKey(alias: alias)
            } catch .keyNotFound {
            } catch {
                firstError = firstError ?? error
                continue
            }
            try connection.run("DELETE FROM pending_key_deletions WHERE alias = ?", [.text(alias)])
        }
        if let firstError { throw firstError }
    }

    /// Finishes key deletions interrupted by a crash or a failing secure area: pending
    /// deletions, and keys of spent one-time instances. Returns how many aliases were processed.
    @discardableResult
    public func purgeSpentKeys() async throws(StorageError) -> Int {
        let pending = try connection.query("SELECT alias FROM pending_key_deletions ORDER BY alias").compactMap { $0.first?.string }
        try await deleteKeys(pending)
        let spent = try connection.query(
            """
            SELECT i.credential_id, i.key_alias FROM credential_instances i JOIN credentials c ON c.id = i.credential_id
            WHERE c.key_use = 'one_time' AND i.use_count > 0 AND i.key_deleted = 0 ORDER BY i.credential_id, i.idx
            """)
        var count = pending.count
        for row in spent {
            guard row.count == 2, let id = row[0].string, let alias = row[1].string, inFlight[alias] == nil else { continue }
            // Read again: while the previous deletion ran, an unlock that failed may have
            // given this instance back (its use not made), and its key is then needed.
            let stillSpent = try connection.query(
                """
                SELECT 1 FROM credential_instances WHERE credential_id = ? AND key_alias = ? AND use_count > 0 AND key_deleted = 0
                """, [.text(id), .text(alias)])
            guard !stillSpent.isEmpty else { continue }
            do { try await secureArea.deleteKey(alias: alias) } catch .keyNotFound {}
            // By alias: a save while the deletion ran may have given the index to another key.
            try connection.run(
                "UPDATE credential_instances SET key_deleted = 1 WHERE credential_id = ? AND key_alias = ?",
                [.text(id), .text(alias)])
            count += 1
        }
        return count
    }

    // MARK: Consume

    /// Hands out an instance of credential `id` for one presentation.
    ///
    /// `.oneTime`: an instance never handed out before, each exactly once (even under
    /// concurrent calls); its key is deleted from the secure area before this returns,
    /// so the returned signer is the key's last use. When none is left,
    /// `noInstancesLeft`. `.rotate`: the least-used instance (lowest index on ties). An
    /// instance whose key the secure area no longer has (or has invalidated) is marked
    /// and passed over for the next; any other unlock failure gives the instance back.
    public func consumeInstance(of id: String, unlock: (any KeyUnlockData)? = nil) async throws(StorageError) -> ConsumedInstance {
        // An instance whose key is gone (deleted, or invalidated by the platform) is marked
        // so and never chosen again; the next one is tried. Each round marks one, so the
        // loop ends.
        var gone = Set<String>()
        while true {
            let (instance, use) = try takeInstance(of: id)
            // Counted: two uses of one rotate key may unlock at once.
            inFlight[instance.keyAlias, default: 0] += 1
            defer {
                if inFlight[instance.keyAlias] == 1 { inFlight[instance.keyAlias] = nil } else { inFlight[instance.keyAlias]? -= 1 }
            }
            let key: UnlockedKey
            do {
                // One unlock for both operations: one scrypt derivation, one user prompt.
                key = try await secureArea.unlockedKey(alias: instance.keyAlias, unlock: unlock)
            } catch let error where error == .keyNotFound(alias: instance.keyAlias) || error == .keyInvalidated(alias: instance.keyAlias) {
                // The row is found by its alias, not its index: a renewal saved while the
                // unlock ran may have given the index to a new instance. An instance that
                // cannot be marked (or comes back) ends the search with the key's error.
                guard gone.insert(instance.keyAlias).inserted, (try? connection.run(
                    "UPDATE credential_instances SET key_deleted = 1 WHERE credential_id = ? AND key_alias = ?",
                    [.text(id), .text(instance.keyAlias)])) != nil else { throw error }
                continue
            } catch {
                // The instance was not used after all (not unlocked): give it back.
                _ = try? connection.run(
                    "UPDATE credential_instances SET use_count = use_count - 1 WHERE credential_id = ? AND key_alias = ? AND use_count > 0",
                    [.text(id), .text(instance.keyAlias)])
                throw error
            }
            // The unlock may have waited on the user while the credential was deleted: nothing
            // is presented from a credential the user removed, and the key, whose deletion
            // waited for this unlock, goes now. (An instance a renewal replaced meanwhile is
            // still the credential's and is used; its key stays pending until a repair.)
            let stillStored = (try? connection.query("SELECT 1 FROM credentials WHERE id = ?", [.text(id)]))?.isEmpty == false
            guard stillStored else {
                if inFlight[instance.keyAlias] == 1 { await deletePending(instance.keyAlias) }
                throw .credentialNotFound(id: id)
            }
            if use == .oneTime {
                // A failure here leaves key_deleted = 0; purgeSpentKeys() retries. The instance
                // itself is spent either way and is never handed out again, and nothing after
                // this point throws: the caller holds the key's last use.
                var deleted = true
                do { try await secureArea.deleteKey(alias: instance.keyAlias) } catch .keyNotFound {} catch { deleted = false }
                if deleted {
                    _ = try? connection.run(
                        "UPDATE credential_instances SET key_deleted = 1 WHERE credential_id = ? AND key_alias = ?",
                        [.text(id), .text(instance.keyAlias)])
                }
            }
            let remaining = (try? remainingInstances(of: id)) ?? 0
            return ConsumedInstance(credentialId: id, instance: instance, signer: key.signer, keyAgreement: key.keyAgreement,
                                    remaining: remaining)
        }
    }

    /// Chooses and counts the use of an instance of credential `id` whose key is not
    /// known to be gone: for `.oneTime` an unused one, for `.rotate` the least used.
    private func takeInstance(of id: String) throws(StorageError) -> (CredentialInstance, KeyUse) {
        let now = clock.now
        // One synchronous transaction: no await inside, so no other call on this actor
        // interleaves, and BEGIN IMMEDIATE excludes other processes.
        return try connection.transaction { () throws(StorageError) -> (CredentialInstance, KeyUse) in
            let rows = try connection.query("SELECT key_use, state FROM credentials WHERE id = ?", [.text(id)])
            guard let row = rows.first, row.count == 2, let use = row[0].string.flatMap(KeyUse.init(rawValue:)) else {
                throw .credentialNotFound(id: id)
            }
            guard row[1].string == "issued" else { throw .credentialDeferred(credentialId: id) }
            let order = use == .oneTime ? "AND use_count = 0 AND key_deleted = 0 ORDER BY idx" : "AND key_deleted = 0 ORDER BY use_count, idx"
            let candidates = try connection.query(
                "SELECT credential_id, idx, key_alias, raw, use_count FROM credential_instances WHERE credential_id = ? \(order) LIMIT 1",
                [.text(id)])
            guard let candidate = candidates.first else { throw .noInstancesLeft(credentialId: id) }
            let chosen = try Self.decodeInstance(candidate)
            // Only an altered database holds a count that cannot grow.
            guard chosen.useCount < Int.max else { throw .corruptRecord(table: "credential_instances", key: id) }
            try connection.run(
                "UPDATE credential_instances SET use_count = use_count + 1, last_used_at = ? WHERE credential_id = ? AND idx = ?",
                [.real(now.timeIntervalSince1970), .text(id), .integer(Int64(chosen.index))])
            return (CredentialInstance(index: chosen.index, keyAlias: chosen.keyAlias, raw: chosen.raw,
                                       useCount: chosen.useCount + 1), use)
        }
    }

    /// How many instances can still be handed out: unused ones for `.oneTime`, all for
    /// `.rotate`, except those whose key was found gone.
    public func remainingInstances(of id: String) throws(StorageError) -> Int {
        let rows = try connection.query("SELECT key_use FROM credentials WHERE id = ?", [.text(id)])
        guard let use = rows.first?.first?.string.flatMap(KeyUse.init(rawValue:)) else { throw .credentialNotFound(id: id) }
        let sql = use == .oneTime
            ? "SELECT COUNT(*) FROM credential_instances WHERE credential_id = ? AND use_count = 0 AND key_deleted = 0"
            : "SELECT COUNT(*) FROM credential_instances WHERE credential_id = ? AND key_deleted = 0"
        return Int(try connection.query(sql, [.text(id)]).first?.first?.int64 ?? 0)
    }
}
