import CSQLite
import Foundation
import TestSecureAreas
import Testing
import WalletCrypto
import WalletRuntime
@testable import WalletStorage

@Suite("CredentialStore")
struct CredentialStoreTests {
    private func makeStore(area: SoftwareSecureArea? = nil) throws -> (CredentialStore, SoftwareSecureArea) {
        let area = try area ?? SoftwareSecureArea(location: .inMemory, wrapping: try EphemeralWrappingProvider())
        return (try CredentialStore(location: .inMemory, secureArea: area, wrapping: try EphemeralWrappingProvider()), area)
    }

    /// A store over an area whose key deletions fail while `deletes` says so; keys are
    /// made in, and listed from, `inner`.
    private func makeStoreWithSwitchedDeletes() throws -> (CredentialStore, SoftwareSecureArea, DeleteSwitch) {
        let inner = try SoftwareSecureArea(location: .inMemory, wrapping: try EphemeralWrappingProvider())
        let deletes = DeleteSwitch()
        let area = ForwardingSecureArea(inner: inner, name: "failing deletes", deleteKey: { alias throws(StorageError) in
            guard await deletes.works else { throw .keyInvalidated(alias: alias) }
            try await inner.deleteKey(alias: alias)
        })
        return (try CredentialStore(location: .inMemory, secureArea: area, wrapping: try EphemeralWrappingProvider()), inner, deletes)
    }

    /// A credential whose instances have real keys in `area`.
    private func issue(_ id: String, count: Int, use: KeyUse, area: SoftwareSecureArea,
                       format: CredentialFormat = .sdJwtVc, type: String = "urn:eudi:pid:1",
                       issuer: String = "https://issuer.example") async throws -> StoredCredential {
        var instances: [CredentialInstance] = []
        for index in 0..<count {
            let alias = "\(id)-\(index)"
            _ = try await area.createKey(alias: alias)
            instances.append(CredentialInstance(index: index, keyAlias: alias, raw: Array("\(id) instance \(index)".utf8)))
        }
        return StoredCredential(id: id, format: format, type: type, issuer: IssuerInfo(identifier: issuer),
                                instances: instances, policy: CredentialPolicy(batchSize: count, use: use))
    }

    @Test("a saved credential reads back whole; saving again replaces it and keeps createdAt")
    func saveAndGet() async throws {
        let clock = ManualClock(Date(timeIntervalSince1970: 1_700_000_000))
        let area = try SoftwareSecureArea(location: .inMemory, wrapping: try EphemeralWrappingProvider())
        let store = try CredentialStore(location: .inMemory, secureArea: area, wrapping: try EphemeralWrappingProvider(), clock: clock)
        let original = crashTestCredential(7)
        let saved = try await store.save(original)
        #expect(saved.createdAt == clock.now && saved.updatedAt == clock.now)
        let read = try #require(try await store.credential(id: "cred-7"))
        #expect(sameContent(read, original))
        #expect(read == saved)
        #expect(!read.description.contains("refresh-7"))
        clock.advance(by: 60)
        let deferred = StoredCredential(
            id: "cred-7", format: .sdJwtVc, type: "urn:eudi:pid:1", issuer: original.issuer, instances: [],
            state: .deferred(transactionId: "tx-1", retryAfter: Date(timeIntervalSince1970: 1_700_000_500)))
        let replaced = try await store.save(deferred)
        #expect(replaced.createdAt == saved.createdAt && replaced.updatedAt == clock.now)
        #expect(sameContent(try #require(try await store.credential(id: "cred-7")), deferred))
        #expect(try await store.credential(id: "absent") == nil)
    }

    @Test("replace saves over a stored credential only: a deleted one stays deleted and its keys are not touched")
    func replaceOnlyWhatIsStored() async throws {
        let (store, area) = try makeStore()
        let original = try await issue("renewed", count: 2, use: .oneTime, area: area)
        try await store.save(original)
        let renewal = try await issue("renewed-2", count: 1, use: .oneTime, area: area)
        let renewed = StoredCredential(id: "renewed", format: .sdJwtVc, type: original.type, issuer: original.issuer,
                                       instances: renewal.instances, policy: original.policy)
        try await store.replace(renewed)
        #expect(try await store.credential(id: "renewed")?.instances.map(\.keyAlias) == ["renewed-2-0"])
        // The replaced instances' keys went; the renewal's stays.
        #expect(try await area.listKeys().map(\.alias) == ["renewed-2-0"])
        try await store.delete(id: "renewed")
        await #expect(throws: StorageError.credentialNotFound(id: "renewed")) { try await store.replace(renewed) }
        #expect(try await store.credential(id: "renewed") == nil)
        #expect(try await store.list().isEmpty)
        // The same record is saved by save, which creates what is not there.
        let other = try await issue("other", count: 1, use: .oneTime, area: area)
        await #expect(throws: StorageError.credentialNotFound(id: "other")) { try await store.replace(other) }
        #expect(try await area.listKeys().map(\.alias) == ["other-0"])
        try await store.save(other)
        #expect(try await store.credential(id: "other") != nil)
    }

