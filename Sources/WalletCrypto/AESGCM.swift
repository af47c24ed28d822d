import COpenSSL

/// AES in Galois/Counter Mode (NIST SP 800-38D) with 128-bit tags, through `EVP_CIPHER_CTX`.
/// The key size (128, 192 or 256 bits) is chosen by the key length.
public enum AESGCM {
    /// The length of the authentication tag in bytes.
    public static let tagByteCount = 16
    /// The recommended (and default) nonce length in bytes.
    public static let defaultNonceByteCount = 12

    /// The output of `seal`: the nonce used, the ciphertext (as long as the plaintext) and the tag.
    public struct SealedBox: Sendable, Equatable {
        /// The nonce (IV) the plaintext was encrypted with.
        public let nonce: [UInt8]
        /// The ciphertext.
        public let ciphertext: [UInt8]
        /// The 16-byte authentication tag.
        public let tag: [UInt8]

        /// Groups a nonce, ciphertext and tag (for example parsed from a message).
        public init(nonce: [UInt8], ciphertext: [UInt8], tag: [UInt8]) {
            self.nonce = nonce
            self.ciphertext = ciphertext
            self.tag = tag
        }

        /// `ciphertext || tag`, the layout used by ISO 18013-5 session encryption and COSE.
        public var ciphertextAndTag: [UInt8] { ciphertext + tag }
    }

    /// Encrypts and authenticates `plaintext` (and authenticates `aad`).
    ///
    /// - Parameters:
    ///   - key: 16, 24 or 32 bytes.
    ///   - nonce: a nonce that must never repeat under the same key; when nil, 12 random
    ///     bytes are taken from `random`. Any non-empty length is accepted (12 is recommended).
    public static func seal(
        _ plaintext: [UInt8], key: [UInt8], nonce: [UInt8]? = nil, aad: [UInt8] = [],
        random: any RandomSource = SystemRandom()
    ) throws -> SealedBox {
        let nonce = try nonce ?? random.bytes(count: defaultNonceByteCount)
        let context = try Context(key: key, nonce: nonce, encrypt: true)
        try context.addAAD(aad)
        var ciphertext = try context.update(plaintext)
        var finalLength: Int32 = 0
        var scratch = [UInt8](repeating: 0, count: 16)
        guard EVP_EncryptFinal_ex(context.pointer, &scratch, &finalLength) == 1, finalLength == 0 else {
            throw openSSLError("EVP_EncryptFinal_ex")
        }
        var tag = [UInt8](repeating: 0, count: tagByteCount)
        guard EVP_CIPHER_CTX_ctrl(context.pointer, EVP_CTRL_GCM_GET_TAG, Int32(tagByteCount), &tag) == 1 else {
            secureZero(&ciphertext)
            throw openSSLError("EVP_CIPHER_CTX_ctrl(GET_TAG)")
        }
        return SealedBox(nonce: nonce, ciphertext: ciphertext, tag: tag)
    }

    /// Authenticates and decrypts. A wrong key, nonce, AAD, ciphertext or tag throws
    /// `CryptoError.authenticationFailed` and no plaintext is returned.
    public static func open(
        ciphertext: [UInt8], tag: [UInt8], key: [UInt8], nonce: [UInt8], aad: [UInt8] = []
    ) throws -> [UInt8] {
        guard tag.count == tagByteCount else {
            throw CryptoError.invalidLength(what: "AES-GCM tag", expected: "\(tagByteCount) bytes", actual: tag.count)
        }
        let context = try Context(key: key, nonce: nonce, encrypt: false)
        try context.addAAD(aad)
        var plaintext = try context.update(ciphertext)
        var tagCopy = tag
        guard EVP_CIPHER_CTX_ctrl(context.pointer, EVP_CTRL_GCM_SET_TAG, Int32(tagByteCount), &tagCopy) == 1 else {
            secureZero(&plaintext)
            throw openSSLError("EVP_CIPHER_CTX_ctrl(SET_TAG)")
        }
        var finalLength: Int32 = 0
        var scratch = [UInt8](repeating: 0, count: 16)
        guard EVP_DecryptFinal_ex(context.pointer, &scratch, &finalLength) == 1 else {
            secureZero(&plaintext)
            ERR_clear_error()
            throw CryptoError.authenticationFailed
        }
        return plaintext
    }

