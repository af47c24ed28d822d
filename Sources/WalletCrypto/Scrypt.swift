internal import COpenSSL

/// scrypt (RFC 7914), the memory-hard password KDF, through OpenSSL's
/// `EVP_PBE_scrypt` (OpenSSL 3's front end to the "SCRYPT" `EVP_KDF`). Used to
/// stretch passphrases into wrapping keys.
public enum Scrypt {
    /// Derives `outputByteCount` bytes from `password` and `salt`.
    /// - Parameters:
    ///   - cost: N, a power of two greater than 1; memory use is about 128 · N · r bytes.
    ///   - blockSize: r, at least 1.
    ///   - parallelism: p, at least 1.
    /// - Throws: `CryptoError.invalidParameter` for parameters outside those ranges,
    ///   `CryptoError.backendFailure` when the backend refuses (e.g. memory).
    public static func deriveKey(password: [UInt8], salt: [UInt8], cost: UInt64, blockSize: UInt32,
                                 parallelism: UInt32, outputByteCount: Int = 32) throws(CryptoError) -> [UInt8] {
        guard cost > 1, cost & (cost - 1) == 0 else { throw .invalidParameter(.scryptCost) }
        guard blockSize > 0, parallelism > 0 else { throw .invalidParameter(.scryptBlockSizeOrParallelism) }
        guard outputByteCount > 0 else { throw .invalidLength(.scryptOutput, actual: outputByteCount) }
        // Room for the working memory plus OpenSSL's bookkeeping (its default cap is 32 MiB).
        let (memory, overflow) = (UInt64(128) * UInt64(blockSize) * UInt64(parallelism))
            .multipliedReportingOverflow(by: cost)
        guard !overflow else { throw .invalidParameter(.scryptMemory) }
        var output = [UInt8](repeating: 0, count: outputByteCount)
        let status = password.withUnsafeBufferPointer { passwordBytes in
            salt.withUnsafeBufferPointer { saltBytes in
                passwordBytes.withMemoryRebound(to: CChar.self) { passwordChars in
                    EVP_PBE_scrypt(passwordChars.baseAddress, passwordBytes.count, saltBytes.baseAddress, saltBytes.count,
                                   cost, UInt64(blockSize), UInt64(parallelism), memory &+ (16 << 20),
                                   &output, outputByteCount)
                }
            }
        }
        guard status == 1 else {
            wipe(&output)
            throw backendError(.keyDerivation)
        }
        return output
    }
}
