import Foundation
import OpenID4VCI
import OpenID4VP
import ReferenceParties
import Testing
import WalletKit
import WalletStorage

/// The quick start of README.md, run against the reference issuer and verifier.
@Suite("README examples", .timeLimit(.minutes(15)))
struct ReadmeSnippets {
    @Test("open a wallet: a folder store, the roots the app trusts")
    func open() async throws {
        let folder = temporaryFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let parties = try Parties.make()
        let issuerRoots = [parties.issuer.trustAnchors.iaca, parties.issuer.trustAnchors.issuerRoot]
        let verifierRootsDer = parties.verifier.pki.anchorsDER
        _ = (issuerRoots, verifierRootsDer)
        // The snippet uses the application-support folder; the test keeps to a temporary one.
        func snippet() async throws -> Wallet {
            // snippet: README.md#1
            let wallet = try await Wallet(config: WalletConfig(
                storage: .applicationSupport,                           // or .sqlite(at: folder), .inMemory
                trust: TrustConfig(issuerAnchors: issuerRoots,           // who may issue to you
                                   readerAnchorsDer: verifierRootsDer)))  // who may ask you
            // end snippet
            return wallet
        }
        let wallet = try await Wallet(config: WalletConfig(storage: .sqlite(at: folder),
                                                           trust: TrustConfig(issuerAnchors: issuerRoots, readerAnchorsDer: verifierRootsDer)))
        #expect(try await wallet.verifyStorage().isConsistent)
        _ = snippet
    }

    @Test("receive a credential, present it, read the log")
    func flows() async throws {
        let parties = try Parties.make()
        let wallet = try await Wallet(config: parties.config())
        let created = try await parties.issuer.createOffer(.preAuthorized([IssuerCredentialConfiguration.pidId], txCode: .init(value: "493536")))
        let scannedOffer = created.byValue
        func askUserForCode() async -> String { "493536" }
        func openInBrowser(_ url: String) {}
        // snippet: README.md#2
        let offer = try await wallet.issuance.resolveOffer(scannedOffer)         // openid-credential-offer://…
        let issuing = wallet.issuance.start(.fromOffer(offer, configurationId: offer.credentialConfigurationIds[0]))
        for await state in issuing.states {
            if case .txCodeRequired = state { issuing.submitTxCode(await askUserForCode()) }
            if case .authorizationRequired(let url) = state { openInBrowser(url) }  // then issuing.completeAuthorization(redirect)
            if case .completed(let result) = state { print("stored", result.issued) }
            if state.isTerminal { break }
        }
        // end snippet
        guard case .completed(let issued) = issuing.currentState else { Issue.record("\(issuing.currentState)"); return }

        let transaction = try await parties.verifier.createTransaction(PresentationRequestOptions(query: TransactionLogTests.pidQuery))
        let scannedRequest = transaction.authorizationRequestURI
        func userApproves(_ request: PresentationRequest) async -> Bool { request.verifier.trusted }
        // snippet: README.md#3
        let presenting = wallet.presentation.start(scannedRequest)               // openid4vp://…
        for await state in presenting.states {
            if case .requestResolved(let request) = state {
                // request.verifier (who, trusted?), request.queries (what each credential would disclose)
                if await userApproves(request) { presenting.respond(.auto(request)) } else { presenting.decline() }
            }
            if state.isTerminal { break }
        }
        // end snippet
        guard case .completed = presenting.currentState else { Issue.record("\(presenting.currentState)"); return }
        #expect(await parties.verifier.verdict(for: transaction.id)?.outcome == .accepted)

        // snippet: README.md#4
        for entry in try await wallet.transactionLog.entries() {
            print(entry.time, entry.kind, entry.counterparty.identifier, entry.outcome, entry.credentials.map(\.claimPaths))
        }
        // end snippet
        #expect(try await wallet.transactionLog.entries().map(\.kind) == [.remotePresentation, .issuance])
        #expect(try await wallet.transactionLog.entries().last?.credentials.map(\.credentialId) == issued.issued)
    }
}
