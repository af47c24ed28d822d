import Foundation
import JOSE
import Testing
import WalletCrypto
import WalletEncoding
import WalletRuntime
import WalletStorage
@testable import OpenID4VCI

/// The sans-IO core fed by hand: each input, the effects it must produce.
@Suite("Issuance flow core")
struct FlowTests {
    static let now = Date(timeIntervalSince1970: 1_701_960_444)
    static let issuer = "https://credential-issuer.example.com"

    static func settings(policy: CredentialPolicy = CredentialPolicy()) -> FlowSettings {
        FlowSettings(clientId: "wallet-dev", redirectUri: "eudi-wallet://authorize", urlPolicy: URLPolicy(allowsLoopbackHTTP: false),
                     encryption: .whenRequired, trustAnchors: [], hasKeyAttestationProvider: false, requestTimeout: .seconds(30),
                     policy: policy)
    }

    static let seeds = FlowSeeds(state: "state-1", pkce: PKCE(verifier: "dBjftJeZ4CVP-mB92K27uhbUJU1p1r_wW1gFWFOEjXk"),
                                 dpopKeyAlias: "dpop-1", credentialId: "cred-1")

    static func metadata(batch: Int? = nil) throws -> CredentialIssuerMetadata {
        var object: JSONObject = [
            "credential_issuer": .string(issuer), "credential_endpoint": .string(issuer + "/credential"),
            "nonce_endpoint": .string(issuer + "/nonce"), "deferred_credential_endpoint": .string(issuer + "/deferred_credential"),
            "credential_configurations_supported": ["UniversityDegreeCredential": [
                "format": "dc+sd-jwt", "vct": "https://credentials.example/degree",
                "proof_types_supported": ["jwt": ["proof_signing_alg_values_supported": ["ES256"]]]]],
        ]
        if let batch { object["batch_credential_issuance"] = ["batch_size": .integer(Int64(batch))] }
        return try CredentialIssuerMetadata(json: object, expectedIssuer: issuer, policy: URLPolicy(allowsLoopbackHTTP: false),
                                            trustAnchors: [], now: now)
    }

    static func serverMetadata(dpop: Bool = false) -> HTTPResponse {
        var object: JSONObject = ["issuer": .string(issuer), "token_endpoint": .string(issuer + "/token"),
                                  "authorization_endpoint": .string(issuer + "/authorize")]
        if dpop { object["dpop_signing_alg_values_supported"] = ["ES256"] }
        return jsonResponse(200, object)
    }

    static func offerFlow(txCode: String? = nil, given: String? = nil, batch: Int? = nil,
                          policy: CredentialPolicy = CredentialPolicy()) throws -> IssuanceFlow {
        var grant: JSONObject = ["pre-authorized_code": "SplxlOBeZQQYbYS6WxSbIA"]
        if txCode != nil { grant["tx_code"] = ["length": 6] }
        let object = try CredentialOfferObject(json: [
            "credential_issuer": .string(issuer), "credential_configuration_ids": ["UniversityDegreeCredential"],
            "grants": [CredentialOffer.preAuthorizedGrantType: .object(grant)]])
        let offer = CredentialOffer(offer: object, issuerMetadata: try metadata(batch: batch))
        return IssuanceFlow(mode: .offer(offer, configurationId: "UniversityDegreeCredential", txCode: given),
                            settings: settings(policy: policy), seeds: seeds)
    }

    /// The requests among `effects`.
    static func sent(_ effects: [IssuanceFlow.Effect]) -> [IssuanceFlow.Outgoing] {
        effects.compactMap { if case .send(let outgoing) = $0 { outgoing } else { nil } }
    }

    static func published(_ effects: [IssuanceFlow.Effect]) -> [IssuanceState] {
        effects.compactMap { if case .publish(let state) = $0 { state } else { nil } }
    }

    static func finished(_ effects: [IssuanceFlow.Effect]) -> IssuanceState? {
        effects.lazy.compactMap { if case .finish(let state, _, _) = $0 { state } else { nil } }.first
    }

    static func form(_ outgoing: IssuanceFlow.Outgoing?) throws -> [(String, String)] {
        formPairs(outgoing?.request.body)
    }

