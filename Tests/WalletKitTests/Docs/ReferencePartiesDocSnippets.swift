import Foundation
import JOSE
import ReferenceParties
import Testing
import WalletCrypto
import WalletEncoding
import WalletRuntime

/// The examples of docs/reference-parties.md, run (on loopback where they say so).
@Suite("docs/reference-parties.md examples", .timeLimit(.minutes(15)))
struct ReferencePartiesDocSnippets {
    @Test("a router in-process and over loopback HTTP")
    func router() async throws {
        // snippet: docs/reference-parties.md#1
        var router = HTTPRouter()
        router.add(.get, "/hello/{name}") { _, parameters in
            .json(["greeting": .string("hello, " + (parameters["name"] ?? "nobody"))])
        }
        router.add(.post, "/token") { request, _ in
            let form = try request.formParameters()               // 400 invalid_request if not a strict form body
            guard try form.requiredValue("grant_type") == "client_credentials" else {
                return .oauthError("unsupported_grant_type")
            }
            return .json(["access_token": "abc", "token_type": "Bearer"], headers: ["Cache-Control": "no-store"])
        }

        // In-process, for tests:
        let inProcess = InProcessHTTPClient(handler: router)

        // Over HTTP, on a free port:
        let server = try LoopbackHTTPServer(handler: router)
        print("listening on \(server.baseURL)")                     // http://127.0.0.1:<port>
        let client = URLSessionHTTPClient(allowInsecureHTTP: true)  // http to loopback hosts only
        let response = try await client.send(HTTPRequest(url: server.baseURL.appendingPathComponent("hello/wallet"),
                                                         timeout: .seconds(600)))  // a hang guard: tests share a loaded machine
        server.stop()                                               // also on deinit
        // end snippet
        #expect(response.status == 200)
        #expect(try await inProcess.send(HTTPRequest(method: .post, url: URL(string: "http://h/token")!,
                                                     headers: ["Content-Type": "application/x-www-form-urlencoded"],
                                                     body: Array("grant_type=password".utf8))).status == 400)
    }

    @Test("fault rules in front of the issuer; the issuer example; the issuer on loopback")
    func issuer() async throws {
        do {
            let issuer = try ReferenceIssuer()
            // snippet: docs/reference-parties.md#2
            let clock = ManualClock(Date())
            let faults = FaultInjector(wrapping: issuer, rules: [
                FaultRule(.post, path: "/credential", schedule: .first(1), fault: .status(500)),
                FaultRule(.post, path: "/token", schedule: .onlyCall(2), fault: .delay(.seconds(60))),
            ], clock: clock)
            let client = InProcessHTTPClient(handler: faults, clock: clock)   // the delay times out a 30 s request at once
            // end snippet
            #expect(try await client.send(HTTPRequest(method: .post, url: URL(string: "https://issuer.example/credential")!)).status == 500)
        }
        // snippet: docs/reference-parties.md#3
        let clock = ManualClock(Date())
        let issuer = try ReferenceIssuer(
            configuration: ReferenceIssuerConfiguration(dpop: .requiredWithNonce, batchSize: 5),
            clock: clock)
        let offer = try await issuer.createOffer(
            .preAuthorized([IssuerCredentialConfiguration.pidId], txCode: .init(value: "493536")))
        let client = InProcessHTTPClient(handler: issuer, clock: clock)
        // hand offer.byValue (or offer.byReference) and offer.txCode to the wallet under test,
        // let it run over `client`, then look at what the issuer saw:
        let proofs = await issuer.inspection.credentialRequests.flatMap(\.proofs)
        let anchors = issuer.trustAnchors           // IACA and issuer root for the wallet to trust
        // end snippet
        #expect(proofs.isEmpty)
        #expect(anchors.iaca.isSelfSigned)
        #expect(offer.txCode == "493536")
        _ = client
        // snippet: docs/reference-parties.md#4
        let server = try LoopbackHTTPServer(handler: issuer)
        try await issuer.setOrigin(server.baseURL)   // http://127.0.0.1:<port>
        // end snippet
        defer { server.stop() }
        #expect(await issuer.credentialIssuer.hasPrefix("http://127.0.0.1:"))
    }

    @Test("the verifier: a transaction with a DCQL query, by reference with POST; then on loopback")
    func verifier() async throws {
        let issuerJWK = JWK(publicKey: .ec(try ECPrivateKey.generate(curve: .p256).publicKey))
        let iacaRoot = try CertificateBuilder.iaca(subject: DistinguishedName([(.commonName, "IACA")]), notBefore: Date(),
                                                   notAfter: Date().addingTimeInterval(3600))
            .selfSigned(with: .ec(try ECPrivateKey.generate(curve: .p256)))
            // snippet: docs/reference-parties.md#5
            let verifier = try ReferenceVerifier(configuration: VerifierConfiguration(
                baseURL: URL(string: "http://localhost:8080")!,       // its host is the reader cert's DNS name
                sdJwtIssuerTrust: .keys([issuerJWK]),                 // or .anchors([root])
                mdocIssuerAnchors: [iacaRoot]))
            let query = VerifierQuery(credentials: [
                .sdJwt(id: "pid", vct: ["urn:eudi:pid:1"], claims: [.init(path: ["given_name"])]),
                .mdoc(id: "mdl", docType: "org.iso.18013.5.1.mDL",
                      claims: [.init(path: ["org.iso.18013.5.1", "age_over_18"], values: [true])]),
            ], credentialSets: [.init(options: [["pid"], ["mdl"]])])
            let transaction = try await verifier.createTransaction(PresentationRequestOptions(
                query: query, responseMode: .directPostJwt, clientIdPrefix: .x509Hash,
                delivery: .byReference(method: .post)))
            // The wallet trusts verifier.pki.anchors (readerAnchorsDer: verifier.pki.anchorsDER) and opens
            // transaction.authorizationRequestURI ("openid4vp://?client_id=...&request_uri=...").
            let verdict = await verifier.verdict(for: transaction.id)   // .pending, .accepted, .rejected(why), .declined
            // end snippet
        #expect(verdict?.outcome == .pending)
        #expect(transaction.authorizationRequestURI.hasPrefix("openid4vp://"))
        try await loopback(query: query, issuerJWK: issuerJWK)
    }

    func loopback(query: VerifierQuery, issuerJWK: JWK) async throws {
        // snippet: docs/reference-parties.md#6
        let served = try LoopbackVerifier { baseURL in
            VerifierConfiguration(baseURL: baseURL, sdJwtIssuerTrust: .keys([issuerJWK]))
        }
        defer { served.stop() }
        let transaction = try await served.verifier.createTransaction(PresentationRequestOptions(query: query))
        // end snippet
        #expect(transaction.clientId.hasPrefix("x509_san_dns:localhost"))
    }
}
