import Foundation
import JOSE
import ReferenceParties
import Testing
import WalletCrypto
import WalletEncoding
import WalletRuntime

@Suite("Reference issuer: encrypted credential requests and responses (OpenID4VCI 1.0 §10)")
struct IssuerEncryptionTests {
    private let pid = IssuerCredentialConfiguration.pidId

    private func encrypting(required: Bool = false, zip: [String] = []) async throws -> IssuerHarness {
        try await IssuerHarness.make {
            $0.requestEncryption = EncryptionSupport(required: required, compression: zip)
            $0.responseEncryption = EncryptionSupport(required: required, compression: zip)
        }
    }

    /// The request-encryption key from the metadata.
    private func issuerKey(_ harness: IssuerHarness) async throws -> JWK {
        let metadata = try json(try await harness.get("https://issuer.example/.well-known/openid-credential-issuer"))
        return try JWK(members: try metadata.object("credential_request_encryption").object("jwks").objectArray("keys")[0])
    }

    private func body(_ harness: IssuerHarness, responseKey: ECPrivateKey?, enc: String = "A256GCM") async throws -> JSONObject {
        let proof = try await HolderKey().proof(audience: harness.credentialIssuer, nonce: try await harness.cNonce(), at: harness.clock.now)
        var body: JSONObject = ["credential_configuration_id": .string(pid), "proofs": ["jwt": [.string(proof)]]]
        if let responseKey {
            var jwk = JWK(publicKey: responseKey.publicKey).members
            jwk["alg"] = "ECDH-ES"
            body["credential_response_encryption"] = ["jwk": .object(jwk), "enc": .string(enc)]
        }
        return body
    }

    private func sendEncrypted(_ harness: IssuerHarness, _ body: JSONObject, to key: JWK, grant: TokenGrant,
                               enc: ContentEncryptionAlgorithm = .a128gcm, compress: Bool = false) async throws -> HTTPResponse {
        let jwe = try JWE.encrypt(JSONValue.object(body).serializedBytes, to: key, contentEncryption: enc, compress: compress)
        var headers = try await grant.authorization(method: "POST", url: harness.url("/credential"), at: harness.clock.now)
        headers["Content-Type"] = "application/jwt"
        return try await harness.send(.post, harness.url("/credential"), headers: headers, body: Array(jwe.compactSerialization.utf8))
    }

    @Test("an encrypted request (kid echoed) asking for an encrypted response gets a JWE to the wallet's key")
    func roundTrip() async throws {
        let harness = try await encrypting()
        let grant = try await harness.preAuthorizedToken()
        let responseKey = try ECPrivateKey.generate(curve: .p256)
        let issuerKey = try await issuerKey(harness)
        let response = try await sendEncrypted(harness, try await body(harness, responseKey: responseKey), to: issuerKey, grant: grant)
        #expect(response.status == 200)
        #expect(response.headers["Content-Type"] == "application/jwt")
        let jwe = try JWE(compact: String(decoding: response.body, as: UTF8.self))
        #expect(jwe.contentEncryption == .a256gcm)
        let plaintext = try JSONValue.parseObject(try jwe.decrypt(with: responseKey))
        #expect(try plaintext.objectArray("credentials").count == 1)
        let record = try #require(await harness.issuer.inspection.credentialRequests.last)
        #expect(record.encrypted && record.responseEncryption == "A256GCM")
    }

    @Test("a compressed request and response when zip DEF is supported")
    func compression() async throws {
        let harness = try await encrypting(zip: ["DEF"])
        let grant = try await harness.preAuthorizedToken()
        let responseKey = try ECPrivateKey.generate(curve: .p256)
        var request = try await body(harness, responseKey: responseKey)
        var encryption = try request.object("credential_response_encryption")
        encryption["zip"] = "DEF"
        request["credential_response_encryption"] = .object(encryption)
        let response = try await sendEncrypted(harness, request, to: try await issuerKey(harness), grant: grant, compress: true)
        let jwe = try JWE(compact: String(decoding: response.body, as: UTF8.self))
        #expect(jwe.header.compression == "DEF")
        #expect(try JSONValue.parseObject(try jwe.decrypt(with: responseKey))["credentials"] != nil)
    }

