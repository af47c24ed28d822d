import WalletCrypto

/// The one place where JOSE calls `WalletCrypto`, mapping `CryptoError` into `JOSEError`
/// so that the rest of the module throws `JOSEError` only.
enum JOSECrypto {
    static func sha256(_ bytes: [UInt8]) -> [UInt8] { HashAlgorithm.sha256.digest(bytes) }

    /// Runs a `WalletCrypto` call, wrapping its error as `JOSEError.crypto`.
    static func run<T>(_ body: () throws(CryptoError) -> T) throws(JOSEError) -> T {
        do { return try body() } catch { throw .crypto(error) }
    }

    static func ecPublicKey(x: [UInt8], y: [UInt8], curve: ECCurve) throws(JOSEError) -> ECPublicKey {
        do { return try ECPublicKey(x: x, y: y, curve: curve) } catch { throw .invalidKey(.invalidPublicKey) }
    }

    static func ecPrivateKey(d: [UInt8], curve: ECCurve) throws(JOSEError) -> ECPrivateKey {
        do {
            return try ECPrivateKey(d: d, curve: curve)
        } catch {
            throw .invalidKey(.invalidPrivateKey)
        }
    }

    static func generateECKey(curve: ECCurve) throws(JOSEError) -> ECPrivateKey {
        try run { () throws(CryptoError) in try ECPrivateKey.generate(curve: curve) }
    }

    static func rawScalar(of key: ECPrivateKey) throws(JOSEError) -> [UInt8] {
        try run { () throws(CryptoError) in try key.rawScalar() }
    }

    static func ed25519PublicKey(_ raw: [UInt8]) throws(JOSEError) -> Ed25519PublicKey {
        do { return try Ed25519PublicKey(rawRepresentation: raw) } catch { throw .invalidKey(.invalidPublicKey) }
    }

    static func ed25519PrivateKey(_ raw: [UInt8]) throws(JOSEError) -> Ed25519PrivateKey {
        do { return try Ed25519PrivateKey(rawRepresentation: raw) } catch { throw .invalidKey(.invalidPrivateKey) }
    }

    static func rawBytes(of key: Ed25519PublicKey) -> [UInt8] { key.rawRepresentation }
    static func rawBytes(of key: Ed25519PrivateKey) throws(JOSEError) -> [UInt8] {
        try run { () throws(CryptoError) in try key.rawRepresentation() }
    }

    /// Verifies a raw JOSE signature (r||s for ECDSA) over `message`.
    static func isValid(signature: [UInt8], for message: [UInt8], key: PublicKey, hash: HashAlgorithm?) -> Bool {
        switch key {
        case .ec(let key):
            guard let parsed = try? ECDSASignature(rawRepresentation: signature, curve: key.curve) else { return false }
            return key.isValidSignature(parsed, for: message, hash: hash ?? key.curve.signatureHashAlgorithm)
        case .ed25519(let key):
            return key.isValidSignature(signature, for: message)
        }
    }

    static func hmacSHA256(_ message: [UInt8], key: SymmetricKey) throws(JOSEError) -> [UInt8] {
        try run { () throws(CryptoError) in try HMAC.authenticationCode(for: message, key: key, algorithm: .sha256) }
    }

    static func randomBytes(_ count: Int) throws(JOSEError) -> [UInt8] {
        try run { () throws(CryptoError) in try SystemRandom().bytes(count: count) }
    }

    static func seal(_ plaintext: [UInt8], key: SymmetricKey, nonce: [UInt8], aad: [UInt8]) throws(JOSEError)
        -> (ciphertext: [UInt8], tag: [UInt8]) {
        let box = try run { () throws(CryptoError) in try AESGCM.seal(plaintext, key: key, nonce: nonce, aad: aad) }
        return (box.ciphertext, box.tag)
    }

    static func open(ciphertext: [UInt8], tag: [UInt8], key: SymmetricKey, nonce: [UInt8], aad: [UInt8]) throws(JOSEError)
        -> [UInt8] {
        do {
            return try AESGCM.open(ciphertext: ciphertext, tag: tag, key: key, nonce: nonce, aad: aad)
        } catch .authenticationFailed {
            throw .decryptionFailed
        } catch {
            throw .crypto(error)
        }
    }

    static func sharedSecret(_ key: ECPrivateKey, with peer: ECPublicKey) throws(JOSEError) -> SharedSecret {
        try run { () throws(CryptoError) in try key.sharedSecret(with: peer) }
    }

    /// The JWE content-encryption key from an ECDH-ES shared secret (RFC 7518 §4.6.2).
    static func contentEncryptionKey(
        _ secret: SharedSecret, algorithm: ContentEncryptionAlgorithm, partyUInfo: [UInt8], partyVInfo: [UInt8]
    ) throws(JOSEError) -> SymmetricKey {
        try run { () throws(CryptoError) in
            try secret.concatKDFDerivedSymmetricKey(
                algorithmID: algorithm.rawValue, partyUInfo: partyUInfo, partyVInfo: partyVInfo,
                outputByteCount: algorithm.keyByteCount)
        }
    }
}
