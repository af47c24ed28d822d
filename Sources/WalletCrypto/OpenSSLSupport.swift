internal import COpenSSL

/// Owns one `EVP_PKEY*` and frees it when the last reference goes away.
/// Keys built on it are immutable after creation, hence `@unchecked Sendable`:
/// OpenSSL 3 allows concurrent use of a const EVP_PKEY from several threads.
final class EVPKey: @unchecked Sendable {
    let pointer: OpaquePointer

    init(taking pointer: OpaquePointer) { self.pointer = pointer }

    deinit { EVP_PKEY_free(pointer) }
}

/// The text of the first error on OpenSSL's thread-local queue (then cleared): a
/// diagnostic for the message of a fatal out-of-memory trap, never part of an error value.
func openSSLReason() -> String {
    let code = wallet_ERR_get_error()
    ERR_clear_error()
    guard code != 0 else { return "unknown error" }
    var buffer = [CChar](repeating: 0, count: 256)
    ERR_error_string_n(code, &buffer, buffer.count)
    return String(decoding: buffer.prefix(while: { $0 != 0 }).map { UInt8(bitPattern: $0) }, as: UTF8.self)
}

/// A `CryptoError.backendFailure` for a failed libcrypto call during `operation`,
/// draining OpenSSL's error queue so that a later call does not report a stale error.
func backendError(_ operation: CryptoOperation) -> CryptoError {
    ERR_clear_error()
    return .backendFailure(operation)
}

// MARK: - Transitional spellings for the certificate code
//
// X509*.swift and CertificateBuilder.swift (being reworked for trust policies on another
// branch) still build their errors from text. These map that text onto the structured
// cases; the text itself is dropped, so no libcrypto function name reaches a public error.
// They go once those files construct the structured cases directly.

/// The error for a failed libcrypto call in the certificate code.
func openSSLError(_ function: String) -> CryptoError { backendError(.certificateProcessing) }

extension CryptoError {
    /// A certificate, Name or PEM CERTIFICATE block that does not parse.
    static func malformedEncoding(_ detail: String) -> CryptoError { .malformedEncoding(.certificate) }
    /// A certificate's key that is not a usable key.
    static func invalidKey(_ detail: String) -> CryptoError { .invalidKey(.malformed) }
    /// A certificate's key of a type the SDK does not implement.
    static func unsupportedAlgorithm(_ detail: String) -> CryptoError { .unsupportedKey(expected: .ecOrEd25519) }
}

// MARK: - Buffers

/// Calls `body` with a pointer to the bytes of `bytes`, never null (an empty array
/// yields a pointer to a dummy byte and a count of 0).
func withBytes<R, E: Error>(_ bytes: [UInt8], _ body: (UnsafePointer<UInt8>, Int) throws(E) -> R) throws(E) -> R {
    try bytes.withUnsafeBufferPointer { (buffer) throws(E) -> R in try withBytes(buffer, body) }
}

/// The same for bytes already in a buffer (a slice's, a string's UTF-8).
func withBytes<R, E: Error>(_ buffer: UnsafeBufferPointer<UInt8>, _ body: (UnsafePointer<UInt8>, Int) throws(E) -> R) throws(E) -> R {
    if let base = buffer.baseAddress, buffer.count > 0 { return try body(base, buffer.count) }
    let dummy: UInt8 = 0
    return try withUnsafePointer(to: dummy) { (pointer) throws(E) -> R in try body(pointer, 0) }
}

/// `count` as a C `int`, or a typed error naming `input` when it is too large for libcrypto.
func cInt(_ count: Int, _ input: CryptoInput) throws(CryptoError) -> Int32 {
    guard count >= 0, count <= Int(Int32.max) else { throw .invalidLength(input, actual: count) }
    return Int32(count)
}

// MARK: - OSSL_PARAM

/// One entry of an `OSSL_PARAM` array built by `withOSSLParams`.
enum OSSLParam {
    /// A UTF-8 string parameter.
    case utf8(String, String)
    /// An octet-string parameter (may be key material; it is cleansed after use).
    case octets(String, [UInt8])
    /// An unsigned big-endian integer parameter (passed as a BIGNUM; cleansed after use).
    case unsignedInteger(String, [UInt8])
}

