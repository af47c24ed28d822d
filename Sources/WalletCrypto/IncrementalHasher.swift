internal import COpenSSL

/// A hash computed over data fed in pieces (`EVP_MD_CTX`).
///
/// The hasher is non-copyable: it owns its libcrypto context, which is freed when the
/// value goes away (after `finalize()` or when dropped).
public struct IncrementalHasher: ~Copyable, @unchecked Sendable {
    // @unchecked: the context is owned exclusively by this non-copyable value and is
    // only touched through `mutating`/`consuming` methods, so no two threads share it.
    private let context: OpaquePointer
    /// The hash function being computed.
    public let algorithm: HashAlgorithm

    /// Starts a new hash computation with `algorithm`.
    public init(algorithm: HashAlgorithm) throws(CryptoError) {
        guard let context = EVP_MD_CTX_new() else { throw backendError(.hashing) }
        guard EVP_DigestInit_ex(context, algorithm.evpMD, nil) == 1 else {
            EVP_MD_CTX_free(context)
            throw backendError(.hashing)
        }
        self.context = context
        self.algorithm = algorithm
    }

    deinit { EVP_MD_CTX_free(context) }

    /// Feeds `data` into the hash.
    public mutating func update(_ data: some Sequence<UInt8>) throws(CryptoError) {
        let bytes = Array(data)
        guard !bytes.isEmpty else { return }
        let status = withBytes(bytes) { EVP_DigestUpdate(context, $0, $1) }
        guard status == 1 else { throw backendError(.hashing) }
    }

    /// Finishes the computation and returns the digest; the hasher cannot be used afterwards.
    public consuming func finalize() throws(CryptoError) -> [UInt8] {
        var output = [UInt8](repeating: 0, count: algorithm.digestByteCount)
        var length: UInt32 = 0
        guard EVP_DigestFinal_ex(context, &output, &length) == 1, Int(length) == output.count else {
            throw backendError(.hashing)
        }
        return output
    }
}
