import COpenSSL

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
        guard n > 1, n & (n - 1) == 0, r > 0, p > 0 else {
            throw .crypto(.invalidKey("scrypt parameters must have n a power of two > 1 and r, p >= 1"))
        }
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

/// scrypt through OpenSSL (`EVP_PBE_scrypt`, backed by the "SCRYPT" `EVP_KDF`). Lives here until WalletCrypto offers
/// a `Scrypt` of its own; it calls libcrypto only, no primitive is written by hand.
enum Scrypt {
    /// Derives `length` bytes from `password` and `salt`.
    static func deriveKey(password: [UInt8], salt: [UInt8], parameters: ScryptParameters, length: Int = 32)
        throws(StorageError) -> [UInt8]
    {
        // EVP_PBE_scrypt is OpenSSL 3's one-call front end to the "SCRYPT" EVP_KDF.
        // Room for the working memory plus OpenSSL's bookkeeping (its default cap is 32 MiB).
        let maxMemory = UInt64(128) * parameters.n * UInt64(parameters.r) * UInt64(parameters.p) + (16 << 20)
        var output = [UInt8](repeating: 0, count: length)
        let status = password.withUnsafeBufferPointer { passwordBytes in
            salt.withUnsafeBufferPointer { saltBytes in
                passwordBytes.withMemoryRebound(to: CChar.self) { passwordChars in
                    EVP_PBE_scrypt(passwordChars.baseAddress, passwordBytes.count, saltBytes.baseAddress, saltBytes.count,
                                   parameters.n, UInt64(parameters.r), UInt64(parameters.p), maxMemory, &output, length)
                }
            }
        }
        guard status == 1 else {
            wipe(&output)
            throw opensslFailure("EVP_PBE_scrypt")
        }
        return output
    }

    private static func opensslFailure(_ function: String) -> StorageError {
        let code = wallet_ERR_get_error()
        var text = [CChar](repeating: 0, count: 256)
        if code != 0 { ERR_error_string_n(code, &text, text.count) }
        ERR_clear_error()
        let reason = code == 0 ? "no error queued" : String(decoding: text.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
        return .crypto(.openSSL(function: function, reason: reason))
    }
}
