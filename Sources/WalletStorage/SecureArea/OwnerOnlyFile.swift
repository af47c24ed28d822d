#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import Foundation
import WalletCrypto
import WalletRuntime
import WalletEncoding

/// Small secret (or secret-adjacent) files that only their owner may read: the
/// wrapping-key file and the passphrase salt file.
enum OwnerOnlyFile {
    /// Reads the file at `url` (exactly `count` bytes, a regular file owned by this user,
    /// no group/other permission bits), or creates it with `make()` when absent.
    ///
    /// Creation is atomic: the bytes go to a temporary file opened with
    /// `O_CREAT | O_EXCL | O_NOFOLLOW` and mode 0600, are fsynced, and are then
    /// published with `link(2)`, which fails rather than replace a file another process
    /// published first (in which case that file is read instead).
    static func readOrCreate(_ url: URL, count: Int, make: () throws(StorageError) -> [UInt8])
        throws(StorageError) -> SecretBytes
    {
        if var existing = try read(url, count: count) { return SecretBytes(consuming: &existing) }
        var bytes = try make()
        defer { wipe(&bytes) }
        let directory = url.deletingLastPathComponent().path
        let suffix = Hex.encode((try? SystemRandomBytes.bytes(8)) ?? [UInt8](repeating: 0, count: 8))
        let temporary = directory + "/." + url.lastPathComponent + ".tmp-" + suffix
        let descriptor = open(temporary, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0o600)
        guard descriptor >= 0 else { throw failure(url, .cannotCreate(errno: errno)) }
        var written = 0
        while written < bytes.count {
            let result = bytes[written...].withUnsafeBytes { write(descriptor, $0.baseAddress, $0.count) }
            if result < 0 {
                if errno == EINTR { continue }
                let code = errno
                close(descriptor)
                unlink(temporary)
                throw failure(url, .cannotWrite(errno: code))
            }
            written += result
        }
        guard fsync(descriptor) == 0 else {
            let code = errno
            close(descriptor)
            unlink(temporary)
            throw failure(url, .cannotSync(errno: code))
        }
        close(descriptor)
        let linked = link(temporary, url.path)
        let linkErrno = errno
        unlink(temporary)
        if linked != 0 {
            guard linkErrno == EEXIST, var existing = try read(url, count: count) else {
                throw failure(url, .cannotPublish(errno: linkErrno))
            }
            return SecretBytes(consuming: &existing)
        }
        return SecretBytes(consuming: &bytes)
    }

    /// The file's bytes, nil when it does not exist, or an error when it is unsafe.
    private static func read(_ url: URL, count: Int) throws(StorageError) -> [UInt8]? {
        let descriptor = open(url.path, O_RDONLY | O_NOFOLLOW | O_CLOEXEC)
        if descriptor < 0 {
            if errno == ENOENT { return nil }
            throw failure(url, .cannotOpen(errno: errno))
        }
        defer { close(descriptor) }
        var info = stat()
        guard fstat(descriptor, &info) == 0 else { throw failure(url, .cannotStat(errno: errno)) }
        guard (info.st_mode & S_IFMT) == S_IFREG else { throw failure(url, .notRegularFile) }
        guard info.st_uid == geteuid() else { throw failure(url, .ownedByAnotherUser) }
        guard info.st_mode & 0o077 == 0 else { throw failure(url, .accessibleByOthers) }
        guard info.st_size == off_t(count) else { throw failure(url, .wrongSize(expected: count, actual: Int(info.st_size))) }
        var bytes = [UInt8](repeating: 0, count: count)
        var total = 0
        while total < count {
            let result = bytes[total...].withUnsafeMutableBytes { readBytes(descriptor, $0.baseAddress, $0.count) }
            if result < 0 {
                if errno == EINTR { continue }
                let code = errno
                wipe(&bytes)
                throw failure(url, .cannotRead(errno: code))
            }
            if result == 0 { break }
            total += result
        }
        guard total == count else {
            wipe(&bytes)
            throw failure(url, .shortRead)
        }
        return bytes
    }

    private static func failure(_ url: URL, _ problem: KeyFileProblem) -> StorageError {
        .keyFile(path: url.path, problem: problem)
    }
}

/// Random bytes for key files, file names and salts from WalletCrypto's ``SystemRandom``.
enum SystemRandomBytes {
    static func bytes(_ count: Int) throws(StorageError) -> [UInt8] {
        try StorageError.wrap { () throws(CryptoError) in try SystemRandom().bytes(count: count) }
    }
}

/// `read(2)` by a name that the `read(_:count:)` method above does not shadow (the C
/// function lives in Glibc on Linux and in Darwin on Apple platforms).
private func readBytes(_ descriptor: Int32, _ buffer: UnsafeMutableRawPointer?, _ count: Int) -> Int {
    read(descriptor, buffer, count)
}
