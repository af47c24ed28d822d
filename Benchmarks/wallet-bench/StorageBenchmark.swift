internal import CSQLite
import Foundation
import WalletCrypto
import WalletRuntime
import WalletStorage

/// The `storage` case: save credentials one by one (one transaction each, WAL,
/// synchronous = FULL, refresh token encrypted) into a file database, then list them
/// all; at 1,000 and at 10,000 credentials. Prints the cost per credential, its growth
/// from 1,000 to 10,000, the crypto floor (AES-256-GCM of the refresh token), and the
/// storage floor: a bare SQLite insert of the same bytes with the same durability.
enum StorageBenchmark {
    static func run(iterations: Int, python: String?) throws -> [BenchRow] {
        _ = python
        let box = LockedBox<Result<[BenchRow], any Error>?>(nil)
        let done = DispatchSemaphore(value: 0)
        Task {
            do {
                let rows = try await measure()
                box.withLock { $0 = .success(rows) }
            } catch {
                box.withLock { $0 = .failure(error) }
            }
            done.signal()
        }
        done.wait()
        guard let outcome = box.withLock({ $0 }) else { throw BenchmarkFailure() }
        return try outcome.get()
    }

    private static func credential(_ number: Int) -> StoredCredential {
        let raw = [UInt8](repeating: UInt8(truncatingIfNeeded: number), count: 2048)
        return StoredCredential(
            id: "credential-\(number)", format: number % 2 == 0 ? .sdJwtVc : .msoMdoc,
            type: number % 2 == 0 ? "urn:eudi:pid:1" : "org.iso.18013.5.1.mDL",
            issuer: IssuerInfo(identifier: "https://issuer\(number % 7).example", display: [DisplayMetadata(name: "Issuer")]),
            display: [DisplayMetadata(name: "Credential \(number)", locale: "en")],
            instances: [CredentialInstance(index: 0, keyAlias: "key-\(number)", raw: raw)],
            policy: CredentialPolicy(batchSize: 1, use: .rotate), refreshToken: "refresh-token-\(number)-abcdefghijklmnop")
    }

