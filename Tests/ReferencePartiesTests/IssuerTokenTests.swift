import Foundation
import ReferenceParties
import Testing
import WalletEncoding
import WalletRuntime

@Suite("Reference issuer: pre-authorized and refresh token grants")
struct IssuerTokenTests {
    private let preAuthorized = "urn:ietf:params:oauth:grant-type:pre-authorized_code"

    private func redeem(_ harness: IssuerHarness, _ offer: IssuedCredentialOffer, txCode: String?,
                        clientId: String? = nil, extra: [(String, String)] = []) async throws -> HTTPResponse {
        var form = [("grant_type", preAuthorized), ("pre-authorized_code", offer.preAuthorizedCode ?? "")]
        if let txCode { form.append(("tx_code", txCode)) }
        if let clientId { form.append(("client_id", clientId)) }
        return try await harness.postForm(harness.asURL("/token"), form + extra)
    }

    @Test("the spec's pre-authorized token request (§6.1.1) with the right tx_code gets an access token")
    func preAuthorizedWithTxCode() async throws {
        let vector = try issuerVector("openid4vci/authorization_and_token.json")
        let text = try issuerVectorExample(vector, "token_request_pre_authorized_code_tx_code").string("text")
        #expect(text.contains("tx_code=493536"))
        let harness = try await IssuerHarness.make()
        let offer = try await harness.issuer.createOffer(.preAuthorized([IssuerCredentialConfiguration.pidId],
                                                                        txCode: .init(value: "493536")))
        let response = try await redeem(harness, offer, txCode: "493536",
                                        extra: [("authorization_details", harness.authorizationDetails([IssuerCredentialConfiguration.pidId]))])
        #expect(response.status == 200)
        #expect(response.headers["Cache-Control"] == "no-store")
        let body = try json(response)
        #expect(try body.string("token_type") == "Bearer")
        #expect(try body.int("expires_in") == 600)
        #expect(try body.objectArray("authorization_details")[0].stringArray("credential_identifiers").count == 1)
        let record = try #require(await harness.issuer.inspection.tokenRequests.last)
        #expect(record.grantType == preAuthorized && record.txCode == "493536" && record.clientId == nil)
    }

    @Test("a wrong tx_code is invalid_grant, a missing one or an unexpected one invalid_request")
    func txCodeRefusals() async throws {
        let harness = try await IssuerHarness.make()
        let withCode = try await harness.issuer.createOffer(.preAuthorized([IssuerCredentialConfiguration.pidId],
                                                                           txCode: .init(value: "1234")))
        #expect(oauthError(try await redeem(harness, withCode, txCode: "9999")) == "invalid_grant")
        #expect(oauthError(try await redeem(harness, withCode, txCode: nil)) == "invalid_request")
        #expect(try await redeem(harness, withCode, txCode: "1234").status == 200)
        let withoutCode = try await harness.issuer.createOffer(.preAuthorized([IssuerCredentialConfiguration.pidId]))
        #expect(oauthError(try await redeem(harness, withoutCode, txCode: "1234")) == "invalid_request")
    }

    @Test("after the allowed wrong tx_codes the pre-authorized code is dead, even with the right code")
    func txCodeGuessing() async throws {
        let harness = try await IssuerHarness.make { $0.maxTxCodeAttempts = 2 }
        let offer = try await harness.issuer.createOffer(.preAuthorized([IssuerCredentialConfiguration.pidId],
                                                                        txCode: .init(value: "1234")))
        #expect(oauthError(try await redeem(harness, offer, txCode: "0000")) == "invalid_grant")
        #expect(oauthError(try await redeem(harness, offer, txCode: "0001")) == "invalid_grant")
        #expect(oauthError(try await redeem(harness, offer, txCode: "1234")) == "invalid_grant")
    }

    @Test("a pre-authorized code is single use and expires; an unknown one is invalid_grant")
    func preAuthorizedCodeLife() async throws {
        let harness = try await IssuerHarness.make()
        let offer = try await harness.issuer.createOffer(.preAuthorized([IssuerCredentialConfiguration.pidId]))
        #expect(try await redeem(harness, offer, txCode: nil).status == 200)
        #expect(oauthError(try await redeem(harness, offer, txCode: nil)) == "invalid_grant")
        let late = try await harness.issuer.createOffer(.preAuthorized([IssuerCredentialConfiguration.pidId]))
        harness.clock.advance(by: 3601)
        #expect(oauthError(try await redeem(harness, late, txCode: nil)) == "invalid_grant")
        let response = try await harness.postForm(harness.asURL("/token"), [("grant_type", preAuthorized), ("pre-authorized_code", "x")])
        #expect(oauthError(response) == "invalid_grant")
    }

