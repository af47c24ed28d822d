import Foundation
import WalletCrypto
import WalletRuntime
import WalletEncoding

/// A JWE in compact serialization (RFC 7516 §7.1) with `alg: ECDH-ES` (direct key
/// agreement, RFC 7518 §4.6) and AES-GCM content encryption, as OpenID4VP encrypted
/// responses and OpenID4VCI encrypted credentials use it.
public struct JWE: Sendable, Equatable {
    /// The only key management algorithm implemented: direct ECDH-ES.
    public static let keyAgreementAlgorithm = "ECDH-ES"
    /// The default cap on the size of a `zip: DEF` plaintext after inflation (1 MiB).
    public static let defaultMaximumDecompressedSize = 1 << 20

    /// The protected header (its encoded text is the AAD).
    public let header: JOSEHeader
    /// The content encryption algorithm (`enc`).
    public let contentEncryption: ContentEncryptionAlgorithm
    /// The initialization vector (12 bytes).
    public let initializationVector: [UInt8]
    /// The ciphertext.
    public let ciphertext: [UInt8]
    /// The authentication tag (16 bytes).
    public let authenticationTag: [UInt8]

    /// Parses a compact JWE: five parts, `alg` ECDH-ES with an empty encrypted key,
    /// a supported `enc`, a 12-byte IV and a 16-byte tag, and an `epk` object.
    public init(compact: String) throws(JOSEError) {
        let parts = compact.compactParts(separatedBy: UInt8(ascii: "."))
        guard parts.count == 5 else { throw .malformed(.partCount(expected: 5, actual: parts.count)) }
        let header = try JOSEHeader(encoded: parts[0])
        guard let alg = header.algorithm else { throw .malformed(.missingHeader("alg")) }
        if alg.lowercased() == "none" { throw .algorithmNotAllowed(alg) }
        guard alg == Self.keyAgreementAlgorithm else { throw .unsupportedAlgorithm(.alg, value: alg) }
        guard let enc = header.encryption else { throw .malformed(.missingHeader("enc")) }
        guard let contentEncryption = ContentEncryptionAlgorithm(rawValue: enc) else { throw .unsupportedAlgorithm(.enc, value: enc) }
        if let zip = header.compression, zip != "DEF" { throw .unsupportedAlgorithm(.zip, value: zip) }
        guard header["epk"]?.objectValue != nil else { throw .malformed(.missingHeader("epk")) }
        guard parts[1].isEmpty else { throw .malformed(.partNotEmpty(.encryptedKey)) }
        func decode(_ part: Substring, _ what: JOSEPart) throws(JOSEError) -> [UInt8] {
            guard let bytes = Base64URL.decodeStrict(part) else { throw .malformed(.notBase64URL(what)) }
            return bytes
        }
        let iv = try decode(parts[2], .initializationVector)
        guard iv.count == 12 else { throw .malformed(.partLength(.initializationVector, expected: 12, actual: iv.count)) }
        let ciphertext = try decode(parts[3], .ciphertext)
        let tag = try decode(parts[4], .authenticationTag)
        guard tag.count == 16 else { throw .malformed(.partLength(.authenticationTag, expected: 16, actual: tag.count)) }
        self.header = header
        self.contentEncryption = contentEncryption
        self.initializationVector = iv
        self.ciphertext = ciphertext
        self.authenticationTag = tag
    }

    private init(header: JOSEHeader, contentEncryption: ContentEncryptionAlgorithm, iv: [UInt8], ciphertext: [UInt8], tag: [UInt8]) {
        self.header = header
        self.contentEncryption = contentEncryption
        self.initializationVector = iv
        self.ciphertext = ciphertext
        self.authenticationTag = tag
    }

    /// The compact serialization (the encrypted key part is empty).
    public var compactSerialization: String {
        [header.encoded, "", Base64URL.encode(initializationVector), Base64URL.encode(ciphertext),
         Base64URL.encode(authenticationTag)].joined(separator: ".")
    }

