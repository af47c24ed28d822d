internal import CSQLite
import Foundation
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Where a store keeps its data: a database file, or SQLite `:memory:` (tests).
public enum StorageLocation: Sendable, Equatable {
    /// A database file (created when missing). Its WAL (`-wal`) and shared-memory
    /// (`-shm`) files live next to it.
    case file(URL)
    /// A private in-memory database that disappears with the store.
    case inMemory
}

/// One SQLite value, as bound to or read from a prepared statement.
enum SQLValue: Equatable {
    case null
    case integer(Int64)
    case real(Double)
    case text(String)
    case blob([UInt8])

    var int64: Int64? { if case .integer(let value) = self { value } else { nil } }
    var double: Double? {
        switch self {
        case .real(let value): value
        case .integer(let value): Double(value)
        default: nil
        }
    }
    var string: String? { if case .text(let value) = self { value } else { nil } }
    var bytes: [UInt8]? {
        switch self {
        case .blob(let value): value
        case .null: nil
        default: nil
        }
    }
}

/// A single SQLite connection with a prepared-statement cache. Not thread-safe by
/// itself: each owner (an actor) confines its connection to its own executor.
///
/// Settings: WAL journal (file databases), `foreign_keys = ON`, a busy timeout so that
/// a second process waits for the write lock instead of failing, and
/// `synchronous = FULL` so that a transaction reported committed survives a crash.
final class SQLiteConnection {
    private var handle: OpaquePointer?
    private var statements: [String: OpaquePointer] = [:]
    /// The path of the database file, or nil in memory.
    let path: String?

    /// Creates the database file owner-only (0600) when it is missing, and takes the group
    /// and other bits off it and its `-wal`, `-shm` and `-journal` files when present.
    /// SQLite gives the files it creates next to a database the database file's mode, and
    /// under the usual umask (022) every local user could otherwise read the credentials
    /// of a folder the SDK did not create itself. The last component is never followed
    /// as a symbolic link.
    static func makeOwnerOnly(_ path: String) throws(StorageError) {
        for suffix in ["", "-wal", "-shm", "-journal"] {
            let flags = O_RDWR | O_NOFOLLOW | O_CLOEXEC | (suffix.isEmpty ? O_CREAT : 0)
            let descriptor = open(path + suffix, flags, 0o600)
            guard descriptor >= 0 else {
                if suffix.isEmpty || errno != ENOENT {
                    throw .database(operation: "open", code: SQLITE_CANTOPEN,
                                    message: "cannot open \(path + suffix) owner-only (errno \(errno))")
                }
                continue
            }
            defer { _ = Self.systemClose(descriptor) }
            var info = stat()
            guard fstat(descriptor, &info) == 0 else { continue }
            if info.st_mode & 0o077 != 0, fchmod(descriptor, info.st_mode & 0o700) != 0 {
                throw .database(operation: "open", code: SQLITE_CANTOPEN,
                                message: "cannot make \(path + suffix) owner-only (errno \(errno))")
            }
        }
    }

    /// close(2), which the connection's own `close()` hides inside the type.
    private static func systemClose(_ descriptor: Int32) -> Int32 {
        #if canImport(Glibc)
        Glibc.close(descriptor)
        #else
        Darwin.close(descriptor)
        #endif
    }

    init(location: StorageLocation, busyTimeoutMilliseconds: Int32 = 5_000) throws(StorageError) {
        let name: String
        switch location {
        case .file(let url): name = url.path; path = url.path
        case .inMemory: name = ":memory:"; path = nil
        }
        if let path { try Self.makeOwnerOnly(path) }
        var db: OpaquePointer?
        let flags = SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE | SQLITE_OPEN_NOMUTEX
        let status = sqlite3_open_v2(name, &db, flags, nil)
        guard status == SQLITE_OK, let db else {
            let message = db.map { String(cString: sqlite3_errmsg($0)) } ?? "cannot open"
            sqlite3_close_v2(db)
            throw .database(operation: "open", code: status, message: message)
        }
        handle = db
        sqlite3_extended_result_codes(db, 1)
        sqlite3_busy_timeout(db, busyTimeoutMilliseconds)
        do throws(StorageError) {
            if path != nil {
                let mode = try walJournalMode(busyTimeoutMilliseconds: busyTimeoutMilliseconds)
                guard mode?.lowercased() == "wal" else {
                    throw .database(operation: "enable WAL", code: SQLITE_ERROR, message: "journal_mode is \(mode ?? "?")")
                }
            }
            try execute("PRAGMA foreign_keys = ON; PRAGMA synchronous = FULL;")
        } catch {
            close()
            throw error
        }
    }