    /// Opens a `SealedBox`.
    public static func open(_ box: SealedBox, key: [UInt8], aad: [UInt8] = []) throws -> [UInt8] {
        try open(ciphertext: box.ciphertext, tag: box.tag, key: key, nonce: box.nonce, aad: aad)
    }

    /// Opens `ciphertext || tag` (the last 16 bytes are the tag).
    public static func open(combined: [UInt8], key: [UInt8], nonce: [UInt8], aad: [UInt8] = []) throws -> [UInt8] {
        guard combined.count >= tagByteCount else {
            throw CryptoError.invalidLength(
                what: "AES-GCM ciphertext and tag", expected: "at least \(tagByteCount) bytes", actual: combined.count)
        }
        let split = combined.count - tagByteCount
        return try open(
            ciphertext: Array(combined[..<split]), tag: Array(combined[split...]), key: key, nonce: nonce, aad: aad)
    }

    /// One initialised `EVP_CIPHER_CTX`, freed with the object.
    private final class Context {
        let pointer: OpaquePointer

        init(key: [UInt8], nonce: [UInt8], encrypt: Bool) throws {
            let cipher: OpaquePointer?
            switch key.count {
            case 16: cipher = EVP_aes_128_gcm()
            case 24: cipher = EVP_aes_192_gcm()
            case 32: cipher = EVP_aes_256_gcm()
            default:
                throw CryptoError.invalidLength(what: "AES key", expected: "16, 24 or 32 bytes", actual: key.count)
            }
            guard !nonce.isEmpty else {
                throw CryptoError.invalidLength(what: "AES-GCM nonce", expected: "at least 1 byte", actual: 0)
            }
            let nonceLength = try cInt(nonce.count, "AES-GCM nonce")
            guard let pointer = EVP_CIPHER_CTX_new() else { throw openSSLError("EVP_CIPHER_CTX_new") }
            self.pointer = pointer
            let initialise = encrypt ? EVP_EncryptInit_ex : EVP_DecryptInit_ex
            guard initialise(pointer, cipher, nil, nil, nil) == 1 else { throw openSSLError("EVP_CipherInit_ex") }
            guard EVP_CIPHER_CTX_ctrl(pointer, EVP_CTRL_GCM_SET_IVLEN, nonceLength, nil) == 1 else {
                throw openSSLError("EVP_CIPHER_CTX_ctrl(SET_IVLEN)")
            }
            guard initialise(pointer, nil, nil, key, nonce) == 1 else { throw openSSLError("EVP_CipherInit_ex") }
        }

        deinit { EVP_CIPHER_CTX_free(pointer) }

        func addAAD(_ aad: [UInt8]) throws {
            guard !aad.isEmpty else { return }
            let length = try cInt(aad.count, "AES-GCM AAD")
            var written: Int32 = 0
            guard EVP_CipherUpdate(pointer, nil, &written, aad, length) == 1 else {
                throw openSSLError("EVP_CipherUpdate(AAD)")
            }
        }

        func update(_ input: [UInt8]) throws -> [UInt8] {
            guard !input.isEmpty else { return [] }
            let length = try cInt(input.count, "AES-GCM input")
            var output = [UInt8](repeating: 0, count: input.count)
            var written: Int32 = 0
            guard EVP_CipherUpdate(pointer, &output, &written, input, length) == 1, Int(written) == input.count else {
                secureZero(&output)
                throw openSSLError("EVP_CipherUpdate")
            }
            return output
        }
    }
}
