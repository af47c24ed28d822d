internal import COpenSSL

/// HMAC (RFC 2104) over SHA-2, computed with libcrypto's `EVP_MAC` "HMAC".
public enum HMAC {
    /// The HMAC of `message` under `key` with `algorithm` (output is the digest length).
    public static func authenticationCode(
        for message: [UInt8], key: SymmetricKey, algorithm: HashAlgorithm = .sha256
    ) throws(CryptoError) -> [UInt8] {
        guard let mac = FetchedAlgorithms.shared.hmac else { throw backendError(.authenticationCode) }
        guard let context = EVP_MAC_CTX_new(mac) else { throw backendError(.authenticationCode) }
        defer { EVP_MAC_CTX_free(context) }
        try withOSSLParams([.utf8("digest", algorithm.openSSLName)], for: .authenticationCode) {
            (params) throws(CryptoError) in
            let status = key.withUnsafeBytes { raw in
                EVP_MAC_init(context, raw.baseAddress?.assumingMemoryBound(to: UInt8.self), raw.count, params)
            }
            guard status == 1 else { throw backendError(.authenticationCode) }
        }
        let updated = withBytes(message) { EVP_MAC_update(context, $0, $1) }
        guard updated == 1 else { throw backendError(.authenticationCode) }
        var output = [UInt8](repeating: 0, count: algorithm.digestByteCount)
        var length = 0
        guard EVP_MAC_final(context, &output, &length, output.count) == 1, length == output.count else {
            throw backendError(.authenticationCode)
        }
        return output
    }

    /// Whether `code` is the HMAC of `message` under `key`, compared in constant time.
    /// A code of the wrong length is simply not valid.
    public static func isValid(
        _ code: [UInt8], for message: [UInt8], key: SymmetricKey, algorithm: HashAlgorithm = .sha256
    ) throws(CryptoError) -> Bool {
        let expected = try authenticationCode(for: message, key: key, algorithm: algorithm)
        return ConstantTime.equals(expected, code)
    }
}