    /// The ephemeral public key (`epk`), parsed strictly: an off-curve point is `invalidKey`.
    public func ephemeralPublicKey() throws(JOSEError) -> ECPublicKey {
        guard let members = header["epk"]?.objectValue else { throw .malformed(.missingHeader("epk")) }
        let jwk = try JWK(members: members)
        guard jwk.keyType == .ec else { throw .unsupportedAlgorithm(.kty, value: jwk.keyType.rawValue) }
        guard !jwk.isPrivate else { throw .invalidKey(.unexpectedPrivateKey) }
        return try jwk.ecPublicKey()
    }

    // MARK: Encryption

    /// Encrypts `plaintext` to `recipient` (an EC public JWK) with a fresh ephemeral
    /// key on the recipient's curve. The recipient's `kid` is echoed in the header.
    ///
    /// - Parameters:
    ///   - agreementPartyUInfo: bytes for `apu` (e.g. a producer nonce).
    ///   - agreementPartyVInfo: bytes for `apv` (e.g. the verifier's nonce).
    ///   - compress: whether to DEFLATE the plaintext first (`zip: DEF`).
    ///   - additionalHeaders: other members (`typ`, `cty`, ...); they cannot replace
    ///     `alg`, `enc`, `epk`, `apu`, `apv` or `zip`.
    public static func encrypt(
        _ plaintext: [UInt8], to recipient: JWK, contentEncryption: ContentEncryptionAlgorithm = .a128gcm,
        agreementPartyUInfo: [UInt8]? = nil, agreementPartyVInfo: [UInt8]? = nil, compress: Bool = false,
        additionalHeaders: JSONObject = [:]
    ) throws(JOSEError) -> JWE {
        guard recipient.keyType == .ec else {
            throw .algorithmKeyMismatch(algorithm: keyAgreementAlgorithm, keyType: recipient.keyType.rawValue)
        }
        if let alg = recipient.algorithm, alg != keyAgreementAlgorithm {
            throw .algorithmKeyMismatch(algorithm: keyAgreementAlgorithm, keyType: "JWK for \(alg)")
        }
        let recipientKey = try recipient.ecPublicKey()
        let ephemeral = try JOSECrypto.generateECKey(curve: recipientKey.curve)
        let sharedSecret = try JOSECrypto.sharedSecret(ephemeral, with: recipientKey)

        var members = additionalHeaders
        for reserved in ["alg", "enc", "epk", "apu", "apv", "zip"] where members[reserved] != nil {
            throw .malformed(.reservedHeader(reserved))
        }
        members["alg"] = .string(keyAgreementAlgorithm)
        members["enc"] = .string(contentEncryption.rawValue)
        members["epk"] = JWK(publicKey: ephemeral.publicKey).jsonValue
        if let kid = recipient.keyID, members["kid"] == nil { members["kid"] = .string(kid) }
        if let apu = agreementPartyUInfo { members["apu"] = .string(Base64URL.encode(apu)) }
        if let apv = agreementPartyVInfo { members["apv"] = .string(Base64URL.encode(apv)) }
        if compress { members["zip"] = "DEF" }
        let header = try JOSEHeader(members: members)

        let key = try JOSECrypto.contentEncryptionKey(
            sharedSecret, algorithm: contentEncryption, partyUInfo: agreementPartyUInfo ?? [],
            partyVInfo: agreementPartyVInfo ?? [])
        let content = compress ? try Deflate.compress(plaintext) : plaintext
        let iv = try JOSECrypto.randomBytes(12)
        let sealed = try JOSECrypto.seal(content, key: key, nonce: iv, aad: header.encoded.utf8Bytes)
        return JWE(header: header, contentEncryption: contentEncryption, iv: iv, ciphertext: sealed.ciphertext, tag: sealed.tag)
    }

    // MARK: Decryption

