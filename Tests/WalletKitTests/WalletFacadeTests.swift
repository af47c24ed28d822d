import Foundation
import OpenID4VCI
import ReferenceParties
import Testing
import WalletCrypto
import WalletKit
import WalletRuntime
import WalletStorage

@Suite("The Wallet facade", .timeLimit(.minutes(15)))
struct WalletFacadeTests {
    @Test("credentials.changes replays the current list, then publishes after an issuance and after a deletion")
    func changes() async throws {
        let parties = try Parties.make()
        let wallet = try await Wallet(config: parties.config())
        var updates = wallet.credentials.changes.makeAsyncIterator()
        #expect(await updates.next() == [])
        let id = try await parties.issuePid(into: wallet)
        let afterIssuance = try #require(await updates.next())
        #expect(afterIssuance.map(\.id) == [id])
        #expect(wallet.credentials.current.map(\.id) == [id])
        let late = wallet.credentials.changes
        var lateIterator = late.makeAsyncIterator()
        #expect(await lateIterator.next()?.map(\.id) == [id], "a new observer starts from the present")
        try await wallet.credentials.delete(id)
        #expect(await updates.next() == [])
        #expect(try await wallet.credentials.get(id) == nil)
        #expect(await parties.issuer.inspection.notifications.map(\.event).contains("credential_deleted"))
    }

    @Test("a folder store keeps credentials and the log across openings, in the wallet command's layout")
    func persistence() async throws {
        let folder = temporaryFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let parties = try Parties.make()
        let id: CredentialId
        do {
            let wallet = try await Wallet(config: parties.config(storage: .sqlite(at: folder)))
            id = try await parties.issuePid(into: wallet)
            // Closed, so that the folder is free at once (a dropped wallet's store, and its
            // lock, may outlive it while tasks wind down).
            await wallet.close()
        }
        for name in ["keys.sqlite", "keys.sqlite.key", "credentials.sqlite"] {
            #expect(FileManager.default.fileExists(atPath: folder.appendingPathComponent(name).path), "\(name)")
        }
        let permissions = try FileManager.default.attributesOfItem(atPath: folder.path)[.posixPermissions] as? Int
        #expect(permissions == 0o700)
        let reopened = try await Wallet(config: parties.config(storage: .sqlite(at: folder)))
        #expect(try await reopened.credentials.list().map(\.id) == [id])
        #expect(try await reopened.transactionLog.entries().count == 1)
        #expect(reopened.recovery == StorageRecovery(finishedKeyDeletions: 0, removedOrphanKeys: []))
        #expect(try await reopened.verifyStorage().isConsistent)
    }

    @Test("a record that does not decode (its secrets wrapped under a lost key file) does not keep the wallet from opening, and no key is swept")
    func unreadableRecordOpens() async throws {
        let folder = temporaryFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let parties = try Parties.make()
        let keysBefore: [String]
        do {
            let wallet = try await Wallet(config: parties.config(storage: .sqlite(at: folder)))
            let id = try await parties.issuePid(into: wallet)
            #expect(try await wallet.credentials.get(id)?.issuanceContext != nil, "a wrapped secret to lose")
            _ = try await wallet.secureArea.createKey(alias: "holder-in-flight")
            keysBefore = try await wallet.secureArea.listKeys().map(\.alias)
            await wallet.close()
        }
        // The key file goes (a restore without it): a new one is made, and the record's
        // wrapped issuance context no longer opens.
        try FileManager.default.removeItem(at: folder.appendingPathComponent("keys.sqlite.key"))
        let reopened = try await Wallet(config: parties.config(storage: .sqlite(at: folder)))
        #expect(reopened.recovery.foundUnreadableRecords)
        #expect(reopened.recovery.removedOrphanKeys.isEmpty)
        #expect(try await reopened.secureArea.listKeys().map(\.alias) == keysBefore, "nothing swept")
        await #expect(throws: WalletError.storage(.unwrapFailed)) { _ = try await reopened.credentials.list() }
        await reopened.close()
    }