    @Test("a wallet-initiated flow starts by fetching the issuer's metadata from its well-known URL")
    func startsWithMetadata() throws {
        var flow = IssuanceFlow(mode: .issuer("https://issuer.example/tenant", configurationId: "x"), settings: Self.settings(), seeds: Self.seeds)
        let effects = flow.handle(.start, at: Self.now)
        #expect(Self.published(effects) == [.preparing])
        let request = try #require(Self.sent(effects).first)
        #expect(request.step == .issuerMetadata)
        #expect(request.request.method == .get)
        #expect(request.request.url.absoluteString == "https://issuer.example/.well-known/openid-credential-issuer/tenant")
        // A 404 there is an unusable issuer.
        let failed = flow.handle(.response(HTTPResponse(status: 404), .issuerMetadata), at: Self.now)
        #expect(Self.finished(failed) == .failed(.invalidOffer(.issuerMetadata(.unavailable(status: 404)))))
        // Once finished, inputs are ignored.
        #expect(flow.handle(.txCode("1"), at: Self.now).isEmpty)
    }

    @Test("authorization server metadata falls back from RFC 8414 to OpenID discovery")
    func serverMetadataFallback() throws {
        var flow = try Self.offerFlow()
        let first = try #require(Self.sent(flow.handle(.start, at: Self.now)).first)
        #expect(first.request.url.absoluteString == Self.issuer + "/.well-known/oauth-authorization-server")
        let second = try #require(Self.sent(flow.handle(.response(HTTPResponse(status: 404), first.step), at: Self.now)).first)
        #expect(second.request.url.absoluteString == Self.issuer + "/.well-known/openid-configuration")
        #expect(second.step == .serverMetadata(candidate: 1))
        let failed = flow.handle(.response(HTTPResponse(status: 500), second.step), at: Self.now)
        #expect(Self.finished(failed) == .failed(.invalidOffer(.authorizationServerMetadata(.unavailable(status: 500)))))
    }

