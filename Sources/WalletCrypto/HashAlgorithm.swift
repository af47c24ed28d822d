internal import COpenSSL

/// A SHA-2 hash function, computed by libcrypto's EVP digest API.
public enum HashAlgorithm: String, Sendable, CaseIterable {
    /// SHA-256 (32-byte digest).
    case sha256 = "SHA-256"
    /// SHA-384 (48-byte digest).
    case sha384 = "SHA-384"
    /// SHA-512 (64-byte digest).
    case sha512 = "SHA-512"

    /// The length of the digest in bytes.
    public var digestByteCount: Int {
        switch self {
        case .sha256: 32
        case .sha384: 48
        case .sha512: 64
        }
    }

    /// The OpenSSL algorithm name, used in `OSSL_PARAM` digest parameters.
    var openSSLName: String {
        switch self {
        case .sha256: "SHA256"
        case .sha384: "SHA384"
        case .sha512: "SHA512"
        }
    }

    /// The libcrypto `EVP_MD`, fetched once per process and never freed (see `FetchedAlgorithms`).
    var evpMD: OpaquePointer? {
        switch self {
        case .sha256: FetchedAlgorithms.shared.sha256
        case .sha384: FetchedAlgorithms.shared.sha384
        case .sha512: FetchedAlgorithms.shared.sha512
        }
    }

    /// The digest of `data`.
    ///
    /// SHA-2 cannot fail for any input; libcrypto only reports failure when it cannot
    /// allocate memory, which this function treats as fatal (no input value reaches that path).
    public func digest(_ data: some Sequence<UInt8>) -> [UInt8] {
        // Contiguous bytes (an array, a slice of one) are hashed where they lie; a slice of
        // a decoded document (an mdoc item with its portrait) is not copied first.
        if let output = data.withContiguousStorageIfAvailable({ digest(contiguous: $0) }) { return output }
        return Array(data).withUnsafeBufferPointer { digest(contiguous: $0) }
    }

    private func digest(contiguous buffer: UnsafeBufferPointer<UInt8>) -> [UInt8] {
        var output = [UInt8](repeating: 0, count: digestByteCount)
        var length: UInt32 = 0
        let status = withBytes(buffer) { pointer, count in
            EVP_Digest(pointer, count, &output, &length, evpMD, nil)
        }
        guard status == 1, Int(length) == digestByteCount else {
            fatalError("libcrypto EVP_Digest failed (out of memory): \(openSSLReason())")
        }
        return output
    }
}

/// SHA-256 as a namespace: `SHA256.digest(bytes)`.
public enum SHA256 {
    /// The 32-byte SHA-256 digest of `data`.
    public static func digest(_ data: some Sequence<UInt8>) -> [UInt8] { HashAlgorithm.sha256.digest(data) }
}

/// SHA-384 as a namespace: `SHA384.digest(bytes)`.
public enum SHA384 {
    /// The 48-byte SHA-384 digest of `data`.
    public static func digest(_ data: some Sequence<UInt8>) -> [UInt8] { HashAlgorithm.sha384.digest(data) }
}

/// SHA-512 as a namespace: `SHA512.digest(bytes)`.
public enum SHA512 {
    /// The 64-byte SHA-512 digest of `data`.
    public static func digest(_ data: some Sequence<UInt8>) -> [UInt8] { HashAlgorithm.sha512.digest(data) }
}