    @Test("opening sweeps keys an interrupted issuance left (holder and DPoP prefixes only) and reports them")
    func orphanSweep() async throws {
        let folder = temporaryFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let parties = try Parties.make()
        let kept: CredentialId
        do {
            let wallet = try await Wallet(config: parties.config(storage: .sqlite(at: folder)))
            kept = try await parties.issuePid(into: wallet)
            // What a kill between key creation and saving leaves: keys nothing references.
            _ = try await wallet.secureArea.createKeys(count: 2, aliasPrefix: "holder", options: KeyCreationOptions())
            _ = try await wallet.secureArea.createKey(alias: "dpop-interrupted")
            _ = try await wallet.secureArea.createKey(alias: "app-own-key")
            let report = try await wallet.verifyStorage()
            #expect(report.orphanKeys.count == 3)
            #expect(!report.isConsistent)
            #expect(report.integrity == ["ok"])
            await wallet.close()
        }
        let reopened = try await Wallet(config: parties.config(storage: .sqlite(at: folder)))
        #expect(reopened.recovery.removedOrphanKeys.count == 3)
        #expect(reopened.recovery.removedOrphanKeys.contains("dpop-interrupted"))
        let aliases = try await reopened.secureArea.listKeys().map(\.alias)
        #expect(aliases.contains("app-own-key"), "keys of other aliases are the app's")
        let credential = try #require(try await reopened.credentials.get(kept))
        #expect(credential.instances.allSatisfy { aliases.contains($0.keyAlias) })
        #expect(try await reopened.verifyStorage().isConsistent)
    }

    @Test("a second wallet on a folder another wallet has open repairs nothing; the first opening alone does")
    func sharedFolderPostponesRepairs() async throws {
        let folder = temporaryFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let parties = try Parties.make()
        let first = try await Wallet(config: parties.config(storage: .sqlite(at: folder)))
        #expect(!first.recovery.isPostponed)
        let kept = try await parties.issuePid(into: first)
        // A key the first wallet's issuance has made and not yet stored a credential for.
        _ = try await first.secureArea.createKey(alias: "holder-in-flight")
        let second = try await Wallet(config: parties.config(storage: .sqlite(at: folder)))
        #expect(second.recovery == StorageRecovery(finishedKeyDeletions: 0, removedOrphanKeys: [], isPostponed: true))
        #expect(try await first.secureArea.listKeys().map(\.alias).contains("holder-in-flight"))
        #expect(try await second.credentials.list().map(\.id) == [kept])
        await second.close()
        await first.close()
        // Alone now: the key nothing references is swept.
        let third = try await Wallet(config: parties.config(storage: .sqlite(at: folder)))
        #expect(third.recovery == StorageRecovery(finishedKeyDeletions: 0, removedOrphanKeys: ["holder-in-flight"]))
        #expect(try await third.verifyStorage().isConsistent)
    }

