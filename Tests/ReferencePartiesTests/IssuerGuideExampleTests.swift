import Foundation
import JOSE
import ReferenceParties
import SDJWT
import Testing
import WalletCrypto
import WalletEncoding
import WalletRuntime

/// The issuer example of docs/reference-parties.md, with a hand-written wallet side.
@Suite("Reference issuer: the guide's example")
struct IssuerGuideExampleTests {
    @Test("DPoP with nonces, a tx_code and a batch of 5 over InProcessHTTPClient, as the guide shows it")
    func guideExample() async throws {
        let clock = ManualClock(issuerTestStart)
        let issuer = try ReferenceIssuer(
            configuration: ReferenceIssuerConfiguration(dpop: .requiredWithNonce, batchSize: 5),
            clock: clock)
        let offer = try await issuer.createOffer(
            .preAuthorized([IssuerCredentialConfiguration.pidId], txCode: .init(value: "493536")))
        let client = InProcessHTTPClient(handler: issuer, clock: clock)

        // The wallet: read the offer by value, find the endpoints, get a DPoP-bound token.
        let query = try #require(URLComponents(string: offer.byValue)?.percentEncodedQuery)
        let offerObject = try JSONValue.parseObject(try #require(try FormURLEncoding.decode(query)["credential_offer"]))
        let issuerId = try offerObject.string("credential_issuer")
        let code = try offerObject.object("grants").object("urn:ietf:params:oauth:grant-type:pre-authorized_code")
            .string("pre-authorized_code")
        func get(_ url: String) async throws -> JSONObject {
            try JSONValue.parseObject(try await client.send(HTTPRequest(url: try #require(URL(string: url)))).body)
        }
        let metadata = try await get(issuerId + "/.well-known/openid-credential-issuer")
        let tokenEndpoint = try await get(issuerId + "/.well-known/oauth-authorization-server").string("token_endpoint")
        let dpop = try DPoPKey()
        var dpopNonce: String?
        var tokenResponse: HTTPResponse?
        for _ in 0..<2 {
            let response = try await client.send(HTTPRequest(
                method: .post, url: try #require(URL(string: tokenEndpoint)),
                headers: ["Content-Type": "application/x-www-form-urlencoded",
                          "DPoP": try await dpop.proof(method: "POST", url: tokenEndpoint, at: clock.now, nonce: dpopNonce)],
                body: Array(FormURLEncoding.encode([("grant_type", "urn:ietf:params:oauth:grant-type:pre-authorized_code"),
                                                    ("pre-authorized_code", code), ("tx_code", offer.txCode ?? "")]).utf8)))
            dpopNonce = response.headers["DPoP-Nonce"] ?? dpopNonce
            if response.status == 200 { tokenResponse = response; break }
            #expect(oauthError(response) == "use_dpop_nonce")
        }
        let token = try JSONValue.parseObject(try #require(tokenResponse).body)
        #expect(try token.string("token_type") == "DPoP")
        let accessToken = try token.string("access_token")

        // Five holder keys, one proof each, with the issuer's c_nonce.
        let nonceResponse = try await client.send(HTTPRequest(method: .post, url: try #require(URL(string: try metadata.string("nonce_endpoint")))))
        let cNonce = try JSONValue.parseObject(nonceResponse.body).string("c_nonce")
        dpopNonce = nonceResponse.headers["DPoP-Nonce"] ?? dpopNonce
        let holders = try (0..<5).map { _ in try HolderKey() }
        var proofs: [JSONValue] = []
        for holder in holders {
            proofs.append(.string(try await holder.proof(audience: issuerId, nonce: cNonce, issuer: nil, at: clock.now)))
        }
        let credentialEndpoint = try metadata.string("credential_endpoint")
        let body: JSONObject = ["credential_configuration_id": .string(IssuerCredentialConfiguration.pidId),
                                "proofs": ["jwt": .array(proofs)]]
        let response = try await client.send(HTTPRequest(
            method: .post, url: try #require(URL(string: credentialEndpoint)),
            headers: ["Content-Type": "application/json", "Authorization": "DPoP " + accessToken,
                      "DPoP": try await dpop.proof(method: "POST", url: credentialEndpoint, at: clock.now,
                                                   accessToken: accessToken, nonce: dpopNonce)],
            body: JSONValue.object(body).serializedBytes))
        #expect(response.status == 200)

        // What the guide reads afterwards.
        let received = await issuer.inspection.credentialRequests.flatMap(\.proofs)
        #expect(received.flatMap(\.keys) == holders.map(\.jwk))
        let anchors = issuer.trustAnchors
        for credential in try JSONValue.parseObject(response.body).objectArray("credentials") {
            let verified = try SDJWTVerifier(options: SDJWTVerificationOptions(
                issuerKey: .certificateChain(trustAnchors: [anchors.issuerRoot]), now: clock.now)).verify(try credential.string("credential"))
            #expect(holders.contains { $0.jwk.thumbprint == verified.holderKey?.thumbprint })
        }
    }
}
