import Foundation
import JOSE
import Testing
import WalletCrypto
import WalletRuntime
import WalletEncoding

@Suite("JWE")
struct JWETests {
    static let combinations: [(ECCurve, ContentEncryptionAlgorithm)] = ECCurve.allCases.flatMap { curve in
        ContentEncryptionAlgorithm.allCases.map { (curve, $0) }
    }

    @Test("ECDH-ES round trips on every curve and every enc", arguments: combinations)
    func roundTrip(curve: ECCurve, enc: ContentEncryptionAlgorithm) async throws {
        let recipient = try ECPrivateKey.generate(curve: curve)
        let recipientJWK = try JWK(publicKey: recipient.publicKey).adding(["kid": "r1", "use": "enc"])
        let plaintext = Array("secret message".utf8)
        let jwe = try JWE.encrypt(
            plaintext, to: recipientJWK, contentEncryption: enc, agreementPartyUInfo: Array("wallet".utf8),
            agreementPartyVInfo: Array("verifier-nonce".utf8), additionalHeaders: ["typ": "oauth-authz-req+jwt"])
        let parsed = try JWE(compact: jwe.compactSerialization)
        #expect(parsed.header.keyID == "r1")
        #expect(parsed.header.algorithm == "ECDH-ES")
        #expect(parsed.header.encryption == enc.rawValue)
        #expect(parsed.header["apu"] == .string(Base64URL.encode(Array("wallet".utf8))))
        #expect(try parsed.ephemeralPublicKey().curve == curve)
        #expect(try await parsed.decrypt(with: recipient, recipientKeyID: "r1") == plaintext)
        #expect(try parsed.decrypt(with: try JWK(privateKey: recipient).adding(["kid": "r1"])) == plaintext)
    }

