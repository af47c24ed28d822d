import Foundation
import ReferenceParties
import Testing
import WalletEncoding
import WalletRuntime

/// The wallet's side of an authorization request.
private struct AuthorizationAttempt {
    var clientId = "wallet-dev"
    var redirectURI = "eudi-wallet://authorize"
    var state = "af0ifjsldkj"
    var pkce: (verifier: String, challenge: String)
    var scope: String? = IssuerCredentialConfiguration.pidId
    var details: String?
    var issuerState: String?
    var method: String? = "S256"

    init() throws { pkce = try pkcePair() }

    var parameters: [(String, String)] {
        var pairs: [(String, String)] = [("response_type", "code"), ("client_id", clientId), ("redirect_uri", redirectURI),
                                         ("state", state), ("code_challenge", pkce.challenge)]
        if let method { pairs.append(("code_challenge_method", method)) }
        if let scope { pairs.append(("scope", scope)) }
        if let details { pairs.append(("authorization_details", details)) }
        if let issuerState { pairs.append(("issuer_state", issuerState)) }
        return pairs
    }
}

@Suite("Reference issuer: PAR, authorization and the authorization code grant")
struct IssuerAuthorizationTests {
    /// PAR, then the browser's GET with request_uri; returns the redirect.
    private func pushAndAuthorize(_ harness: IssuerHarness, _ attempt: AuthorizationAttempt) async throws -> HTTPResponse {
        let pushed = try await harness.postForm(harness.asURL("/par"), attempt.parameters)
        #expect(pushed.status == 201, "PAR refused: \(String(decoding: pushed.body, as: UTF8.self))")
        let requestURI = try json(pushed).string("request_uri")
        let query = FormURLEncoding.encode([("client_id", attempt.clientId), ("request_uri", requestURI)])
        return try await harness.get(harness.asURL("/authorize?") + query)
    }

    private func redeem(_ harness: IssuerHarness, code: String, _ attempt: AuthorizationAttempt,
                        verifier: String? = nil, redirectURI: String? = nil) async throws -> HTTPResponse {
        try await harness.postForm(harness.asURL("/token"), [
            ("grant_type", "authorization_code"), ("code", code), ("code_verifier", verifier ?? attempt.pkce.verifier),
            ("redirect_uri", redirectURI ?? attempt.redirectURI), ("client_id", attempt.clientId),
        ])
    }

    @Test("PAR answers 201 with a request_uri; authorize redirects with code, state and iss; the code and verifier give a token")
    func pushedAuthorizationFlow() async throws {
        let harness = try await IssuerHarness.make { $0.par = .required }
        let attempt = try AuthorizationAttempt()
        let pushed = try await harness.postForm(harness.asURL("/par"), attempt.parameters)
        #expect(pushed.status == 201)
        let body = try json(pushed)
        #expect(try body.string("request_uri").hasPrefix("urn:ietf:params:oauth:request_uri:"))
        #expect(try body.int("expires_in") == 60)
        let query = FormURLEncoding.encode([("client_id", attempt.clientId), ("request_uri", try body.string("request_uri"))])
        let redirect = try await harness.get(harness.asURL("/authorize?") + query)
        #expect(redirect.status == 302)
        #expect(redirect.headers["Location"]?.hasPrefix("eudi-wallet://authorize?") == true)
        let parameters = try redirectParameters(redirect)
        #expect(parameters["state"] == attempt.state)
        #expect(parameters["iss"] == "https://issuer.example")
        let code = try #require(parameters["code"])
        let token = try await redeem(harness, code: code, attempt)
        #expect(token.status == 200)
        let grant = try json(token)
        #expect(try grant.string("token_type") == "Bearer")
        #expect(grant["refresh_token"] != nil)
        // Scope was used, not authorization_details: no identifiers are bound.
        #expect(grant["authorization_details"] == nil)
        let record = try #require(await harness.issuer.inspection.authorizationRequests.first)
        #expect(record.pushed && record.state == attempt.state)
    }

