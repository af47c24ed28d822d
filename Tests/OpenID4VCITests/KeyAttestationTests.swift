import Foundation
import JOSE
import Testing
import WalletCrypto
import WalletRuntime
import OpenID4VCI
import WalletStorage
import WalletEncoding

@Suite("Key attestation (OpenID4VCI 1.0 Appendix D)")
struct KeyAttestationTests {
    @Test("an attestation over secure-area keys verifies and names every key, with and without a nonce")
    func attestsSecureAreaKeys() async throws {
        let provider = try WalletProviderFixture()
        let area = try SoftwareSecureArea(location: .inMemory, wrapping: try EphemeralWrappingProvider())
        let infos = try await area.createKeys(count: 3, options: KeyCreationOptions())
        let attestation = try await provider.issuer.attest(infos.map(\.publicKey), nonce: "c-nonce-1", now: Date())
        let verified = try KeyAttestationVerifier(trustAnchors: [provider.anchor])
            .verify(attestation.compactSerialization, expectedNonce: "c-nonce-1", at: Date())
        #expect(verified.attestedKeys == infos.map { JWK(publicKey: $0.publicKey) })
        #expect(verified.keyStorage == [.iso18045Basic])
        #expect(verified.userAuthentication == [.iso18045Basic])
        #expect(verified.nonce == "c-nonce-1")
        #expect(verified.issuer == "https://wallet-provider.example")
        let header = try JWT(compact: attestation.compactSerialization).header
        #expect(header.type == "key-attestation+jwt")
        #expect(header["x5c"]?.arrayValue?.count == 1)

        let unbound = try await provider.issuer.attest([infos[0].publicKey], nonce: nil, now: Date())
        #expect(try KeyAttestationVerifier(trustAnchors: [provider.anchor])
            .verify(unbound.compactSerialization, expectedNonce: nil, at: Date()).nonce == nil)
        await #expect(throws: KeyAttestationError.invalidAttestedKeys(.missingOrEmpty)) {
            _ = try await provider.issuer.attest([], nonce: nil, now: Date())
        }
    }

    @Test("the verifier rejects a tampered payload, another anchor, a wrong nonce, expiry and a wrong typ")
    func negativeCases() async throws {
        let provider = try WalletProviderFixture(validity: 600)
        let key = try ECPrivateKey.generate(curve: .p256)
        let now = Date()
        let attestation = try await provider.issuer.attest([.ec(key.publicKey)], nonce: "n-1", now: now)
        let verifier = KeyAttestationVerifier(trustAnchors: [provider.anchor])
        #expect(throws: Never.self) { _ = try verifier.verify(attestation.compactSerialization, expectedNonce: "n-1", at: now) }

        // Tampered: another attested key, same signature.
        let parts = attestation.compactSerialization.split(separator: ".").map(String.init)
        let payloadBytes = try #require(Base64URL.decode(parts[1]))
        var claims = try #require(try JSONValue.parse(payloadBytes).objectValue)
        claims["attested_keys"] = .array([JWK(publicKey: .ec(try ECPrivateKey.generate(curve: .p256).publicKey)).jsonValue])
        let tampered = parts[0] + "." + Base64URL.encode(JSONValue.object(claims).serializedBytes) + "." + parts[2]
        #expect(throws: KeyAttestationError.invalidSignature) {
            _ = try verifier.verify(tampered, expectedNonce: "n-1", at: now)
        }
        let stranger = try WalletProviderFixture()
        #expect(throws: KeyAttestationError.self) {
            _ = try KeyAttestationVerifier(trustAnchors: [stranger.anchor]).verify(attestation.compactSerialization, expectedNonce: "n-1", at: now)
        }
        #expect(throws: KeyAttestationError.nonceMismatch) {
            _ = try verifier.verify(attestation.compactSerialization, expectedNonce: "n-2", at: now)
        }
        let issued = Date(timeIntervalSince1970: now.timeIntervalSince1970.rounded(.down))
        let later = now.addingTimeInterval(3600), earlier = now.addingTimeInterval(-3600)
        #expect(throws: KeyAttestationError.invalidTime(.expired(exp: issued.addingTimeInterval(600), now: later))) {
            _ = try verifier.verify(attestation.compactSerialization, expectedNonce: "n-1", at: later)
        }
        #expect(throws: KeyAttestationError.invalidTime(.issuedInFuture(iat: issued, now: earlier))) {
            _ = try verifier.verify(attestation.compactSerialization, expectedNonce: "n-1", at: earlier)
        }
        // Same claims and chain, but typ JWT.
        let wrongType = try await JWT.sign(
            claims: try JWTClaims(json: payloadBytes), signer: provider.issuer.signer,
            type: "JWT", x5c: provider.issuer.certificateChain)
        #expect(throws: KeyAttestationError.wrongType("JWT")) {
            _ = try verifier.verify(wrongType.compactSerialization, expectedNonce: "n-1", at: now)
        }
    }

    @Test("an attestation signed under another anchor is untrusted(unknownAnchor); one by a non-signing or CA certificate is refused")
    func signerPolicy() async throws {
        let provider = try WalletProviderFixture()
        let key = try ECPrivateKey.generate(curve: .p256)
        let now = Date()
        let attestation = try await provider.issuer.attest([.ec(key.publicKey)], nonce: "n", now: now)
        let stranger = try WalletProviderFixture()
        #expect(throws: KeyAttestationError.untrusted(.unknownAnchor)) {
            _ = try KeyAttestationVerifier(trustAnchors: [stranger.anchor]).verify(attestation.compactSerialization, expectedNonce: "n", at: now)
        }
        // The same provider root, but the attestation signed by a key certified only for key agreement.
        let rootKey = try ECPrivateKey.generate(curve: .p256)
        let root = try CertificateBuilder.certificateAuthority(subject: try DistinguishedName([(.commonName, "Provider Root")]),
                                                               notBefore: now.addingTimeInterval(-60), notAfter: now.addingTimeInterval(86_400))
            .selfSigned(with: .ec(rootKey))
        let leafKey = try ECPrivateKey.generate(curve: .p256)
        let agreementOnly = try CertificateBuilder.endEntity(
            subject: try DistinguishedName([(.commonName, "Provider ECDH")]), subjectPublicKeyInfoDER: leafKey.publicKey.spkiDER,
            notBefore: now.addingTimeInterval(-60), notAfter: now.addingTimeInterval(86_400), keyUsage: .keyAgreement
        ).signed(by: root, key: .ec(rootKey))
        let byAgreementKey = try await KeyAttestationIssuer(signer: SoftwareSigner(leafKey), certificateChain: [agreementOnly],
                                                            keyStorage: [], userAuthentication: [])
            .attest([.ec(key.publicKey)], nonce: "n", now: now)
        #expect(throws: KeyAttestationError.untrusted(.missingKeyUsage(required: .digitalSignature, depth: 0))) {
            _ = try KeyAttestationVerifier(trustAnchors: [root]).verify(byAgreementKey.compactSerialization, expectedNonce: "n", at: now)
        }
        let byRoot = try await KeyAttestationIssuer(signer: SoftwareSigner(rootKey), certificateChain: [root],
                                                    keyStorage: [], userAuthentication: [])
            .attest([.ec(key.publicKey)], nonce: "n", now: now)
        #expect(throws: KeyAttestationError.untrusted(.leafIsCA)) {
            _ = try KeyAttestationVerifier(trustAnchors: [root]).verify(byRoot.compactSerialization, expectedNonce: "n", at: now)
        }
    }

    @Test("the Appendix D.1 example's claims are read (its x5c is truncated, so it cannot verify)")
    func specExampleClaims() throws {
        let url = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent().appendingPathComponent("../shared/vectors/openid4vci/proofs_and_key_attestation.json")
        let vector = try JSONValue.parse(Array(try Data(contentsOf: url)))
        let example = try #require(vector["inputs"]?["key_attestation"])
        let payload = try #require(example["payload_text"]?.stringValue)
        let header = try #require(example["header_json"])
        // Re-sign the published payload bytes (exact) with a test provider to read them back.
        let compact = Base64URL.encode(JSONValue.object(["typ": header["typ"] ?? .null, "alg": "ES256"]).serializedBytes)
            + "." + Base64URL.encode(Array(payload.utf8)) + "." + Base64URL.encode([UInt8](repeating: 0, count: 64))
        let parsed = try KeyAttestation(unverified: compact)
        let expectedKey = try JWK(members: try #require(vector["expected"]?["key_attestation_attested_key"]?.objectValue))
        #expect(parsed.attestedKeys == [expectedKey])
        #expect(parsed.keyStorage == [.iso18045Moderate])
        #expect(parsed.userAuthentication == [.iso18045Moderate])
        #expect(parsed.issuedAt == Date(timeIntervalSince1970: 1516247022))
        #expect(parsed.expiresAt == Date(timeIntervalSince1970: 1541493724))
        // It has no x5c a verifier could check.
        #expect(throws: KeyAttestationError.self) {
            _ = try KeyAttestationVerifier(trustAnchors: []).verify(compact, expectedNonce: nil, at: Date(timeIntervalSince1970: 1516247100))
        }
    }
}

