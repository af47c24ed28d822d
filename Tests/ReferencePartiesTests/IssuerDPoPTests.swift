import Foundation
import JOSE
@testable import ReferenceParties
import Testing
import WalletCrypto
import WalletEncoding
import WalletRuntime

@Suite("Reference issuer: DPoP (RFC 9449)")
struct IssuerDPoPTests {
    private func tokenRequest(_ harness: IssuerHarness, proof: String?) async throws -> HTTPResponse {
        let offer = try await harness.issuer.createOffer(.preAuthorized([IssuerCredentialConfiguration.pidId]))
        var headers = HTTPHeaders()
        if let proof { headers["DPoP"] = proof }
        return try await harness.postForm(harness.asURL("/token"), [
            ("grant_type", "urn:ietf:params:oauth:grant-type:pre-authorized_code"),
            ("pre-authorized_code", offer.preAuthorizedCode ?? ""), ("client_id", "wallet-dev"),
        ], headers: headers)
    }

    @Test("ath is base64url(SHA-256(access token)) and jkt the key's thumbprint, as in RFC 9449 §6.1 and §7.1")
    func athAndJktVectors() throws {
        let vector = try issuerVector("dpop/rfc9449_examples.json")
        let inputs = try vector.object("inputs"), expected = try vector.object("expected")
        #expect(DPoPProofCheck.accessTokenHash(try inputs.string("access_token")) == (try expected.string("ath")))
        #expect(try JWK(members: try inputs.object("proof_public_jwk")).thumbprint == (try expected.string("jkt")))
    }

    @Test("the RFC's resource proof content passes the checks when signed with our own key")
    func rfcProofContent() async throws {
        let vector = try issuerVector("dpop/rfc9449_examples.json")
        let payload = try vector.object("expected").object("decoded_resource_proof").object("payload")
        let key = try DPoPKey()
        let proof = try await key.proof(method: try payload.string("htm"), url: try payload.string("htu"),
                                        at: Date(timeIntervalSince1970: Double(try payload.int("iat"))),
                                        accessToken: try vector.object("inputs").string("access_token"),
                                        jti: try payload.string("jti"))
        let check = DPoPProofCheck(method: "GET", targetURI: "https://resource.example.org/protectedresource",
                                   accessToken: try vector.object("inputs").string("access_token"), algorithms: ["ES256"],
                                   now: Date(timeIntervalSince1970: Double(try payload.int("iat"))), maxAge: 300, clockSkew: 60)
        let verified = try check.verify(proof)
        #expect(verified.accessTokenHash == (try payload.string("ath")))
        #expect(verified.keyThumbprint == key.thumbprint)
    }

    @Test("a token request with a DPoP proof gets a DPoP-bound token, which the credential endpoint refuses as a bearer token")
    func boundToken() async throws {
        let harness = try await IssuerHarness.make()
        let dpop = try DPoPKey()
        let grant = try await harness.preAuthorizedToken(dpop: dpop)
        #expect(grant.tokenType == "DPoP")
        #expect(await harness.issuer.inspection.tokenRequests.last?.dpopKeyThumbprint == dpop.thumbprint)
        let asBearer = try await harness.postJSON(harness.url("/credential"), [:], headers: ["Authorization": "Bearer " + grant.accessToken])
        #expect(asBearer.status == 401)
        #expect(challengeError(asBearer) == "invalid_token")
        #expect(asBearer.headers["WWW-Authenticate"]?.hasPrefix("DPoP ") == true)
        // The right key with another key's proof is refused too.
        let stranger = TokenGrant(rebinding: grant, to: try DPoPKey())
        let wrongKey = try await harness.credentialRequest([:], grant: stranger)
        #expect(challengeError(wrongKey) == "invalid_dpop_proof")
    }