    @Test("the folder lock: whileAlone runs only without another holder, which then shares the folder until released")
    func folderLock() async throws {
        let folder = temporaryFolder()
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        let a = try StorageFolderLock(folder: folder)
        let b = try StorageFolderLock(folder: folder)
        #expect(try await a.whileAlone { () throws(StorageError) in 1 } == 1)
        var ran = false
        #expect(try await b.whileAlone { () throws(StorageError) in ran = true } == nil)
        #expect(!ran)
        b.release()
        await #expect(throws: StorageError.lockFile(path: b.path, errno: EBADF), "a released lock cannot be taken again") {
            _ = try await b.whileAlone { () throws(StorageError) in 2 }
        }
        a.release()
        let c = try StorageFolderLock(folder: folder)
        #expect(try await c.whileAlone { () throws(StorageError) in 3 } == 3)
        // A failing body still leaves the folder held (shared).
        c.release()
        let d = try StorageFolderLock(folder: folder)
        await #expect(throws: StorageError.closed) { _ = try await d.whileAlone { () throws(StorageError) -> Int in throw .closed } }
        let e = try StorageFolderLock(folder: folder)
        #expect(try await e.whileAlone { () throws(StorageError) in 4 } == nil)
        d.release()
        e.release()
        // More openings at once than the concurrency pool has threads, one of them
        // repairing (awaiting as it goes): all complete, and the repair ran.
        let locks = try (0..<12).map { _ in try StorageFolderLock(folder: folder) }
        let repaired = try await withThrowingTaskGroup(of: Bool.self) { group in
            for lock in locks {
                group.addTask {
                    try await lock.whileAlone { () throws(StorageError) in for _ in 0..<50 { await Task.yield() } } != nil
                }
            }
            return try await group.reduce(0) { $0 + ($1 ? 1 : 0) }
        }
        #expect(repaired >= 1)
        for lock in locks { lock.release() }
    }

    @Test("verifyStorage reports a key a credential still needs that the secure area lost")
    func missingKey() async throws {
        let parties = try Parties.make()
        let wallet = try await Wallet(config: parties.config())
        let id = try await parties.issuePid(into: wallet)
        let alias = try #require(try await wallet.credentials.get(id)?.instances.first?.keyAlias)
        try await wallet.secureArea.deleteKey(alias: alias)
        let report = try await wallet.verifyStorage()
        #expect(report.missingKeys == [alias])
        #expect(report.credentialCount == 1)
        #expect(!report.isConsistent)
    }

    @Test("reader anchors that are not DER certificates are refused when the wallet opens")
    func invalidReaderAnchor() async throws {
        await #expect(throws: WalletError.invalidReaderAnchor(index: 1)) {
            _ = try await Wallet(config: WalletConfig(storage: .inMemory, trust: TrustConfig(readerAnchorsDer: [
                try CertificateBuilder.certificateAuthority(subject: DistinguishedName([(.commonName, "R")]), notBefore: Date(),
                                                            notAfter: Date().addingTimeInterval(60))
                    .selfSigned(with: .ec(try ECPrivateKey.generate(curve: .p256))).derEncoded,
                [0x30, 0x00],
            ])))
        }
        // The presentation's own anchors are checked too, indexed after the trust ones.
        var config = WalletConfig(storage: .inMemory, trust: TrustConfig(readerAnchorsDer: [Array("not DER".utf8)]))
        await #expect(throws: WalletError.invalidReaderAnchor(index: 0)) { _ = try await Wallet(config: config) }
        config.trust = TrustConfig()
        config.presentation.readerAnchorsDer = [Array("-----BEGIN CERTIFICATE-----".utf8)]
        await #expect(throws: WalletError.invalidReaderAnchor(index: 0)) { _ = try await Wallet(config: config) }
        config.trust = TrustConfig(readerAnchorsDer: [try CertificateBuilder.certificateAuthority(
            subject: DistinguishedName([(.commonName, "R")]), notBefore: Date(), notAfter: Date().addingTimeInterval(60))
            .selfSigned(with: .ec(try ECPrivateKey.generate(curve: .p256))).derEncoded])
        await #expect(throws: WalletError.invalidReaderAnchor(index: 1)) { _ = try await Wallet(config: config) }
    }

    @Test("a storage folder that is a file is refused")
    func folderIsAFile() async throws {
        let file = temporaryFolder()
        try Data([1]).write(to: file)
        defer { try? FileManager.default.removeItem(at: file) }
        await #expect(throws: WalletError.storageFolderUnavailable(path: file.path)) {
            _ = try await Wallet(config: WalletConfig(storage: .sqlite(at: file)))
        }
    }

    @Test("trust anchors of TrustConfig reach issuance: an issuer outside them is refused")
    func issuerTrust() async throws {
        let parties = try Parties.make()
        let other = try Parties.make()
        var config = parties.config()
        config.trust.issuerAnchors = [other.issuer.trustAnchors.iaca, other.issuer.trustAnchors.issuerRoot]
        let wallet = try await Wallet(config: config)
        await #expect(throws: TestFailure.self) { _ = try await parties.issuePid(into: wallet) }
        let entry = try #require(try await wallet.transactionLog.entries().first)
        #expect(entry.counterparty.trusted == false)
        guard case .failed(let reason) = entry.outcome else { Issue.record("\(entry.outcome)"); return }
        #expect(reason == "credentialRequestFailed.invalidCredential")
    }
}