    @Test("the RFC 7636 App. B verifier redeems a code pushed with its challenge")
    func pkceVector() async throws {
        let vector = try issuerVector("pkce/rfc7636_appendix_b.json")
        var attempt = try AuthorizationAttempt()
        attempt.pkce = (try vector.object("inputs").string("code_verifier"), try vector.object("expected").string("code_challenge"))
        let harness = try await IssuerHarness.make()
        let code = try #require(try redirectParameters(try await pushAndAuthorize(harness, attempt))["code"])
        #expect(try await redeem(harness, code: code, attempt).status == 200)
    }

    @Test("a wrong code_verifier, another redirect_uri or another client is invalid_grant")
    func tokenRequestMismatches() async throws {
        let harness = try await IssuerHarness.make()
        let attempt = try AuthorizationAttempt()
        for variant in 0..<3 {
            let code = try #require(try redirectParameters(try await pushAndAuthorize(harness, attempt))["code"])
            let response: HTTPResponse
            switch variant {
            case 0: response = try await redeem(harness, code: code, attempt, verifier: try pkcePair().verifier)
            case 1: response = try await redeem(harness, code: code, attempt, redirectURI: "eudi-wallet://other")
            default:
                var other = attempt
                other.clientId = "someone-else"
                response = try await redeem(harness, code: code, other)
            }
            #expect(response.status == 400)
            #expect(oauthError(response) == "invalid_grant")
        }
    }

    @Test("a malformed code_verifier is invalid_request")
    func malformedVerifier() async throws {
        let harness = try await IssuerHarness.make()
        let attempt = try AuthorizationAttempt()
        let code = try #require(try redirectParameters(try await pushAndAuthorize(harness, attempt))["code"])
        let response = try await redeem(harness, code: code, attempt, verifier: "short")
        #expect(oauthError(response) == "invalid_request")
    }

    @Test("an authorization code works once; the second use is invalid_grant and revokes the token it gave")
    func codeReplay() async throws {
        let harness = try await IssuerHarness.make()
        let attempt = try AuthorizationAttempt()
        let code = try #require(try redirectParameters(try await pushAndAuthorize(harness, attempt))["code"])
        let first = try TokenGrant(json(try await redeem(harness, code: code, attempt)), dpop: nil)
        let replay = try await redeem(harness, code: code, attempt)
        #expect(oauthError(replay) == "invalid_grant")
        let nonce = try await harness.cNonce()
        let proof = try await HolderKey().proof(audience: harness.credentialIssuer, nonce: nonce, at: harness.clock.now)
        let credential = try await harness.credentialRequest(
            ["credential_configuration_id": .string(IssuerCredentialConfiguration.pidId), "proofs": ["jwt": [.string(proof)]]],
            grant: first)
        #expect(credential.status == 401)
        #expect(challengeError(credential) == "invalid_token")
    }

    @Test("an authorization code expires")
    func codeExpiry() async throws {
        let harness = try await IssuerHarness.make()
        let attempt = try AuthorizationAttempt()
        let code = try #require(try redirectParameters(try await pushAndAuthorize(harness, attempt))["code"])
        harness.clock.advance(by: 121)
        #expect(oauthError(try await redeem(harness, code: code, attempt)) == "invalid_grant")
    }

    @Test("PAR refuses the plain method, a missing method, a malformed challenge, a pushed request_uri and no credential")
    func parRefusals() async throws {
        let harness = try await IssuerHarness.make()
        var plain = try AuthorizationAttempt()
        plain.method = "plain"
        var missing = try AuthorizationAttempt()
        missing.method = nil
        var malformed = try AuthorizationAttempt()
        malformed.pkce.challenge = "not-a-digest"
        var nothing = try AuthorizationAttempt()
        nothing.scope = "unknown_scope"
        for (attempt, error) in [(plain, "invalid_request"), (missing, "invalid_request"), (malformed, "invalid_request"),
                                 (nothing, "invalid_scope")] {
            let response = try await harness.postForm(harness.asURL("/par"), attempt.parameters)
            #expect(response.status == 400)
            #expect(oauthError(response) == error)
        }
        let pushedURI = try await harness.postForm(
            harness.asURL("/par"), try AuthorizationAttempt().parameters + [("request_uri", "urn:x")])
        #expect(oauthError(pushedURI) == "invalid_request")
        let wrongType = try await harness.postForm(harness.asURL("/par"), [("response_type", "token")]
            + (try AuthorizationAttempt().parameters.filter { $0.0 != "response_type" }))
        #expect(oauthError(wrongType) == "unsupported_response_type")
        let repeated = try await harness.postForm(harness.asURL("/par"), try AuthorizationAttempt().parameters + [("state", "again")])
        #expect(oauthError(repeated) == "invalid_request")
    }

