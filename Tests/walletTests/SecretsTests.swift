import COSE
import Foundation
import JOSE
import Mdoc
import Testing
import WalletCrypto
import WalletEncoding
import WalletStorage

/// Every way a value can be rendered for a log or a debugger: `description`,
/// `debugDescription`, `dump`, and the values of its mirror, recursively.
private func renderings(of value: Any) -> [String] {
    var dumped = ""
    dump(value, to: &dumped)
    var texts = [String(describing: value), String(reflecting: value), dumped]
    func walk(_ subject: Any, depth: Int) {
        guard depth < 8 else { return }
        for child in Mirror(reflecting: subject).children {
            texts.append(String(reflecting: child.value))
            walk(child.value, depth: depth + 1)
        }
    }
    walk(value, depth: 0)
    return texts
}

/// The spellings under which `secret` could show up in a rendering: hex (both cases),
/// base64url, base64, and the decimal array form Swift prints `[UInt8]` in.
private func spellings(of secret: [UInt8]) -> [String] {
    [Hex.encode(secret), Hex.encode(secret).uppercased(), Base64URL.encode(secret), Base64.encode(secret),
     String(describing: secret), secret.map(String.init).joined(separator: ", ")]
}

/// Records an issue for every rendering of `value` that holds a spelling of a secret.
private func expectNoSecrets(in value: Any, _ secrets: [[UInt8]], texts: [String] = [], _ name: String,
                             sourceLocation: SourceLocation = #_sourceLocation) {
    let needles = secrets.flatMap(spellings(of:)) + texts
    for rendering in renderings(of: value) {
        for needle in needles where rendering.contains(needle) {
            Issue.record("\(name) shows secret material in: \(rendering.prefix(200))", sourceLocation: sourceLocation)
        }
    }
}

/// Issue 11, acceptance 3: the description, debug description and mirror of every key,
/// secret and session-key type hold no key bytes.
@Suite("Secrets never print")
struct SecretsTests {
    @Test("the detector finds bytes and text that a plain value prints (so the checks below can fail)")
    func detectorControl() throws {
        struct Plain { let key: [UInt8]; let nested: [String: String] }
        let bytes = try SystemRandom().bytes(count: 32)
        let value = Plain(key: bytes, nested: ["p": "hunter2-\(bytes.count)"])
        let renderings = renderings(of: value)
        #expect(renderings.contains { text in spellings(of: bytes).contains { text.contains($0) } })
        #expect(renderings.contains { $0.contains("hunter2-32") })
    }

    @Test("private keys, signers and key agreements render without their private bytes")
    func privateKeys() throws {
        let ec = try ECPrivateKey.generate(curve: .p256)
        let scalar = try ec.rawScalar()
        let ecDER = try ec.pkcs8DER()
        let ed = try Ed25519PrivateKey.generate()
        let seed = try ed.rawRepresentation()
        for (name, value) in [("ECPrivateKey", ec as Any), ("SoftwareSigner(EC)", SoftwareSigner(ec)),
                              ("SoftwareKeyAgreement", SoftwareKeyAgreement(ec)),
                              ("CertificateSigningKey", CertificateSigningKey.ec(ec))] {
            expectNoSecrets(in: value, [scalar, ecDER], name)
        }
        for (name, value) in [("Ed25519PrivateKey", ed as Any), ("SoftwareSigner(Ed25519)", SoftwareSigner(ed)),
                              ("CertificateSigningKey", CertificateSigningKey.ed25519(ed))] {
            expectNoSecrets(in: value, [seed], name)
        }
    }

    @Test("symmetric keys, shared secrets and the keys derived from them render as their length only")
    func symmetricSecrets() throws {
        let bytes = try SystemRandom().bytes(count: 32)
        let key = SymmetricKey(bytes: bytes)
        expectNoSecrets(in: key, [bytes], "SymmetricKey")
        #expect(String(describing: key) == "SymmetricKey(256 bits)")
        let a = try ECPrivateKey.generate(curve: .p256), b = try ECPrivateKey.generate(curve: .p256)
        let shared = try a.sharedSecret(with: b.publicKey)
        let sharedBytes = shared.withUnsafeBytes { Array($0) }
        expectNoSecrets(in: shared, [sharedBytes], "SharedSecret")
        let derived = try shared.hkdfDerivedSymmetricKey(outputByteCount: 32)
        expectNoSecrets(in: derived, [derived.withUnsafeBytes { Array($0) }], "HKDF-derived SymmetricKey")
        let cek = try shared.concatKDFDerivedSymmetricKey(algorithmID: "A128GCM", outputByteCount: 16)
        expectNoSecrets(in: cek, [cek.withUnsafeBytes { Array($0) }], "Concat KDF content-encryption key")
    }

