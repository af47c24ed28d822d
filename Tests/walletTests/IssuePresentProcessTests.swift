import Foundation
import Mdoc
import ReferenceParties
import Testing
import WalletEncoding
import WalletRuntime

/// The CLI from end to end, as a user runs it (issue 14: the end-to-end tests take their
/// credentials from `wallet issue`): the reference issuer and the reference verifier on
/// loopback ports in this process, the built `wallet` in child processes sharing one store,
/// `wallet issue` then `wallet present`, and the verifier's own verdict.
@Suite("wallet issue, then wallet present, as child processes", .timeLimit(.minutes(10)))
struct IssuePresentProcessTests {
    /// The reference issuer and a verifier trusting its issuer roots, both on loopback.
    struct Parties {
        let issuer: ReferenceIssuer
        let issuerServer: LoopbackHTTPServer
        let verifier: LoopbackVerifier

        static func start(credentialConfigurations: [IssuerCredentialConfiguration] = [.pid(), .mDL()]) async throws -> Parties {
            let issuer = try ReferenceIssuer(configuration: ReferenceIssuerConfiguration(
                credentialConfigurations: credentialConfigurations, dpop: .requiredWithNonce), logger: SilentLogger())
            let server = try LoopbackHTTPServer(handler: issuer)
            try await issuer.setOrigin(server.baseURL)
            let anchors = issuer.trustAnchors
            let verifier = try LoopbackVerifier { baseURL in
                VerifierConfiguration(baseURL: baseURL, sdJwtIssuerTrust: .anchors([anchors.issuerRoot]),
                                      mdocIssuerAnchors: [anchors.iaca])
            }
            return Parties(issuer: issuer, issuerServer: server, verifier: verifier)
        }

        func stop() {
            issuerServer.stop()
            verifier.stop()
        }
    }

    /// Runs `wallet arguments --store store --allow-http --json --timeout 600` (a hang guard: the
    /// parties answer from this loaded test process) and parses its one JSON document.
    static func wallet(_ arguments: [String], store: String) async throws -> (WalletProcess.Run, JSONObject?) {
        let run = try await WalletProcess.run(arguments + ["--store", store, "--allow-http", "--json", "--timeout", "600"])
        return (run, try? JSONValue.parseObject(run.stdout))
    }

    static let nameSpace = "org.iso.18013.5.1"

    @Test("an SD-JWT VC PID (direct_post) and an mDL (direct_post.jwt, request_uri_method=post): issued by wallet issue, presented by wallet present --auto, accepted by the verifier",
          arguments: [IssuerCredentialConfiguration.pidId, IssuerCredentialConfiguration.mDLId])
    func issueThenPresent(configuration: String) async throws {
        let parties = try await Parties.start()
        defer { parties.stop() }
        let store = IssuanceCommandTests.temporaryStore()
        defer { try? FileManager.default.removeItem(atPath: store) }

        let offer = try await parties.issuer.createOffer(.preAuthorized([configuration], txCode: .init(value: "493536")))
        let (issued, issuance) = try await Self.wallet(["issue", offer.byReference, "--tx-code", "493536"], store: store)
        #expect(issued.status == 0, "\(issued.stderr)")
        #expect(issuance?["state"] == "completed")
        let credentialId = try #require(issuance?["issued"]?.arrayValue?.first?.stringValue, "\(issued.stdout) \(issued.stderr)")

        let options: PresentationRequestOptions
        let queryId: String
        if configuration == IssuerCredentialConfiguration.mDLId {
            queryId = "mdl"
            options = PresentationRequestOptions(
                query: VerifierQuery(credentials: [.mdoc(id: queryId, docType: "org.iso.18013.5.1.mDL", claims: [
                    .init(path: [.key(Self.nameSpace), "family_name"]), .init(path: [.key(Self.nameSpace), "age_over_18"]),
                ])]),
                responseMode: .directPostJwt, clientIdPrefix: .x509SanDns, delivery: .byReference(method: .post))
        } else {
            queryId = "pid"
            options = PresentationRequestOptions(query: VerifierQuery(credentials: [
                .sdJwt(id: queryId, vct: ["urn:eudi:pid:1"], claims: [.init(path: ["given_name"]), .init(path: ["family_name"])]),
            ]))
        }
        let verifier = parties.verifier.verifier
        let transaction = try await verifier.createTransaction(options)
        let (presented, presentation) = try await Self.wallet(
            ["present", transaction.authorizationRequestURI, "--auto", "--reader-anchor", verifier.pki.anchorPEM], store: store)
        #expect(presented.status == 0, "\(presented.stderr)")
        #expect(presentation?["state"] == "completed")
        #expect(presentation?["verifier"]?["trusted"] == true)
        #expect(presentation?["verifier"]?["clientIdScheme"] == "x509_san_dns")
        #expect(presentation?["disclosed"]?.arrayValue?.first?["credentialId"]?.stringValue == credentialId)

        let verdict = try #require(await verifier.verdict(for: transaction.id))
        #expect(verdict.outcome == .accepted)
        let verified = try #require(verdict.presentations(for: queryId).first)
        #expect(verified.holderBound)
        if configuration == IssuerCredentialConfiguration.mDLId {
            #expect(verified.value(at: [.key(Self.nameSpace), "family_name"]) == "Mustermann")
            #expect(verified.value(at: [.key(Self.nameSpace), "age_over_18"]) == true)
        } else {
            #expect(verified.value(at: ["given_name"]) == "Erika")
            #expect(verified.value(at: ["family_name"]) == "Mustermann")
        }
        // The key the verifier checked is the one the issuer bound the credential to.
        let bound = await parties.issuer.inspection.issuedCredentials.map(\.boundKey)
        #expect(try bound.map { try $0.publicKey() }.contains { $0 == verified.holderKey })
    }

