import COpenSSL

/// Owns one `EVP_PKEY*` and frees it when the last reference goes away.
/// Keys built on it are immutable after creation, hence `@unchecked Sendable`:
/// OpenSSL 3 allows concurrent use of a const EVP_PKEY from several threads.
final class EVPKey: @unchecked Sendable {
    let pointer: OpaquePointer

    init(taking pointer: OpaquePointer) { self.pointer = pointer }

    deinit { EVP_PKEY_free(pointer) }
}

/// The text of the first error on OpenSSL's thread-local queue (then cleared).
func openSSLReason() -> String {
    let code = wallet_ERR_get_error()
    ERR_clear_error()
    guard code != 0 else { return "unknown error" }
    var buffer = [CChar](repeating: 0, count: 256)
    ERR_error_string_n(code, &buffer, buffer.count)
    return String(decoding: buffer.prefix(while: { $0 != 0 }).map { UInt8(bitPattern: $0) }, as: UTF8.self)
}

/// A `CryptoError.openSSL` for a failed libcrypto call, draining the error queue.
func openSSLError(_ function: String) -> CryptoError {
    .openSSL(function: function, reason: openSSLReason())
}