    /// A store of `folder` given the folder's lock, taken (alone) and then let go of here.
    private static func lockedStore(in folder: URL) async throws -> CredentialStore {
        let lock = try StorageFolderLock(folder: folder)
        #expect(try await lock.whileAlone { () throws(StorageError) in true } == true)
        return try CredentialStore(location: .file(folder.appendingPathComponent("credentials.sqlite")),
                                   secureArea: try SoftwareSecureArea(location: .inMemory, wrapping: try EphemeralWrappingProvider()),
                                   wrapping: try EphemeralWrappingProvider(), folderLock: lock)
    }

    @Test("a store keeps its folder's lock held while it exists, though its opener let go of the lock")
    func storeKeepsFolderLock() async throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("store-lock-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        var store: CredentialStore? = try await Self.lockedStore(in: folder)
        let other = try StorageFolderLock(folder: folder)
        #expect(try await other.whileAlone { () throws(StorageError) in true } == nil, "the store's lock is held")
        other.release()
        store = nil
        let later = try StorageFolderLock(folder: folder)
        #expect(try await later.whileAlone { () throws(StorageError) in true } == true, "released with the store")
        later.release()
    }

    @Test("invalid credentials are refused before anything is written")
    func validation() async throws {
        let (store, _) = try makeStore()
        let issuer = IssuerInfo(identifier: "https://issuer.example")
        await #expect(throws: StorageError.invalidCredential(.noInstances)) {
            try await store.save(StoredCredential(id: "x", format: .msoMdoc, type: "t", issuer: issuer, instances: []))
        }
        let twice = [CredentialInstance(index: 0, keyAlias: "k", raw: []), CredentialInstance(index: 1, keyAlias: "k", raw: [])]
        await #expect(throws: StorageError.invalidCredential(.duplicateKeyAlias)) {
            try await store.save(StoredCredential(id: "x", format: .msoMdoc, type: "t", issuer: issuer, instances: twice))
        }
        try await store.save(StoredCredential(id: "a", format: .msoMdoc, type: "t", issuer: issuer,
                                              instances: [CredentialInstance(index: 0, keyAlias: "shared", raw: [])]))
        await #expect(throws: StorageError.invalidCredential(.keyAliasInUse("shared"))) {
            try await store.save(StoredCredential(id: "b", format: .msoMdoc, type: "t", issuer: issuer,
                                                  instances: [CredentialInstance(index: 0, keyAlias: "shared", raw: [])]))
        }
        #expect(try await store.list().map(\.id) == ["a"])
    }

    @Test("list filters by format, type and issuer")
    func listFilters() async throws {
        let (store, area) = try makeStore()
        try await store.save(try await issue("pid", count: 1, use: .rotate, area: area))
        try await store.save(try await issue("mdl", count: 1, use: .rotate, area: area, format: .msoMdoc, type: "org.iso.18013.5.1.mDL"))
        try await store.save(try await issue("pid2", count: 1, use: .rotate, area: area, issuer: "https://other.example"))
        #expect(Set(try await store.list().map(\.id)) == ["pid", "mdl", "pid2"])
        #expect(try await store.list(CredentialFilter(format: .msoMdoc)).map(\.id) == ["mdl"])
        #expect(Set(try await store.list(CredentialFilter(type: "urn:eudi:pid:1")).map(\.id)) == ["pid", "pid2"])
        #expect(try await store.list(CredentialFilter(type: "urn:eudi:pid:1", issuer: "https://other.example")).map(\.id) == ["pid2"])
        #expect(try await store.list(CredentialFilter(format: .msoMdoc, issuer: "https://other.example")).isEmpty)
        #expect(try await store.list().first { $0.id == "mdl" }?.instances.first?.raw == Array("mdl instance 0".utf8))
    }

    @Test("list reads every instance of every match, in index order, across its 64-id instance queries")
    func listAcrossInstanceQueries() async throws {
        let (store, _) = try makeStore()
        for number in 0..<130 {
            // 1 to 4 instances each, handed to save in descending index order.
            let instances = (0...(number % 4)).reversed().map {
                CredentialInstance(index: $0, keyAlias: "key-\(number)-\($0)", raw: Array("\(number)/\($0)".utf8))
            }
            try await store.save(StoredCredential(
                id: "credential-\(number)", format: .sdJwtVc, type: number % 3 == 0 ? "urn:other" : "urn:eudi:pid:1",
                issuer: IssuerInfo(identifier: number < 64 ? "https://a.example" : "https://b.example"), instances: instances))
        }
        // 130 (three queries), 86 and 66 (two), 64 (one, full), 44 (one, padded), none.
        let filters: [(CredentialFilter, Int)] = [
            (CredentialFilter(), 130), (CredentialFilter(type: "urn:eudi:pid:1"), 86), (CredentialFilter(issuer: "https://b.example"), 66),
            (CredentialFilter(issuer: "https://a.example"), 64), (CredentialFilter(type: "urn:other"), 44),
            (CredentialFilter(type: "urn:absent"), 0),
        ]
        for (filter, count) in filters {
            let listed = try await store.list(filter)
            #expect(listed.count == count)
            #expect(Set(listed.map(\.id)).count == count)
            for credential in listed {
                let number = try #require(Int(credential.id.dropFirst("credential-".count)))
                #expect(credential.instances.map(\.index) == Array(0...(number % 4)))
                #expect(credential.instances.map(\.raw) == (0...(number % 4)).map { Array("\(number)/\($0)".utf8) })
                #expect(credential == (try await store.credential(id: credential.id)))
            }
        }
    }

    @Test("deleting a credential deletes its keys from the secure area")
    func deleteRemovesKeys() async throws {
        let (store, area) = try makeStore()
        try await store.save(try await issue("gone", count: 3, use: .oneTime, area: area))
        try await store.save(try await issue("kept", count: 1, use: .rotate, area: area))
        #expect(try await area.listKeys().count == 4)
        try await store.delete(id: "gone")
        #expect(try await store.credential(id: "gone") == nil)
        #expect(try await area.listKeys().map(\.alias) == ["kept-0"])
        await #expect(throws: StorageError.credentialNotFound(id: "gone")) { try await store.delete(id: "gone") }
    }

    @Test("100 concurrent consumeInstance calls on a oneTime credential hand out 100 distinct instances, then none")
    func concurrentOneTime() async throws {
        let (store, area) = try makeStore()
        try await store.save(try await issue("batch", count: 100, use: .oneTime, area: area))
        let indices = try await withThrowingTaskGroup(of: Int.self) { group in
            for _ in 0..<100 {
                group.addTask {
                    let consumed = try await store.consumeInstance(of: "batch")
                    // The signer still works: this is the key's last use.
                    let signature = try await consumed.signer.sign([7])
                    guard consumed.signer.publicKey.verify(signature: signature, for: [7], algorithm: .es256) else { return -1 }
                    return consumed.instance.index
                }
            }
            var all: [Int] = []
            for try await index in group { all.append(index) }
            return all
        }
        #expect(indices.count == 100)
        #expect(Set(indices) == Set(0..<100))
        #expect(try await store.remainingInstances(of: "batch") == 0)
        await #expect(throws: StorageError.noInstancesLeft(credentialId: "batch")) {
            _ = try await store.consumeInstance(of: "batch")
        }
        // Every key was deleted after its one use.
        #expect(try await area.listKeys().isEmpty)
        #expect(try await store.purgeSpentKeys() == 0)
    }

    @Test("a reissue whose replaced keys the secure area fails to delete is still saved; the keys wait for purgeSpentKeys")
    func saveWithFailingKeyDeletion() async throws {
        let (store, inner, deletes) = try makeStoreWithSwitchedDeletes()
        let first = try await issue("pid", count: 2, use: .oneTime, area: inner)
        try await store.save(first)
        // The reissue keeps instance 1 and replaces instance 0's key with a new one.
        _ = try await inner.createKey(alias: "pid-2")
        let reissued = StoredCredential(id: "pid", format: first.format, type: first.type, issuer: first.issuer,
                                        instances: [first.instances[1], CredentialInstance(index: 2, keyAlias: "pid-2", raw: [2])],
                                        policy: first.policy)
        await deletes.set(false)
        let saved = try await store.save(reissued)
        #expect(saved.instances.map(\.keyAlias) == ["pid-1", "pid-2"])
        #expect(try #require(try await store.credential(id: "pid")).instances.map(\.keyAlias) == ["pid-1", "pid-2"])
        #expect(try await inner.listKeys().map(\.alias).sorted() == ["pid-0", "pid-1", "pid-2"])
        // While deletions fail, the purge reports the failure and keeps the key pending.
        await #expect(throws: StorageError.keyInvalidated(alias: "pid-0")) { try await store.purgeSpentKeys() }
        await deletes.set(true)
        #expect(try await store.purgeSpentKeys() == 1)
        #expect(try await inner.listKeys().map(\.alias).sorted() == ["pid-1", "pid-2"])
        #expect(try await store.purgeSpentKeys() == 0)
    }

    @Test("a deletion whose keys the secure area fails to delete still stands; the keys wait for purgeSpentKeys")
    func deleteWithFailingKeyDeletion() async throws {
        let (store, inner, deletes) = try makeStoreWithSwitchedDeletes()
        try await store.save(try await issue("pid", count: 2, use: .rotate, area: inner))
        await deletes.set(false)
        try await store.delete(id: "pid")
        #expect(try await store.credential(id: "pid") == nil)
        #expect(try await inner.listKeys().map(\.alias).sorted() == ["pid-0", "pid-1"])
        await #expect(throws: StorageError.credentialNotFound(id: "pid")) { try await store.delete(id: "pid") }
        await deletes.set(true)
        #expect(try await store.purgeSpentKeys() == 2)
        #expect(try await inner.listKeys().isEmpty)
    }

    @Test("an instance whose recorded use count cannot grow is a corrupt record, not a trap")
    func useCountAtMaximum() async throws {
        let directory = try makeTemporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let url = directory.appendingPathComponent("altered.sqlite")
        let area = try SoftwareSecureArea(location: .inMemory, wrapping: try EphemeralWrappingProvider())
        let store = try CredentialStore(location: .file(url), secureArea: area, wrapping: try EphemeralWrappingProvider())
        try await store.save(try await issue("rot", count: 1, use: .rotate, area: area))
        let connection = try SQLiteConnection(location: .file(url))
        try connection.run("UPDATE credential_instances SET use_count = ? WHERE credential_id = 'rot'", [.integer(Int64.max)])
        connection.close()
        await #expect(throws: StorageError.corruptRecord(table: "credential_instances", key: "rot")) {
            _ = try await store.consumeInstance(of: "rot")
        }
        #expect(try #require(try await store.credential(id: "rot")).instances.map(\.useCount) == [Int.max])
    }

    @Test("an instance whose key is gone is marked and passed over, one-time or rotating; the credential keeps serving")
    func instanceWithoutKey() async throws {
        for use in [KeyUse.oneTime, .rotate] {
            let (store, area) = try makeStore()
            try await store.save(try await issue("c", count: 3, use: use, area: area))
            try await area.deleteKey(alias: "c-0")
            try await area.deleteKey(alias: "c-1")
            #expect(try await store.consumeInstance(of: "c").instance.keyAlias == "c-2", "\(use)")
            #expect(try await store.remainingInstances(of: "c") == (use == .oneTime ? 0 : 1), "\(use)")
            if use == .rotate {
                #expect(try await store.consumeInstance(of: "c").instance.keyAlias == "c-2")
            } else {
                await #expect(throws: StorageError.noInstancesLeft(credentialId: "c")) { _ = try await store.consumeInstance(of: "c") }
            }
        }
    }

    @Test("database files are owner-only in a folder open to others: new ones created so, existing ones and their -wal and -shm tightened")
    func ownerOnlyFiles() async throws {
        let folder = try makeTemporaryDirectory()
        defer { try? FileManager.default.removeItem(at: folder) }
        try FileManager.default.setAttributes([.posixPermissions: 0o755], ofItemAtPath: folder.path)
        func mode(_ name: String) throws -> Int? {
            let path = folder.appendingPathComponent(name).path
            guard FileManager.default.fileExists(atPath: path) else { return nil }
            return (try FileManager.default.attributesOfItem(atPath: path)[.posixPermissions] as? NSNumber)?.intValue
        }
        let wrapping = try EphemeralWrappingProvider()
        let area = try SoftwareSecureArea(location: .file(folder.appendingPathComponent("keys.sqlite")), wrapping: wrapping)
        let location = StorageLocation.file(folder.appendingPathComponent("credentials.sqlite"))
        var store: CredentialStore? = try CredentialStore(location: location, secureArea: area, wrapping: wrapping)
        try await store?.save(try await issue("c", count: 1, use: .rotate, area: area))
        for name in ["keys.sqlite", "keys.sqlite-wal", "keys.sqlite-shm", "credentials.sqlite", "credentials.sqlite-wal", "credentials.sqlite-shm"] {
            if let mode = try mode(name) { #expect(mode & 0o077 == 0, "\(name): \(String(mode, radix: 8))") }
        }
        #expect(try mode("credentials.sqlite") != nil && mode("credentials.sqlite-wal") != nil)
        await store?.close()
        store = nil
        // Files another run left readable to others are tightened at the next opening.
        for name in ["credentials.sqlite", "credentials.sqlite-wal", "credentials.sqlite-shm"] where try mode(name) != nil {
            try FileManager.default.setAttributes([.posixPermissions: 0o644], ofItemAtPath: folder.appendingPathComponent(name).path)
        }
        let reopened = try CredentialStore(location: location, secureArea: area, wrapping: wrapping)
        #expect(try await reopened.credential(id: "c") != nil)
        for name in ["credentials.sqlite", "credentials.sqlite-wal", "credentials.sqlite-shm"] {
            if let mode = try mode(name) { #expect(mode & 0o077 == 0, "\(name) after reopening: \(String(mode, radix: 8))") }
        }
        await reopened.close()
        await area.close()
    }

    @Test("purgeSpentKeys leaves the key of an instance whose use it listed but whose unlock failed and gave it back meanwhile")
    func purgeSkipsGivenBack() async throws {
        let inner = try SoftwareSecureArea(location: .inMemory, wrapping: try EphemeralWrappingProvider())
        let (entered, enteredSignal) = AsyncStream<Void>.makeStream()
        let (release, releaseSignal) = AsyncStream<Void>.makeStream()
        let (givenBack, givenBackSignal) = AsyncStream<Void>.makeStream()
        let aDeletions = LockedBox(0), cUnlocks = LockedBox(0)
        let area = ForwardingSecureArea(inner: inner, name: "cancelled unlock", signer: { alias, unlock throws(StorageError) in
            // c-0's first unlock waits for the user, who dismisses the prompt.
            guard alias == "c-0", cUnlocks.withLock({ count -> Int in count += 1; return count }) == 1 else {
                return try await inner.signer(for: alias, unlock: unlock)
            }
            enteredSignal.yield()
            for await _ in release { break }
            throw .userCancelled(alias: alias)
        }, deleteKey: { alias throws(StorageError) in
            if alias == "a-0" {
                // The first deletion (at the presentation) fails; the purge's retry is where
                // the user dismisses c-0's prompt meanwhile.
                let attempt = aDeletions.withLock { count -> Int in count += 1; return count }
                if attempt == 1 { throw .keyInvalidated(alias: alias) }
                releaseSignal.yield()
                for await _ in givenBack { break }
            }
            try await inner.deleteKey(alias: alias)
        })
        let store = try CredentialStore(location: .inMemory, secureArea: area, wrapping: try EphemeralWrappingProvider())
        try await store.save(try await issue("c", count: 2, use: .oneTime, area: inner))
        // a-0 is handed out, and its key's deletion fails: the purge is to finish it.
        try await store.save(try await issue("a", count: 1, use: .oneTime, area: inner))
        _ = try await store.consumeInstance(of: "a")
        let presenting = Task { try await store.consumeInstance(of: "c") }
        for await _ in entered { break }
        // The purge lists a-0 and c-0 (in that order) as spent with their keys still there.
        let purging = Task { try await store.purgeSpentKeys() }
        await #expect(throws: StorageError.userCancelled(alias: "c-0")) { _ = try await presenting.value }
        givenBackSignal.yield()
        _ = try await purging.value
        #expect(try await store.remainingInstances(of: "c") == 2, "c-0 was given back")
        #expect(try await inner.listKeys().map(\.alias).sorted() == ["c-0", "c-1"], "a-0's key went; c-0's stayed")
        let next = try await store.consumeInstance(of: "c")
        #expect(next.instance.keyAlias == "c-0")
    }

    @Test("an unlock that fails after a renewal took over the instance's index gives back nothing of the renewal's instance")
    func giveBackByAlias() async throws {
        let inner = try SoftwareSecureArea(location: .inMemory, wrapping: try EphemeralWrappingProvider())
        let (entered, enteredSignal) = AsyncStream<Void>.makeStream()
        let (release, releaseSignal) = AsyncStream<Void>.makeStream()
        let area = ForwardingSecureArea(inner: inner, name: "slow unlock", signer: { alias, unlock throws(StorageError) in
            guard alias == "c-0" else { return try await inner.signer(for: alias, unlock: unlock) }
            enteredSignal.yield()
            for await _ in release { break }
            throw .authenticationRequired(alias: alias)
        })
        let store = try CredentialStore(location: .inMemory, secureArea: area, wrapping: try EphemeralWrappingProvider())
        let first = try await issue("c", count: 2, use: .oneTime, area: inner)
        try await store.save(first)
        let waiting = Task { try await store.consumeInstance(of: "c") }
        for await _ in entered { break }
        // While c-0's unlock waits, a full renewal replaces both instances at indexes 0 and 1...
        _ = try await inner.createKey(alias: "n-0")
        _ = try await inner.createKey(alias: "n-1")
        try await store.save(StoredCredential(id: "c", format: first.format, type: first.type, issuer: first.issuer,
                                              instances: [CredentialInstance(index: 0, keyAlias: "n-0", raw: [0]),
                                                          CredentialInstance(index: 1, keyAlias: "n-1", raw: [1])],
                                              policy: first.policy))
        // ...and the renewal's first instance is presented.
        #expect(try await store.consumeInstance(of: "c").instance.keyAlias == "n-0")
        releaseSignal.yield()
        await #expect(throws: StorageError.authenticationRequired(alias: "c-0")) { _ = try await waiting.value }
        // n-0 stays spent: the next presentation gets n-1, then none is left.
        #expect(try #require(try await store.credential(id: "c")).instances.map(\.useCount) == [1, 0])
        #expect(try await store.consumeInstance(of: "c").instance.keyAlias == "n-1")
        await #expect(throws: StorageError.noInstancesLeft(credentialId: "c")) { _ = try await store.consumeInstance(of: "c") }
    }

    @Test("a credential deleted while an instance's unlock waits is not presented, and the key goes with it")
    func deletedDuringUnlock() async throws {
        let inner = try SoftwareSecureArea(location: .inMemory, wrapping: try EphemeralWrappingProvider())
        let (entered, enteredSignal) = AsyncStream<Void>.makeStream()
        let (release, releaseSignal) = AsyncStream<Void>.makeStream()
        let area = ForwardingSecureArea(inner: inner, name: "slow unlock", signer: { alias, unlock throws(StorageError) in
            enteredSignal.yield()
            for await _ in release { break }
            return try await inner.signer(for: alias, unlock: unlock)
        })
        let store = try CredentialStore(location: .inMemory, secureArea: area, wrapping: try EphemeralWrappingProvider())
        for use in [KeyUse.rotate, .oneTime] {
            let credential = try await issue("d-\(use)", count: 2, use: use, area: inner)
            try await store.save(credential)
            let presenting = Task { try await store.consumeInstance(of: credential.id) }
            for await _ in entered { break }
            // The user deletes the credential while the unlock prompt is up.
            try await store.delete(id: credential.id)
            releaseSignal.yield()
            await #expect(throws: StorageError.credentialNotFound(id: credential.id)) { _ = try await presenting.value }
            #expect(try await inner.listKeys().isEmpty, "\(use): no key of the deleted credential is left")
        }
    }

    @Test("a save from a stale read naming an instance another save replaced, whose key is still being deleted, is refused")
    func staleRenewalRefused() async throws {
        let inner = try SoftwareSecureArea(location: .inMemory, wrapping: try EphemeralWrappingProvider())
        let (entered, enteredSignal) = AsyncStream<Void>.makeStream()
        let (release, releaseSignal) = AsyncStream<Void>.makeStream()
        let area = ForwardingSecureArea(inner: inner, name: "slow unlock", signer: { alias, unlock throws(StorageError) in
            if alias == "c-0" {
                enteredSignal.yield()
                for await _ in release { break }
            }
            return try await inner.signer(for: alias, unlock: unlock)
        })
        let store = try CredentialStore(location: .inMemory, secureArea: area, wrapping: try EphemeralWrappingProvider())
        let first = try await issue("c", count: 3, use: .oneTime, area: inner)
        try await store.save(first)
        // A top-up reads the record now (all three unused)...
        let stale = try #require(try await store.credential(id: "c"))
        // ...a presentation takes c-0 and waits on its unlock...
        let presenting = Task { try await store.consumeInstance(of: "c") }
        for await _ in entered { break }
        // ...a full renewal replaces all three (c-0's key is in use: its deletion waits)...
        let renewal = try await issue("n", count: 3, use: .oneTime, area: inner)
        try await store.replace(StoredCredential(id: "c", format: first.format, type: first.type, issuer: first.issuer,
                                                 instances: renewal.instances, policy: first.policy))
        // ...and the top-up saves the instances it read as unused, with one new one.
        _ = try await inner.createKey(alias: "t-0")
        let topUp = StoredCredential(id: "c", format: first.format, type: first.type, issuer: first.issuer,
                                     instances: stale.instances + [CredentialInstance(index: 3, keyAlias: "t-0", raw: [3])],
                                     policy: CredentialPolicy(batchSize: 4, use: .oneTime))
        await #expect(throws: StorageError.invalidCredential(.keyAliasBeingDeleted("c-0"))) { try await store.replace(topUp) }
        releaseSignal.yield()
        #expect(try await presenting.value.instance.keyAlias == "c-0")
        // c-0 is never handed out again: the renewal's three, then none.
        var handedOut: [String] = []
        for _ in 0..<3 { handedOut.append(try await store.consumeInstance(of: "c").instance.keyAlias) }
        #expect(handedOut == ["n-0", "n-1", "n-2"])
        await #expect(throws: StorageError.noInstancesLeft(credentialId: "c")) { _ = try await store.consumeInstance(of: "c") }
    }

    @Test("text with a NUL inside is stored whole: an id a\\0b is not the id a")
    func textWithNul() async throws {
        let (store, area) = try makeStore()
        let plain = try await issue("a", count: 1, use: .rotate, area: area)
        try await store.save(plain)
        let keyed = try await issue("ab", count: 1, use: .rotate, area: area)
        try await store.save(StoredCredential(id: "a\0b", format: keyed.format, type: "t\0u", issuer: keyed.issuer,
                                              instances: keyed.instances, policy: keyed.policy, refreshToken: "token\0tail"))
        #expect(try await store.list().map(\.id).sorted() == ["a", "a\0b"])
        #expect(try #require(try await store.credential(id: "a")).instances.map(\.keyAlias) == ["a-0"])
        let read = try #require(try await store.credential(id: "a\0b"))
        #expect(read.type == "t\0u" && read.refreshToken == "token\0tail" && read.instances.map(\.keyAlias) == ["ab-0"])
        #expect(try await area.listKeys().count == 2)
    }

    @Test("a rotate credential keeps serving, least used first")
    func rotate() async throws {
        let (store, area) = try makeStore()
        try await store.save(try await issue("rot", count: 3, use: .rotate, area: area))
        var order: [Int] = []
        for _ in 0..<7 { order.append(try await store.consumeInstance(of: "rot").instance.index) }
        #expect(order == [0, 1, 2, 0, 1, 2, 0])
        #expect(try await store.remainingInstances(of: "rot") == 3)
        let uses = try #require(try await store.credential(id: "rot")).instances.map(\.useCount)
        #expect(uses == [3, 2, 2])
        #expect(try await area.listKeys().count == 3)
    }

    @Test("saving a record read before a presentation does not undo it: uses, last use and deleted keys are kept per key alias")
    func saveKeepsRecordedUses() async throws {
        let clock = ManualClock(Date(timeIntervalSince1970: 1_700_000_000))
        let directory = try makeTemporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let url = directory.appendingPathComponent("uses.sqlite")
        let area = try SoftwareSecureArea(location: .inMemory, wrapping: try EphemeralWrappingProvider())
        let store = try CredentialStore(location: .file(url), secureArea: area, wrapping: try EphemeralWrappingProvider(), clock: clock)
        // A one-time batch of three, read (as a renewal reads it), then one presented.
        let snapshot = try await store.save(try await issue("once", count: 3, use: .oneTime, area: area))
        let presented = try await store.consumeInstance(of: "once")
        #expect(presented.instance.index == 0)
        #expect(try await area.listKeys().map(\.alias).sorted() == ["once-1", "once-2"])
        // The renewal keeps what were the unused instances when it read the record, and adds one.
        _ = try await area.createKey(alias: "once-3")
        let renewed = StoredCredential(
            id: "once", format: snapshot.format, type: snapshot.type, issuer: snapshot.issuer,
            instances: snapshot.instances + [CredentialInstance(index: 3, keyAlias: "once-3", raw: Array("once instance 3".utf8))],
            policy: CredentialPolicy(batchSize: 4, use: .oneTime))
        let saved = try await store.save(renewed)
        #expect(saved.instances.map(\.useCount) == [1, 0, 0, 0])
        let read = try #require(try await store.credential(id: "once"))
        #expect(read.instances.map(\.useCount) == [1, 0, 0, 0])
        // The presented instance is never handed out again, and its key stays recorded as deleted.
        var handedOut: [Int] = []
        for _ in 0..<3 { handedOut.append(try await store.consumeInstance(of: "once").instance.index) }
        #expect(handedOut == [1, 2, 3])
        await #expect(throws: StorageError.noInstancesLeft(credentialId: "once")) { _ = try await store.consumeInstance(of: "once") }
        #expect(try await store.purgeSpentKeys() == 0)
        #expect(try await area.listKeys().isEmpty)

        // Rotate: a higher count given by the caller stands, a lower one does not, and the
        // last use survives a save; a new alias starts from what the caller gives.
        try await store.save(try await issue("rot", count: 2, use: .rotate, area: area))
        clock.advance(by: 30)
        for _ in 0..<3 { _ = try await store.consumeInstance(of: "rot") }
        let rotated = try #require(try await store.credential(id: "rot"))
        #expect(rotated.instances.map(\.useCount) == [2, 1])
        _ = try await area.createKey(alias: "rot-new")
        try await store.save(StoredCredential(
            id: "rot", format: rotated.format, type: rotated.type, issuer: rotated.issuer,
            instances: [CredentialInstance(index: 0, keyAlias: "rot-0", raw: rotated.instances[0].raw, useCount: 0),
                        CredentialInstance(index: 1, keyAlias: "rot-1", raw: rotated.instances[1].raw, useCount: 5),
                        CredentialInstance(index: 2, keyAlias: "rot-new", raw: Array("rot new".utf8), useCount: 0)],
            policy: CredentialPolicy(batchSize: 3, use: .rotate)))
        #expect(try #require(try await store.credential(id: "rot")).instances.map(\.useCount) == [2, 5, 0])
        let reader = try SQLiteConnection(location: .file(url))
        defer { reader.close() }
        let lastUsed = try reader.query("SELECT last_used_at FROM credential_instances WHERE credential_id = 'rot' ORDER BY idx")
        #expect(lastUsed.map { $0.first?.double } == [clock.now.timeIntervalSince1970, clock.now.timeIntervalSince1970, nil])
        let deleted = try reader.query("SELECT key_deleted FROM credential_instances WHERE credential_id = 'once' ORDER BY idx")
        #expect(deleted.map { $0.first?.int64 } == [1, 1, 1, 1])
    }

    @Test("handing out an instance decrypts its key once: one scrypt derivation for a passphrase key, signer and agreement from it")
    func consumeUnlocksOnce() async throws {
        let wrapping = CountingWrappingProvider()
        let area = try SoftwareSecureArea(location: .inMemory, wrapping: wrapping, perKeyScrypt: testScrypt)
        let (store, _) = try makeStore(area: area)
        let info = try await area.createKey(alias: "locked-0", options: KeyCreationOptions(protection: .passphrase("pin 1234")))
        try await store.save(StoredCredential(
            id: "locked", format: .msoMdoc, type: "org.iso.18013.5.1.mDL", issuer: IssuerInfo(identifier: "https://i.example"),
            instances: [CredentialInstance(index: 0, keyAlias: "locked-0", raw: [1])], policy: CredentialPolicy(batchSize: 1, use: .rotate)))
        let before = wrapping.unwrapCount
        let consumed = try await store.consumeInstance(of: "locked", unlock: PassphraseUnlock("pin 1234"))
        #expect(wrapping.unwrapCount == before + 1)
        #expect(consumed.signer.publicKey == info.publicKey)
        #expect(consumed.keyAgreement.map { PublicKey.ec($0.publicKey) } == info.publicKey)
        // A wrong passphrase hands nothing out and gives the use back.
        await #expect(throws: StorageError.authenticationRequired(alias: "locked-0")) {
            _ = try await store.consumeInstance(of: "locked", unlock: PassphraseUnlock("pin 0000"))
        }
        #expect(try #require(try await store.credential(id: "locked")).instances.map(\.useCount) == [1])
    }

    @Test("a deferred credential has nothing to hand out; an instance whose key is missing is passed over, never handed out")
    func deferredAndMissingKey() async throws {
        let (store, area) = try makeStore()
        try await store.save(StoredCredential(
            id: "later", format: .sdJwtVc, type: "t", issuer: IssuerInfo(identifier: "https://i.example"), instances: [],
            state: .deferred(transactionId: "tx", retryAfter: nil)))
        await #expect(throws: StorageError.credentialDeferred(credentialId: "later")) { _ = try await store.consumeInstance(of: "later") }
        try await store.save(try await issue("one", count: 1, use: .oneTime, area: area))
        try await area.deleteKey(alias: "one-0")
        await #expect(throws: StorageError.noInstancesLeft(credentialId: "one")) { _ = try await store.consumeInstance(of: "one") }
        #expect(try await store.remainingInstances(of: "one") == 0)
        await #expect(throws: StorageError.credentialNotFound(id: "none")) { _ = try await store.consumeInstance(of: "none") }
    }

    @Test("the refresh token is stored encrypted: its text is not in the database file")
    func refreshTokenEncrypted() async throws {
        let directory = try makeTemporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let url = directory.appendingPathComponent("credentials.sqlite")
        let area = try SoftwareSecureArea(location: .inMemory, wrapping: try EphemeralWrappingProvider())
        let store = try CredentialStore(location: .file(url), secureArea: area, wrapping: FixedKeyWrappingProvider())
        let token = "rt-\(UUID().uuidString)-secret"
        try await store.save(StoredCredential(
            id: "c", format: .sdJwtVc, type: "t", issuer: IssuerInfo(identifier: "https://i.example"),
            instances: [CredentialInstance(index: 0, keyAlias: "k", raw: [1])], refreshToken: token))
        for suffix in ["", "-wal"] {
            let bytes = (try? [UInt8](Data(contentsOf: URL(fileURLWithPath: url.path + suffix)))) ?? []
            #expect(!contains(bytes, Array(token.utf8)))
        }
        #expect(try await store.credential(id: "c")?.refreshToken == token)
        await store.close()
        let otherKey = try CredentialStore(location: .file(url), secureArea: area, wrapping: FixedKeyWrappingProvider(byte: 1))
        await #expect(throws: StorageError.unwrapFailed) { _ = try await otherKey.credential(id: "c") }
    }

    @Test("the issuance context round-trips encrypted: its bytes are not in the database file, another id cannot read it")
    func issuanceContextEncrypted() async throws {
        let directory = try makeTemporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let url = directory.appendingPathComponent("credentials.sqlite")
        let area = try SoftwareSecureArea(location: .inMemory, wrapping: try EphemeralWrappingProvider())
        let store = try CredentialStore(location: .file(url), secureArea: area, wrapping: FixedKeyWrappingProvider())
        let context = Array("access-token-\(UUID().uuidString)".utf8)
        try await store.save(StoredCredential(
            id: "d", format: .sdJwtVc, type: "t", issuer: IssuerInfo(identifier: "https://i.example"),
            instances: [], state: .deferred(transactionId: "tx", retryAfter: nil), issuanceContext: context))
        for suffix in ["", "-wal"] {
            let bytes = (try? [UInt8](Data(contentsOf: URL(fileURLWithPath: url.path + suffix)))) ?? []
            #expect(!contains(bytes, context))
        }
        #expect(try await store.credential(id: "d")?.issuanceContext == context)
        #expect(try await store.list().first?.issuanceContext == context)
        let withoutContext = try await store.save(StoredCredential(
            id: "e", format: .sdJwtVc, type: "t", issuer: IssuerInfo(identifier: "https://i.example"),
            instances: [CredentialInstance(index: 0, keyAlias: "k", raw: [1])]))
        #expect(withoutContext.issuanceContext == nil)
        #expect(try await store.credential(id: "e")?.issuanceContext == nil)
        // Moving the wrapped context to another row breaks its AAD.
        let wrapped = try FixedKeyWrappingProvider().wrap(context, aad: CredentialStore.issuanceContextAAD("d"))
        #expect(throws: StorageError.self) {
            _ = try FixedKeyWrappingProvider().unwrap(wrapped, aad: CredentialStore.issuanceContextAAD("e"))
        }
    }

    @Test("a database from a newer schema is refused")
    func schemaTooNew() async throws {
        let directory = try makeTemporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let url = directory.appendingPathComponent("future.sqlite")
        let connection = try SQLiteConnection(location: .file(url))
        try connection.execute("PRAGMA user_version = 99")
        connection.close()
        #expect(throws: StorageError.schemaTooNew(found: 99, supported: CredentialStore.schemaVersion)) {
            _ = try CredentialStore(location: .file(url), secureArea: try SoftwareSecureArea(location: .inMemory, wrapping: try EphemeralWrappingProvider()),
                                    wrapping: FixedKeyWrappingProvider())
        }
    }
}

/// Whether a test's secure area deletes keys.
private actor DeleteSwitch {
    private(set) var works = true
    func set(_ value: Bool) { works = value }
}