    @Test("an mDL issued with keyAuthorizations for org.openid4vp.transaction_data carries mdoc-bound transaction data: wallet present --mdoc-transaction-data digest is accepted with it, and refused without the binder")
    func issuedMdlCarriesTransactionData() async throws {
        let transactionNameSpace = "org.openid4vp.transaction_data"
        let parties = try await Parties.start(credentialConfigurations: [
            .mDL(keyAuthorizations: KeyAuthorizations(nameSpaces: [transactionNameSpace])),
        ])
        defer { parties.stop() }
        let store = IssuanceCommandTests.temporaryStore()
        defer { try? FileManager.default.removeItem(atPath: store) }

        let offer = try await parties.issuer.createOffer(.preAuthorized([IssuerCredentialConfiguration.mDLId], txCode: nil))
        let (issued, issuance) = try await Self.wallet(["issue", offer.byReference], store: store)
        #expect(issued.status == 0, "\(issued.stderr)")
        #expect(issuance?["state"] == "completed")

        let verifier = parties.verifier.verifier
        func transaction() async throws -> VerifierTransaction {
            try await verifier.createTransaction(PresentationRequestOptions(
                query: VerifierQuery(credentials: [.mdoc(id: "mdl", docType: "org.iso.18013.5.1.mDL",
                                                         claims: [.init(path: [.key(Self.nameSpace), "family_name"])])]),
                transactionData: [VerifierTransactionData(type: "signature", credentialIds: ["mdl"], details: ["document": "contract.pdf"])]))
        }
        let base = ["--auto", "--reader-anchor", verifier.pki.anchorPEM]

        let bound = try await transaction()
        let (presented, presentation) = try await Self.wallet(
            ["present", bound.authorizationRequestURI, "--mdoc-transaction-data", "digest"] + base, store: store)
        #expect(presented.status == 0, "\(presented.stderr)")
        #expect(presentation?["state"] == "completed")
        let verdict = try #require(await verifier.verdict(for: bound.id))
        #expect(verdict.outcome == .accepted)
        let verified = try #require(verdict.presentations(for: "mdl").first)
        #expect(verified.transactionData == [0])
        #expect(verified.value(at: [.key(Self.nameSpace), "family_name"]) == "Mustermann")

        let unbound = try await transaction()
        let (refused, _) = try await Self.wallet(["present", unbound.authorizationRequestURI] + base, store: store)
        #expect(refused.status == 1, "\(refused.stdout) \(refused.stderr)")
        #expect(await verifier.verdict(for: unbound.id)?.outcome != .accepted)
    }
}
