#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import Foundation
import WalletRuntime

/// The advisory lock (`flock(2)`) every wallet holds on its storage folder, through the
/// folder's ``fileName`` file, for as long as it has the folder open.
///
/// Several wallets may share a folder (an app and its extension, two command-line runs):
/// each holds the lock shared. The repairs run at opening delete keys (a deletion a crash
/// interrupted, a spent one-time key, a key no credential names), and another wallet's
/// issuance or presentation may be using such a key at that moment; so they run only
/// under ``whileAlone(_:)``, which holds the lock exclusively, that is when no other
/// wallet has the folder open. A later opening that finds the folder free repairs then.
public final class StorageFolderLock: Sendable {
    /// The lock file's name in the storage folder.
    public static let fileName = "wallet.lock"

    /// The open lock file, or nil once released.
    private let descriptor: LockedBox<Int32?>
    /// The lock file's path.
    public let path: String

    /// Opens (creating it owner-only when absent) the lock file of `folder`. No lock is
    /// held until ``whileAlone(_:)``.
    /// - Throws: `lockFile` when the file cannot be opened.
    public init(folder: URL) throws(StorageError) {
        path = folder.appendingPathComponent(Self.fileName).path
        let opened = open(path, O_RDWR | O_CREAT | O_NOFOLLOW | O_CLOEXEC, 0o600)
        guard opened >= 0 else { throw .lockFile(path: path, errno: errno) }
        descriptor = LockedBox(opened)
    }

    deinit { release() }

    /// Runs `body` if no other wallet has the folder open (the lock taken exclusively),
    /// and returns its result; returns nil without running it otherwise. Either way the
    /// lock is then held shared, until ``release()``: later openings see this wallet.
    /// - Throws: what `body` throws (the lock is held shared all the same), or
    ///   `lockFile` when the lock cannot be taken at all.
    public func whileAlone<T>(_ body: () async throws(StorageError) -> T) async throws(StorageError) -> T? {
        guard let file = descriptor.withLock({ $0 }) else { throw .lockFile(path: path, errno: EBADF) }
        guard Self.lock(file, LOCK_EX | LOCK_NB) == 0 else {
            let reason = errno
            guard reason == EWOULDBLOCK else { throw .lockFile(path: path, errno: reason) }
            // Another wallet has the folder: share it. Waits only while another opening
            // repairs (it holds the lock exclusively for that long).
            try await share(file)
            return nil
        }
        let result: Result<T, StorageError>
        do { result = .success(try await body()) } catch { result = .failure(error) }
        // flock(2) converts an exclusive hold to a shared one in place (not atomically:
        // another opening may repair in between, which is as safe as before this one).
        try await share(file)
        return try result.get()
    }

    /// Takes the lock shared: at once when it can, else waiting on a thread of its own
    /// (never a thread of a pool, which the opening holding the lock exclusively may
    /// need in order to finish and let go).
    private func share(_ file: Int32) async throws(StorageError) {
        if Self.lock(file, LOCK_SH | LOCK_NB) == 0 { return }
        guard errno == EWOULDBLOCK else { throw .lockFile(path: path, errno: errno) }
        let status: Int32 = await withCheckedContinuation { continuation in
            Thread {
                continuation.resume(returning: Self.lock(file, LOCK_SH) == 0 ? 0 : errno)
            }.start()
        }
        guard status == 0 else { throw .lockFile(path: path, errno: status) }
    }

    /// Releases the lock and closes the file; the wallet must no longer use the folder.
    /// Idempotent.
    public func release() {
        descriptor.withLock { file in
            guard let open = file else { return }
            close(open)
            file = nil
        }
    }

    /// `flock`, retried when a signal interrupts it.
    private static func lock(_ file: Int32, _ operation: Int32) -> Int32 {
        while true {
            let result = flock(file, operation)
            if result == 0 || errno != EINTR { return result }
        }
    }
}
