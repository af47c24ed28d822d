import Foundation
import ReferenceParties
import Testing
import WalletEncoding
import WalletRuntime

@Suite("Reference issuer: credential offers")
struct IssuerOfferTests {
    /// The member names and JSON kinds of an object, recursively: what "the same shape" means.
    private func shape(_ value: JSONValue) -> JSONValue {
        switch value {
        case .object(let members): return .object(members.mapValues(shape))
        case .array(let elements): return .array(elements.prefix(1).map(shape))
        default: return .string(value.kind.rawValue)
        }
    }

    @Test("a pre-authorized offer with a transaction code has the shape of the spec's example (§4.1.1)")
    func preAuthorizedShape() async throws {
        let vector = try issuerVector("openid4vci/credential_offers.json")
        let expected = try issuerVectorExample(vector, "offer_multiple_credentials_pre_authorized_tx_code").value("json")
        let harness = try await IssuerHarness.make()
        let offer = try await harness.issuer.createOffer(.preAuthorized(
            [IssuerCredentialConfiguration.pidId, IssuerCredentialConfiguration.mDLId],
            txCode: .init(length: 4, description: "Please provide the one-time code that was sent via e-mail")))
        #expect(shape(.object(offer.offer)) == shape(expected))
        let txCode = try #require(offer.txCode)
        #expect(txCode.count == 4 && txCode.allSatisfy(\.isNumber))
        #expect(offer.preAuthorizedCode != nil && offer.issuerState == nil)
    }

    @Test("an offer by value is an openid-credential-offer:// link whose credential_offer decodes to the offer")
    func byValue() async throws {
        let harness = try await IssuerHarness.make()
        let offer = try await harness.issuer.createOffer(.preAuthorized([IssuerCredentialConfiguration.mDLId]))
        #expect(offer.byValue.hasPrefix("openid-credential-offer://?credential_offer="))
        let query = try #require(URLComponents(string: offer.byValue)?.percentEncodedQuery)
        let pairs = try FormURLEncoding.decode(query)
        #expect(pairs.fields.map(\.name) == ["credential_offer"])
        #expect(try JSONValue.parseObject(try #require(pairs["credential_offer"])) == offer.offer)
        #expect(offer.byValue(endpoint: "https://wallet.example/offer?x=1").hasPrefix("https://wallet.example/offer?x=1&credential_offer="))
    }

    @Test("an offer by reference is served as application/json at its credential_offer_uri")
    func byReference() async throws {
        let harness = try await IssuerHarness.make()
        let offer = try await harness.issuer.createOffer(.authorizationCode([IssuerCredentialConfiguration.pidId]))
        let query = try #require(URLComponents(string: offer.byReference)?.percentEncodedQuery)
        let pairs = try FormURLEncoding.decode(query)
        #expect(pairs.fields.map(\.name) == ["credential_offer_uri"] && pairs["credential_offer_uri"] == offer.offerURL)
        let response = try await harness.get(offer.offerURL)
        #expect(response.status == 200)
        #expect(response.headers["Content-Type"] == "application/json")
        #expect(try json(response) == offer.offer)
        #expect(try await harness.get(harness.url("/credential-offer/unknown")).status == 404)
    }

    @Test("an authorization-code offer carries issuer_state and, on request, the authorization server")
    func authorizationCodeOffer() async throws {
        let harness = try await IssuerHarness.make { $0.authorizationServerPath = "/auth" }
        let offer = try await harness.issuer.createOffer(CredentialOfferRequest(
            configurationIds: [IssuerCredentialConfiguration.pidId],
            authorizationCode: .init(includesIssuerState: true, namesAuthorizationServer: true)))
        let grant = try offer.offer.object("grants").object("authorization_code")
        #expect(try grant.string("issuer_state") == offer.issuerState)
        #expect(try grant.string("authorization_server") == "https://issuer.example/auth")
        #expect(offer.preAuthorizedCode == nil)
    }

    @Test("an empty tx_code object still demands a code; text codes use letters and digits")
    func txCodeVariants() async throws {
        let harness = try await IssuerHarness.make()
        let unannounced = try await harness.issuer.createOffer(.preAuthorized([IssuerCredentialConfiguration.pidId],
                                                                              txCode: .unannounced(value: "secret")))
        let grant = try unannounced.offer.object("grants").object("urn:ietf:params:oauth:grant-type:pre-authorized_code")
        #expect(try grant.object("tx_code").isEmpty)
        #expect(unannounced.txCode == "secret")
        let text = try await harness.issuer.createOffer(.preAuthorized([IssuerCredentialConfiguration.pidId],
                                                                       txCode: .init(inputMode: "text", length: 8)))
        #expect(text.txCode?.count == 8)
        let description = try text.offer.object("grants").object("urn:ietf:params:oauth:grant-type:pre-authorized_code")
            .object("tx_code")
        #expect(try description.string("input_mode") == "text" && description.int("length") == 8)
    }

    @Test("offers for unknown configurations or without a grant are refused")
    func refusedOffers() async throws {
        let harness = try await IssuerHarness.make()
        await #expect(throws: ReferenceIssuerError.unknownCredentialConfiguration("nope")) {
            _ = try await harness.issuer.createOffer(.preAuthorized(["nope"]))
        }
        await #expect(throws: ReferenceIssuerError.emptyOffer) {
            _ = try await harness.issuer.createOffer(CredentialOfferRequest(configurationIds: [IssuerCredentialConfiguration.pidId]))
        }
    }

    @Test("the offer factory makes fresh offers over HTTP when enabled, and does not exist otherwise")
    func offerFactory() async throws {
        let harness = try await IssuerHarness.make { $0.offerFactory = true }
        let response = try await harness.postJSON(harness.url("/offers"), [
            "credential_configuration_ids": [.string(IssuerCredentialConfiguration.mDLId)], "tx_code": "4711",
        ])
        #expect(response.status == 201)
        let body = try json(response)
        #expect(try body.string("tx_code") == "4711")
        let code = try body.string("pre-authorized_code")
        let token = try await harness.postForm(harness.asURL("/token"), [
            ("grant_type", "urn:ietf:params:oauth:grant-type:pre-authorized_code"), ("pre-authorized_code", code), ("tx_code", "4711"),
        ])
        #expect(token.status == 200)
        let fetched = try await harness.get(try body.string("credential_offer_uri"))
        #expect(try json(fetched) == (try body.object("credential_offer")))
        let authorization = try json(try await harness.postJSON(harness.url("/offers"), [
            "credential_configuration_ids": [.string(IssuerCredentialConfiguration.pidId)], "grant": "authorization_code",
        ]))
        #expect(authorization["issuer_state"] != nil && authorization["pre-authorized_code"] == nil)
        let unknown = try await harness.postJSON(harness.url("/offers"), ["credential_configuration_ids": ["nope"]])
        #expect(oauthError(unknown) == "invalid_request")
        let off = try await IssuerHarness.make()
        #expect(try await off.postJSON(off.url("/offers"), ["credential_configuration_ids": []]).status == 404)
    }
}
