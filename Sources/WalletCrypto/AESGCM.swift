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
        var combined = try sealCombined(plaintext, key: key, nonce: nonceUsed, aad: aad)
        let split = combined.count - tagByteCount
        let tag = Array(combined[split...])
        combined.removeLast(tagByteCount)
        return SealedBox(nonce: nonceUsed, ciphertext: combined, tag: tag)
    }

    /// Encrypts and authenticates `plaintext` (and authenticates `aad`) under `nonce`,
    /// returning `ciphertext || tag` in one buffer: what a protocol that sends the two
    /// together (ISO 18013-5 session data, JWE in compact form aside) needs, without a copy.
    public static func sealCombined(_ plaintext: [UInt8], key: SymmetricKey, nonce: [UInt8], aad: [UInt8] = [])
        throws(CryptoError) -> [UInt8] {
        let context = try Context(key: key, nonce: nonce, encrypt: true)
        try context.addAAD(aad)
        let length = try cInt(plaintext.count, .message)
        var status = true
        // The whole output is written before it is returned (ciphertext, then tag); on a
        // failure nothing is kept.
        let combined = [UInt8](unsafeUninitializedCapacity: plaintext.count + tagByteCount) { buffer, initialized in
            guard let output = buffer.baseAddress else { status = false; return }
            var written: Int32 = 0
            if !plaintext.isEmpty {
                status = EVP_CipherUpdate(context.pointer, output, &written, plaintext, length) == 1 && Int(written) == plaintext.count
            }
            var finalLength: Int32 = 0
            var scratch = (UInt64(0), UInt64(0))
            status = status && withUnsafeMutableBytes(of: &scratch) { raw in
                EVP_EncryptFinal_ex(context.pointer, raw.baseAddress?.assumingMemoryBound(to: UInt8.self), &finalLength) == 1
            } && finalLength == 0
            status = status && EVP_CIPHER_CTX_ctrl(context.pointer, EVP_CTRL_GCM_GET_TAG, Int32(tagByteCount),
                                                   output + plaintext.count) == 1
            if status {
                initialized = plaintext.count + tagByteCount
            } else {
                buffer.update(repeating: 0)    // no partial ciphertext stays in the freed buffer
                initialized = 0
            }
        }
        guard status else { throw backendError(.encryption) }
        return combined
    }

    /// Authenticates and decrypts. A wrong key, nonce, AAD, ciphertext or tag throws
    /// `CryptoError.authenticationFailed` and no plaintext is returned.
    public static func open(
        ciphertext: [UInt8], tag: [UInt8], key: SymmetricKey, nonce: [UInt8], aad: [UInt8] = []
    ) throws(CryptoError) -> [UInt8] {
        guard tag.count == tagByteCount else { throw .invalidLength(.aesGCMTag, actual: tag.count) }
        return try ciphertext.withUnsafeBufferPointer { (body) throws(CryptoError) -> [UInt8] in
            try tag.withUnsafeBufferPointer { (tagBytes) throws(CryptoError) -> [UInt8] in
                try open(body, tag: tagBytes, key: key, nonce: nonce, aad: aad)
            }
        }
    }

    /// Opens a `SealedBox`.
    public static func open(_ box: SealedBox, key: SymmetricKey, aad: [UInt8] = []) throws(CryptoError) -> [UInt8] {
        try open(ciphertext: box.ciphertext, tag: box.tag, key: key, nonce: box.nonce, aad: aad)
    }

    /// Opens `ciphertext || tag` (the last 16 bytes are the tag), reading both in place.
    public static func open(combined: [UInt8], key: SymmetricKey, nonce: [UInt8], aad: [UInt8] = [])
        throws(CryptoError) -> [UInt8]
    {
        guard combined.count >= tagByteCount else {
            throw .invalidLength(.aesGCMCiphertextAndTag, actual: combined.count)
        }
        let split = combined.count - tagByteCount
        return try combined.withUnsafeBufferPointer { (all) throws(CryptoError) -> [UInt8] in
            try open(UnsafeBufferPointer(rebasing: all[..<split]), tag: UnsafeBufferPointer(rebasing: all[split...]),
                     key: key, nonce: nonce, aad: aad)
        }
    }

    /// The one decryption: the plaintext is released only after the tag checked out; on
    /// any failure its buffer is zeroed before it is freed.
    private static func open(_ ciphertext: UnsafeBufferPointer<UInt8>, tag: UnsafeBufferPointer<UInt8>, key: SymmetricKey,
                             nonce: [UInt8], aad: [UInt8]) throws(CryptoError) -> [UInt8] {
        let context = try Context(key: key, nonce: nonce, encrypt: false)
        try context.addAAD(aad)
        let length = try cInt(ciphertext.count, .message)
        var failure: CryptoError?
        // At least one byte of capacity: `Array(unsafeUninitializedCapacity: 0)` writes the
        // count of the shared empty-array storage, which ThreadSanitizer reports as a race
        // between two threads opening empty messages (see Hex).
        let plaintext = [UInt8](unsafeUninitializedCapacity: max(ciphertext.count, 1)) { buffer, initialized in
            var written: Int32 = 0
            if let input = ciphertext.baseAddress, let output = buffer.baseAddress, !ciphertext.isEmpty,
               EVP_CipherUpdate(context.pointer, output, &written, input, length) != 1 || Int(written) != ciphertext.count {
                failure = backendError(.decryption)
            }
            if failure == nil {
                var tagCopy = Array(tag)
                if EVP_CIPHER_CTX_ctrl(context.pointer, EVP_CTRL_GCM_SET_TAG, Int32(tagByteCount), &tagCopy) != 1 {
                    failure = backendError(.decryption)
                }
            }
            if failure == nil {
                var finalLength: Int32 = 0
                var scratch = (UInt64(0), UInt64(0))
                let final = withUnsafeMutableBytes(of: &scratch) { raw in
                    EVP_DecryptFinal_ex(context.pointer, raw.baseAddress?.assumingMemoryBound(to: UInt8.self), &finalLength)
                }
                if final != 1 {
                    ERR_clear_error()
                    failure = .authenticationFailed
                }
            }
            if failure == nil {
                initialized = ciphertext.count
            } else {
                buffer.update(repeating: 0)    // unauthenticated plaintext never leaves, nor stays in freed memory
                initialized = 0
            }
        }
        if let failure { throw failure }
        return plaintext
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
    }
}