    deinit { close() }

    /// `PRAGMA journal_mode = WAL`, which needs the database to itself for a moment:
    /// SQLite answers `SQLITE_BUSY` without waiting when another connection opens the
    /// same new database at that instant, so the switch is tried again, for at most the
    /// busy timeout. Returns the mode in force.
    private func walJournalMode(busyTimeoutMilliseconds: Int32) throws(StorageError) -> String? {
        var waited: Int32 = 0
        while true {
            do {
                return try query("PRAGMA journal_mode = WAL").first?.first?.string
            } catch .database(_, let code, _) where code & 0xFF == SQLITE_BUSY && waited < busyTimeoutMilliseconds {
                usleep(2_000)
                waited += 2
            }
        }
    }

    /// Finalises every cached statement and closes the connection (idempotent).
    func close() {
        for statement in statements.values { sqlite3_finalize(statement) }
        statements.removeAll()
        if let handle { sqlite3_close_v2(handle) }
        handle = nil
    }

    private func error(_ operation: String, _ status: Int32) -> StorageError {
        let message = handle.map { String(cString: sqlite3_errmsg($0)) } ?? "closed"
        return .database(operation: operation, code: status, message: message)
    }

    /// Runs one or more statements without parameters (schema changes, pragmas).
    func execute(_ sql: String) throws(StorageError) {
        guard let handle else { throw .closed }
        var message: UnsafeMutablePointer<CChar>?
        let status = sqlite3_exec(handle, sql, nil, nil, &message)
        guard status == SQLITE_OK else {
            let text = message.map { String(cString: $0) } ?? "error"
            sqlite3_free(message)
            throw .database(operation: "execute", code: status, message: text)
        }
    }

    /// The cached prepared statement for `sql`, reset and with its bindings cleared.
    private func statement(_ sql: String) throws(StorageError) -> OpaquePointer {
        guard let handle else { throw .closed }
        if let cached = statements[sql] {
            sqlite3_reset(cached)
            sqlite3_clear_bindings(cached)
            return cached
        }
        var statement: OpaquePointer?
        let status = sqlite3_prepare_v3(handle, sql, -1, UInt32(SQLITE_PREPARE_PERSISTENT), &statement, nil)
        guard status == SQLITE_OK, let statement else { throw error("prepare", status) }
        statements[sql] = statement
        return statement
    }

    private func bind(_ values: [SQLValue], to statement: OpaquePointer) throws(StorageError) {
        for (offset, value) in values.enumerated() {
            let index = Int32(offset + 1)
            let status: Int32
            switch value {
            case .null: status = sqlite3_bind_null(statement, index)
            case .integer(let number): status = sqlite3_bind_int64(statement, index, number)
            case .real(let number): status = sqlite3_bind_double(statement, index, number)
            case .text(let text):
                // By byte count, not up to a NUL: a text with a NUL inside is bound whole.
                var text = text
                status = text.withUTF8 { utf8 in
                    guard let base = utf8.baseAddress, !utf8.isEmpty else {
                        return sqlite3_bind_text(statement, index, "", 0, wallet_sqlite_transient())
                    }
                    return UnsafeRawPointer(base).withMemoryRebound(to: CChar.self, capacity: utf8.count) { chars in
                        sqlite3_bind_text64(statement, index, chars, sqlite3_uint64(utf8.count), wallet_sqlite_transient(),
                                            UInt8(SQLITE_UTF8))
                    }
                }
            case .blob(let bytes):
                if bytes.isEmpty {
                    status = sqlite3_bind_zeroblob(statement, index, 0)
                } else {
                    status = bytes.withUnsafeBytes { raw in
                        sqlite3_bind_blob64(statement, index, raw.baseAddress, sqlite3_uint64(raw.count), wallet_sqlite_transient())
                    }
                }
            }
            guard status == SQLITE_OK else { throw error("bind", status) }
        }
    }

