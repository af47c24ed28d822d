import COpenSSL

/// Key material held in a manually allocated buffer that is wiped with
/// `OPENSSL_cleanse` when the last reference goes away. Swift arrays may be copied
/// or moved by the runtime without clearing the old storage; this buffer is not.
/// Immutable after creation, hence safe to share between tasks.
final class SecretBytes: @unchecked Sendable {
    private let buffer: UnsafeMutableBufferPointer<UInt8>

    /// Copies `bytes` into the secret buffer and wipes `bytes`.
    init(consuming bytes: inout [UInt8]) {
        buffer = .allocate(capacity: max(bytes.count, 1))
        buffer.initialize(repeating: 0)
        for index in bytes.indices { buffer[index] = bytes[index] }
        count = bytes.count
        wipe(&bytes)
    }

    /// The number of secret bytes.
    let count: Int

    deinit {
        wallet_OPENSSL_cleanse(buffer.baseAddress, buffer.count)
        buffer.deallocate()
    }

    /// Calls `body` with a temporary array copy that is wiped when `body` returns.
    func withBytes<T, E: Error>(_ body: ([UInt8]) throws(E) -> T) throws(E) -> T {
        var copy = Array(buffer.prefix(count))
        defer { wipe(&copy) }
        return try body(copy)
    }
}

/// Overwrites an array's storage with zeros (through `OPENSSL_cleanse`, which the
/// optimiser may not drop) and empties it.
func wipe(_ bytes: inout [UInt8]) {
    bytes.withUnsafeMutableBytes { raw in
        if let base = raw.baseAddress { wallet_OPENSSL_cleanse(base, raw.count) }
    }
    bytes.removeAll()
}