    @Test("without anonymous access a pre-authorized token request needs client_id (invalid_client)")
    func anonymousAccess() async throws {
        let harness = try await IssuerHarness.make { $0.anonymousPreAuthorizedAccess = false }
        let offer = try await harness.issuer.createOffer(.preAuthorized([IssuerCredentialConfiguration.pidId]))
        #expect(oauthError(try await redeem(harness, offer, txCode: nil)) == "invalid_client")
        #expect(try await redeem(harness, offer, txCode: nil, clientId: "wallet-dev").status == 200)
    }

    @Test("token authorization_details may narrow the offer but not widen it")
    func narrowing() async throws {
        let harness = try await IssuerHarness.make()
        let offer = try await harness.issuer.createOffer(.preAuthorized([IssuerCredentialConfiguration.pidId]))
        let widened = try await redeem(harness, offer, txCode: nil,
                                       extra: [("authorization_details", harness.authorizationDetails([IssuerCredentialConfiguration.mDLId]))])
        #expect(oauthError(widened) == "invalid_authorization_details")
        let malformed = try await redeem(harness, offer, txCode: nil, extra: [("authorization_details", "{not json")])
        #expect(oauthError(malformed) == "invalid_authorization_details")
    }

    @Test("a refresh token gives a new access token and a new refresh token; the old one is spent")
    func refreshRotation() async throws {
        let harness = try await IssuerHarness.make()
        let grant = try await harness.preAuthorizedToken()
        let refresh = try #require(grant.refreshToken)
        let form = [("grant_type", "refresh_token"), ("refresh_token", refresh), ("client_id", "wallet-dev")]
        let renewed = try await harness.postForm(harness.asURL("/token"), form)
        #expect(renewed.status == 200)
        let body = try json(renewed)
        #expect(try body.string("access_token") != grant.accessToken)
        #expect(try body.string("refresh_token") != refresh)
        #expect(oauthError(try await harness.postForm(harness.asURL("/token"), form)) == "invalid_grant")
    }

    @Test("a refresh token is bound to its client and, when issued with DPoP, to the DPoP key")
    func refreshBinding() async throws {
        let harness = try await IssuerHarness.make()
        let dpop = try DPoPKey()
        let grant = try await harness.preAuthorizedToken(dpop: dpop)
        #expect(grant.tokenType == "DPoP")
        let refresh = try #require(grant.refreshToken)
        let wrongClient = try await harness.postForm(harness.asURL("/token"), [
            ("grant_type", "refresh_token"), ("refresh_token", refresh), ("client_id", "other"),
        ])
        #expect(oauthError(wrongClient) == "invalid_grant")
        let otherKey = try DPoPKey()
        let wrongKey = try await harness.postForm(harness.asURL("/token"), [
            ("grant_type", "refresh_token"), ("refresh_token", refresh), ("client_id", "wallet-dev"),
        ], headers: ["DPoP": try await otherKey.proof(method: "POST", url: harness.asURL("/token"), at: harness.clock.now)])
        #expect(oauthError(wrongKey) == "invalid_grant")
        let right = try await harness.postForm(harness.asURL("/token"), [
            ("grant_type", "refresh_token"), ("refresh_token", refresh), ("client_id", "wallet-dev"),
        ], headers: ["DPoP": try await dpop.proof(method: "POST", url: harness.asURL("/token"), at: harness.clock.now)])
        #expect(right.status == 200)
        #expect(try json(right).string("token_type") == "DPoP")
    }

    @Test("unknown grant types, missing parameters and non-form bodies are refused")
    func malformedTokenRequests() async throws {
        let harness = try await IssuerHarness.make { $0.refreshTokens = false }
        #expect(oauthError(try await harness.postForm(harness.asURL("/token"), [("grant_type", "password")])) == "unsupported_grant_type")
        #expect(oauthError(try await harness.postForm(harness.asURL("/token"), [("grant_type", "refresh_token"), ("refresh_token", "x")]))
                == "unsupported_grant_type")
        #expect(oauthError(try await harness.postForm(harness.asURL("/token"), [])) == "invalid_request")
        let jsonBody = try await harness.postJSON(harness.asURL("/token"), ["grant_type": "authorization_code"])
        #expect(oauthError(jsonBody) == "invalid_request")
    }

    @Test("behaviour switches: every tx_code wrong, every token request refused with a chosen error")
    func tokenBehaviour() async throws {
        let harness = try await IssuerHarness.make { $0.behaviour.rejectEveryTxCode = true }
        let offer = try await harness.issuer.createOffer(.preAuthorized([IssuerCredentialConfiguration.pidId],
                                                                        txCode: .init(value: "1234")))
        #expect(oauthError(try await redeem(harness, offer, txCode: "1234")) == "invalid_grant")
        try await harness.issuer.setBehaviour(IssuerBehaviour(tokenError: "invalid_grant"))
        let fresh = try await harness.issuer.createOffer(.preAuthorized([IssuerCredentialConfiguration.pidId]))
        let refused = try await redeem(harness, fresh, txCode: nil)
        #expect(refused.status == 400 && oauthError(refused) == "invalid_grant")
        #expect(await harness.issuer.inspection.refusals.last?.error == "invalid_grant")
    }
}