    private func column(_ statement: OpaquePointer, _ index: Int32) -> SQLValue {
        switch sqlite3_column_type(statement, index) {
        case SQLITE_INTEGER: return .integer(sqlite3_column_int64(statement, index))
        case SQLITE_FLOAT: return .real(sqlite3_column_double(statement, index))
        case SQLITE_TEXT:
            guard let text = sqlite3_column_text(statement, index) else { return .text("") }
            let count = Int(sqlite3_column_bytes(statement, index))
            return .text(String(decoding: UnsafeRawBufferPointer(start: text, count: count), as: UTF8.self))
        case SQLITE_BLOB:
            let count = Int(sqlite3_column_bytes(statement, index))
            guard count > 0, let pointer = sqlite3_column_blob(statement, index) else { return .blob([]) }
            return .blob(Array(UnsafeRawBufferPointer(start: pointer, count: count)))
        default: return .null
        }
    }

    /// Runs a query and returns every row.
    @discardableResult
    func query(_ sql: String, _ values: [SQLValue] = []) throws(StorageError) -> [[SQLValue]] {
        let statement = try statement(sql)
        defer { sqlite3_reset(statement); sqlite3_clear_bindings(statement) }
        try bind(values, to: statement)
        var rows: [[SQLValue]] = []
        let columns = sqlite3_column_count(statement)
        while true {
            let status = sqlite3_step(statement)
            if status == SQLITE_DONE { break }
            guard status == SQLITE_ROW else { throw error("step", status) }
            rows.append((0..<columns).map { column(statement, $0) })
        }
        return rows
    }

    /// Runs a statement that returns no rows; returns the number of rows changed.
    @discardableResult
    func run(_ sql: String, _ values: [SQLValue] = []) throws(StorageError) -> Int {
        try query(sql, values)
        guard let handle else { throw .closed }
        return Int(sqlite3_changes(handle))
    }

    /// Runs `body` in a transaction. Writers use `BEGIN IMMEDIATE` so that the write
    /// lock is taken up front (waiting up to the busy timeout) rather than failing
    /// half-way with SQLITE_BUSY on upgrade from a read lock.
    /// The three statements are prepared once, like every other (`sqlite3_exec` would
    /// parse them again on each transaction).
    func transaction<T>(immediate: Bool = true, _ body: () throws(StorageError) -> T) throws(StorageError) -> T {
        try run(immediate ? "BEGIN IMMEDIATE" : "BEGIN DEFERRED")
        do {
            let result = try body()
            try run("COMMIT")
            return result
        } catch {
            _ = try? run("ROLLBACK")
            throw error
        }
    }

    /// `PRAGMA user_version`: the schema version the migrations last reached.
    func userVersion() throws(StorageError) -> Int {
        Int(try query("PRAGMA user_version").first?.first?.int64 ?? 0)
    }

    /// Applies every migration above the stored `user_version`, each in its own
    /// transaction together with the version bump, so that an interrupted upgrade leaves
    /// the database at the last complete version.
    func migrate(_ migrations: [(version: Int, sql: String)], upTo target: Int? = nil) throws(StorageError) {
        let latest = migrations.map(\.version).max() ?? 0
        let goal = target ?? latest
        let current = try userVersion()
        guard current <= latest else { throw .schemaTooNew(found: current, supported: latest) }
        for migration in migrations.sorted(by: { $0.version < $1.version })
        where migration.version > current && migration.version <= goal {
            try transaction { () throws(StorageError) in
                // Read again under the write lock: another process opening the same new or
                // older database may have applied this step since the read above.
                guard try userVersion() < migration.version else { return }
                try execute(migration.sql)
                try execute("PRAGMA user_version = \(migration.version)")
            }
        }
    }
}
