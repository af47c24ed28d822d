internal import COpenSSL

/// A source of random bytes, so that callers (salts, nonces, decoys, tests) can be given
/// a deterministic source instead of the system one.
public protocol RandomSource: Sendable {
    /// `count` random bytes.
    func bytes(count: Int) throws(CryptoError) -> [UInt8]
}

/// The SDK's one secure random source: libcrypto's DRBG (`RAND_bytes`). Every default
/// `RandomSource` parameter and every internal draw (keys, nonces, salts) goes through it.
public struct SystemRandom: RandomSource {
    /// Creates the system random source.
    public init() {}

    /// `count` (0 to 2^31 - 1) cryptographically secure random bytes.
    public func bytes(count: Int) throws(CryptoError) -> [UInt8] {
        let length = try cInt(count, .randomByteCount)
        guard length > 0 else { return [] }
        var output = [UInt8](repeating: 0, count: count)
        guard RAND_bytes(&output, length) == 1 else { throw backendError(.randomGeneration) }
        return output
    }
}
