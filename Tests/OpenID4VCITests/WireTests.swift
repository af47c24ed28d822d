import Foundation
import JOSE
import Testing
import WalletCrypto
import WalletEncoding
import WalletRuntime
@testable import OpenID4VCI

@Suite("PKCE, DPoP, token and credential messages")
struct WireTests {
    @Test("PKCE S256 reproduces RFC 7636 Appendix B; a fresh verifier is 43 base64url characters")
    func pkce() throws {
        let vector = try Vectors.object("pkce/rfc7636_appendix_b.json")
        let verifier = try #require(vector["inputs"]?["code_verifier"]?.stringValue)
        #expect(PKCE(verifier: verifier).challenge == vector["expected"]?["code_challenge"]?.stringValue)
        let fresh = PKCE(randomBytes: Array(repeating: 7, count: 32))
        #expect(fresh.verifier.count == 43)
        #expect(PKCE.method == "S256")
    }

    @Test("DPoP: ath and the key thumbprint reproduce RFC 9449 §6.1/§7.1; htu drops query and fragment")
    func dpopVectors() throws {
        let vector = try Vectors.object("dpop/rfc9449_examples.json")
        let token = try #require(vector["inputs"]?["access_token"]?.stringValue)
        #expect(DPoPProof.accessTokenHash(token) == vector["expected"]?["ath"]?.stringValue)
        let jwk = try JWK(members: try #require(vector["inputs"]?["proof_public_jwk"]?.objectValue))
        #expect(jwk.thumbprint == vector["expected"]?["jkt"]?.stringValue)

        let expected = try #require(vector["expected"]?["decoded_resource_proof"]?["payload"]?.objectValue)
        let url = try #require(URL(string: "https://resource.example.org/protectedresource?x=1#f"))
        let claims = DPoPProof.claims(method: "GET", url: url, issuedAt: Date(timeIntervalSince1970: 1562262618),
                                      jwtID: "e1j3V_bKic8-LAEB", nonce: nil, accessToken: token)
        #expect(claims == expected)
    }

    @Test("a DPoP proof is a dpop+jwt signed by the key in its jwk header, with a nonce when given")
    func dpopProof() async throws {
        let key = try ECPrivateKey.generate(curve: .p256)
        let url = try #require(URL(string: "https://as.example/token"))
        let claims = DPoPProof.claims(method: "POST", url: url, issuedAt: Date(timeIntervalSince1970: 1_700_000_000),
                                      jwtID: "j-1", nonce: "n-1", accessToken: nil)
        let jwt = try JWT(compact: try await DPoPProof.sign(claims: claims, signer: SoftwareSigner(key)))
        #expect(jwt.header.type == "dpop+jwt")
        #expect(try jwt.jws.verifyWithEmbeddedJWK() == JWK(publicKey: .ec(key.publicKey)))
        #expect(jwt.claims["nonce"]?.stringValue == "n-1")
        #expect(jwt.claims["ath"] == nil)
        #expect(jwt.claims["htu"]?.stringValue == "https://as.example/token")
    }

    @Test("the §6.2 token response gives credential_identifiers by configuration")
    func tokenResponse() throws {
        let example = try Vectors.example("openid4vci/authorization_and_token.json",
                                          "token_response_with_authorization_details_credential_identifiers")
        let token = try TokenResponse(json: try #require(example["body_json"]?.objectValue))
        #expect(token.tokenType == "Bearer")
        #expect(!token.isDPoPBound)
        #expect(token.expiresIn == 86400)
        #expect(token.credentialIdentifiers["UniversityDegreeCredential"]
            == ["CivilEngineeringDegree-2023", "ElectricalEngineeringDegree-2023"])
        #expect(throws: ResponseProblem.invalidMember("access_token")) { _ = try TokenResponse(json: ["token_type": "DPoP"]) }
        #expect(throws: ResponseProblem.invalidMember("authorization_details.credential_identifiers")) {
            _ = try TokenResponse(json: ["access_token": "a", "token_type": "DPoP",
                                         "authorization_details": [["type": "openid_credential", "credential_configuration_id": "x"]]])
        }
        #expect(try TokenResponse(json: ["access_token": "a", "token_type": "dpop"]).isDPoPBound)
        #expect(try !TokenResponse(json: ["access_token": "a", "token_type": "bearer"]).isDPoPBound)
        // RFC 6749 §7.1: a type the wallet does not understand is refused, as is a missing one.
        for type in ["N_A", "mac", "", "Bearer "] as [JSONValue] {
            #expect(throws: ResponseProblem.invalidMember("token_type")) { _ = try TokenResponse(json: ["access_token": "a", "token_type": type]) }
        }
        #expect(throws: ResponseProblem.invalidMember("token_type")) { _ = try TokenResponse(json: ["access_token": "a"]) }
        // An entry without `type` that binds identifiers is taken as openid_credential; other types, and
        // typeless entries binding nothing, are skipped.
        let lenient = try TokenResponse(json: ["access_token": "a", "token_type": "Bearer", "authorization_details": [
            ["credential_configuration_id": "x", "credential_identifiers": ["x-1"]],
            ["type": "payment", "credential_configuration_id": "y", "credential_identifiers": ["y-1"]],
            ["credential_configuration_id": "z"],
        ]])
        #expect(lenient.credentialIdentifiers == ["x": ["x-1"]])
        // Each identifier is a request with keys of its own: a repeated one, or more than the cap, is refused.
        func details(_ identifiers: [String]) -> JSONObject {
            ["access_token": "a", "token_type": "Bearer", "authorization_details": [
                ["type": "openid_credential", "credential_configuration_id": "x", "credential_identifiers": .array(identifiers.map(JSONValue.string))],
            ]]
        }
        let most = (0..<TokenResponse.maximumCredentialIdentifiers).map { "x-\($0)" }
        #expect(try TokenResponse(json: details(most)).credentialIdentifiers["x"]?.count == TokenResponse.maximumCredentialIdentifiers)
        for refused in [most + ["x-more"], ["x-1", "x-2", "x-1"]] {
            #expect(throws: ResponseProblem.invalidMember("authorization_details.credential_identifiers")) {
                _ = try TokenResponse(json: details(refused))
            }
        }
    }

    @Test("the §8.3 and §9.2 responses: immediate, batch with notification_id, deferred, still pending")
    func credentialResponses() throws {
        let file = "openid4vci/credential_request_response.json"
        let single = try CredentialResponse(json: try #require(try Vectors.example(file, "credential_response_immediate_single")["body_json"]?.objectValue))
        #expect(single == .issued(credentials: ["LUpixVCWJk0eOt4CXQe1NXK....WZwmhmn9OQp6YxX0a2L"], notificationId: nil))
        let batch = try CredentialResponse(json: try #require(try Vectors.example(file, "credential_response_batch_with_notification_id")["body_json"]?.objectValue))
        guard case .issued(let credentials, let notificationId) = batch else { Issue.record("not issued"); return }
        #expect(credentials.count == 2)
        #expect(notificationId == "3fwe98js")
        let deferred = try CredentialResponse(json: try #require(try Vectors.example(file, "credential_response_deferred_transaction_id")["body_json"]?.objectValue))
        #expect(deferred == .deferred(transactionId: "8xLOxBtZp8", interval: 3600))
        let pending = try CredentialResponse(json: try #require(try Vectors.example(file, "deferred_credential_response_still_pending")["body_json"]?.objectValue))
        #expect(pending == .deferred(transactionId: "8xLOxBtZp8", interval: 86400))
        #expect(throws: ResponseProblem.invalidMember("credentials")) { _ = try CredentialResponse(json: ["credentials": []]) }
        #expect(throws: ResponseProblem.invalidMember("credentials")) { _ = try CredentialResponse(json: [:]) }
        #expect(throws: ResponseProblem.invalidMember("interval")) {
            _ = try CredentialResponse(json: ["transaction_id": "t", "interval": "soon"])
        }
    }

    @Test("OAuth error bodies and WWW-Authenticate DPoP challenges are read")
    func errors() throws {
        let example = try Vectors.example("openid4vci/authorization_and_token.json", "token_error_response")
        let response = jsonResponse(400, try #require(example["body_json"]?.objectValue))
        #expect(response.oauthError?.code == "invalid_request")
        let challenge = HTTPResponse(status: 401, headers: ["WWW-Authenticate": #"DPoP error="use_dpop_nonce", error_description="x""#,
                                                            "DPoP-Nonce": "n"])
        #expect(challenge.authenticateError == "use_dpop_nonce")
        #expect(challenge.dpopNonce == "n")
        #expect(challenge.oauthError == nil)
    }

    @Test("authorization request: parameters of §5.1.1 with PKCE, and the PAR URL carries only client_id and request_uri")
    func authorizationRequest() throws {
        let metadata = try CredentialIssuerMetadata(
            json: ["credential_issuer": "https://issuer.example", "credential_endpoint": "https://issuer.example/c",
                   "credential_configurations_supported": ["UniversityDegreeCredential": ["format": "dc+sd-jwt", "vct": "v", "scope": "degree"]]],
            expectedIssuer: "https://issuer.example", policy: URLPolicy(allowsLoopbackHTTP: false), trustAnchors: [], now: Date())
        let configuration = try #require(metadata.configuration("UniversityDegreeCredential"))
        let server = try AuthorizationServerMetadata(
            json: ["issuer": "https://as.example", "authorization_endpoint": "https://as.example/authorize", "token_endpoint": "https://as.example/token"],
            expectedIssuer: "https://as.example", policy: URLPolicy(allowsLoopbackHTTP: false))
        let request = AuthorizationRequest(clientId: "s6BhdRkqt3", redirectUri: "https://wallet.example.org/cb",
                                           pkce: PKCE(verifier: "dBjftJeZ4CVP-mB92K27uhbUJU1p1r_wW1gFWFOEjXk"), state: "st",
                                           issuerState: "is", configuration: configuration, metadata: metadata, server: server)
        let parameters = Dictionary(request.parameters, uniquingKeysWith: { a, _ in a })
        #expect(parameters["code_challenge"] == "E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM")
        #expect(parameters["code_challenge_method"] == "S256")
        #expect(parameters["issuer_state"] == "is")
        #expect(parameters["response_type"] == "code")
        let details = try JSONValue.parse(try #require(parameters["authorization_details"]))
        #expect(details == [["type": "openid_credential", "credential_configuration_id": "UniversityDegreeCredential",
                             "locations": ["https://issuer.example"]]])
        let endpoint = try #require(URL(string: "https://as.example/authorize"))
        #expect(request.authorizationURL(endpoint: endpoint, requestURI: "urn:ietf:params:oauth:request_uri:6esc_11ACC5bwc014ltc14eY22c")
            == "https://as.example/authorize?client_id=s6BhdRkqt3&request_uri=urn%3Aietf%3Aparams%3Aoauth%3Arequest_uri%3A6esc_11ACC5bwc014ltc14eY22c")
        // A server that lists detail types without openid_credential gets the scope and resource instead.
        let scoped = try AuthorizationServerMetadata(
            json: ["issuer": "https://as.example", "token_endpoint": "https://as.example/token", "authorization_details_types_supported": ["other"]],
            expectedIssuer: "https://as.example", policy: URLPolicy(allowsLoopbackHTTP: false))
        let byScope = AuthorizationRequest(clientId: "c", redirectUri: "https://w/cb", pkce: PKCE(verifier: "v"), state: "s",
                                           issuerState: nil, configuration: configuration, metadata: metadata, server: scoped)
        let scopeParameters = Dictionary(byScope.parameters, uniquingKeysWith: { a, _ in a })
        #expect(scopeParameters["scope"] == "degree")
        #expect(scopeParameters["resource"] == "https://issuer.example")
        #expect(scopeParameters["authorization_details"] == nil)
    }

    @Test("the redirect: code when state and iss match; state mismatch, iss mismatch, an error and a foreign redirect fail")
    func redirect() throws {
        func parse(_ redirect: String, issuerRequired: Bool = true) throws(IssuanceError) -> AuthorizationResponse {
            try AuthorizationResponse.parse(redirect, redirectUri: "eudi-wallet://authorize", state: "s-1",
                                            expectedIssuer: "https://as.example", issuerRequired: issuerRequired)
        }
        #expect(try parse("eudi-wallet://authorize?code=SplxlOBeZQQYbYS6WxSbIA&state=s-1&iss=https%3A%2F%2Fas.example")
            == .code("SplxlOBeZQQYbYS6WxSbIA"))
        #expect(try parse("eudi-wallet://authorize?code=c&state=s-1", issuerRequired: false) == .code("c"))
        #expect(throws: IssuanceError.authorizationFailed(oauthError: nil, reason: .stateMismatch)) {
            _ = try parse("eudi-wallet://authorize?code=c&state=s-2&iss=https%3A%2F%2Fas.example")
        }
        #expect(throws: IssuanceError.authorizationFailed(oauthError: nil, reason: .stateMismatch)) {
            _ = try parse("eudi-wallet://authorize?code=c&iss=https%3A%2F%2Fas.example")
        }
        #expect(throws: IssuanceError.authorizationFailed(oauthError: nil, reason: .issuerMismatch(expected: "https://as.example", actual: nil))) {
            _ = try parse("eudi-wallet://authorize?code=c&state=s-1")
        }
        #expect(throws: IssuanceError.authorizationFailed(
            oauthError: nil, reason: .issuerMismatch(expected: "https://as.example", actual: "https://evil.example"))) {
            _ = try parse("eudi-wallet://authorize?code=c&state=s-1&iss=https%3A%2F%2Fevil.example")
        }
        #expect(throws: IssuanceError.authorizationFailed(
            oauthError: "access_denied", reason: .rejected(status: 302, description: "no"))) {
            _ = try parse("eudi-wallet://authorize?error=access_denied&error_description=no&state=s-1&iss=https%3A%2F%2Fas.example")
        }
        #expect(throws: IssuanceError.authorizationFailed(oauthError: nil, reason: .invalidRedirect)) {
            _ = try parse("https://evil.example/authorize?code=c&state=s-1")
        }
    }
}