    @Test("a request_uri works once, for its own client, until it expires")
    func requestURIRules() async throws {
        let harness = try await IssuerHarness.make()
        let attempt = try AuthorizationAttempt()
        func push() async throws -> String {
            try json(try await harness.postForm(harness.asURL("/par"), attempt.parameters)).string("request_uri")
        }
        func authorize(_ uri: String, client: String = "wallet-dev") async throws -> HTTPResponse {
            try await harness.get(harness.asURL("/authorize?") + FormURLEncoding.encode([("client_id", client), ("request_uri", uri)]))
        }
        let uri = try await push()
        #expect(try await authorize(uri).status == 302)
        #expect(oauthError(try await authorize(uri)) == "invalid_request")
        #expect(oauthError(try await authorize(try await push(), client: "other")) == "invalid_request")
        let late = try await push()
        harness.clock.advance(by: 61)
        #expect(oauthError(try await authorize(late)) == "invalid_request")
    }

    @Test("with PAR required a plain authorization request is refused; with PAR optional it is accepted")
    func parRequired() async throws {
        let attempt = try AuthorizationAttempt()
        let strict = try await IssuerHarness.make { $0.par = .required }
        let refused = try await strict.get(strict.asURL("/authorize?") + FormURLEncoding.encode(attempt.parameters))
        #expect(refused.status == 400 && oauthError(refused) == "invalid_request")
        let relaxed = try await IssuerHarness.make { $0.par = .optional }
        let accepted = try await relaxed.get(relaxed.asURL("/authorize?") + FormURLEncoding.encode(attempt.parameters))
        #expect(accepted.status == 302)
        #expect(try redirectParameters(accepted)["code"] != nil)
        let disabled = try await IssuerHarness.make { $0.par = .disabled }
        #expect(try await disabled.postForm(disabled.asURL("/par"), attempt.parameters).status == 404)
    }

    @Test("the approval hook can deny: the redirect carries error, state and iss")
    func denial() async throws {
        let harness = try await IssuerHarness.make { $0.approval = .denyAll }
        let attempt = try AuthorizationAttempt()
        let parameters = try redirectParameters(try await pushAndAuthorize(harness, attempt))
        #expect(parameters["error"] == "access_denied")
        #expect(parameters["code"] == nil)
        #expect(parameters["state"] == attempt.state && parameters["iss"] == "https://issuer.example")
    }

    @Test("the approval hook sees the client, the configurations and the issuer_state of the offer")
    func approvalSummary() async throws {
        let seen = Locked<[AuthorizationRequestSummary]>([])
        let harness = try await IssuerHarness.make {
            $0.approval = AuthorizationApproval { summary in
                seen.withLock { $0.append(summary) }
                return .approve
            }
        }
        let offer = try await harness.issuer.createOffer(.authorizationCode([IssuerCredentialConfiguration.mDLId]))
        var attempt = try AuthorizationAttempt()
        attempt.scope = nil
        attempt.details = harness.authorizationDetails([IssuerCredentialConfiguration.mDLId])
        attempt.issuerState = offer.issuerState
        _ = try await pushAndAuthorize(harness, attempt)
        let summary = try #require(seen.withLock { $0.first })
        #expect(summary.clientId == "wallet-dev" && summary.pushed)
        #expect(summary.credentialConfigurationIds == [IssuerCredentialConfiguration.mDLId])
        #expect(summary.issuerState == offer.issuerState)
    }