    @Test("required encryption: a plaintext request, or one without response keys, is invalid_encryption_parameters")
    func required() async throws {
        let harness = try await encrypting(required: true)
        let grant = try await harness.preAuthorizedToken()
        let plain = try await harness.credentialRequest(try await body(harness, responseKey: nil), grant: grant)
        #expect(plain.status == 400 && oauthError(plain) == "invalid_encryption_parameters")
        #expect(plain.headers["Content-Type"] == "application/json")
        let noResponseKey = try await sendEncrypted(harness, try await body(harness, responseKey: nil), to: try await issuerKey(harness),
                                                    grant: grant)
        #expect(oauthError(noResponseKey) == "invalid_encryption_parameters")
    }

    @Test("asking for response encryption in a plaintext request is refused (the key could have been swapped)")
    func responseKeyInPlaintext() async throws {
        let harness = try await encrypting()
        let grant = try await harness.preAuthorizedToken()
        let response = try await harness.credentialRequest(try await body(harness, responseKey: try ECPrivateKey.generate(curve: .p256)),
                                                           grant: grant)
        #expect(oauthError(response) == "invalid_encryption_parameters")
        // Optional encryption: a plain request without response keys is fine.
        #expect(try await harness.credentialRequest(try await body(harness, responseKey: nil), grant: grant).status == 200)
    }

    @Test("a JWE without kid, to an unknown kid, with an unsupported enc or zip, or tampered, is refused")
    func badRequestJWEs() async throws {
        let harness = try await encrypting()
        let grant = try await harness.preAuthorizedToken()
        let issuerKey = try await issuerKey(harness)
        let responseKey = try ECPrivateKey.generate(curve: .p256)
        let noKid = try JWK(members: issuerKey.members.filter { $0.key != "kid" })
        let unknownKid = try issuerKey.adding(["kid": "other"])
        for (name, key, enc, compress) in [("no kid", noKid, ContentEncryptionAlgorithm.a128gcm, false),
                                           ("unknown kid", unknownKid, .a128gcm, false),
                                           ("A192GCM not advertised", issuerKey, .a192gcm, false),
                                           ("zip not advertised", issuerKey, .a128gcm, true)] {
            let response = try await sendEncrypted(harness, try await body(harness, responseKey: responseKey), to: key, grant: grant,
                                                   enc: enc, compress: compress)
            #expect(oauthError(response) == "invalid_encryption_parameters", "\(name)")
        }
        let wrongEnc = try await sendEncrypted(harness, try await body(harness, responseKey: responseKey, enc: "A192GCM"),
                                               to: issuerKey, grant: grant)
        #expect(oauthError(wrongEnc) == "invalid_encryption_parameters")
        var keyWithoutAlg = try await body(harness, responseKey: responseKey)
        keyWithoutAlg["credential_response_encryption"] = ["jwk": JWK(publicKey: responseKey.publicKey).jsonValue, "enc": "A128GCM"]
        #expect(oauthError(try await sendEncrypted(harness, keyWithoutAlg, to: issuerKey, grant: grant)) == "invalid_encryption_parameters")
    }

    @Test("behaviour: a plaintext answer to an encrypted request")
    func plaintextAnswer() async throws {
        let harness = try await encrypting()
        try await harness.issuer.setBehaviour(IssuerBehaviour(answerPlaintextToEncryptedRequest: true))
        let grant = try await harness.preAuthorizedToken()
        let response = try await sendEncrypted(harness, try await body(harness, responseKey: try ECPrivateKey.generate(curve: .p256)),
                                               to: try await issuerKey(harness), grant: grant)
        #expect(response.status == 200 && response.headers["Content-Type"] == "application/json")
        #expect(try json(response)["credentials"] != nil)
    }

    @Test("behaviour: response encryption advertised without request-encryption keys")
    func advertisedWithoutRequestKeys() async throws {
        let harness = try await IssuerHarness.make {
            $0.responseEncryption = EncryptionSupport(required: true)
            $0.behaviour.advertiseResponseEncryptionWithoutRequestKeys = true
        }
        let metadata = try json(try await harness.get("https://issuer.example/.well-known/openid-credential-issuer"))
        #expect(metadata["credential_response_encryption"] != nil)
        #expect(metadata["credential_request_encryption"] == nil)
        // Such an issuer answers a plaintext request with a response key, encrypted.
        let grant = try await harness.preAuthorizedToken()
        let responseKey = try ECPrivateKey.generate(curve: .p256)
        let response = try await harness.credentialRequest(try await body(harness, responseKey: responseKey, enc: "A128GCM"), grant: grant)
        #expect(response.headers["Content-Type"] == "application/jwt")
    }
}