    @Test("each broken proof is refused with invalid_dpop_proof at the token endpoint")
    func brokenProofs() async throws {
        let harness = try await IssuerHarness.make()
        let key = try DPoPKey()
        let url = harness.asURL("/token"), now = harness.clock.now
        let other = try ECPrivateKey.generate(curve: .p256)
        let p384 = try ECPrivateKey.generate(curve: .p384)
        let cases: [(String, String)] = [
            ("wrong typ", try await key.proof(method: "POST", url: url, at: now, type: "JWT")),
            ("wrong htm", try await key.proof(method: "GET", url: url, at: now)),
            ("wrong htu", try await key.proof(method: "POST", url: harness.url("/credential"), at: now)),
            ("old iat", try await key.proof(method: "POST", url: url, at: now.addingTimeInterval(-301))),
            ("future iat", try await key.proof(method: "POST", url: url, at: now.addingTimeInterval(61))),
            ("signed by another key", try await key.proof(method: "POST", url: url, at: now, signer: SoftwareSigner(other))),
            ("ES384 not accepted", try await key.proof(method: "POST", url: url, at: now, signer: SoftwareSigner(p384),
                                                       jwk: JWK(publicKey: p384.publicKey))),
            ("private key in the header", try await key.proof(method: "POST", url: url, at: now, jwk: try JWK(privateKey: key.key))),
            ("no jti", try await key.proof(method: "POST", url: url, at: now, jti: "")),
            ("not a JWT", "not-a-jwt"),
        ]
        for (name, proof) in cases {
            let response = try await tokenRequest(harness, proof: proof)
            #expect(response.status == 400, "\(name)")
            #expect(oauthError(response) == "invalid_dpop_proof", "\(name)")
        }
        // The htu comparison ignores query and fragment (RFC 9449 §4.3).
        #expect(try await tokenRequest(harness, proof: try await key.proof(method: "POST", url: url + "?x=1#f", at: now)).status == 200)
    }

    @Test("a replayed proof (same jti) is refused")
    func replayedJTI() async throws {
        let harness = try await IssuerHarness.make()
        let key = try DPoPKey()
        let proof = try await key.proof(method: "POST", url: harness.asURL("/token"), at: harness.clock.now, jti: "once")
        #expect(try await tokenRequest(harness, proof: proof).status == 200)
        let replay = try await tokenRequest(harness, proof: proof)
        #expect(oauthError(replay) == "invalid_dpop_proof")
    }

    @Test("two DPoP headers are refused")
    func twoHeaders() async throws {
        let harness = try await IssuerHarness.make()
        let key = try DPoPKey()
        let offer = try await harness.issuer.createOffer(.preAuthorized([IssuerCredentialConfiguration.pidId]))
        var headers = HTTPHeaders()
        headers.add(name: "DPoP", value: try await key.proof(method: "POST", url: harness.asURL("/token"), at: harness.clock.now))
        headers.add(name: "DPoP", value: try await key.proof(method: "POST", url: harness.asURL("/token"), at: harness.clock.now))
        let response = try await harness.postForm(harness.asURL("/token"), [
            ("grant_type", "urn:ietf:params:oauth:grant-type:pre-authorized_code"), ("pre-authorized_code", offer.preAuthorizedCode ?? ""),
        ], headers: headers)
        #expect(oauthError(response) == "invalid_dpop_proof")
    }

    @Test("DPoP required: a token request without a proof is refused")
    func required() async throws {
        let harness = try await IssuerHarness.make { $0.dpop = DPoPPolicy(mode: .required) }
        #expect(oauthError(try await tokenRequest(harness, proof: nil)) == "invalid_dpop_proof")
    }

    @Test("with nonces, the token endpoint answers 400 use_dpop_nonce with DPoP-Nonce, and the retry with it succeeds")
    func tokenNonce() async throws {
        let harness = try await IssuerHarness.make { $0.dpop = .requiredWithNonce }
        let key = try DPoPKey()
        let offer = try await harness.issuer.createOffer(.preAuthorized([IssuerCredentialConfiguration.pidId]))
        let form = [("grant_type", "urn:ietf:params:oauth:grant-type:pre-authorized_code"),
                    ("pre-authorized_code", offer.preAuthorizedCode ?? "")]
        let first = try await harness.postForm(harness.asURL("/token"), form, headers: [
            "DPoP": try await key.proof(method: "POST", url: harness.asURL("/token"), at: harness.clock.now)])
        #expect(first.status == 400)
        #expect(oauthError(first) == "use_dpop_nonce")
        let nonce = try #require(first.headers["DPoP-Nonce"])
        // The challenge did not spend the pre-authorized code.
        let second = try await harness.postForm(harness.asURL("/token"), form, headers: [
            "DPoP": try await key.proof(method: "POST", url: harness.asURL("/token"), at: harness.clock.now, nonce: nonce)])
        #expect(second.status == 200)
        #expect(second.headers["DPoP-Nonce"] != nil)
        // A made-up nonce is challenged again.
        let fresh = try await harness.issuer.createOffer(.preAuthorized([IssuerCredentialConfiguration.pidId]))
        let madeUp = try await harness.postForm(harness.asURL("/token"), [
            ("grant_type", "urn:ietf:params:oauth:grant-type:pre-authorized_code"), ("pre-authorized_code", fresh.preAuthorizedCode ?? ""),
        ], headers: ["DPoP": try await key.proof(method: "POST", url: harness.asURL("/token"), at: harness.clock.now, nonce: "made-up")])
        #expect(oauthError(madeUp) == "use_dpop_nonce")
    }

