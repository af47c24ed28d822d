import Foundation
import JOSE
import ReferenceParties
import SDJWT
import Testing
import WalletCrypto
import WalletEncoding
import WalletRuntime

@Suite("Reference issuer: over the transports")
struct IssuerTransportTests {
    private let pid = IssuerCredentialConfiguration.pidId

    /// A whole pre-authorized issuance through `client`, the way a wallet does it.
    private func issue(through client: any HTTPClient, issuer: String, clock: any WalletClock,
                       offer: IssuedCredentialOffer) async throws -> HTTPResponse {
        func url(_ text: String) throws -> URL {
            guard let url = URL(string: text) else { throw HarnessFailure("bad URL \(text)") }
            return url
        }
        let metadataResponse = try await client.send(HTTPRequest(url: try url(issuer + "/.well-known/openid-credential-issuer")))
        let metadata = try json(metadataResponse)
        let fetchedOffer = try json(try await client.send(HTTPRequest(url: try url(offer.offerURL))))
        let code = try fetchedOffer.object("grants").object("urn:ietf:params:oauth:grant-type:pre-authorized_code")
            .string("pre-authorized_code")
        let asMetadata = try json(try await client.send(HTTPRequest(url: try url(issuer + "/.well-known/oauth-authorization-server"))))
        let tokenResponse = try await client.send(HTTPRequest(
            method: .post, url: try url(try asMetadata.string("token_endpoint")),
            headers: ["Content-Type": "application/x-www-form-urlencoded"],
            body: Array(FormURLEncoding.encode([("grant_type", "urn:ietf:params:oauth:grant-type:pre-authorized_code"),
                                                ("pre-authorized_code", code)]).utf8)))
        let token = try json(tokenResponse).string("access_token")
        let nonce = try json(try await client.send(HTTPRequest(method: .post, url: try url(try metadata.string("nonce_endpoint")))))
            .string("c_nonce")
        let proof = try await HolderKey().proof(audience: issuer, nonce: nonce, issuer: nil, at: clock.now)
        let body: JSONObject = ["credential_configuration_id": .string(pid), "proofs": ["jwt": [.string(proof)]]]
        return try await client.send(HTTPRequest(
            method: .post, url: try url(try metadata.string("credential_endpoint")),
            headers: ["Content-Type": "application/json", "Authorization": "Bearer " + token], body: JSONValue.object(body).serializedBytes))
    }

    @Test("a whole pre-authorized issuance through InProcessHTTPClient")
    func inProcess() async throws {
        let clock = ManualClock(issuerTestStart)
        let issuer = try ReferenceIssuer(clock: clock)
        let offer = try await issuer.createOffer(.preAuthorized([pid]))
        let response = try await issue(through: InProcessHTTPClient(handler: issuer), issuer: await issuer.credentialIssuer,
                                       clock: clock, offer: offer)
        #expect(response.status == 200)
    }

    @Test("a FaultInjector around the issuer: a 500 and a malformed body at the credential endpoint, then it works")
    func faults() async throws {
        let clock = ManualClock(issuerTestStart)
        let issuer = try ReferenceIssuer(clock: clock)
        let faults = FaultInjector(wrapping: issuer, rules: [
            FaultRule(.post, path: "/credential", schedule: .onlyCall(1), fault: .status(500)),
            FaultRule(.post, path: "/credential", schedule: .onlyCall(2), fault: .malformedBody),
        ], clock: clock)
        let client = InProcessHTTPClient(handler: faults, clock: clock)
        let credentialIssuer = await issuer.credentialIssuer
        let failed = try await issue(through: client, issuer: credentialIssuer, clock: clock,
                                     offer: try await issuer.createOffer(.preAuthorized([pid])))
        #expect(failed.status == 500)
        let malformed = try await issue(through: client, issuer: credentialIssuer, clock: clock,
                                        offer: try await issuer.createOffer(.preAuthorized([pid])))
        #expect(malformed.status == 200)
        #expect(throws: JSONError.self) { _ = try JSONValue.parse(malformed.body) }
        let fine = try await issue(through: client, issuer: credentialIssuer, clock: clock,
                                   offer: try await issuer.createOffer(.preAuthorized([pid])))
        #expect(try json(fine).objectArray("credentials").count == 1)
    }

    @Test("over loopback HTTP: the issuer moved to the server's origin issues an SD-JWT VC naming that origin")
    func loopback() async throws {
        let issuer = try ReferenceIssuer()
        let server = try LoopbackHTTPServer(handler: issuer)
        defer { server.stop() }
        try await issuer.setOrigin(server.baseURL)
        let credentialIssuer = await issuer.credentialIssuer
        #expect(credentialIssuer == server.baseURL.absoluteString)
        let offer = try await issuer.createOffer(.preAuthorized([pid]))
        let response = try await issue(through: PatientHTTPClient(), issuer: credentialIssuer,
                                       clock: SystemClock(), offer: offer)
        #expect(response.status == 200)
        let credential = try json(response).objectArray("credentials")[0].string("credential")
        let verified = try SDJWTVerifier(options: SDJWTVerificationOptions(
            issuerKey: .certificateChain(trustAnchors: [issuer.trustAnchors.issuerRoot]), now: SystemClock().now,
            expectedIssuer: credentialIssuer)).verify(credential)
        #expect(verified.issuer == credentialIssuer)
    }
}