    @Test("ISO 18013-5 session keys, EMacKey and the session encryption render without key bytes")
    func sessionKeys() async throws {
        let skReader = try SystemRandom().bytes(count: 32), skDevice = try SystemRandom().bytes(count: 32)
        let keys = SessionKeys(skReader: SymmetricKey(bytes: skReader), skDevice: SymmetricKey(bytes: skDevice))
        expectNoSecrets(in: keys, [skReader, skDevice], "SessionKeys")
        let reader = try ECPrivateKey.generate(curve: .p256), device = try ECPrivateKey.generate(curve: .p256)
        let transcript = SessionTranscript(
            deviceEngagement: DeviceEngagement(security: EngagementSecurity(eDeviceKey: device.publicKey)),
            eReaderKeyEncoded: COSEKey(publicKey: .ec(reader.publicKey)).encoded(), handover: .qr)
        let derived = try await SessionKeys.derive(privateKey: SoftwareKeyAgreement(reader), peerPublicKey: device.publicKey,
                                                   sessionTranscript: transcript)
        let derivedBytes = [derived.skReader, derived.skDevice].map { $0.withUnsafeBytes { Array($0) } }
        expectNoSecrets(in: derived, derivedBytes, "derived SessionKeys")
        let encryption = SessionEncryption(role: .reader, keys: derived, sessionTranscript: transcript)
        expectNoSecrets(in: encryption, derivedBytes + [try reader.rawScalar()], "SessionEncryption")
        let eMacKey = try await SessionKeys.eMacKey(privateKey: SoftwareKeyAgreement(device), peerPublicKey: reader.publicKey,
                                                    sessionTranscript: transcript)
        expectNoSecrets(in: eMacKey, [eMacKey.withUnsafeBytes { Array($0) }], "EMacKey")
    }

    @Test("a private JWK prints without d, a symmetric JWK without k; COSE_Keys likewise")
    func encodedKeys() throws {
        let ec = try ECPrivateKey.generate(curve: .p384)
        let jwk = try JWK(privateKey: ec)
        let scalar = try ec.rawScalar()
        expectNoSecrets(in: jwk, [scalar], "private JWK")
        #expect(String(describing: jwk).contains("<redacted>"))
        #expect(String(describing: jwk).contains(Base64URL.encode(ec.publicKey.x)), "the public members stay visible")
        let symmetricBytes = try SystemRandom().bytes(count: 32)
        expectNoSecrets(in: try JWK(symmetricKey: SymmetricKey(bytes: symmetricBytes)), [symmetricBytes], "symmetric JWK")
        let ed = try Ed25519PrivateKey.generate()
        expectNoSecrets(in: try JWK(privateKey: ed), [try ed.rawRepresentation()], "private OKP JWK")
        expectNoSecrets(in: try COSEKey(privateKey: ec), [scalar], "private COSE_Key")
        expectNoSecrets(in: try COSEKey(symmetricKey: SymmetricKey(bytes: symmetricBytes)), [symmetricBytes], "symmetric COSE_Key")
    }

    @Test("passphrases, unlock data and the storage's wrapping keys never print")
    func storageSecrets() async throws {
        let passphrase = "correct horse battery staple \(UUID().uuidString)"
        expectNoSecrets(in: KeyProtection.passphrase(passphrase), [], texts: [passphrase], "KeyProtection")
        expectNoSecrets(in: KeyCreationOptions(protection: .passphrase(passphrase)), [], texts: [passphrase], "KeyCreationOptions")
        expectNoSecrets(in: PassphraseUnlock(passphrase), [], texts: [passphrase], "PassphraseUnlock")
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("secrets-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let file = directory.appendingPathComponent("wallet.key")
        let provider = try KeyFileWrappingProvider(fileURL: file)
        expectNoSecrets(in: provider, [try [UInt8](Data(contentsOf: file))], "KeyFileWrappingProvider")
        let area = try SoftwareSecureArea(location: .inMemory, wrapping: try EphemeralWrappingProvider())
        _ = try await area.createKey(alias: "k", options: KeyCreationOptions())
        let signer = try await area.signer(for: "k")
        let agreement = try await area.keyAgreement(for: "k")
        expectNoSecrets(in: signer, [], texts: [], "secure-area signer")
        #expect(Mirror(reflecting: signer).children.isEmpty)
        #expect(Mirror(reflecting: agreement).children.isEmpty)
    }
}