    @Test("with nonces, the credential endpoint answers 401 with WWW-Authenticate DPoP error use_dpop_nonce and DPoP-Nonce")
    func resourceNonce() async throws {
        let harness = try await IssuerHarness.make { $0.dpop = .requiredWithNonce }
        let key = try DPoPKey()
        let offer = try await harness.issuer.createOffer(.preAuthorized([IssuerCredentialConfiguration.pidId]))
        let form = [("grant_type", "urn:ietf:params:oauth:grant-type:pre-authorized_code"),
                    ("pre-authorized_code", offer.preAuthorizedCode ?? "")]
        let challenge = try await harness.postForm(harness.asURL("/token"), form, headers: [
            "DPoP": try await key.proof(method: "POST", url: harness.asURL("/token"), at: harness.clock.now)])
        let tokenResponse = try await harness.postForm(harness.asURL("/token"), form, headers: [
            "DPoP": try await key.proof(method: "POST", url: harness.asURL("/token"), at: harness.clock.now,
                                        nonce: challenge.headers["DPoP-Nonce"])])
        let grant = try TokenGrant(json(tokenResponse), dpop: key)
        let nonceResponse = try await harness.send(.post, harness.url("/nonce"))
        let cNonce = try json(nonceResponse).string("c_nonce")
        #expect(nonceResponse.headers["DPoP-Nonce"] != nil)
        let proof = try await HolderKey().proof(audience: harness.credentialIssuer, nonce: cNonce, issuer: nil, at: harness.clock.now)
        let body: JSONObject = ["credential_configuration_id": .string(IssuerCredentialConfiguration.pidId), "proofs": ["jwt": [.string(proof)]]]
        let refused = try await harness.postJSON(harness.url("/credential"), body,
                                                 headers: try await grant.authorization(method: "POST", url: harness.url("/credential"),
                                                                                        at: harness.clock.now, nonce: "stale"))
        #expect(refused.status == 401)
        #expect(challengeError(refused) == "use_dpop_nonce")
        #expect(refused.headers["WWW-Authenticate"]?.contains("algs=\"ES256\"") == true)
        let serverNonce = try #require(refused.headers["DPoP-Nonce"])
        let accepted = try await harness.postJSON(harness.url("/credential"), body,
                                                  headers: try await grant.authorization(method: "POST", url: harness.url("/credential"),
                                                                                         at: harness.clock.now, nonce: serverNonce))
        #expect(accepted.status == 200, "\(String(decoding: accepted.body, as: UTF8.self))")
        #expect(accepted.headers["DPoP-Nonce"] != nil)
    }

    @Test("a DPoP proof at the credential endpoint must carry ath for the token")
    func athRequired() async throws {
        let harness = try await IssuerHarness.make()
        let key = try DPoPKey()
        let grant = try await harness.preAuthorizedToken(dpop: key)
        let noAth = try await key.proof(method: "POST", url: harness.url("/credential"), at: harness.clock.now)
        let response = try await harness.postJSON(harness.url("/credential"), [:],
                                                  headers: ["Authorization": "DPoP " + grant.accessToken, "DPoP": noAth])
        #expect(challengeError(response) == "invalid_dpop_proof")
        let wrongAth = try await key.proof(method: "POST", url: harness.url("/credential"), at: harness.clock.now, accessToken: "other")
        let second = try await harness.postJSON(harness.url("/credential"), [:],
                                                headers: ["Authorization": "DPoP " + grant.accessToken, "DPoP": wrongAth])
        #expect(challengeError(second) == "invalid_dpop_proof")
        let missing = try await harness.postJSON(harness.url("/credential"), [:], headers: ["Authorization": "DPoP " + grant.accessToken])
        #expect(challengeError(missing) == "invalid_dpop_proof")
    }

