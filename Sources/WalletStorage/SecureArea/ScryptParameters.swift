import WalletCrypto

/// Parameters of scrypt (RFC 7914): cost `n` (a power of two), block size `r`,
/// parallelism `p`. Memory use is about 128 · n · r bytes.
public struct ScryptParameters: Sendable, Equatable {
    /// The CPU/memory cost, a power of two greater than 1.
    public let n: UInt64
    /// The block size.
    public let r: UInt32
    /// The parallelisation parameter.
    public let p: UInt32

    /// Parameters as given; `n` must be a power of two greater than 1 and r, p at least 1.
    public init(n: UInt64, r: UInt32, p: UInt32) throws(StorageError) {
        guard n > 1, n & (n - 1) == 0 else { throw .crypto(.invalidParameter(.scryptCost)) }
        guard r > 0, p > 0 else { throw .crypto(.invalidParameter(.scryptBlockSizeOrParallelism)) }
        self.n = n
        self.r = r
        self.p = p
    }

    private init(unchecked n: UInt64, r: UInt32, p: UInt32) {
        self.n = n
        self.r = r
        self.p = p
    }

    /// n = 2^17, r = 8, p = 1 (128 MiB): the interactive-login strength OWASP recommends
    /// for scrypt. Used to unlock a wallet once per launch.
    public static let interactive = ScryptParameters(unchecked: 1 << 17, r: 8, p: 1)
    /// n = 2^15, r = 8, p = 1 (32 MiB): for per-key passphrases entered at each use.
    public static let perKey = ScryptParameters(unchecked: 1 << 15, r: 8, p: 1)
}

extension ScryptParameters {
    /// Derives `length` bytes from `password` and `salt` with these parameters
    /// (WalletCrypto's ``Scrypt``).
    func deriveKey(password: [UInt8], salt: [UInt8], length: Int = 32) throws(StorageError) -> [UInt8] {
        do {
            return try Scrypt.deriveKey(password: password, salt: salt, cost: n, blockSize: r, parallelism: p,
                                        outputByteCount: length)
        } catch {
            throw .crypto(error)
        }
    }
}
