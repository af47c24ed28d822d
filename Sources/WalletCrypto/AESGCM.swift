internal import COpenSSL

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
        _ plaintext: [UInt8], key: SymmetricKey, nonce: [UInt8]? = nil, aad: [UInt8] = [],
        random: any RandomSource = SystemRandom()
    ) throws(CryptoError) -> SealedBox {
        let nonceUsed: [UInt8]
        if let nonce { nonceUsed = nonce } else { nonceUsed = try random.bytes(count: defaultNonceByteCount) }
        let context = try Context(key: key, nonce: nonceUsed, encrypt: true)
        try context.addAAD(aad)
        var ciphertext = try context.update(plaintext)
        var finalLength: Int32 = 0
        var scratch = [UInt8](repeating: 0, count: 16)
        guard EVP_EncryptFinal_ex(context.pointer, &scratch, &finalLength) == 1, finalLength == 0 else {
            throw backendError(.encryption)
        }
        var tag = [UInt8](repeating: 0, count: tagByteCount)
        guard EVP_CIPHER_CTX_ctrl(context.pointer, EVP_CTRL_GCM_GET_TAG, Int32(tagByteCount), &tag) == 1 else {
            wipe(&ciphertext)
            throw backendError(.encryption)
        }
        return SealedBox(nonce: nonceUsed, ciphertext: ciphertext, tag: tag)
    }

    /// Authenticates and decrypts. A wrong key, nonce, AAD, ciphertext or tag throws
    /// `CryptoError.authenticationFailed` and no plaintext is returned.
    public static func open(
        ciphertext: [UInt8], tag: [UInt8], key: SymmetricKey, nonce: [UInt8], aad: [UInt8] = []
    ) throws(CryptoError) -> [UInt8] {
        guard tag.count == tagByteCount else { throw .invalidLength(.aesGCMTag, actual: tag.count) }
        let context = try Context(key: key, nonce: nonce, encrypt: false)
        try context.addAAD(aad)
        var plaintext = try context.update(ciphertext)
        var tagCopy = tag
        guard EVP_CIPHER_CTX_ctrl(context.pointer, EVP_CTRL_GCM_SET_TAG, Int32(tagByteCount), &tagCopy) == 1 else {
            wipe(&plaintext)
            throw backendError(.decryption)
        }
        var finalLength: Int32 = 0
        var scratch = [UInt8](repeating: 0, count: 16)
        guard EVP_DecryptFinal_ex(context.pointer, &scratch, &finalLength) == 1 else {
            wipe(&plaintext)
            ERR_clear_error()
            throw .authenticationFailed
        }
        return plaintext
    }

    /// Opens a `SealedBox`.
    public static func open(_ box: SealedBox, key: SymmetricKey, aad: [UInt8] = []) throws(CryptoError) -> [UInt8] {
        try open(ciphertext: box.ciphertext, tag: box.tag, key: key, nonce: box.nonce, aad: aad)
    }

    /// Opens `ciphertext || tag` (the last 16 bytes are the tag).
    public static func open(combined: [UInt8], key: SymmetricKey, nonce: [UInt8], aad: [UInt8] = [])
        throws(CryptoError) -> [UInt8]
    {
        guard combined.count >= tagByteCount else {
            throw .invalidLength(.aesGCMCiphertextAndTag, actual: combined.count)
        }
        let split = combined.count - tagByteCount
        return try open(
            ciphertext: Array(combined[..<split]), tag: Array(combined[split...]), key: key, nonce: nonce, aad: aad)
    }

    /// One initialised `EVP_CIPHER_CTX`, freed with the object.
    private final class Context {
        let pointer: OpaquePointer
        let operation: CryptoOperation

        init(key: SymmetricKey, nonce: [UInt8], encrypt: Bool) throws(CryptoError) {
            let operation: CryptoOperation = encrypt ? .encryption : .decryption
            let cipher: OpaquePointer?
            switch key.byteCount {
            case 16: cipher = FetchedAlgorithms.shared.aes128GCM
            case 24: cipher = FetchedAlgorithms.shared.aes192GCM
            case 32: cipher = FetchedAlgorithms.shared.aes256GCM
            default: throw .invalidLength(.aesKey, actual: key.byteCount)
            }
            guard !nonce.isEmpty else { throw .invalidLength(.aesGCMNonce, actual: 0) }
            let nonceLength = try cInt(nonce.count, .aesGCMNonce)
            guard let pointer = EVP_CIPHER_CTX_new() else { throw backendError(operation) }
            self.pointer = pointer
            self.operation = operation
            let initialise = encrypt ? EVP_EncryptInit_ex : EVP_DecryptInit_ex
            guard initialise(pointer, cipher, nil, nil, nil) == 1 else { throw backendError(operation) }
            guard EVP_CIPHER_CTX_ctrl(pointer, EVP_CTRL_GCM_SET_IVLEN, nonceLength, nil) == 1 else {
                throw backendError(operation)
            }
            let keyed = key.withUnsafeBytes { raw in
                initialise(pointer, nil, nil, raw.baseAddress?.assumingMemoryBound(to: UInt8.self), nonce)
            }
            guard keyed == 1 else { throw backendError(operation) }
        }

        // EVP_CIPHER_CTX_free cleanses the expanded key schedule.
        deinit { EVP_CIPHER_CTX_free(pointer) }

        func addAAD(_ aad: [UInt8]) throws(CryptoError) {
            guard !aad.isEmpty else { return }
            let length = try cInt(aad.count, .message)
            var written: Int32 = 0
            guard EVP_CipherUpdate(pointer, nil, &written, aad, length) == 1 else { throw backendError(operation) }
        }

        func update(_ input: [UInt8]) throws(CryptoError) -> [UInt8] {
            guard !input.isEmpty else { return [] }
            let length = try cInt(input.count, .message)
            var output = [UInt8](repeating: 0, count: input.count)
            var written: Int32 = 0
            guard EVP_CipherUpdate(pointer, &output, &written, input, length) == 1, Int(written) == input.count else {
                wipe(&output)
                throw backendError(operation)
            }
            return output
        }
    }
}