    /// Checks what can be checked before key agreement and returns the validated `epk`.
    private func prepare(recipient: ECPublicKey, recipientKeyID: String?, understood: Set<String>) throws(JOSEError) -> ECPublicKey {
        try header.checkCritical(understood: understood)
        if let expected = recipientKeyID, let actual = header.keyID, expected != actual {
            throw .keyMismatch(expectedKeyID: expected, actualKeyID: actual)
        }
        let epk = try ephemeralPublicKey()
        guard epk.curve == recipient.curve else {
            throw .wrongCurve(expected: recipient.curve.rawValue, actual: epk.curve.rawValue)
        }
        return epk
    }

    /// Derives the key from `sharedSecret`, opens the content and inflates it if zipped.
    private func open(sharedSecret: SharedSecret, maximumDecompressedSize: Int) throws(JOSEError) -> [UInt8] {
        func party(_ name: String) throws(JOSEError) -> [UInt8] {
            guard let text = header[name]?.stringValue else { return [] }
            guard let bytes = Base64URL.decode(text) else { throw .malformed(.invalidHeader(name)) }
            return bytes
        }
        let key = try JOSECrypto.contentEncryptionKey(
            sharedSecret, algorithm: contentEncryption, partyUInfo: try party("apu"), partyVInfo: try party("apv"))
        let content = try JOSECrypto.open(
            ciphertext: ciphertext, tag: authenticationTag, key: key, nonce: initializationVector,
            aad: header.encoded.utf8Bytes)
        guard header.compression == "DEF" else { return content }
        return try Deflate.decompress(content, limit: maximumDecompressedSize)
    }

    /// Decrypts with the recipient's key agreement (a key in a secure area, or software).
    ///
    /// - Parameters:
    ///   - recipientKeyID: when given, a header `kid` naming another key is `keyMismatch`.
    ///   - understoodCriticalHeaders: extension parameters the caller processes.
    ///   - maximumDecompressedSize: the cap for `zip: DEF` plaintexts.
    public func decrypt(
        with keyAgreement: any KeyAgreement, recipientKeyID: String? = nil,
        understoodCriticalHeaders: Set<String> = [], maximumDecompressedSize: Int = JWE.defaultMaximumDecompressedSize
    ) async throws(JOSEError) -> [UInt8] {
        let epk = try prepare(recipient: keyAgreement.publicKey, recipientKeyID: recipientKeyID, understood: understoodCriticalHeaders)
        let sharedSecret: SharedSecret
        do {
            sharedSecret = try await keyAgreement.sharedSecret(with: epk)
        } catch {
            throw .keyOperation(error)
        }
        return try open(sharedSecret: sharedSecret, maximumDecompressedSize: maximumDecompressedSize)
    }

    /// Decrypts with an in-memory EC private key (an ephemeral response-encryption key).
    public func decrypt(
        with privateKey: ECPrivateKey, recipientKeyID: String? = nil,
        understoodCriticalHeaders: Set<String> = [], maximumDecompressedSize: Int = JWE.defaultMaximumDecompressedSize
    ) throws(JOSEError) -> [UInt8] {
        let epk = try prepare(recipient: privateKey.publicKey, recipientKeyID: recipientKeyID, understood: understoodCriticalHeaders)
        let sharedSecret = try JOSECrypto.sharedSecret(privateKey, with: epk)
        return try open(sharedSecret: sharedSecret, maximumDecompressedSize: maximumDecompressedSize)
    }

    /// Decrypts with a private EC JWK (its `kid`, when present, must match the header's).
    public func decrypt(
        with jwk: JWK, understoodCriticalHeaders: Set<String> = [],
        maximumDecompressedSize: Int = JWE.defaultMaximumDecompressedSize
    ) throws(JOSEError) -> [UInt8] {
        let privateKey = try jwk.ecPrivateKey()
        let epk = try prepare(recipient: privateKey.publicKey, recipientKeyID: jwk.keyID, understood: understoodCriticalHeaders)
        let sharedSecret = try JOSECrypto.sharedSecret(privateKey, with: epk)
        return try open(sharedSecret: sharedSecret, maximumDecompressedSize: maximumDecompressedSize)
    }
}