/// Builds an `OSSL_PARAM` array from `items` with `OSSL_PARAM_BLD`, calls `body` with it,
/// then cleanses every copy of the values and frees everything on every path. A failure
/// to build the array is a backend failure of `operation`.
func withOSSLParams<R>(
    _ items: [OSSLParam], for operation: CryptoOperation,
    _ body: (UnsafeMutablePointer<OSSL_PARAM>) throws(CryptoError) -> R
) throws(CryptoError) -> R {
    guard let builder = OSSL_PARAM_BLD_new() else { throw backendError(operation) }
    defer { OSSL_PARAM_BLD_free(builder) }
    // OSSL_PARAM_BLD keeps pointers to keys and values until OSSL_PARAM_BLD_to_param, so
    // every one of them is copied into memory owned here and released after that call.
    var allocations: [(UnsafeMutableRawPointer, Int)] = []
    var bignums: [OpaquePointer] = []
    defer {
        for (pointer, size) in allocations {
            wallet_OPENSSL_cleanse(pointer, size)
            pointer.deallocate()
        }
        for bignum in bignums { BN_clear_free(bignum) }
    }
    func copyCString(_ text: String) -> UnsafeMutablePointer<CChar> {
        let utf8 = Array(text.utf8CString)
        let pointer = UnsafeMutablePointer<CChar>.allocate(capacity: utf8.count)
        pointer.initialize(from: utf8, count: utf8.count)
        allocations.append((UnsafeMutableRawPointer(pointer), utf8.count))
        return pointer
    }
    func copyBytes(_ bytes: [UInt8]) -> UnsafeMutablePointer<UInt8> {
        let pointer = UnsafeMutablePointer<UInt8>.allocate(capacity: max(bytes.count, 1))
        pointer.initialize(repeating: 0, count: max(bytes.count, 1))
        if !bytes.isEmpty { pointer.update(from: bytes, count: bytes.count) }
        allocations.append((UnsafeMutableRawPointer(pointer), max(bytes.count, 1)))
        return pointer
    }
    for item in items {
        switch item {
        case let .utf8(key, value):
            guard OSSL_PARAM_BLD_push_utf8_string(builder, copyCString(key), copyCString(value), 0) == 1 else {
                throw backendError(operation)
            }
        case let .octets(key, value):
            guard OSSL_PARAM_BLD_push_octet_string(builder, copyCString(key), copyBytes(value), value.count) == 1 else {
                throw backendError(operation)
            }
        case let .unsignedInteger(key, value):
            let length = try cInt(value.count, .message)
            guard let bignum = BN_secure_new() else { throw backendError(operation) }
            bignums.append(bignum)
            guard withBytes(value, { pointer, _ in BN_bin2bn(pointer, length, bignum) }) != nil else {
                throw backendError(operation)
            }
            guard OSSL_PARAM_BLD_push_BN(builder, copyCString(key), bignum) == 1 else { throw backendError(operation) }
        }
    }
    guard let params = OSSL_PARAM_BLD_to_param(builder) else { throw backendError(operation) }
    defer {
        var cursor = params
        while cursor.pointee.key != nil {
            if let data = cursor.pointee.data, cursor.pointee.data_size > 0 {
                wallet_OPENSSL_cleanse(data, cursor.pointee.data_size)
            }
            cursor += 1
        }
        OSSL_PARAM_free(params)
    }
    return try body(params)
}

// MARK: - EVP_PKEY helpers

extension EVPKey {
    /// Whether the key is of the given OpenSSL key type ("EC", "ED25519").
    func isA(_ type: String) -> Bool { EVP_PKEY_is_a(pointer, type) == 1 }

