internal import COpenSSL

/// Secret bytes in a manually allocated buffer that is wiped with `OPENSSL_cleanse` when
/// the last reference goes away. Swift arrays may be copied or moved by the runtime
/// without clearing the old storage; this buffer is not. Immutable after creation, hence
/// safe to share between tasks.
///
/// The one home of secret storage in the SDK: ``SymmetricKey`` and ``SharedSecret`` hold
/// one, and so do the storage module's wrapping keys.
package final class SecretBytes: @unchecked Sendable {
    private let buffer: UnsafeMutableBufferPointer<UInt8>
    /// The number of secret bytes.
    package let count: Int

    /// Moves `bytes` into the secret buffer, wiping and emptying `bytes`.
    package init(consuming bytes: inout [UInt8]) {
        buffer = .allocate(capacity: max(bytes.count, 1))
        buffer.initialize(repeating: 0)
        for index in bytes.indices { buffer[index] = bytes[index] }
        count = bytes.count
        wipe(&bytes)
    }

    /// Copies `bytes` into the secret buffer (the caller keeps, and should wipe, its copy).
    package convenience init(copying bytes: [UInt8]) {
        var copy = bytes
        self.init(consuming: &copy)
    }

    /// Copies `bytes` out of an unsafe buffer (a platform API's secret, say).
    package convenience init(copying bytes: UnsafeRawBufferPointer) {
        var copy = [UInt8](bytes)
        self.init(consuming: &copy)
    }

    deinit {
        wallet_OPENSSL_cleanse(buffer.baseAddress, buffer.count)
        buffer.deallocate()
    }

    /// Calls `body` with the secret bytes in place; the pointer must not escape `body`.
    package func withUnsafeBytes<T, E: Error>(_ body: (UnsafeRawBufferPointer) throws(E) -> T) throws(E) -> T {
        try body(UnsafeRawBufferPointer(rebasing: UnsafeRawBufferPointer(buffer)[0..<count]))
    }

    /// Calls `body` with a temporary array copy that is wiped when `body` returns (for
    /// APIs that take arrays).
    package func withBytes<T, E: Error>(_ body: ([UInt8]) throws(E) -> T) throws(E) -> T {
        var copy = Array(buffer.prefix(count))
        defer { wipe(&copy) }
        return try body(copy)
    }

    /// Whether both hold the same bytes, compared in constant time (only the lengths
    /// affect the timing).
    package func constantTimeEquals(_ other: SecretBytes) -> Bool {
        guard count == other.count else { return false }
        guard count > 0 else { return true }
        return CRYPTO_memcmp(buffer.baseAddress, other.buffer.baseAddress, count) == 0
    }
}

/// Overwrites an array's storage with zeros (through `OPENSSL_cleanse`, which the
/// optimiser may not drop) and empties it. The one wipe helper of the SDK.
package func wipe(_ bytes: inout [UInt8]) {
    bytes.withUnsafeMutableBytes { raw in
        if let base = raw.baseAddress, raw.count > 0 { wallet_OPENSSL_cleanse(base, raw.count) }
    }
    bytes.removeAll()
}

/// A symmetric key: an AES-GCM key, an HMAC key, a JWE content-encryption key, an
/// ISO 18013-5 session key or EMacKey.
///
/// Opaque: the bytes live in a buffer that is wiped when the last copy of the key goes
/// away, and `description`, `debugDescription` and the mirror (`dump`) show the length
/// only. Compare keys with `==`, which runs in constant time.
public struct SymmetricKey: Sendable, Equatable, CustomStringConvertible, CustomDebugStringConvertible,
    CustomReflectable
{
    let secret: SecretBytes

    /// A key holding a copy of `bytes` (a key from a test vector or from a platform API);
    /// wipe the caller's copy when it is no longer needed.
    public init(bytes: [UInt8]) { secret = SecretBytes(copying: bytes) }

    /// A key taking over `bytes`, which are wiped and emptied.
    public init(consuming bytes: inout [UInt8]) { secret = SecretBytes(consuming: &bytes) }

    /// A key over secret bytes already held (the storage module's key files).
    package init(secret: SecretBytes) { self.secret = secret }

    /// A fresh random key of `byteCount` bytes from `random`.
    public static func random(byteCount: Int, using random: any RandomSource = SystemRandom())
        throws(CryptoError) -> SymmetricKey
    {
        var bytes = try random.bytes(count: byteCount)
        return SymmetricKey(consuming: &bytes)
    }

    /// The length of the key in bytes.
    public var byteCount: Int { secret.count }

    /// EXPOSES KEY MATERIAL: calls `body` with the key bytes in place (to hand the key to a
    /// platform API or to check it against a published test vector). The pointer must not
    /// escape `body`, and the bytes must not be logged or stored in the clear.
    public func withUnsafeBytes<T, E: Error>(_ body: (UnsafeRawBufferPointer) throws(E) -> T) throws(E) -> T {
        try secret.withUnsafeBytes(body)
    }

    /// Keys are equal when their bytes are, compared in constant time.
    public static func == (lhs: SymmetricKey, rhs: SymmetricKey) -> Bool {
        lhs.secret.constantTimeEquals(rhs.secret)
    }

    /// The length only, never key material.
    public var description: String { "SymmetricKey(\(byteCount * 8) bits)" }
    /// The length only, never key material.
    public var debugDescription: String { description }
    /// A mirror without children, so `dump` cannot reveal key material.
    public var customMirror: Mirror { Mirror(self, children: [:]) }
}