    @Test("forced challenges: use_dpop_nonce twice in a row at the token endpoint, whatever the nonce")
    func forcedChallenges() async throws {
        let harness = try await IssuerHarness.make {
            $0.dpop = .requiredWithNonce
            $0.behaviour.forcedTokenNonceChallenges = 2
        }
        let key = try DPoPKey()
        let offer = try await harness.issuer.createOffer(.preAuthorized([IssuerCredentialConfiguration.pidId]))
        let form = [("grant_type", "urn:ietf:params:oauth:grant-type:pre-authorized_code"),
                    ("pre-authorized_code", offer.preAuthorizedCode ?? "")]
        var nonce: String?
        for _ in 0..<2 {
            let response = try await harness.postForm(harness.asURL("/token"), form, headers: [
                "DPoP": try await key.proof(method: "POST", url: harness.asURL("/token"), at: harness.clock.now, nonce: nonce)])
            #expect(oauthError(response) == "use_dpop_nonce")
            nonce = response.headers["DPoP-Nonce"]
        }
        let third = try await harness.postForm(harness.asURL("/token"), form, headers: [
            "DPoP": try await key.proof(method: "POST", url: harness.asURL("/token"), at: harness.clock.now, nonce: nonce)])
        #expect(third.status == 200)
    }

    @Test("DPoP disabled: proofs are ignored and tokens are Bearer")
    func disabled() async throws {
        let harness = try await IssuerHarness.make { $0.dpop = DPoPPolicy(mode: .disabled) }
        let grant = try await harness.preAuthorizedToken(dpop: try DPoPKey())
        #expect(grant.tokenType == "Bearer")
        let metadata = try json(try await harness.get("https://issuer.example/.well-known/oauth-authorization-server"))
        #expect(metadata["dpop_signing_alg_values_supported"] == nil)
    }

    @Test("a DPoP proof at PAR binds the authorization code to that key")
    func parBinding() async throws {
        let harness = try await IssuerHarness.make()
        let key = try DPoPKey(), pkce = try pkcePair()
        let pushed = try await harness.postForm(harness.asURL("/par"), [
            ("response_type", "code"), ("client_id", "wallet-dev"), ("redirect_uri", "eudi-wallet://authorize"),
            ("code_challenge", pkce.challenge), ("code_challenge_method", "S256"), ("scope", IssuerCredentialConfiguration.pidId),
        ], headers: ["DPoP": try await key.proof(method: "POST", url: harness.asURL("/par"), at: harness.clock.now)])
        let uri = try json(pushed).string("request_uri")
        let redirect = try await harness.get(harness.asURL("/authorize?") + FormURLEncoding.encode([("client_id", "wallet-dev"), ("request_uri", uri)]))
        let code = try #require(try redirectParameters(redirect)["code"])
        let form = [("grant_type", "authorization_code"), ("code", code), ("code_verifier", pkce.verifier),
                    ("redirect_uri", "eudi-wallet://authorize"), ("client_id", "wallet-dev")]
        let other = try await harness.postForm(harness.asURL("/token"), form, headers: [
            "DPoP": try await DPoPKey().proof(method: "POST", url: harness.asURL("/token"), at: harness.clock.now)])
        #expect(oauthError(other) == "invalid_dpop_proof")
        let same = try await harness.postForm(harness.asURL("/token"), form, headers: [
            "DPoP": try await key.proof(method: "POST", url: harness.asURL("/token"), at: harness.clock.now)])
        #expect(same.status == 200)
    }
}

extension TokenGrant {
    /// The same token presented with another DPoP key.
    init(rebinding grant: TokenGrant, to key: DPoPKey) {
        self = grant
        self.dpop = key
    }
}
