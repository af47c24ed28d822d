import Foundation
import Testing
import WalletCrypto
import WalletEncoding
import WalletRuntime
@testable import WalletStorage

@Suite("Transaction log")
struct TransactionLogTests {
    private func store(_ location: StorageLocation = .inMemory, wrapping: any KeyWrappingProvider = FixedKeyWrappingProvider())
        throws -> CredentialStore {
        try CredentialStore(location: location, secureArea: try SoftwareSecureArea(location: .inMemory, wrapping: wrapping),
                            wrapping: wrapping)
    }

    private static let t0 = Date(timeIntervalSince1970: 1_800_000_000)

    private static func presentation(at time: Date, credential: String = "pid", values: JSONObject? = nil) -> TransactionLogEntry {
        TransactionLogEntry(
            time: time, kind: .remotePresentation,
            counterparty: TransactionCounterparty(identifier: "x509_san_dns:verifier.example", name: "Verifier", trusted: true),
            credentials: [TransactionCredential(credentialId: credential, type: "urn:eudi:pid:1",
                                                claimPaths: [["given_name"], ["address", "locality"], ["nationalities", nil]])],
            outcome: .completed, claimValues: values)
    }

    @Test("an entry round-trips with its counterparty, paths and outcome; newest first")
    func roundTrip() async throws {
        let store = try store()
        let first = try await store.record(Self.presentation(at: Self.t0))
        let second = try await store.record(TransactionLogEntry(
            time: Self.t0.addingTimeInterval(60), kind: .issuance,
            counterparty: TransactionCounterparty(identifier: "https://issuer.example"),
            credentials: [TransactionCredential(credentialId: "mdl", type: "org.iso.18013.5.1.mDL")],
            outcome: .failed(reason: "invalid_grant")))
        #expect(!first.id.isEmpty && first.id != second.id)
        let all = try await store.transactions()
        #expect(all == [second, first])
        #expect(all[1].credentials[0].claimPaths == [["given_name"], ["address", "locality"], ["nationalities", nil]])
        #expect(all[1].counterparty.trusted == true)
        #expect(all[0].counterparty.trusted == nil)
        #expect(all[0].outcome == .failed(reason: "invalid_grant"))
    }

    @Test("filters by kind, credential, counterparty and time; deletes one or many")
    func filtersAndDeletion() async throws {
        let store = try store()
        for minute in 0..<5 {
            try await store.record(Self.presentation(at: Self.t0.addingTimeInterval(Double(minute) * 60),
                                                     credential: minute % 2 == 0 ? "pid" : "mdl"))
        }
        #expect(try await store.transactions(TransactionFilter(credentialId: "pid")).count == 3)
        #expect(try await store.transactions(TransactionFilter(kind: .issuance)).isEmpty)
        #expect(try await store.transactions(TransactionFilter(counterparty: "x509_san_dns:verifier.example")).count == 5)
        let window = TransactionFilter(since: Self.t0.addingTimeInterval(60), until: Self.t0.addingTimeInterval(180))
        #expect(try await store.transactions(window).count == 2)
        let one = try #require(try await store.transactions().first)
        try await store.deleteTransaction(id: one.id)
        await #expect(throws: StorageError.transactionNotFound(id: one.id)) { try await store.deleteTransaction(id: one.id) }
        #expect(try await store.deleteTransactions(TransactionFilter(credentialId: "mdl")) == 2)
        #expect(try await store.transactions().count == 2)
    }

    @Test("claim values are kept only when given, encrypted at rest, and never in the description")
    func claimValuesEncrypted() async throws {
        let directory = try makeTemporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let url = directory.appendingPathComponent("credentials.sqlite")
        let store = try store(.file(url))
        let secretName = "Erika-Mustermann-\(UUID().uuidString)"
        let entry = try await store.record(Self.presentation(at: Self.t0, values: ["given_name": .string(secretName)]))
        try await store.record(Self.presentation(at: Self.t0.addingTimeInterval(1)))
        let read = try await store.transactions()
        #expect(read.first { $0.id == entry.id }?.claimValues == ["given_name": .string(secretName)])
        #expect(read.filter { $0.claimValues == nil }.count == 1)
        #expect(!"\(entry)".contains(secretName))
        await store.close()
        for suffix in ["", "-wal"] {
            guard let bytes = try? [UInt8](Data(contentsOf: URL(fileURLWithPath: url.path + suffix))) else { continue }
            #expect(!contains(bytes, Array(secretName.utf8)), "claim value in clear in credentials.sqlite\(suffix)")
        }
        // Another wrapping key cannot read the values: the row is reported corrupt, not decoded.
        let other = try self.store(.file(url), wrapping: FixedKeyWrappingProvider(byte: 0x11))
        await #expect(throws: StorageError.self) { _ = try await other.transactions() }
    }

    @Test("deleting a credential keeps its history")
    func historyOutlivesCredential() async throws {
        let store = try store()
        try await store.save(StoredCredential(id: "pid", format: .sdJwtVc, type: "urn:eudi:pid:1",
                                              issuer: IssuerInfo(identifier: "https://issuer.example"),
                                              instances: [CredentialInstance(index: 0, keyAlias: "k0", raw: [1])]))
        try await store.record(Self.presentation(at: Self.t0))
        try await store.delete(id: "pid")
        #expect(try await store.transactions(TransactionFilter(credentialId: "pid")).count == 1)
    }
}
