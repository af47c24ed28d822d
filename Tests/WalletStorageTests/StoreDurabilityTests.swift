import Foundation
import TestChildProcess
import Testing
import WalletCrypto
import WalletRuntime
@testable import WalletStorage

/// Writes the schema-version-1 fixture: the v1 migration, then rows shaped as version 1
/// stored them (no issuer display, no per-instance last use or key-deleted flag).
/// `Fixtures/credentials-v1.sqlite` was made by running
/// `WALLET_STORAGE_WRITE_FIXTURE=1 swift test --filter "v1 fixture writer"`, then
/// checkpointed into a single file (journal_mode DELETE) so that it commits cleanly.
enum SchemaV1Fixture {
    static var committedURL: URL {
        URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent("Fixtures/credentials-v1.sqlite")
    }

    /// The refresh token of credential `pid-v1`.
    static let refreshToken = "v1-refresh-token"

    static func write(to url: URL) throws {
        let connection = try SQLiteConnection(location: .file(url))
        try connection.migrate(CredentialSchema.migrations, upTo: 1)
        let wrapped = try FixedKeyWrappingProvider().wrap(Array(refreshToken.utf8), aad: CredentialStore.refreshTokenAAD("pid-v1"))
        try connection.transaction { () throws(StorageError) in
            try connection.run(
                """
                INSERT INTO credentials (id, format, type, issuer_id, display, batch_size, key_use, state, transaction_id,
                    retry_after, refresh_token, created_at, updated_at)
                VALUES ('pid-v1', 'dc+sd-jwt', 'urn:eudi:pid:1', 'https://issuer.example',
                    '[{"locale":"en","name":"PID"}]', 2, 'one_time', 'issued', NULL, NULL, ?, 1700000000, 1700000100)
                """, [.blob(wrapped)])
            for index in 0..<2 {
                try connection.run(
                    "INSERT INTO credential_instances (credential_id, idx, key_alias, raw, use_count) VALUES ('pid-v1', ?, ?, ?, ?)",
                    [.integer(Int64(index)), .text("pid-v1-key-\(index)"), .blob(Array("sd-jwt instance \(index)".utf8)),
                     .integer(Int64(index))])
            }
            try connection.run(
                """
                INSERT INTO credentials (id, format, type, issuer_id, display, batch_size, key_use, state, transaction_id,
                    retry_after, refresh_token, created_at, updated_at)
                VALUES ('mdl-v1', 'mso_mdoc', 'org.iso.18013.5.1.mDL', 'https://mdl.example', '[]', 1, 'rotate', 'deferred',
                    'tx-42', 1700000600, NULL, 1700000200, 1700000200)
                """)
        }
        try connection.execute("PRAGMA journal_mode = DELETE")
        connection.close()
    }

    /// Every row of both tables, for comparing two v1 databases.
    static func rows(_ url: URL) throws -> [[SQLValue]] {
        let connection = try SQLiteConnection(location: .file(url))
        defer { connection.close() }
        let credentials = try connection.query(
            "SELECT id, format, type, issuer_id, display, batch_size, key_use, state, transaction_id, retry_after, created_at, updated_at FROM credentials ORDER BY id")
        let instances = try connection.query("SELECT credential_id, idx, key_alias, raw, use_count FROM credential_instances ORDER BY credential_id, idx")
        return credentials + instances
    }
}

@Suite("CredentialStore durability")
struct StoreDurabilityTests {
    @Test("the v1 fixture writer reproduces the committed fixture")
    func fixtureWriter() throws {
        let directory = try makeTemporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let fresh = directory.appendingPathComponent("v1.sqlite")
        try SchemaV1Fixture.write(to: fresh)
        if ProcessInfo.processInfo.environment["WALLET_STORAGE_WRITE_FIXTURE"] != nil {
            try? FileManager.default.removeItem(at: SchemaV1Fixture.committedURL)
            try FileManager.default.copyItem(at: fresh, to: SchemaV1Fixture.committedURL)
        }
        let copy = directory.appendingPathComponent("committed.sqlite")
        try FileManager.default.copyItem(at: SchemaV1Fixture.committedURL, to: copy)
        #expect(try SQLiteConnection(location: .file(copy)).userVersion() == 1)
        #expect(try SchemaV1Fixture.rows(copy) == SchemaV1Fixture.rows(fresh))
    }

