import Foundation
import JOSE
import Testing
import WalletCrypto
import WalletRuntime
import WalletEncoding

@Suite("Published JOSE vectors")
struct VectorTests {
    @Test("the RFC 7638 thumbprints and canonical JSON are reproduced")
    func thumbprints() throws {
        let file = try Fixtures.sharedVector("jose/jwk_thumbprint_rfc7638.json")
        let vectors = try #require(file["vectors"]?.arrayValue)
        #expect(vectors.count == 2)
        for vector in vectors {
            let jwk = try Fixtures.jwk(vector["inputs"]?["jwk"])
            #expect(jwk.thumbprintInput == vector["expected"]?["canonical_json"]?.stringValue)
            #expect(jwk.thumbprint == vector["expected"]?["thumbprint_sha256_b64url"]?.stringValue)
        }
    }

    @Test("the OpenID4VP 1.0 encrypted response decrypts to its published payload")
    func openID4VPEncryptedResponse() async throws {
        let file = try Fixtures.sharedVector("openid4vp/encrypted_response_jwe.json")
        let jwk = try Fixtures.jwk(file["inputs"]?["verifier_private_jwk"])
        let compact = try #require(file["inputs"]?["response_jwe_compact"]?.stringValue)
        let jwe = try JWE(compact: compact)
        #expect(jwe.header.keyID == "ac")
        #expect(jwe.contentEncryption == .a128gcm)
        #expect(jwe.header.members == file["expected"]?["protected_header"]?.objectValue)

        let plaintext = try jwe.decrypt(with: jwk)
        #expect(try JSONValue.parse(plaintext) == file["expected"]?["payload"])
        #expect(String(decoding: plaintext, as: UTF8.self)
            == "{\n \"vp_token\": {\"example_credential_id\": [\"eyJhb...YMetA\"]}\n}")

        // The same through the KeyAgreement seam (as a secure-area key would be used).
        let viaAgreement = try await jwe.decrypt(with: try jwk.ecPrivateKey(), recipientKeyID: "ac")
        #expect(viaAgreement == plaintext)
    }

    @Test("the RFC 7515 Appendix A.3 ES256 JWS verifies over its exact signing input")
    func rfc7515A3() throws {
        let vector = try Fixtures.localVector("rfc7515_a3_es256.json")
        let jwk = try Fixtures.jwk(vector["jwk"])
        let jws = try JWS(compact: try #require(vector["compact"]?.stringValue))
        #expect(jws.algorithm == .es256)
        try jws.verify(with: jwk.publicJWK)
        try jws.verify(with: try jwk.publicKey())
        // The payload has CRLFs: the signature is over the received bytes, not a re-encoding.
        #expect(try JSONValue.parse(jws.payload) == vector["expected_claims"])
        let jwt = try JWT(compact: jws.compactSerialization)
        #expect(jwt.claims.issuer == "joe")
        #expect(jwt.claims.expiration == Date(timeIntervalSince1970: 1_300_819_380))
        #expect(jwt.claims["http://example.com/is_root"] == .bool(true))
    }

    @Test("the RFC 7515 Appendix A.4 ES512 JWS verifies")
    func rfc7515A4() throws {
        let vector = try Fixtures.localVector("rfc7515_a4_es512.json")
        let jwk = try Fixtures.jwk(vector["jwk"])
        let jws = try JWS(compact: try #require(vector["compact"]?.stringValue))
        try jws.verify(with: jwk)
        #expect(jws.payload == Array("Payload".utf8))
    }

    @Test("the RFC 7518 Appendix C ECDH-ES derived key is reproduced from both sides")
    func rfc7518AppendixC() throws {
        let vector = try Fixtures.localVector("rfc7518_c_ecdh_es.json")
        let alice = try Fixtures.jwk(vector["alice_ephemeral_jwk"]).ecPrivateKey()
        let bob = try Fixtures.jwk(vector["bob_jwk"]).ecPrivateKey()
        let expected = try #require(vector["derived_key_b64"]?.stringValue)
        for z in [try alice.sharedSecret(with: bob.publicKey), try bob.sharedSecret(with: alice.publicKey)] {
            let key = try z.concatKDFDerivedSymmetricKey(
                algorithmID: "A128GCM", partyUInfo: Array("Alice".utf8), partyVInfo: Array("Bob".utf8),
                outputByteCount: 16)
            #expect(key.withUnsafeBytes { Base64URL.encode(Array($0)) } == expected)
        }
    }
}
