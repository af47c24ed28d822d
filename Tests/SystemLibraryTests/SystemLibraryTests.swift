import COpenSSL
import CSQLite
import Foundation
import Testing

/// The SDK relies on OpenSSL 3 (EVP_KDF, EVP_MAC, OSSL_PARAM) and on SQLite
/// features of 3.35+ (RETURNING, WAL): check the libraries the module maps link.
@Suite("System libraries")
struct SystemLibraryTests {
    @Test("libcrypto is OpenSSL 3 or later")
    func openSSLVersion() {
        #expect(OPENSSL_version_major() >= 3)
    }

    @Test("SQLite is 3.35 or later and a file database accepts WAL mode")
    func sqliteWAL() throws {
        #expect(sqlite3_libversion_number() >= 3_035_000)
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("wal-\(UUID().uuidString).sqlite").path
        defer {
            for suffix in ["", "-wal", "-shm"] { try? FileManager.default.removeItem(atPath: path + suffix) }
        }
        var db: OpaquePointer?
        #expect(sqlite3_open(path, &db) == SQLITE_OK)
        defer { sqlite3_close(db) }
        var statement: OpaquePointer?
        #expect(sqlite3_prepare_v2(db, "PRAGMA journal_mode=WAL", -1, &statement, nil) == SQLITE_OK)
        defer { sqlite3_finalize(statement) }
        #expect(sqlite3_step(statement) == SQLITE_ROW)
        let mode = sqlite3_column_text(statement, 0).map { String(cString: $0) }
        #expect(mode == "wal")
    }
}