    @Test("a schema v1 database is upgraded in place with its data intact")
    func upgradesV1() async throws {
        let directory = try makeTemporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let url = directory.appendingPathComponent("credentials.sqlite")
        try FileManager.default.copyItem(at: SchemaV1Fixture.committedURL, to: url)
        let area = try SoftwareSecureArea(location: .inMemory, wrapping: try EphemeralWrappingProvider())
        for index in 0..<2 { _ = try await area.createKey(alias: "pid-v1-key-\(index)") }
        let store = try CredentialStore(location: .file(url), secureArea: area, wrapping: FixedKeyWrappingProvider())
        #expect(try await store.schemaVersion() == CredentialStore.schemaVersion)
        #expect(try await store.integrityCheck() == ["ok"])
        let pid = try #require(try await store.credential(id: "pid-v1"))
        #expect(pid.format == .sdJwtVc && pid.type == "urn:eudi:pid:1")
        #expect(pid.issuer == IssuerInfo(identifier: "https://issuer.example", display: []))
        #expect(pid.display == [DisplayMetadata(name: "PID", locale: "en")])
        #expect(pid.policy == CredentialPolicy(batchSize: 2, use: .oneTime))
        #expect(pid.refreshToken == SchemaV1Fixture.refreshToken)
        #expect(pid.instances == [
            CredentialInstance(index: 0, keyAlias: "pid-v1-key-0", raw: Array("sd-jwt instance 0".utf8), useCount: 0),
            CredentialInstance(index: 1, keyAlias: "pid-v1-key-1", raw: Array("sd-jwt instance 1".utf8), useCount: 1),
        ])
        #expect(pid.createdAt == Date(timeIntervalSince1970: 1_700_000_000))
        let mdl = try #require(try await store.credential(id: "mdl-v1"))
        #expect(mdl.state == .deferred(transactionId: "tx-42", retryAfter: Date(timeIntervalSince1970: 1_700_000_600)))
        // The upgraded database works with the v2 features: consume, delete with keys.
        #expect(try await store.consumeInstance(of: "pid-v1").instance.index == 0)
        await #expect(throws: StorageError.noInstancesLeft(credentialId: "pid-v1")) { _ = try await store.consumeInstance(of: "pid-v1") }
        // Instance 1 was spent under v1 (use_count 1) with its key still present: purge deletes it.
        #expect(try await area.listKeys().map(\.alias) == ["pid-v1-key-1"])
        try await store.purgeSpentKeys()
        #expect(try await area.listKeys().isEmpty)
        try await store.delete(id: "pid-v1")
        #expect(try await store.list().map(\.id) == ["mdl-v1"])
        await store.close()
        // Version 5 keeps one index on the credential tables, the save's key-alias lookup;
        // a fresh database has the same ones.
        let fresh = directory.appendingPathComponent("fresh.sqlite")
        let freshStore = try CredentialStore(location: .file(fresh), secureArea: area, wrapping: FixedKeyWrappingProvider())
        await freshStore.close()
        for database in [url, fresh] {
            let connection = try SQLiteConnection(location: .file(database))
            defer { connection.close() }
            let indexes = try connection.query(
                "SELECT name FROM sqlite_master WHERE type = 'index' AND sql IS NOT NULL ORDER BY name").compactMap { $0.first?.string }
            #expect(indexes == ["instances_by_alias", "transaction_log_by_time", "transaction_log_credentials_by_credential"])
        }
    }

    @Test("eight connections opening one new database at once all migrate it, once; the same for a v1 database")
    func concurrentMigration() async throws {
        let directory = try makeTemporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        for round in 0..<6 {
            let url = directory.appendingPathComponent("race-\(round).sqlite")
            if round % 2 == 1 { try FileManager.default.copyItem(at: SchemaV1Fixture.committedURL, to: url) }
            // Threads of their own, each with its connection open, released together.
            let ready = DispatchSemaphore(value: 0)
            let start = DispatchSemaphore(value: 0)
            let done = DispatchSemaphore(value: 0)
            let results = LockedResults()
            for _ in 0..<8 {
                Thread {
                    defer { done.signal() }
                    let connection: SQLiteConnection
                    do { connection = try SQLiteConnection(location: .file(url)) } catch {
                        results.append(error); ready.signal(); return
                    }
                    ready.signal()
                    start.wait()
                    do {
                        try connection.migrate(CredentialSchema.migrations)
                        results.append(try connection.userVersion())
                    } catch {
                        results.append(error)
                    }
                    connection.close()
                }.start()
            }
            for _ in 0..<8 { ready.wait() }
            for _ in 0..<8 { start.signal() }
            for _ in 0..<8 { done.wait() }
            #expect(results.failures.isEmpty, "round \(round): \(results.failures)")
            #expect(results.versions == Array(repeating: CredentialStore.schemaVersion, count: 8 - results.failures.count))
        }
    }

    @Test("a child killed with SIGKILL mid-save leaves a sound database holding every credential it reported")
    func crashSafety() async throws {
        let directory = try makeTemporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let url = directory.appendingPathComponent("crash.sqlite")
        let (child, pipe) = try launchTestChild(
            filter: "StorageChildProcess/saveLoopChild", environment: ["WALLET_STORAGE_CHILD": url.path])
        let reader = pipe.fileHandleForReading
        let output = await offPool { () -> String in
            var output = ""
            var committed = 0
            while committed < 60 {
                let data = reader.availableData
                if data.isEmpty { break }   // the child ended early: the checks below will say why
                output += String(decoding: data, as: UTF8.self)
                committed = output.components(separatedBy: "committed ").count - 1
            }
            kill(child.processIdentifier, SIGKILL)
            child.waitUntilExit()
            return output + String(decoding: reader.readDataToEndOfFile(), as: UTF8.self)
        }
        #expect(child.terminationReason == .uncaughtSignal && child.terminationStatus == SIGKILL)
        let reported = output.split(separator: "\n").compactMap { line -> Int? in
            guard line.hasPrefix("committed cred-") else { return nil }
            return Int(line.dropFirst("committed cred-".count))
        }
        #expect(reported.count >= 60)
        #expect(reported == Array(0..<reported.count))

        let store = try CredentialStore(
            location: .file(url), secureArea: try SoftwareSecureArea(location: .inMemory, wrapping: try EphemeralWrappingProvider()),
            wrapping: FixedKeyWrappingProvider())
        #expect(try await store.integrityCheck() == ["ok"])
        for number in reported {
            let stored = try #require(try await store.credential(id: "cred-\(number)"))
            #expect(sameContent(stored, crashTestCredential(number)), "cred-\(number) is not whole")
        }
        // Whatever else is there (at most the one in flight) is whole too, never partial.
        for stored in try await store.list() {
            let number = try #require(Int(stored.id.dropFirst("cred-".count)))
            #expect(sameContent(stored, crashTestCredential(number)))
        }
    }
}

/// What the racing openings of ``StoreDurabilityTests/concurrentMigration()`` ended with.
private final class LockedResults: @unchecked Sendable {
    private let lock = NSLock()
    private var storedVersions: [Int] = []
    private var storedFailures: [String] = []
    /// Read under the lock too: the semaphores that order the threads are not visible to
    /// ThreadSanitizer.
    var versions: [Int] { lock.withLock { storedVersions } }
    var failures: [String] { lock.withLock { storedFailures } }
    func append(_ version: Int) { lock.withLock { storedVersions.append(version) } }
    func append(_ error: any Error) { lock.withLock { storedFailures.append("\(error)") } }
}
