internal import COpenSSL

/// HKDF (RFC 5869) over SHA-2, computed with libcrypto's `EVP_KDF` "HKDF".
public enum HKDF {
    /// Extract-then-expand: `outputByteCount` bytes of key material derived from
    /// `inputKeyMaterial`. An empty `salt` means the RFC default (HashLen zero bytes).
    /// `outputByteCount` must be in 1...255 × digest length.
    public static func deriveKey(
        inputKeyMaterial: [UInt8], salt: [UInt8] = [], info: [UInt8] = [],
        outputByteCount: Int, hash: HashAlgorithm = .sha256
    ) throws(CryptoError) -> [UInt8] {
        try checkOutputLength(outputByteCount, hash: hash)
        var items: [OSSLParam] = [
            .utf8("mode", "EXTRACT_AND_EXPAND"), .utf8("digest", hash.openSSLName),
            .octets("key", inputKeyMaterial),
        ]
        if !salt.isEmpty { items.append(.octets("salt", salt)) }
        if !info.isEmpty { items.append(.octets("info", info)) }
        return try derive(items, count: outputByteCount)
    }

    /// Extract-then-expand from a secret, into a ``SymmetricKey``: no copy of the input or
    /// the output outlives the call unwiped.
    static func deriveKey(
        inputKeyMaterial: SecretBytes, salt: [UInt8], info: [UInt8], outputByteCount: Int, hash: HashAlgorithm
    ) throws(CryptoError) -> SymmetricKey {
        var output = try inputKeyMaterial.withBytes { (ikm) throws(CryptoError) -> [UInt8] in
            try deriveKey(inputKeyMaterial: ikm, salt: salt, info: info, outputByteCount: outputByteCount, hash: hash)
        }
        return SymmetricKey(consuming: &output)
    }

    /// The extract step alone: the pseudorandom key PRK = HMAC-Hash(salt, IKM), digest-length bytes.
    public static func extract(
        inputKeyMaterial: [UInt8], salt: [UInt8] = [], hash: HashAlgorithm = .sha256
    ) throws(CryptoError) -> [UInt8] {
        var items: [OSSLParam] = [
            .utf8("mode", "EXTRACT_ONLY"), .utf8("digest", hash.openSSLName), .octets("key", inputKeyMaterial),
        ]
        if !salt.isEmpty { items.append(.octets("salt", salt)) }
        return try derive(items, count: hash.digestByteCount)
    }

    /// The expand step alone: `outputByteCount` bytes from a pseudorandom key and `info`.
    /// The PRK must be at least one digest long (RFC 5869 §2.3).
    public static func expand(
        pseudoRandomKey: [UInt8], info: [UInt8] = [], outputByteCount: Int, hash: HashAlgorithm = .sha256
    ) throws(CryptoError) -> [UInt8] {
        try checkOutputLength(outputByteCount, hash: hash)
        guard pseudoRandomKey.count >= hash.digestByteCount else {
            throw .invalidLength(.hkdfPseudoRandomKey, actual: pseudoRandomKey.count)
        }
        var items: [OSSLParam] = [
            .utf8("mode", "EXPAND_ONLY"), .utf8("digest", hash.openSSLName), .octets("key", pseudoRandomKey),
        ]
        if !info.isEmpty { items.append(.octets("info", info)) }
        return try derive(items, count: outputByteCount)
    }

    private static func checkOutputLength(_ count: Int, hash: HashAlgorithm) throws(CryptoError) {
        guard count >= 1, count <= 255 * hash.digestByteCount else { throw .invalidLength(.hkdfOutput, actual: count) }
    }

    private static func derive(_ items: [OSSLParam], count: Int) throws(CryptoError) -> [UInt8] {
        guard let kdf = FetchedAlgorithms.shared.hkdf else { throw backendError(.keyDerivation) }
        guard let context = EVP_KDF_CTX_new(kdf) else { throw backendError(.keyDerivation) }
        defer { EVP_KDF_CTX_free(context) }
        var output = [UInt8](repeating: 0, count: count)
        try withOSSLParams(items, for: .keyDerivation) { (params) throws(CryptoError) in
            guard EVP_KDF_derive(context, &output, count, params) == 1 else {
                wipe(&output)
                throw backendError(.keyDerivation)
            }
        }
        return output
    }
}
