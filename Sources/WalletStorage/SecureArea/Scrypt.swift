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

/// scrypt through OpenSSL's `EVP_KDF` ("SCRYPT"). Lives here until WalletCrypto offers
/// a `Scrypt` of its own; it calls libcrypto only, no primitive is written by hand.
enum Scrypt {
    /// Derives `length` bytes from `password` and `salt`.
    static func deriveKey(password: [UInt8], salt: [UInt8], parameters: ScryptParameters, length: Int = 32)
        throws(StorageError) -> [UInt8]
    {
        guard let kdf = EVP_KDF_fetch(nil, "SCRYPT", nil) else { throw opensslFailure("EVP_KDF_fetch(SCRYPT)") }
        defer { EVP_KDF_free(kdf) }
        guard let context = EVP_KDF_CTX_new(kdf) else { throw opensslFailure("EVP_KDF_CTX_new") }
        defer { EVP_KDF_CTX_free(context) }
        var n = parameters.n, r = parameters.r, p = parameters.p
        // Room for the working memory plus OpenSSL's bookkeeping (its default cap is 32 MiB).
        var maxMemory = UInt64(128) * n * UInt64(r) * UInt64(p) + (16 << 20)
        var passwordCopy = password.isEmpty ? [0] : password
        defer { wipe(&passwordCopy) }
        var saltCopy = salt.isEmpty ? [0] : salt
        var output = [UInt8](repeating: 0, count: length)
        let status: Int32 = passwordCopy.withUnsafeMutableBytes { passwordBytes in
            saltCopy.withUnsafeMutableBytes { saltBytes in
                var params: [OSSL_PARAM] = [
                    OSSL_PARAM_construct_octet_string("pass", passwordBytes.baseAddress, password.count),
                    OSSL_PARAM_construct_octet_string("salt", saltBytes.baseAddress, salt.count),
                    OSSL_PARAM_construct_uint64("n", &n),
                    OSSL_PARAM_construct_uint32("r", &r),
                    OSSL_PARAM_construct_uint32("p", &p),
                    OSSL_PARAM_construct_uint64("maxmem_bytes", &maxMemory),
                    OSSL_PARAM_construct_end(),
                ]
                return params.withUnsafeMutableBufferPointer { buffer in
                    EVP_KDF_derive(context, &output, length, buffer.baseAddress)
                }
            }
        }
        guard status == 1 else {
            wipe(&output)
            throw opensslFailure("EVP_KDF_derive(SCRYPT)")
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
