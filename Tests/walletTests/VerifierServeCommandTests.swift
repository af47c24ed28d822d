import Foundation
import JOSE
import ReferenceParties
import SDJWT
import Testing
@testable import wallet
import WalletCrypto
import WalletEncoding

/// `wallet serve verifier`: what a command line asks of the reference verifier.
@Suite("wallet serve verifier")
struct VerifierServeCommandTests {
    @Test("an SD-JWT VC query from --vct and --claim, with the request and trust options")
    func sdJwtSetup() throws {
        let key = try ECPrivateKey.generate(curve: .p256)
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("issuer-\(UUID().uuidString).jwk")
        try Data(JWK(publicKey: key.publicKey).jsonString.utf8).write(to: path)
        let setup = try VerifierServeCommand.setup([
            "--port", "8123", "--vct", "urn:example:pid", "--claim", "given_name", "--claim", #"["address","locality"]"#,
            "--unbound", "--response-mode", "direct_post.jwt", "--client-id-prefix", "x509_hash",
            "--request-uri-method", "post", "--issuer-key", path.path, "--fault", "wrongType",
            "--transaction-data", #"{"type":"payment","credential_ids":["sd_jwt"],"amount":"1"}"#, "--no-redirect", "--once",
        ])
        #expect(setup.port == 8123 && setup.host == "localhost" && setup.once)
        #expect(setup.configuration.baseURL.absoluteString == "http://localhost:8123")
        #expect(!setup.configuration.answersWithRedirect)
        guard case .keys(let keys) = setup.configuration.sdJwtIssuerTrust else {
            Issue.record("expected issuer keys")
            return
        }
        #expect(keys == [JWK(publicKey: key.publicKey)])
        let credential = try #require(setup.request.query.credentials.first)
        #expect(credential.format == .sdJwtVc && credential.vctValues == ["urn:example:pid"])
        #expect(credential.claims?.map(\.path) == [["given_name"], ["address", "locality"]])
        #expect(!credential.requireCryptographicHolderBinding)
        #expect(setup.request.responseMode == .directPostJwt && setup.request.clientIdPrefix == .x509Hash)
        #expect(setup.request.delivery == .byReference(method: .post))
        #expect(setup.request.faults == [.wrongType])
        #expect(setup.request.transactionData.first?.details["amount"] == "1")
    }

    @Test("an mdoc query takes namespace/element claims; --dcql takes a whole query")
    func mdocAndDcql() throws {
        let mdoc = try VerifierServeCommand.setup(["--port", "0", "--doctype", "org.iso.18013.5.1.mDL",
                                                   "--claim", "org.iso.18013.5.1/age_over_18"])
        #expect(mdoc.request.query.credentials.first?.claims?.first?.path == ["org.iso.18013.5.1", "age_over_18"])
        let dcql = VerifierQuery(credentials: [.sdJwt(id: "a", vct: ["t"]), .mdoc(id: "b", docType: "d")],
                                 credentialSets: [.init(options: [["a"], ["b"]])])
        let parsed = try VerifierServeCommand.setup(["--port", "0", "--dcql", dcql.jsonValue.serialized])
        #expect(parsed.request.query == dcql)
    }

    @Test("wrong command lines are usage errors")
    func usageErrors() {
        for arguments in [
            ["--vct", "t"],                                        // no port
            ["--port", "1"],                                       // no query
            ["--port", "1", "--vct", "t", "--doctype", "d"],       // two queries
            ["--port", "1", "--vct", "t", "--fault", "nope"],
            ["--port", "1", "--vct", "t", "--response-mode", "fragment"],
            ["--port", "1", "--doctype", "d", "--claim", "no_namespace"],
            ["--port", "1", "--vct", "t", "extra"],
        ] {
            #expect(throws: CLIError.self) { try VerifierServeCommand.setup(arguments) }
        }
    }

    @Test("verdict lines name the outcome and the disclosed claims")
    func describe() async throws {
        let verifier = try ReferenceVerifier(configuration: VerifierConfiguration(baseURL: URL(string: "http://localhost:1")!))
        let transaction = try await verifier.createTransaction(PresentationRequestOptions(query: VerifierQuery(credentials: [
            .sdJwt(id: "a", vct: ["t"]),
        ])))
        let pending = try #require(await verifier.verdict(for: transaction.id))
        #expect(VerifierServeCommand.describe(pending).hasSuffix("pending"))
        _ = await verifier.respond(to: .init(
            method: .post, url: transaction.responseURI, headers: ["Content-Type": "application/x-www-form-urlencoded"],
            body: Array("error=access_denied&state=\(transaction.state ?? "")".utf8)))
        let declined = try #require(await verifier.verdict(for: transaction.id))
        #expect(VerifierServeCommand.describe(declined).hasSuffix("declined: access_denied"))
    }
}
