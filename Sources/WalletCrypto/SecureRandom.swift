import COpenSSL

/// Cryptographically secure random bytes from libcrypto's DRBG (`RAND_bytes`).
public enum SecureRandom {
    /// `count` random bytes; `count` must be between 0 and `Int32.max`.
    public static func bytes(count: Int) throws -> [UInt8] {
        let length = try cInt(count, "random byte count")
        guard length > 0 else { return [] }
        var output = [UInt8](repeating: 0, count: count)
        guard RAND_bytes(&output, length) == 1 else { throw openSSLError("RAND_bytes") }
        return output
    }
}

/// A source of random bytes, so that callers (nonce generation, tests) can be given a
/// deterministic source instead of the system one.
public protocol RandomSource: Sendable {
    /// `count` random bytes.
    func bytes(count: Int) throws -> [UInt8]
}

/// The default `RandomSource`: libcrypto's DRBG through `SecureRandom`.
public struct SystemRandom: RandomSource {
    /// Creates the system random source.
    public init() {}

    /// `count` bytes from `SecureRandom.bytes(count:)`.
    public func bytes(count: Int) throws -> [UInt8] { try SecureRandom.bytes(count: count) }
}
