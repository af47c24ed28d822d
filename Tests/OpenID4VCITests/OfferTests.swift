import Foundation
import Testing
import WalletEncoding
@testable import OpenID4VCI

@Suite("Credential offers (OpenID4VCI 1.0 §4.1)")
struct OfferTests {
    static let file = "openid4vci/credential_offers.json"
    let policy = URLPolicy(allowsLoopbackHTTP: false)

    private func parse(_ text: String) throws(IssuanceError) -> CredentialOfferObject {
        guard case .value(let object) = try OfferInput.parse(text, policy: policy) else {
            throw .invalidOffer(.unrecognizedInput)
        }
        return object
    }

    @Test("the §4.1.1 example with two configurations and a tx_code object is read member by member")
    func multipleCredentials() throws {
        let example = try Vectors.example(Self.file, "offer_multiple_credentials_pre_authorized_tx_code")
        let offer = try parse(try #require(example["text"]?.stringValue))
        #expect(offer.credentialIssuer == "https://credential-issuer.example.com")
        #expect(offer.credentialConfigurationIds == ["UniversityDegreeCredential", "org.iso.18013.5.1.mDL"])
        #expect(offer.preAuthorizedCode?.preAuthorizedCode == "oaKazRN8I0IbtZ0C7JuMn5")
        #expect(offer.preAuthorizedCode?.txCode == TxCodeSpec(inputMode: .numeric, length: 4,
                                                              description: "Please provide the one-time code that was sent via e-mail"))
        #expect(offer.authorizationCode == nil)
    }

    @Test("an offer by value in an https link and in an openid-credential-offer:// link parses to the same grants")
    func byValue() throws {
        let get = try Vectors.example(Self.file, "offer_by_value_get_request")
        let viaHTTPS = try parse("https://wallet.example/credential_offer?credential_offer="
                                 + (try #require(get["credential_offer_joined"]?.stringValue)))
        #expect(viaHTTPS.credentialConfigurationIds == ["UniversityDegree_JWT", "org.iso.18013.5.1.mDL"])
        // "tx_code": {} still means a code is required, numeric by default.
        #expect(viaHTTPS.preAuthorizedCode?.txCode == TxCodeSpec())

        let link = try Vectors.example(Self.file, "offer_by_value_openid_credential_offer_uri")
        let viaScheme = try parse("openid-credential-offer://?credential_offer="
                                  + (try #require(link["credential_offer_joined"]?.stringValue)))
        #expect(viaScheme.credentialConfigurationIds == ["org.iso.18013.5.1.mDL"])
        #expect(viaScheme.preAuthorizedCode?.txCode == TxCodeSpec(
            inputMode: .text, length: nil, description: "Please enter the serial number of your physical drivers license"))
    }

    @Test("an offer by reference yields the https URL to fetch")
    func byReference() throws {
        let example = try Vectors.example(Self.file, "offer_by_reference_uri")
        let uri = "openid-credential-offer://?credential_offer_uri=" + (try #require(example["credential_offer_uri_joined"]?.stringValue))
        #expect(try OfferInput.parse(uri, policy: policy)
            == .reference(try #require(URL(string: "https://server.example.com/credential-offer/GkurKxf5T0Y-mnPFCHqWOMiZi4VS138cQO_V7PZHAdM"))))
        // Plain http to a public host is refused even when http is allowed; loopback only when allowed.
        #expect(throws: IssuanceError.invalidOffer(.insecureURL("http://server.example.com/o"))) {
            _ = try OfferInput.parse("openid-credential-offer://?credential_offer_uri=http%3A%2F%2Fserver.example.com%2Fo",
                                     policy: URLPolicy(allowsLoopbackHTTP: true))
        }
        #expect(throws: IssuanceError.invalidOffer(.insecureURL("http://127.0.0.1:8080/o"))) {
            _ = try OfferInput.parse("openid-credential-offer://?credential_offer_uri=http%3A%2F%2F127.0.0.1%3A8080%2Fo", policy: policy)
        }
        #expect(throws: Never.self) {
            _ = try OfferInput.parse("openid-credential-offer://?credential_offer_uri=http%3A%2F%2F127.0.0.1%3A8080%2Fo",
                                     policy: URLPolicy(allowsLoopbackHTTP: true))
        }
    }

    @Test("the authorization code example keeps issuer_state; the empty tx_code example requires a code")
    func otherGrants() throws {
        let authorization = try Vectors.example(Self.file, "offer_authorization_code_issuer_state_response")
        let offer = try CredentialOfferObject(json: try #require(authorization["body_json"]?.objectValue))
        #expect(offer.authorizationCode == AuthorizationCodeGrant(issuerState: "eyJhbGciOiJSU0Et...FYUaBy"))
        #expect(offer.preAuthorizedCode == nil)

        let empty = try Vectors.example(Self.file, "offer_pre_authorized_empty_tx_code")
        let raw = try #require(empty["text"]?.stringValue)
        let parsed = try parse(raw)
        #expect(parsed.preAuthorizedCode?.preAuthorizedCode == "adhjhdjajkdkhjhdj")
        #expect(parsed.preAuthorizedCode?.txCode == TxCodeSpec())
    }

    @Test("malformed offers fail with invalidOffer naming what is wrong")
    func negatives() throws {
        func fails(_ text: String, _ expected: IssuanceError, sourceLocation: SourceLocation = #_sourceLocation) {
            #expect(throws: expected, sourceLocation: sourceLocation) { _ = try OfferInput.parse(text, policy: policy) }
        }
        fails("hello", .invalidOffer(.unrecognizedInput))
        fails("openid-credential-offer://?foo=bar", .invalidOffer(.unrecognizedInput))
        fails("openid-credential-offer://?credential_offer=%7B%7D&credential_offer_uri=https%3A%2F%2Fa.example",
              .invalidOffer(.ambiguousOrMalformedURI))
        fails("openid-credential-offer://?credential_offer=%ZZ", .invalidOffer(.ambiguousOrMalformedURI))
        fails(#"{"credential_configuration_ids":["a"]}"#, .invalidOffer(.invalidMember("credential_issuer")))
        fails(#"{"credential_issuer":"https://i.example","credential_configuration_ids":[]}"#,
              .invalidOffer(.invalidMember("credential_configuration_ids")))
        fails(#"{"credential_issuer":"https://i.example","credential_configuration_ids":["a","a"]}"#,
              .invalidOffer(.invalidMember("credential_configuration_ids")))
        let grant = "grants.urn:ietf:params:oauth:grant-type:pre-authorized_code"
        fails(#"{"credential_issuer":"https://i.example","credential_configuration_ids":["a"],"grants":{"urn:ietf:params:oauth:grant-type:pre-authorized_code":{}}}"#,
              .invalidOffer(.invalidMember("\(grant).pre-authorized_code")))
        fails(#"{"credential_issuer":"https://i.example","credential_configuration_ids":["a"],"grants":{"urn:ietf:params:oauth:grant-type:pre-authorized_code":{"pre-authorized_code":"c","tx_code":{"input_mode":"alpha"}}}}"#,
              .invalidOffer(.invalidMember("\(grant).tx_code.input_mode")))
        fails(#"{"credential_issuer":"https://i.example","credential_configuration_ids":["a"],"grants":{"urn:ietf:params:oauth:grant-type:pre-authorized_code":{"pre-authorized_code":"c","tx_code":{"length":0}}}}"#,
              .invalidOffer(.invalidMember("\(grant).tx_code.length")))
        let long = String(repeating: "x", count: 301)
        fails(#"{"credential_issuer":"https://i.example","credential_configuration_ids":["a"],"grants":{"urn:ietf:params:oauth:grant-type:pre-authorized_code":{"pre-authorized_code":"c","tx_code":{"description":"\#(long)"}}}}"#,
              .invalidOffer(.invalidMember("\(grant).tx_code.description")))
        do {
            _ = try OfferInput.parse("{nope", policy: policy)
            Issue.record("bad JSON parsed")
        } catch {
            guard case .invalidOffer(.notJSON) = error else { Issue.record("bad JSON must be notJSON, got \(error)"); return }
        }
    }

    @Test("resolveOffer fetches a by-reference offer and the issuer's metadata, and refuses unknown configurations")
    func resolve() async throws {
        let issuer = try TestIssuer()
        let wallet = try TestWalletSetup(issuer: issuer)
        let offer = try await wallet.client.resolveOffer(issuer.offerURI())
        #expect(offer.credentialIssuer == issuer.base)
        #expect(offer.credentialConfigurationIds == ["identity"])
        #expect(offer.requiresTxCode == false)
        #expect(offer.issuerMetadata.display.first?.name == "Test Issuer")
        #expect(offer.configuration("identity")?.vct == TestIssuer.vct)

        issuer.options.txCode = "1234"
        #expect(try await wallet.client.resolveOffer(issuer.offerURI()).txCode?.length == 4)

        let unknown = #"{"credential_issuer":"https://issuer.example","credential_configuration_ids":["nope"]}"#
        await #expect(throws: IssuanceError.invalidOffer(.unknownConfiguration("nope"))) {
            _ = try await wallet.client.resolveOffer(unknown)
        }
        issuer.options.faults["/offer"] = [HTTPResponseFactory.notFound]
        await #expect(throws: IssuanceError.invalidOffer(.fetchFailed(status: 404))) {
            _ = try await wallet.client.resolveOffer("openid-credential-offer://?credential_offer_uri=https%3A%2F%2Fissuer.example%2Foffer")
        }
        let wrongIssuer = #"{"credential_issuer":"https://issuer.example/tenant","credential_configuration_ids":["identity"]}"#
        await #expect(throws: IssuanceError.invalidOffer(.issuerMetadata(.unavailable(status: 404)))) {
            _ = try await wallet.client.resolveOffer(wrongIssuer)
        }
        let insecure = #"{"credential_issuer":"http://issuer.example","credential_configuration_ids":["identity"]}"#
        await #expect(throws: IssuanceError.invalidOffer(.insecureURL("http://issuer.example"))) {
            _ = try await wallet.client.resolveOffer(insecure)
        }
    }
}

enum HTTPResponseFactory {
    static let notFound = jsonResponse(404, ["error": "not_found"])
}