    @Test("a required tx_code pauses the flow; the submitted code goes into the §6.1 token request")
    func txCodePause() throws {
        var flow = try Self.offerFlow(txCode: "required")
        let metadataRequest = try #require(Self.sent(flow.handle(.start, at: Self.now)).first)
        let paused = flow.handle(.response(Self.serverMetadata(), metadataRequest.step), at: Self.now)
        #expect(Self.published(paused) == [.txCodeRequired(TxCodeSpec(length: 6))])
        #expect(Self.sent(paused).isEmpty)
        #expect(flow.handle(.redirect("eudi-wallet://authorize?code=x"), at: Self.now).isEmpty)
        let resumed = flow.handle(.txCode("493536"), at: Self.now)
        #expect(Self.published(resumed) == [.processing])
        let token = try #require(Self.sent(resumed).first)
        #expect(token.request.url.absoluteString == Self.issuer + "/token")
        #expect(token.request.headers["Content-Type"] == "application/x-www-form-urlencoded")
        #expect(try Self.form(token).map { "\($0.0)=\($0.1)" } == [
            "grant_type=urn:ietf:params:oauth:grant-type:pre-authorized_code", "pre-authorized_code=SplxlOBeZQQYbYS6WxSbIA",
            "tx_code=493536"])
        #expect(token.dpop == nil)
    }

    @Test("use_dpop_nonce at the token endpoint is retried once with the server's nonce, then reported")
    func dpopNonceRetry() throws {
        var flow = try Self.offerFlow()
        let metadataRequest = try #require(Self.sent(flow.handle(.start, at: Self.now)).first)
        let token = try #require(Self.sent(flow.handle(.response(Self.serverMetadata(dpop: true), metadataRequest.step), at: Self.now)).first)
        #expect(token.dpop == IssuanceFlow.DPoPUse(keyAlias: "dpop-1", algorithm: .p256, accessToken: nil, nonce: nil))
        let challenge = oauthError(400, "use_dpop_nonce", headers: ["DPoP-Nonce": "eyJ7S_zG.eyJH0-Z.HX4w-7v"])
        let retry = try #require(Self.sent(flow.handle(.response(challenge, .token), at: Self.now)).first)
        #expect(retry.dpop?.nonce == "eyJ7S_zG.eyJH0-Z.HX4w-7v")
        #expect(try Self.form(retry).map(\.0) == (try Self.form(token)).map(\.0))
        let again = oauthError(400, "use_dpop_nonce", headers: ["DPoP-Nonce": "n2"])
        #expect(Self.finished(flow.handle(.response(again, .token), at: Self.now))
            == .failed(.authorizationFailed(oauthError: "use_dpop_nonce", reason: .rejected(status: 400, description: nil))))
    }

    @Test("the §6.2 token response's identifiers, the §7 nonce, then keys and proofs with aud, iat and nonce but no iss")
    func tokenNonceKeysProofs() throws {
        var flow = try Self.offerFlow(batch: 4, policy: CredentialPolicy(batchSize: 3, use: .oneTime))
        let metadataRequest = try #require(Self.sent(flow.handle(.start, at: Self.now)).first)
        _ = flow.handle(.response(Self.serverMetadata(), metadataRequest.step), at: Self.now)
        let example = try Vectors.example("openid4vci/authorization_and_token.json",
                                          "token_response_with_authorization_details_credential_identifiers")
        var body = try #require(example["body_json"]?.objectValue)
        body["authorization_details"] = [["type": "openid_credential", "credential_configuration_id": "UniversityDegreeCredential",
                                          "credential_identifiers": ["CivilEngineeringDegree-2023", "ElectricalEngineeringDegree-2023"]]]
        let nonceRequest = try #require(Self.sent(flow.handle(.response(jsonResponse(200, body), .token), at: Self.now)).first)
        #expect(nonceRequest.step == .nonce)
        #expect(nonceRequest.request.method == .post)
        #expect(nonceRequest.request.body == [])
        let nonceExample = try Vectors.example("openid4vci/nonce_endpoint.json", "nonce_response")
        let keys = flow.handle(.response(jsonResponse(200, try #require(nonceExample["body_json"]?.objectValue)), .nonce), at: Self.now)
        guard case .createKeys(let count, let algorithm) = try #require(keys.first) else { Issue.record("\(keys)"); return }
        #expect(count == 3)
        #expect(algorithm == .p256)
        let infos = try (0..<3).map { index in
            KeyInfo(alias: "k\(index)", algorithm: .p256, publicKey: .ec(try ECPrivateKey.generate(curve: .p256).publicKey),
                    createdAt: Self.now, requiresUnlock: false)
        }
        let signing = flow.handle(.keysReady(infos), at: Self.now)
        guard case .signProofs(let job) = try #require(signing.first) else { Issue.record("\(signing)"); return }
        let expected = try #require(try Vectors.object("openid4vci/proofs_and_key_attestation.json")["expected"]?["jwt_proof_payload"]?.objectValue)
        #expect(job.claims == ["aud": .string(Self.issuer), "iat": .integer(1_701_960_444), "nonce": "wKI4LT17ac15ES9bw8ac4"])
        #expect(Set(job.claims.keys) == Set(expected.keys))
        #expect(job.keys.map(\.alias) == ["k0", "k1", "k2"])
        let sending = flow.handle(.proofsSigned(["p0", "p1", "p2"]), at: Self.now)
        let credential = try #require(Self.sent(sending).first)
        let request = try JSONValue.parseObject(try #require(credential.request.body))
        #expect(request == ["credential_identifier": "CivilEngineeringDegree-2023", "proofs": ["jwt": ["p0", "p1", "p2"]]])
        #expect(credential.request.headers["Authorization"] == "Bearer eyJhbGciOiJSUzI1NiIsInR5cCI6Ikp..sHQ")

        // The §8.3 deferred answer for the first identifier; the second identifier asks for a new nonce.
        let deferredExample = try Vectors.example("openid4vci/credential_request_response.json", "credential_response_deferred_transaction_id")
        let next = flow.handle(.response(jsonResponse(202, try #require(deferredExample["body_json"]?.objectValue)), .credential), at: Self.now)
        #expect(Self.sent(next).first?.step == .nonce)
    }

    @Test("a 202 deferred answer is saved as deferred, keeping the proof keys, and the session ends .deferred")
    func deferredSave() throws {
        var flow = try Self.offerFlow()
        let metadataRequest = try #require(Self.sent(flow.handle(.start, at: Self.now)).first)
        _ = flow.handle(.response(Self.serverMetadata(), metadataRequest.step), at: Self.now)
        _ = flow.handle(.response(jsonResponse(200, ["access_token": "at", "token_type": "Bearer"]), .token), at: Self.now)
        _ = flow.handle(.response(jsonResponse(200, ["c_nonce": "n"]), .nonce), at: Self.now)
        let key = KeyInfo(alias: "k0", algorithm: .p256, publicKey: .ec(try ECPrivateKey.generate(curve: .p256).publicKey),
                          createdAt: Self.now, requiresUnlock: false)
        _ = flow.handle(.keysReady([key]), at: Self.now)
        _ = flow.handle(.proofsSigned(["p0"]), at: Self.now)
        let saving = flow.handle(.response(jsonResponse(202, ["transaction_id": "8xLOxBtZp8", "interval": 3600]), .credential), at: Self.now)
        guard case .save(let credentials, renewing: nil, _) = try #require(saving.first) else { Issue.record("\(saving)"); return }
        #expect(credentials.count == 1)
        let credential = try #require(credentials.first)
        #expect(credential.id == "cred-1")
        #expect(credential.state == .deferred(transactionId: "8xLOxBtZp8", retryAfter: Self.now.addingTimeInterval(3600)))
        #expect(credential.instances.isEmpty)
        let context = try #require(credential.issuanceContext.flatMap(IssuanceContext.init(encoded:)))
        #expect(context.pendingKeyAliases == ["k0"])
        #expect(context.accessToken == "at")
        let done = flow.handle(.saved, at: Self.now)
        guard case .finish(let state, let keep, _) = try #require(done.first) else { Issue.record("\(done)"); return }
        #expect(state == .deferred(credentialId: "cred-1", retryAfter: Self.now.addingTimeInterval(3600)))
        #expect(keep == ["k0"])
    }

    @Test("an answer with no credentials (§8.3: one or more) ends the flow failed without a save", arguments: [
        (200, ["credentials": [], "notification_id": "n-1"]), (202, ["credentials": []]),
        (200, ["notification_id": "n-1"]), (202, ["interval": 5]),
    ] as [(Int, JSONObject)])
    func noCredentials(status: Int, body: JSONObject) throws {
        var flow = try Self.offerFlow()
        let metadataRequest = try #require(Self.sent(flow.handle(.start, at: Self.now)).first)
        _ = flow.handle(.response(Self.serverMetadata(), metadataRequest.step), at: Self.now)
        _ = flow.handle(.response(jsonResponse(200, ["access_token": "at", "token_type": "Bearer"]), .token), at: Self.now)
        _ = flow.handle(.response(jsonResponse(200, ["c_nonce": "n"]), .nonce), at: Self.now)
        let key = KeyInfo(alias: "k0", algorithm: .p256, publicKey: .ec(try ECPrivateKey.generate(curve: .p256).publicKey),
                          createdAt: Self.now, requiresUnlock: false)
        _ = flow.handle(.keysReady([key]), at: Self.now)
        _ = flow.handle(.proofsSigned(["p0"]), at: Self.now)
        let effects = flow.handle(.response(jsonResponse(status, body), .credential), at: Self.now)
        #expect(!effects.contains { if case .save = $0 { true } else { false } })
        guard case .finish(let state, let keep, let discard) = try #require(effects.first) else { Issue.record("\(effects)"); return }
        #expect(state == .failed(.credentialRequestFailed(oauthError: nil, reason: .malformedResponse(.invalidMember("credentials")))))
        #expect(keep.isEmpty)
        #expect(discard.isEmpty)
    }

    @Test("a driver failure ends the flow failed with nothing to keep")
    func driverFailure() throws {
        var flow = try Self.offerFlow()
        _ = flow.handle(.start, at: Self.now)
        let effects = flow.handle(.failed(.unexpected(.keyOperation(.userCancelled))), at: Self.now)
        guard case .finish(let state, let keep, let discard) = try #require(effects.first) else { Issue.record("\(effects)"); return }
        #expect(state == .failed(.unexpected(.keyOperation(.userCancelled))))
        #expect(keep.isEmpty)
        #expect(discard.isEmpty)
        #expect(flow.state == state)
    }

    @Test("the issuance context round-trips, and a foreign blob is not read as one")
    func context() {
        let context = IssuanceContext(configurationId: "c", authorizationServer: "https://as", accessToken: "at", isDPoPBound: true,
                                      isAnonymous: true, dpopKeyAlias: "d", notificationId: "n", pendingKeyAliases: ["a", "b"],
                                      pendingTransactionId: "t", pendingRetryAfter: Date(timeIntervalSince1970: 100))
        #expect(IssuanceContext(encoded: context.encoded) == context)
        #expect(IssuanceContext(encoded: Array("not json".utf8)) == nil)
        #expect(IssuanceContext(encoded: Array(#"{"v":2,"configuration_id":"c"}"#.utf8)) == nil)
    }
}