    /// A UTF-8 string parameter of the key (such as the EC group name), if present.
    func utf8Parameter(_ name: String) -> String? {
        var buffer = [CChar](repeating: 0, count: 80)
        var length = 0
        guard EVP_PKEY_get_utf8_string_param(pointer, name, &buffer, buffer.count, &length) == 1 else {
            ERR_clear_error()
            return nil
        }
        return String(decoding: buffer.prefix(min(length, buffer.count)).map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }

    /// An unsigned integer parameter of the key as `width` big-endian bytes (left-padded).
    func integerParameter(_ name: String, width: Int) throws(CryptoError) -> [UInt8] {
        var bignum: OpaquePointer? = nil
        guard EVP_PKEY_get_bn_param(pointer, name, &bignum) == 1, let bignum else { throw backendError(.keyExport) }
        defer { BN_clear_free(bignum) }
        // A coordinate or scalar wider than the curve's field cannot come from a valid key.
        guard (Int(BN_num_bits(bignum)) + 7) / 8 <= width else { throw .invalidKey(.malformed) }
        var output = [UInt8](repeating: 0, count: width)
        guard BN_bn2binpad(bignum, &output, Int32(width)) == Int32(width) else {
            wipe(&output)
            throw backendError(.keyExport)
        }
        return output
    }

    /// An octet-string parameter of the key (such as an EC key's `encoded-pub-key`), at most
    /// `maxLength` bytes.
    func octetParameter(_ name: String, maxLength: Int) throws(CryptoError) -> [UInt8] {
        var output = [UInt8](repeating: 0, count: maxLength)
        var length = 0
        guard EVP_PKEY_get_octet_string_param(pointer, name, &output, output.count, &length) == 1, length <= maxLength else {
            ERR_clear_error()
            throw backendError(.keyExport)
        }
        return Array(output.prefix(length))
    }

    /// The raw public or private key bytes of an Ed25519 key.
    func rawKey(private isPrivate: Bool) throws(CryptoError) -> [UInt8] {
        var length = 0
        let sizeCall = isPrivate
            ? EVP_PKEY_get_raw_private_key(pointer, nil, &length)
            : EVP_PKEY_get_raw_public_key(pointer, nil, &length)
        guard sizeCall == 1 else { throw backendError(.keyExport) }
        var output = [UInt8](repeating: 0, count: length)
        let call = isPrivate
            ? EVP_PKEY_get_raw_private_key(pointer, &output, &length)
            : EVP_PKEY_get_raw_public_key(pointer, &output, &length)
        guard call == 1 else {
            wipe(&output)
            throw backendError(.keyExport)
        }
        return Array(output.prefix(length))
    }

    /// The DER SubjectPublicKeyInfo of the key.
    func subjectPublicKeyInfoDER() throws(CryptoError) -> [UInt8] {
        let length = i2d_PUBKEY(pointer, nil)
        guard length > 0 else { throw backendError(.keyExport) }
        var output = [UInt8](repeating: 0, count: Int(length))
        let written = output.withUnsafeMutableBufferPointer { buffer -> Int32 in
            var cursor = buffer.baseAddress
            return i2d_PUBKEY(pointer, &cursor)
        }
        guard written == length else { throw backendError(.keyExport) }
        return output
    }

    /// The PEM "PUBLIC KEY" (SubjectPublicKeyInfo) encoding of the key.
    func subjectPublicKeyInfoPEM() throws(CryptoError) -> String {
        guard let bio = BIO_new(BIO_s_mem()) else { throw backendError(.keyExport) }
        defer { BIO_free(bio) }
        guard PEM_write_bio_PUBKEY(bio, pointer) == 1 else { throw backendError(.keyExport) }
        var data: UnsafeMutablePointer<CChar>? = nil
        let length = wallet_BIO_get_mem_data(bio, &data)
        guard length > 0, let data else { throw backendError(.keyExport) }
        return String(decoding: UnsafeRawBufferPointer(start: data, count: Int(length)), as: UTF8.self)
    }

    /// The DER PKCS#8 PrivateKeyInfo of a private key. Intermediate copies are cleansed.
    func privateKeyInfoDER() throws(CryptoError) -> [UInt8] {
        guard let info = EVP_PKEY2PKCS8(pointer) else { throw backendError(.keyExport) }
        defer { PKCS8_PRIV_KEY_INFO_free(info) }
        let length = i2d_PKCS8_PRIV_KEY_INFO(info, nil)
        guard length > 0 else { throw backendError(.keyExport) }
        var output = [UInt8](repeating: 0, count: Int(length))
        let written = output.withUnsafeMutableBufferPointer { buffer -> Int32 in
            var cursor = buffer.baseAddress
            return i2d_PKCS8_PRIV_KEY_INFO(info, &cursor)
        }
        guard written == length else {
            wipe(&output)
            throw backendError(.keyExport)
        }
        return output
    }

    /// Decodes a DER SubjectPublicKeyInfo; trailing bytes are rejected.
    static func fromSubjectPublicKeyInfo(_ der: [UInt8]) throws(CryptoError) -> EVPKey {
        try decodeDER(der, as: .subjectPublicKeyInfo) { d2i_PUBKEY(nil, &$0, $1) }
    }

    /// Decodes a DER PKCS#8 PrivateKeyInfo (or a traditional key); trailing bytes are rejected.
    static func fromPrivateKeyDER(_ der: [UInt8]) throws(CryptoError) -> EVPKey {
        try decodeDER(der, as: .privateKeyInfo) { d2i_AutoPrivateKey(nil, &$0, $1) }
    }

    /// Runs a `d2i_*` key decoder over the whole of `der`: an empty input, a decoding
    /// failure or bytes left after the key are each a `malformedEncoding(structure)`.
    private static func decodeDER(
        _ der: [UInt8], as structure: EncodedStructure,
        _ decode: (inout UnsafePointer<UInt8>?, Int) -> OpaquePointer?
    ) throws(CryptoError) -> EVPKey {
        try der.withUnsafeBufferPointer { (buffer) throws(CryptoError) -> EVPKey in
            guard let base = buffer.baseAddress, buffer.count > 0 else { throw .malformedEncoding(structure) }
            var cursor: UnsafePointer<UInt8>? = base
            guard let key = decode(&cursor, buffer.count) else {
                ERR_clear_error()
                throw .malformedEncoding(structure)
            }
            let evpKey = EVPKey(taking: key)
            guard let cursor, cursor - base == buffer.count else { throw .malformedEncoding(structure) }
            return evpKey
        }
    }

    /// Reads the first PEM key block of `pem` ("PUBLIC KEY", or a private-key block when
    /// `private` is true). Encrypted PEM is refused: no passphrase prompt is ever shown.
    static func fromPEM(_ pem: String, private isPrivate: Bool) throws(CryptoError) -> EVPKey {
        let bytes = Array(pem.utf8)
        guard !bytes.isEmpty, let length = try? cInt(bytes.count, .message) else { throw .malformedEncoding(.pem) }
        return try bytes.withUnsafeBufferPointer { (buffer) throws(CryptoError) -> EVPKey in
            guard let base = buffer.baseAddress, let bio = BIO_new_mem_buf(base, length) else {
                throw backendError(.keyImport)
            }
            defer { BIO_free(bio) }
            let key = isPrivate
                ? PEM_read_bio_PrivateKey(bio, nil, { _, _, _, _ in -1 }, nil)
                : PEM_read_bio_PUBKEY(bio, nil, { _, _, _, _ in -1 }, nil)
            guard let key else {
                ERR_clear_error()
                throw .malformedEncoding(.pem)
            }
            return EVPKey(taking: key)
        }
    }

    /// Validates a public key with `EVP_PKEY_public_check_quick`: for EC, the point lies
    /// on the curve, is not the point at infinity and has coordinates in range. That is
    /// the whole of the invalid-curve defence on P-256/384/521: their cofactor is 1, so
    /// every such point has the group's prime order and the full check's extra
    /// `n·Q = O` multiplication (as costly as a signature verification) adds nothing.
    func checkPublicKey() throws(CryptoError) {
        guard let context = EVP_PKEY_CTX_new_from_pkey(nil, pointer, nil) else { throw backendError(.keyImport) }
        defer { EVP_PKEY_CTX_free(context) }
        guard EVP_PKEY_public_check_quick(context) == 1 else {
            ERR_clear_error()
            throw .invalidKey(.notOnCurve)
        }
    }

    /// Signs `message` with `EVP_DigestSign` (`digest` nil for EdDSA).
    func sign(_ message: [UInt8], digest: OpaquePointer?) throws(CryptoError) -> [UInt8] {
        guard let context = EVP_MD_CTX_new() else { throw backendError(.signing) }
        defer { EVP_MD_CTX_free(context) }
        guard EVP_DigestSignInit(context, nil, digest, nil, pointer) == 1 else { throw backendError(.signing) }
        return try withBytes(message) { (data, count) throws(CryptoError) -> [UInt8] in
            var length = 0
            guard EVP_DigestSign(context, nil, &length, data, count) == 1 else { throw backendError(.signing) }
            var signature = [UInt8](repeating: 0, count: length)
            guard EVP_DigestSign(context, &signature, &length, data, count) == 1 else { throw backendError(.signing) }
            return Array(signature.prefix(length))
        }
    }

    /// Verifies `signature` over `message` with `EVP_DigestVerify` (`digest` nil for EdDSA).
    func verify(_ signature: [UInt8], message: [UInt8], digest: OpaquePointer?) -> Bool {
        guard let context = EVP_MD_CTX_new() else { ERR_clear_error(); return false }
        defer { EVP_MD_CTX_free(context) }
        guard EVP_DigestVerifyInit(context, nil, digest, nil, pointer) == 1 else { ERR_clear_error(); return false }
        let result = withBytes(signature) { sig, sigCount in
            withBytes(message) { data, count in EVP_DigestVerify(context, sig, sigCount, data, count) }
        }
        ERR_clear_error()
        return result == 1
    }
}
