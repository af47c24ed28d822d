import CBOR
import COSE
import Foundation
import JOSE
import Mdoc
import ReferenceParties
import SDJWT
import Testing
import WalletCrypto
import WalletEncoding
import WalletRuntime

@Suite("Reference issuer: credential endpoint, proofs and minting")
struct IssuerCredentialTests {
    private let pid = IssuerCredentialConfiguration.pidId
    private let mdl = IssuerCredentialConfiguration.mDLId

    private func request(_ id: String, proofs: [String], identifier: Bool = false) -> JSONObject {
        [identifier ? "credential_identifier" : "credential_configuration_id": .string(id),
         "proofs": ["jwt": .array(proofs.map { .string($0) })]]
    }

    private func credentials(_ response: HTTPResponse) throws -> [String] {
        try json(response).objectArray("credentials").map { try $0.string("credential") }
    }

    @Test("an SD-JWT VC PID: x5c chains to the issuer root, iss is the issuer, cnf.jwk is the proof key, claims disclose")
    func sdJwtVc() async throws {
        let harness = try await IssuerHarness.make()
        let grant = try await harness.preAuthorizedToken()
        let holder = try HolderKey()
        let proof = try await holder.proof(audience: harness.credentialIssuer, nonce: try await harness.cNonce(), at: harness.clock.now)
        let response = try await harness.credentialRequest(request(pid, proofs: [proof]), grant: grant)
        #expect(response.status == 200, "\(String(decoding: response.body, as: UTF8.self))")
        #expect(response.headers["Cache-Control"] == "no-store")
        let issued = try credentials(response)
        #expect(issued.count == 1)
        #expect(try json(response).optionalString("notification_id") != nil)
        let verified = try SDJWTVerifier(options: SDJWTVerificationOptions(
            issuerKey: .certificateChain(trustAnchors: [harness.issuer.trustAnchors.issuerRoot]), now: harness.clock.now,
            expectedIssuer: harness.credentialIssuer, acceptedTypes: ["urn:eudi:pid:1"])).verify(try #require(issued.first))
        #expect(verified.holderKey?.thumbprint == holder.jwk.thumbprint)
        #expect(verified.claims["family_name"]?.stringValue == "Mustermann")
        #expect(verified.claims["address"]?["locality"]?.stringValue == "Koeln")
        #expect(verified.sdJWT.payload["exp"]?.doubleValue == harness.clock.now.timeIntervalSince1970 + 365 * 86_400)
        #expect(verified.sdJWT.disclosures.count >= 12)
        let record = try #require(await harness.issuer.inspection.credentialRequests.last)
        #expect(record.credentialConfigurationId == pid && record.proofs.first?.keys == [holder.jwk])
        #expect(await harness.issuer.inspection.issuedCredentials.first?.boundKey == holder.jwk)
    }

    @Test("with jwt-vc-issuer key resolution the SD-JWT VC names the published key by kid")
    func sdJwtVcByKid() async throws {
        let harness = try await IssuerHarness.make { $0.sdJwtKeyResolution = .jwtVCIssuerMetadata }
        let grant = try await harness.preAuthorizedToken()
        let proof = try await HolderKey().proof(audience: harness.credentialIssuer, nonce: try await harness.cNonce(), at: harness.clock.now)
        let issued = try credentials(try await harness.credentialRequest(request(pid, proofs: [proof]), grant: grant))
        let metadata = try json(try await harness.get("https://issuer.example/.well-known/jwt-vc-issuer"))
        let published = try JWKSet(value: try metadata.value("jwks"))
        let sdJWT = try SDJWT(compact: try #require(issued.first))
        #expect(sdJWT.issuerSignedJWT.header["x5c"] == nil)
        let keyID = try #require(sdJWT.issuerSignedJWT.header.keyID)
        let key = try #require(published.key(withID: keyID))
        _ = try SDJWTVerifier(options: SDJWTVerificationOptions(issuerKey: .jwk(key), now: harness.clock.now)).verify(sdJWT)
    }

    @Test("an mDL: issuerAuth chains to the IACA, the MSO deviceKey is the proof key, docType and validity are right")
    func mdoc() async throws {
        let harness = try await IssuerHarness.make()
        let grant = try await harness.preAuthorizedToken([mdl])
        let holder = try HolderKey()
        let proof = try await holder.proof(audience: harness.credentialIssuer, nonce: try await harness.cNonce(), at: harness.clock.now)
        let issued = try credentials(try await harness.credentialRequest(request(mdl, proofs: [proof]), grant: grant))
        let first = try #require(issued.first)
        let bytes = try #require(Base64URL.decodeStrict(first))
        let document = try IssuerSigned(encoded: bytes)
        _ = try document.issuerAuth.verify(trustAnchors: [harness.issuer.trustAnchors.iaca], at: harness.clock.now, policy: .mdocDocumentSigner)
        let mso = document.mobileSecurityObject
        #expect(mso.docType == "org.iso.18013.5.1.mDL")
        #expect(try mso.devicePublicKey() == .ec(holder.key.publicKey))
        #expect(mso.validityInfo.validFrom == harness.clock.now)
        #expect(mso.validityInfo.validUntil == harness.clock.now.addingTimeInterval(365 * 86_400))
        #expect(mso.keyAuthorizations == nil)
        let names = document.items(in: IssuerCredentialConfiguration.mDLNameSpace).map(\.item.elementIdentifier)
        #expect(names.contains("family_name") && names.contains("driving_privileges"))
        // Every item's digest is in the MSO (the bytes as issued, not re-encoded).
        for item in document.items(in: IssuerCredentialConfiguration.mDLNameSpace) {
            #expect(mso.valueDigests[IssuerCredentialConfiguration.mDLNameSpace]?[item.item.digestID] == item.digest(.sha256))
        }
    }

    @Test("an mDL configuration's keyAuthorizations are signed into each MSO, which then authorises the device to sign those elements")
    func mdocKeyAuthorizations() async throws {
        let authorizations = KeyAuthorizations(nameSpaces: ["org.openid4vp.transaction_data"],
                                               dataElements: ["org.example.extra": ["a", "b"]])
        let harness = try await IssuerHarness.make { $0.credentialConfigurations = [.pid(), .mDL(keyAuthorizations: authorizations)] }
        let grant = try await harness.preAuthorizedToken([mdl])
        let proof = try await HolderKey().proof(audience: harness.credentialIssuer, nonce: try await harness.cNonce(), at: harness.clock.now)
        let issued = try credentials(try await harness.credentialRequest(request(mdl, proofs: [proof]), grant: grant))
        let first = try #require(issued.first)
        let document = try IssuerSigned(encoded: try #require(Base64URL.decodeStrict(first)))
        _ = try document.issuerAuth.verify(trustAnchors: [harness.issuer.trustAnchors.iaca], at: harness.clock.now, policy: .mdocDocumentSigner)
        let mso = document.mobileSecurityObject
        #expect(mso.keyAuthorizations == authorizations)
        #expect(mso.keyAuthorizations?.authorizes(nameSpace: "org.openid4vp.transaction_data", elementIdentifier: "payment") == true)
        #expect(mso.keyAuthorizations?.authorizes(nameSpace: "org.example.extra", elementIdentifier: "c") == false)
        #expect(mso.keyAuthorizations?.authorizes(nameSpace: IssuerCredentialConfiguration.mDLNameSpace, elementIdentifier: "family_name") == false)
    }

    @Test("a batch of 5 proofs gives 5 credentials, each bound to its own proof key")
    func batch() async throws {
        let harness = try await IssuerHarness.make()
        let grant = try await harness.preAuthorizedToken()
        let nonce = try await harness.cNonce()
        let holders = try (0..<5).map { _ in try HolderKey() }
        var proofs: [String] = []
        for holder in holders { proofs.append(try await holder.proof(audience: harness.credentialIssuer, nonce: nonce, at: harness.clock.now)) }
        let issued = try credentials(try await harness.credentialRequest(request(pid, proofs: proofs), grant: grant))
        #expect(issued.count == 5)
        let keys = try issued.map { try SDJWT(compact: $0).payload.confirmationKey()?.thumbprint }
        #expect(keys == holders.map { $0.jwk.thumbprint })
    }

    @Test("more keys than batch_size, or several keys without batch support, is invalid_credential_request")
    func batchLimits() async throws {
        let harness = try await IssuerHarness.make { $0.batchSize = 2 }
        let grant = try await harness.preAuthorizedToken()
        let nonce = try await harness.cNonce()
        var proofs: [String] = []
        for _ in 0..<3 { proofs.append(try await HolderKey().proof(audience: harness.credentialIssuer, nonce: nonce, at: harness.clock.now)) }
        #expect(oauthError(try await harness.credentialRequest(request(pid, proofs: proofs), grant: grant)) == "invalid_credential_request")
        let single = try await IssuerHarness.make { $0.batchSize = nil }
        let singleGrant = try await single.preAuthorizedToken()
        let singleNonce = try await single.cNonce()
        var two: [String] = []
        for _ in 0..<2 { two.append(try await HolderKey().proof(audience: single.credentialIssuer, nonce: singleNonce, at: single.clock.now)) }
        #expect(oauthError(try await single.credentialRequest(request(pid, proofs: two), grant: singleGrant)) == "invalid_credential_request")
        let metadata = try json(try await single.get("https://issuer.example/.well-known/openid-credential-issuer"))
        #expect(metadata["batch_credential_issuance"] == nil)
    }

    @Test("two proofs by the same key are invalid_proof")
    func duplicateKeys() async throws {
        let harness = try await IssuerHarness.make()
        let grant = try await harness.preAuthorizedToken()
        let nonce = try await harness.cNonce(), holder = try HolderKey()
        let proofs = [try await holder.proof(audience: harness.credentialIssuer, nonce: nonce, at: harness.clock.now),
                      try await holder.proof(audience: harness.credentialIssuer, nonce: nonce, at: harness.clock.now.addingTimeInterval(-1))]
        #expect(oauthError(try await harness.credentialRequest(request(pid, proofs: proofs), grant: grant)) == "invalid_proof")
    }

    @Test("each broken key proof is refused: typ, aud, iat, alg, nonce, iss, key naming, signature, missing or draft proofs")
    func brokenProofs() async throws {
        let harness = try await IssuerHarness.make()
        let grant = try await harness.preAuthorizedToken()
        let now = harness.clock.now, audience = harness.credentialIssuer
        let holder = try HolderKey(), p384 = try HolderKey(curve: .p384)
        var cases: [(String, JSONObject)] = []
        func add(_ name: String, _ make: (String) async throws -> String) async throws {
            cases.append((name, request(pid, proofs: [try await make(try await harness.cNonce())])))
        }
        try await add("typ JWT") { try await holder.proof(audience: audience, nonce: $0, at: now, type: "JWT") }
        try await add("aud of another issuer") { try await holder.proof(audience: "https://other.example", nonce: $0, at: now) }
        try await add("aud as an array") {
            try await holder.proof(audience: audience, nonce: $0, at: now, extraClaims: ["aud": [.string(audience)]])
        }
        try await add("too old") { try await holder.proof(audience: audience, nonce: $0, at: now.addingTimeInterval(-301)) }
        try await add("from the future") { try await holder.proof(audience: audience, nonce: $0, at: now.addingTimeInterval(61)) }
        try await add("ES384 not accepted") { try await p384.proof(audience: audience, nonce: $0, at: now) }
        try await add("no nonce") { _ in try await holder.proof(audience: audience, nonce: nil, at: now) }
        try await add("another client in iss") { try await holder.proof(audience: audience, nonce: $0, issuer: "other", at: now) }
        try await add("no iss although there is a client") { try await holder.proof(audience: audience, nonce: $0, issuer: nil, at: now) }
        try await add("no key named") { try await holder.proof(audience: audience, nonce: $0, at: now, includeJWK: false) }
        try await add("kid and jwk together") { try await holder.proof(audience: audience, nonce: $0, at: now, keyID: "1") }
        let tampered = try await holder.proof(audience: audience, nonce: try await harness.cNonce(), at: now)
        cases.append(("tampered signature", request(pid, proofs: [String(tampered.dropLast(4)) + "AAAA"])))
        cases.append(("missing proofs", ["credential_configuration_id": .string(pid)]))
        cases.append(("draft proof member", ["credential_configuration_id": .string(pid),
                                              "proof": ["proof_type": "jwt", "jwt": .string(tampered)]]))
        cases.append(("unsupported proof type", ["credential_configuration_id": .string(pid), "proofs": ["ldp_vp": [[:]]]]))
        for (name, body) in cases {
            let response = try await harness.credentialRequest(body, grant: grant)
            #expect(response.status == 400, "\(name)")
            let error = oauthError(response)
            #expect(error == "invalid_proof" || (name == "draft proof member" && error == "invalid_credential_request"), "\(name): \(error ?? "-")")
        }
    }

    @Test("a nonce the issuer did not give, or already used, is invalid_nonce; nonces expire")
    func nonces() async throws {
        let harness = try await IssuerHarness.make()
        let grant = try await harness.preAuthorizedToken()
        let holder = try HolderKey()
        let madeUp = try await holder.proof(audience: harness.credentialIssuer, nonce: "made-up", at: harness.clock.now)
        #expect(oauthError(try await harness.credentialRequest(request(pid, proofs: [madeUp]), grant: grant)) == "invalid_nonce")
        let nonce = try await harness.cNonce()
        let first = try await holder.proof(audience: harness.credentialIssuer, nonce: nonce, at: harness.clock.now)
        #expect(try await harness.credentialRequest(request(pid, proofs: [first]), grant: grant).status == 200)
        let reused = try await HolderKey().proof(audience: harness.credentialIssuer, nonce: nonce, at: harness.clock.now)
        #expect(oauthError(try await harness.credentialRequest(request(pid, proofs: [reused]), grant: grant)) == "invalid_nonce")
        let expiring = try await harness.cNonce()
        harness.clock.advance(by: 301)
        let late = try await HolderKey().proof(audience: harness.credentialIssuer, nonce: expiring, at: harness.clock.now)
        #expect(oauthError(try await harness.credentialRequest(request(pid, proofs: [late]), grant: grant)) == "invalid_nonce")
    }

    @Test("the nonce endpoint answers an empty POST with c_nonce, uncacheable; a body or a GET is refused")
    func nonceEndpoint() async throws {
        let harness = try await IssuerHarness.make()
        let response = try await harness.send(.post, harness.url("/nonce"))
        #expect(response.status == 200 && response.headers["Cache-Control"] == "no-store")
        #expect(try json(response).keys == ["c_nonce"])
        #expect(try await harness.send(.post, harness.url("/nonce"), body: Array("{}".utf8)).status == 400)
        #expect(try await harness.get(harness.url("/nonce")).status == 405)
        let without = try await IssuerHarness.make { $0.nonceEndpoint = false }
        #expect(try await without.send(.post, without.url("/nonce")).status == 404)
        // Without a nonce endpoint, proofs carry no nonce.
        let grant = try await without.preAuthorizedToken()
        let proof = try await HolderKey().proof(audience: without.credentialIssuer, nonce: nil, at: without.clock.now)
        #expect(try await without.credentialRequest(request(pid, proofs: [proof]), grant: grant).status == 200)
    }

    @Test("anonymous pre-authorized access: iss must be left out of the proof")
    func anonymousProofIssuer() async throws {
        let harness = try await IssuerHarness.make()
        let grant = try await harness.preAuthorizedToken(clientId: nil)
        let holder = try HolderKey()
        let named = try await holder.proof(audience: harness.credentialIssuer, nonce: try await harness.cNonce(), issuer: "wallet-dev",
                                           at: harness.clock.now)
        #expect(oauthError(try await harness.credentialRequest(request(pid, proofs: [named]), grant: grant)) == "invalid_proof")
        let anonymous = try await holder.proof(audience: harness.credentialIssuer, nonce: try await harness.cNonce(), issuer: nil,
                                               at: harness.clock.now)
        #expect(try await harness.credentialRequest(request(pid, proofs: [anonymous]), grant: grant).status == 200)
    }

    @Test("with bound credential_identifiers the request must use credential_identifier, and only known ones")
    func credentialIdentifiers() async throws {
        let harness = try await IssuerHarness.make()
        let grant = try await harness.preAuthorizedToken(details: true)
        let identifier = try grant.body.objectArray("authorization_details")[0].stringArray("credential_identifiers")[0]
        let holder = try HolderKey()
        func proof() async throws -> String {
            try await holder.proof(audience: harness.credentialIssuer, nonce: try await harness.cNonce(), at: harness.clock.now)
        }
        let byConfiguration = try await harness.credentialRequest(request(pid, proofs: [try await proof()]), grant: grant)
        #expect(oauthError(byConfiguration) == "invalid_credential_request")
        let unknown = try await harness.credentialRequest(request("nope", proofs: [try await proof()], identifier: true), grant: grant)
        #expect(oauthError(unknown) == "unknown_credential_identifier")
        var both = request(identifier, proofs: [try await proof()], identifier: true)
        both["credential_configuration_id"] = .string(pid)
        #expect(oauthError(try await harness.credentialRequest(both, grant: grant)) == "invalid_credential_request")
        let right = try await harness.credentialRequest(request(identifier, proofs: [try await proof()], identifier: true), grant: grant)
        #expect(right.status == 200)
        #expect(await harness.issuer.inspection.credentialRequests.last?.credentialIdentifier == identifier)
    }

    @Test("identifiers policy always: even a plain pre-authorized token binds identifiers")
    func identifiersAlways() async throws {
        let harness = try await IssuerHarness.make { $0.credentialIdentifiers = .always }
        let grant = try await harness.preAuthorizedToken()
        #expect(try grant.body.objectArray("authorization_details").count == 1)
    }

    @Test("without identifiers: an unknown configuration is unknown_credential_configuration, an unauthorized one 403")
    func configurationIds() async throws {
        let harness = try await IssuerHarness.make()
        let grant = try await harness.preAuthorizedToken([pid])
        let proof = try await HolderKey().proof(audience: harness.credentialIssuer, nonce: try await harness.cNonce(), at: harness.clock.now)
        #expect(oauthError(try await harness.credentialRequest(request("nope", proofs: [proof]), grant: grant))
                == "unknown_credential_configuration")
        let unauthorized = try await harness.credentialRequest(request(mdl, proofs: [proof]), grant: grant)
        #expect(unauthorized.status == 403 && challengeError(unauthorized) == "insufficient_scope")
        #expect(oauthError(try await harness.credentialRequest([:], grant: grant)) == "invalid_credential_request")
    }

    @Test("access tokens: none, unknown, expired or under another scheme are refused with 401")
    func accessTokens() async throws {
        let harness = try await IssuerHarness.make()
        let none = try await harness.postJSON(harness.url("/credential"), [:])
        #expect(none.status == 401 && none.headers["WWW-Authenticate"] == "DPoP algs=\"ES256\"")
        let unknown = try await harness.postJSON(harness.url("/credential"), [:], headers: ["Authorization": "Bearer nope"])
        #expect(challengeError(unknown) == "invalid_token")
        let grant = try await harness.preAuthorizedToken()
        let asDPoP = try await harness.postJSON(harness.url("/credential"), [:], headers: ["Authorization": "DPoP " + grant.accessToken])
        #expect(challengeError(asDPoP) == "invalid_token")
        harness.clock.advance(by: 601)
        let expired = try await harness.credentialRequest([:], grant: grant)
        #expect(challengeError(expired) == "invalid_token")
    }

    @Test("wrong media types are refused")
    func mediaTypes() async throws {
        let harness = try await IssuerHarness.make()
        let grant = try await harness.preAuthorizedToken()
        let response = try await harness.send(.post, harness.url("/credential"),
                                              headers: ["Authorization": "Bearer " + grant.accessToken, "Content-Type": "text/plain"],
                                              body: Array("{}".utf8))
        #expect(oauthError(response) == "invalid_credential_request")
        let encrypted = try await harness.send(.post, harness.url("/credential"),
                                               headers: ["Authorization": "Bearer " + grant.accessToken, "Content-Type": "application/jwt"],
                                               body: Array("a.b.c.d.e".utf8))
        #expect(oauthError(encrypted) == "invalid_encryption_parameters")
    }
}