    private static func measure() async throws -> [BenchRow] {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("wallet-bench-storage-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let area = try SoftwareSecureArea(location: .inMemory, wrapping: try EphemeralWrappingProvider())
        let wrapping = try EphemeralWrappingProvider()

        // The floor: the crypto a save and a read do per credential (seal + open the refresh token).
        let token = Array("refresh-token-0-abcdefghijklmnop".utf8)
        let aad = Array("aad".utf8)
        let floor = medianSeconds(iterations: 2_000) {
            if let sealed = try? wrapping.wrap(token, aad: aad) { blackHole(try? wrapping.unwrap(sealed, aad: aad)) }
        }

        detail("storage: file database, WAL, synchronous=FULL, one transaction per save, 2 KB per credential")
        let small = 1_000, large = 10_000
        // The storage floor: the same count of bare SQLite inserts, in the same rounds as
        // the store's saves at 10,000 (a round: 100 saves, then 100 inserts), so that
        // both see the same disk and host (see `interleavedMedians`).
        let sample = credential(0)
        let metadataBytes = try metadataByteCount(sample, wrapping: wrapping)
        let bare = try BareTable(at: directory.appendingPathComponent("bare-\(large).sqlite"),
                                 rawBytes: sample.instances[0].raw.count, metadataBytes: metadataBytes)
        defer { bare.close() }
        var bareSeconds = 0.0
        var perSave: [Int: Double] = [:], perList: [Int: Double] = [:]
        for count in [small, large] {
            let store = try CredentialStore(
                location: .file(directory.appendingPathComponent("bench-\(count).sqlite")), secureArea: area, wrapping: wrapping)
            var save = 0.0
            for round in stride(from: 0, to: count, by: 100) {
                let saveStart = monotonicNanoseconds()
                for number in round..<min(round + 100, count) { try await store.save(credential(number)) }
                save += secondsSince(saveStart)
                guard count == large else { continue }
                let bareStart = monotonicNanoseconds()
                for number in round..<min(round + 100, count) { try bare.insert(number) }
                bareSeconds += secondsSince(bareStart)
            }
            let listStart = monotonicNanoseconds()
            let listed = try await store.list()
            let list = secondsSince(listStart)
            guard listed.count == count else { throw BenchmarkFailure() }
            let filterStart = monotonicNanoseconds()
            let filtered = try await store.list(CredentialFilter(format: .msoMdoc, issuer: "https://issuer3.example"))
            let filter = secondsSince(filterStart)
            blackHole(filtered)
            await store.close()
            perSave[count] = save / Double(count)
            perList[count] = list / Double(count)
            detail(String(format: "  %6d credentials: save %7.1f µs/credential (%.2f s total), list %6.1f µs/credential (%.3f s), filtered list %.1f ms (%d hits)",
                         count, save / Double(count) * 1e6, save, list / Double(count) * 1e6, list, filter * 1e3, filtered.count))
        }
        if let s1 = perSave[small], let s2 = perSave[large], let l1 = perList[small], let l2 = perList[large] {
            detail(String(format: "  growth 1,000 -> 10,000 per credential: save x%.2f, list x%.2f (1.00 = constant cost per credential)", s2 / s1, l2 / l1))
            detail(String(format: "  floor: AES-256-GCM seal+open of the refresh token %.2f µs; save = %.0fx, list = %.0fx the floor at 10,000",
                         floor * 1e6, s2 / floor, l2 / floor))
        }
        let bareInsert = bareSeconds / Double(large)
        detail(String(format: "  floor: bare SQLite insert (WAL, synchronous=FULL, one transaction each, %d B raw + %d B metadata) %.1f µs at 10,000; save = %.2fx",
                      sample.instances[0].raw.count, metadataBytes, bareInsert * 1e6, (perSave[large] ?? 0) / bareInsert))
        return [BenchRow(suite: "storage", name: "save at 10,000 credentials", sdkSeconds: perSave[large] ?? 0, floorSeconds: bareInsert,
                         floorName: "bare SQLite insert, same bytes + durability", targetRatio: 1.3)]
    }

    /// The bytes a save writes besides the instance's raw credential: its text columns,
    /// display JSON and the sealed refresh token (what `CredentialStore.save` binds).
    private static func metadataByteCount(_ credential: StoredCredential, wrapping: EphemeralWrappingProvider) throws -> Int {
        let token = try wrapping.wrap(Array((credential.refreshToken ?? "").utf8), aad: Array(credential.id.utf8))
        let text = [credential.id, credential.format.rawValue, credential.type, credential.issuer.identifier,
                    #"[{"name":"Issuer"}]"#, #"[{"name":"Credential 0","locale":"en"}]"#,
                    credential.policy.use.rawValue, "issued", credential.id, credential.instances[0].keyAlias]
        return text.reduce(0) { $0 + $1.utf8.count } + token.count + 5 * 8
    }

    /// A fresh file database with the store's durability (WAL, synchronous = FULL, one
    /// BEGIN IMMEDIATE transaction per insert) and one table of id, metadata and raw bytes.
    private final class BareTable {
        private let db: OpaquePointer
        private let statement: OpaquePointer
        private let rawBytes: Int
        private let metadata: [UInt8]

        init(at url: URL, rawBytes: Int, metadataBytes: Int) throws {
            var db: OpaquePointer?
            guard sqlite3_open_v2(url.path, &db, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE | SQLITE_OPEN_NOMUTEX, nil) == SQLITE_OK,
                  let db else { throw BenchmarkFailure() }
            self.db = db
            var statement: OpaquePointer?
            guard sqlite3_exec(db, "PRAGMA journal_mode = WAL; PRAGMA synchronous = FULL;", nil, nil, nil) == SQLITE_OK,
                  sqlite3_exec(db, "CREATE TABLE t (id TEXT PRIMARY KEY NOT NULL, metadata BLOB NOT NULL, raw BLOB NOT NULL)",
                               nil, nil, nil) == SQLITE_OK,
                  sqlite3_prepare_v2(db, "INSERT INTO t (id, metadata, raw) VALUES (?, ?, ?)", -1, &statement, nil) == SQLITE_OK,
                  let statement else {
                sqlite3_close_v2(db)
                throw BenchmarkFailure()
            }
            self.statement = statement
            self.rawBytes = rawBytes
            self.metadata = [UInt8](repeating: 0x6D, count: metadataBytes)
        }

        /// Inserts row `number` in its own transaction.
        func insert(_ number: Int) throws {
            let raw = [UInt8](repeating: UInt8(truncatingIfNeeded: number), count: rawBytes)
            try exec("BEGIN IMMEDIATE")
            sqlite3_bind_text(statement, 1, "credential-\(number)", -1, wallet_sqlite_transient())
            metadata.withUnsafeBytes { _ = sqlite3_bind_blob(statement, 2, $0.baseAddress, Int32($0.count), wallet_sqlite_transient()) }
            raw.withUnsafeBytes { _ = sqlite3_bind_blob(statement, 3, $0.baseAddress, Int32($0.count), wallet_sqlite_transient()) }
            guard sqlite3_step(statement) == SQLITE_DONE else { throw BenchmarkFailure() }
            sqlite3_reset(statement)
            try exec("COMMIT")
        }

        func close() {
            sqlite3_finalize(statement)
            sqlite3_close_v2(db)
        }

        private func exec(_ sql: String) throws {
            guard sqlite3_exec(db, sql, nil, nil, nil) == SQLITE_OK else { throw BenchmarkFailure() }
        }
    }
}