    @Test("zip DEF round trips, and an inflated size over the limit is refused")
    func zip() async throws {
        let recipient = try ECPrivateKey.generate(curve: .p256)
        let plaintext = Array(repeating: UInt8(ascii: "a"), count: 200_000)
        let jwe = try JWE.encrypt(plaintext, to: JWK(publicKey: recipient.publicKey), compress: true)
        #expect(jwe.header.compression == "DEF")
        #expect(jwe.ciphertext.count < 2_000)
        let parsed = try JWE(compact: jwe.compactSerialization)
        #expect(try await parsed.decrypt(with: recipient) == plaintext)
        await #expect(throws: JOSEError.decompressedSizeExceeded(limit: 100_000)) {
            try await parsed.decrypt(with: recipient, maximumDecompressedSize: 100_000)
        }
        // A "bomb": 50 MB of zeros compresses to ~50 KB and is stopped at the default 1 MiB.
        let bomb = try JWE.encrypt(Array(repeating: 0, count: 50_000_000), to: JWK(publicKey: recipient.publicKey), compress: true)
        await #expect(throws: JOSEError.decompressedSizeExceeded(limit: JWE.defaultMaximumDecompressedSize)) {
            try await JWE(compact: bomb.compactSerialization).decrypt(with: recipient)
        }
    }

    @Test("a JWE for another recipient does not decrypt with my key")
    func anotherRecipient() async throws {
        let intended = try ECPrivateKey.generate(curve: .p256)
        let other = try ECPrivateKey.generate(curve: .p256)
        let jwe = try JWE.encrypt([1, 2, 3], to: JWK(publicKey: intended.publicKey))
        await #expect(throws: JOSEError.decryptionFailed) { try await jwe.decrypt(with: other) }
        // With kids on both sides the mismatch is named before any crypto.
        let named = try JWE.encrypt([1], to: JWK(publicKey: intended.publicKey).adding(["kid": "theirs"]))
        #expect(throws: JOSEError.keyMismatch(expectedKeyID: "mine", actualKeyID: "theirs")) {
            try named.decrypt(with: try JWK(privateKey: other).adding(["kid": "mine"]))
        }
    }

    @Test("a flipped tag bit, ciphertext bit, IV bit or header byte fails authentication")
    func tampering() async throws {
        let recipient = try ECPrivateKey.generate(curve: .p256)
        let compact = try JWE.encrypt(Array("data".utf8), to: JWK(publicKey: recipient.publicKey)).compactSerialization
        for part in [2, 3, 4] {
            let flipped = Fixtures.replacingPart(part, of: compact) { bytes in
                var copy = bytes
                copy[0] ^= 0x01
                return copy
            }
            await #expect(throws: JOSEError.decryptionFailed) { try await JWE(compact: flipped).decrypt(with: recipient) }
        }
        // Header changed but still valid: the AAD no longer matches.
        let parts = compact.split(separator: ".", omittingEmptySubsequences: false).map(String.init)
        var header = try JOSEHeader(encoded: parts[0]).members
        header["typ"] = "x"
        let changed = ([try JOSEHeader(members: header).encoded] + parts.dropFirst()).joined(separator: ".")
        await #expect(throws: JOSEError.decryptionFailed) { try await JWE(compact: changed).decrypt(with: recipient) }
    }

    @Test("an epk off the curve is an invalid key (invalid-curve attack)")
    func offCurveEPK() async throws {
        let recipient = try ECPrivateKey.generate(curve: .p256)
        let compact = try JWE.encrypt([1], to: JWK(publicKey: recipient.publicKey)).compactSerialization
        let parts = compact.split(separator: ".", omittingEmptySubsequences: false).map(String.init)
        var header = try JOSEHeader(encoded: parts[0]).members
        var epk = try #require(header["epk"]?.objectValue)
        let yText = try #require(epk["y"]?.stringValue)
        var y = try #require(Base64URL.decode(yText))
        y[y.count - 1] ^= 0x01
        epk["y"] = .string(Base64URL.encode(y))
        header["epk"] = .object(epk)
        let attacked = ([try JOSEHeader(members: header).encoded] + parts.dropFirst()).joined(separator: ".")
        await #expect(throws: JOSEError.invalidKey(.invalidPublicKey)) {
            try await JWE(compact: attacked).decrypt(with: recipient)
        }
    }

    @Test("an epk on another curve than the recipient key is a wrong-curve error")
    func epkWrongCurve() async throws {
        let p384 = try ECPrivateKey.generate(curve: .p384)
        let p256 = try ECPrivateKey.generate(curve: .p256)
        let jwe = try JWE.encrypt([1], to: JWK(publicKey: p384.publicKey))
        await #expect(throws: JOSEError.wrongCurve(expected: "P-256", actual: "P-384")) { try await jwe.decrypt(with: p256) }
    }

    @Test("an unknown crit is rejected before decryption")
    func unknownCrit() async throws {
        let recipient = try ECPrivateKey.generate(curve: .p256)
        let jwe = try JWE.encrypt([1], to: JWK(publicKey: recipient.publicKey), additionalHeaders: ["crit": ["ext"], "ext": true])
        await #expect(throws: JOSEError.unknownCriticalHeader(["ext"])) { try await jwe.decrypt(with: recipient) }
        #expect(try await jwe.decrypt(with: recipient, understoodCriticalHeaders: ["ext"]) == [1])
    }

    @Test("malformed compact JWEs and unsupported algorithms are typed errors")
    func malformed() throws {
        let recipient = try ECPrivateKey.generate(curve: .p256)
        let compact = try JWE.encrypt([1], to: JWK(publicKey: recipient.publicKey)).compactSerialization
        let parts = compact.split(separator: ".", omittingEmptySubsequences: false).map(String.init)
        let (h, iv, ct, tag) = (parts[0], parts[2], parts[3], parts[4])
        let brokenHeader = Base64URL.encode(Array("{".utf8))
        let malformed: [String] = [
            "a.b.c.d", "\(h)..\(iv).\(ct)", compact + ".x",
            "\(h).AAAA.\(iv).\(ct).\(tag)",       // encrypted key present
            "\(h)..AAAA.\(ct).\(tag)",             // short IV
            "\(h)..\(iv).\(ct).AAAA",              // short tag
            "\(h)..\(iv).***.\(tag)",              // bad base64url
            "\(brokenHeader)..\(iv).\(ct).\(tag)",
        ]
        for input in malformed {
            do {
                _ = try JWE(compact: input)
                Issue.record("accepted \(input)")
            } catch {
                switch error {
                case .malformed, .invalidJSON: continue
                default: Issue.record("\(input): \(error)")
                }
            }
        }
        func withHeader(_ json: String) -> String {
            ([Base64URL.encode(Array(json.utf8))] + parts.dropFirst()).joined(separator: ".")
        }
        #expect(throws: JOSEError.unsupportedAlgorithm(.alg, value: "RSA-OAEP")) { try JWE(compact: withHeader(#"{"alg":"RSA-OAEP","enc":"A128GCM"}"#)) }
        #expect(throws: JOSEError.unsupportedAlgorithm(.enc, value: "A128CBC-HS256")) {
            try JWE(compact: withHeader(#"{"alg":"ECDH-ES","enc":"A128CBC-HS256","epk":{}}"#))
        }
        #expect(throws: JOSEError.algorithmNotAllowed("none")) { try JWE(compact: withHeader(#"{"alg":"none","enc":"A128GCM"}"#)) }
    }
}
