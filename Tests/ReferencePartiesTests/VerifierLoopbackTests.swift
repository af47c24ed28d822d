import Foundation
import JOSE
import ReferenceParties
import SDJWT
import Testing
import WalletCrypto
import WalletEncoding
import WalletRuntime

@Suite("Reference verifier: over loopback HTTP")
struct VerifierLoopbackTests {
    @Test("request_uri_method=post and a direct_post.jwt response over real HTTP, as a wallet would send them")
    func endToEnd() async throws {
        let issuerKey = try ECPrivateKey.generate(curve: .p256)
        let holderKey = try ECPrivateKey.generate(curve: .p256)
        let served = try LoopbackVerifier { baseURL in
            VerifierConfiguration(baseURL: baseURL, sdJwtIssuerTrust: .keys([JWK(publicKey: issuerKey.publicKey)]))
        }
        defer { served.stop() }
        let verifier = served.verifier
        #expect(verifier.configuration.baseURL.host == "localhost")
        #expect(verifier.configuration.baseURL.port == Int(served.server.port))

        let transaction = try await verifier.createTransaction(PresentationRequestOptions(
            query: .pidNames, responseMode: .directPostJwt, delivery: .byReference(method: .post)))
        let client = PatientHTTPClient()

        // Fetch the request object with a wallet_nonce, check it as a wallet would.
        let requestURI = try #require(transaction.requestURI)
        let fetched = try await client.send(HTTPRequest(
            method: .post, url: requestURI,
            headers: ["Content-Type": "application/x-www-form-urlencoded", "Accept": "application/oauth-authz-req+jwt"],
            body: Array(FormURLEncoding.encode([("wallet_nonce", "n-123")]).utf8)))
        #expect(fetched.status == 200)
        let jwt = try JWT(compact: String(decoding: fetched.body, as: UTF8.self))
        _ = try jwt.jws.verifyWithCertificateChain(trustAnchors: verifier.pki.anchors, at: Date(),
                                                   policy: .openID4VPClient(sanDNS: "localhost"))
        #expect(jwt.claims["wallet_nonce"] == "n-123")
        let jwks = try JWKSet(value: try #require(jwt.claims["client_metadata"]?["jwks"]))
        let key = try #require(jwks.keys.first)

        // Present and post the encrypted response to response_uri.
        var claims = VerifierFixture.pidClaims
        claims["exp"] = .integer(Int64(Date().timeIntervalSince1970) + 3600)
        let credential = try await SDJWTIssuer(signer: SoftwareSigner(issuerKey)).issue(
            claims: claims, plan: try DisclosurePlan(selectivelyDisclosable: [["given_name"], ["family_name"]]),
            holderKey: JWK(publicKey: holderKey.publicKey))
        let clientId = try #require(jwt.claims["client_id"]?.stringValue)
        let nonce = try #require(jwt.claims.nonce)
        let presentation = try await credential.presentation(
            disclosing: [["given_name"], ["family_name"]],
            keyBinding: KeyBindingParameters(audience: clientId, nonce: nonce, issuedAt: Date()),
            signer: SoftwareSigner(holderKey))
        let payload: JSONValue = ["vp_token": ["pid": [.string(presentation.serialization)]],
                                  "state": try #require(jwt.claims["state"])]
        let jwe = try JWE.encrypt(payload.serializedBytes, to: key)
        let responseText = try #require(jwt.claims["response_uri"]?.stringValue)
        let responseURI = try #require(URL(string: responseText))
        let posted = try await client.send(HTTPRequest(
            method: .post, url: responseURI, headers: ["Content-Type": "application/x-www-form-urlencoded"],
            body: Array(FormURLEncoding.encode([("response", jwe.compactSerialization)]).utf8)))
        #expect(posted.status == 200)
        let redirect = try #require(try JSONValue.parseObject(posted.body)["redirect_uri"]?.stringValue)
        let redirectURL = try #require(URL(string: redirect))
        #expect(try await client.send(HTTPRequest(url: redirectURL)).status == 200)

        let verdict = try #require(await verifier.verdict(for: transaction.id))
        #expect(verdict.outcome == .accepted)
        #expect(verdict.walletNonce == "n-123" && verdict.requestFetches == 1)
        let status = try await client.send(HTTPRequest(
            url: verifier.configuration.baseURL.appendingPathComponent("transactions/\(transaction.id)")))
        #expect(try JSONValue.parseObject(status.body)["outcome"] == "accepted")
    }
}