/// A wallet provider: a root CA and a leaf certificate for its attestation key.
struct WalletProviderFixture {
    let anchor: X509Certificate
    let issuer: KeyAttestationIssuer

    init(validity: TimeInterval = 3600, now: Date = Date()) throws {
        let later = now.addingTimeInterval(365 * 86_400)
        let rootKey = try ECPrivateKey.generate(curve: .p256)
        anchor = try CertificateBuilder.certificateAuthority(
            subject: try DistinguishedName([(.commonName, "Test Wallet Provider Root")]),
            notBefore: now.addingTimeInterval(-86_400), notAfter: later
        ).selfSigned(with: .ec(rootKey))
        let leafKey = try ECPrivateKey.generate(curve: .p256)
        let leaf = try CertificateBuilder.endEntity(
            subject: try DistinguishedName([(.commonName, "Test Wallet Provider Key Attestation")]),
            subjectPublicKeyInfoDER: leafKey.publicKey.spkiDER, notBefore: now.addingTimeInterval(-86_400), notAfter: later
        ).signed(by: anchor, key: .ec(rootKey))
        issuer = KeyAttestationIssuer(
            signer: SoftwareSigner(leafKey), certificateChain: [leaf], issuer: "https://wallet-provider.example",
            keyStorage: [.iso18045Basic], userAuthentication: [.iso18045Basic], validity: validity)
    }
}