    @Test("an issuer_state this issuer did not make is refused")
    func unknownIssuerState() async throws {
        let harness = try await IssuerHarness.make()
        var attempt = try AuthorizationAttempt()
        attempt.issuerState = "injected"
        #expect(oauthError(try await harness.postForm(harness.asURL("/par"), attempt.parameters)) == "invalid_request")
    }

    @Test("authorization_details gives a token response binding credential_identifiers, shaped like the spec's example (§6.2)")
    func credentialIdentifiersInTokenResponse() async throws {
        let vector = try issuerVector("openid4vci/authorization_and_token.json")
        let text = try issuerVectorExample(vector, "token_response_with_authorization_details_credential_identifiers")
            .string("text")
        let expected = try JSONValue.parseObject(String(text[try #require(text.firstIndex(of: "{"))...]))
        let harness = try await IssuerHarness.make()
        var attempt = try AuthorizationAttempt()
        attempt.scope = nil
        attempt.details = harness.authorizationDetails([IssuerCredentialConfiguration.pidId])
        let code = try #require(try redirectParameters(try await pushAndAuthorize(harness, attempt))["code"])
        let body = try json(try await redeem(harness, code: code, attempt))
        for name in expected.keys { #expect(body[name] != nil, "token response member \(name)") }
        let detail = try body.objectArray("authorization_details")[0]
        #expect(Set(detail.keys) == Set(try expected.objectArray("authorization_details")[0].keys))
        #expect(try detail.string("credential_configuration_id") == IssuerCredentialConfiguration.pidId)
        #expect(try detail.stringArray("credential_identifiers") == [IssuerCredentialConfiguration.pidId + "-dataset-1"])
    }

    @Test("with a separate authorization server, authorization_details must name the issuer in locations")
    func locations() async throws {
        let harness = try await IssuerHarness.make { $0.authorizationServerPath = "/auth" }
        var attempt = try AuthorizationAttempt()
        attempt.scope = nil
        attempt.details = harness.authorizationDetails([IssuerCredentialConfiguration.pidId])
        let refused = try await harness.postForm("https://issuer.example/auth/par", attempt.parameters)
        #expect(oauthError(refused) == "invalid_authorization_details")
        attempt.details = harness.authorizationDetails([IssuerCredentialConfiguration.pidId], locations: "https://issuer.example")
        #expect(try await harness.postForm("https://issuer.example/auth/par", attempt.parameters).status == 201)
    }

    @Test("registered clients: an unknown client or an unregistered redirect_uri is refused")
    func registeredClients() async throws {
        let harness = try await IssuerHarness.make { $0.clients = ["wallet-dev": ["eudi-wallet://authorize"]] }
        var stranger = try AuthorizationAttempt()
        stranger.clientId = "stranger"
        #expect(oauthError(try await harness.postForm(harness.asURL("/par"), stranger.parameters)) == "invalid_client")
        var elsewhere = try AuthorizationAttempt()
        elsewhere.redirectURI = "https://attacker.example/cb"
        #expect(oauthError(try await harness.postForm(harness.asURL("/par"), elsewhere.parameters)) == "invalid_request")
    }

    @Test("behaviour switches change state and iss in the redirect")
    func redirectBehaviour() async throws {
        let harness = try await IssuerHarness.make {
            $0.behaviour = IssuerBehaviour(redirectState: "forged", redirectIssuer: "https://evil.example")
        }
        let parameters = try redirectParameters(try await pushAndAuthorize(harness, try AuthorizationAttempt()))
        #expect(parameters["state"] == "forged" && parameters["iss"] == "https://evil.example")
        try await harness.issuer.setBehaviour(IssuerBehaviour(omitRedirectIssuer: true))
        #expect(try redirectParameters(try await pushAndAuthorize(harness, try AuthorizationAttempt()))["iss"] == nil)
    }
}
