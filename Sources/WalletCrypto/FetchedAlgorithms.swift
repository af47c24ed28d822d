internal import COpenSSL

/// The libcrypto algorithm implementations the SDK uses, fetched from the default library
/// context once per process and never freed.
///
/// In OpenSSL 3 the legacy objects (`EVP_sha256()`, `EVP_aes_128_gcm()`) make every digest,
/// signature, verification and cipher initialisation fetch the implementation again, and an
/// explicit `EVP_KDF_fetch` / `EVP_MAC_fetch` per call does the same: a locked method-store
/// lookup of about a microsecond, several per SD-JWT or mdoc operation. A fetched object is
/// used as is, and may be shared by any number of threads. When a fetch fails (a provider
/// configuration without the algorithm), the legacy object is used, or the operation
/// fetches again and reports the failure itself.
struct FetchedAlgorithms: @unchecked Sendable {
    let sha256: OpaquePointer?
    let sha384: OpaquePointer?
    let sha512: OpaquePointer?
    let aes128GCM: OpaquePointer?
    let aes192GCM: OpaquePointer?
    let aes256GCM: OpaquePointer?
    /// `EVP_KDF` "HKDF", or nil when it cannot be fetched.
    let hkdf: OpaquePointer?
    /// `EVP_MAC` "HMAC", or nil when it cannot be fetched.
    let hmac: OpaquePointer?

    static let shared = FetchedAlgorithms()

    private init() {
        sha256 = EVP_MD_fetch(nil, "SHA256", nil) ?? EVP_sha256()
        sha384 = EVP_MD_fetch(nil, "SHA384", nil) ?? EVP_sha384()
        sha512 = EVP_MD_fetch(nil, "SHA512", nil) ?? EVP_sha512()
        aes128GCM = EVP_CIPHER_fetch(nil, "AES-128-GCM", nil) ?? EVP_aes_128_gcm()
        aes192GCM = EVP_CIPHER_fetch(nil, "AES-192-GCM", nil) ?? EVP_aes_192_gcm()
        aes256GCM = EVP_CIPHER_fetch(nil, "AES-256-GCM", nil) ?? EVP_aes_256_gcm()
        hkdf = EVP_KDF_fetch(nil, "HKDF", nil)
        hmac = EVP_MAC_fetch(nil, "HMAC", nil)
    }
}