/// The raw output of an ECDH key agreement (the x coordinate of the shared point).
///
/// Opaque like ``SymmetricKey``: wiped when released, never printed. It is not a key
/// itself; derive keys from it with ``hkdfDerivedSymmetricKey(salt:info:outputByteCount:hash:)``
/// (ISO 18013-5 session keys, EMacKey) or
/// ``concatKDFDerivedSymmetricKey(algorithmID:partyUInfo:partyVInfo:outputByteCount:)`` (JWE ECDH-ES).
public struct SharedSecret: Sendable, Equatable, CustomStringConvertible, CustomDebugStringConvertible,
    CustomReflectable
{
    let secret: SecretBytes

    /// A shared secret computed elsewhere (by a platform key store implementing
    /// ``KeyAgreement``), copied from `bytes`; wipe the caller's copy afterwards.
    public init(bytes: [UInt8]) { secret = SecretBytes(copying: bytes) }

    /// A shared secret taking over `bytes`, which are wiped and emptied.
    public init(consuming bytes: inout [UInt8]) { secret = SecretBytes(consuming: &bytes) }

    /// The length of the secret in bytes.
    public var byteCount: Int { secret.count }

    /// EXPOSES SECRET MATERIAL: calls `body` with the secret bytes in place (for a KDF this
    /// module does not offer, or a published test vector). The pointer must not escape `body`.
    public func withUnsafeBytes<T, E: Error>(_ body: (UnsafeRawBufferPointer) throws(E) -> T) throws(E) -> T {
        try secret.withUnsafeBytes(body)
    }

    /// A key derived with HKDF (RFC 5869) from this secret as the input key material.
    public func hkdfDerivedSymmetricKey(salt: [UInt8] = [], info: [UInt8] = [], outputByteCount: Int,
                                        hash: HashAlgorithm = .sha256) throws(CryptoError) -> SymmetricKey {
        try HKDF.deriveKey(inputKeyMaterial: secret, salt: salt, info: info, outputByteCount: outputByteCount, hash: hash)
    }

    /// A key derived with the Concat KDF as JOSE ECDH-ES uses it (RFC 7518 §4.6.2).
    public func concatKDFDerivedSymmetricKey(algorithmID: String, partyUInfo: [UInt8] = [], partyVInfo: [UInt8] = [],
                                             outputByteCount: Int) throws(CryptoError) -> SymmetricKey {
        try ConcatKDF.deriveKey(sharedSecret: secret, keyByteCount: outputByteCount, algorithmID: algorithmID,
                                partyUInfo: partyUInfo, partyVInfo: partyVInfo)
    }

    /// Secrets are equal when their bytes are, compared in constant time.
    public static func == (lhs: SharedSecret, rhs: SharedSecret) -> Bool {
        lhs.secret.constantTimeEquals(rhs.secret)
    }

    /// The length only, never secret material.
    public var description: String { "SharedSecret(\(byteCount) bytes)" }
    /// The length only, never secret material.
    public var debugDescription: String { description }
    /// A mirror without children, so `dump` cannot reveal secret material.
    public var customMirror: Mirror { Mirror(self, children: [:]) }
}
