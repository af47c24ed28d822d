import Foundation
import Mdoc
import MdocProximity
import OpenID4VCI
import OpenID4VP
import ReferenceParties
import Testing
import WalletCrypto
import WalletKit
import WalletRuntime
import WalletStorage

/// The examples of docs/wallet.md and docs/trust.md, run against the reference parties.
@Suite("docs/wallet.md and docs/trust.md examples", .timeLimit(.minutes(15)))
struct GuideSnippets {
    @Test("wallet.md: open a wallet with every part of the configuration named")
    func open() async throws {
        let folder = temporaryFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let parties = try Parties.make()
        let issuerRoots = [parties.issuer.trustAnchors.iaca, parties.issuer.trustAnchors.issuerRoot]
        let readerRootsDer = parties.verifier.pki.anchorsDER
        // snippet: docs/wallet.md#1
        let wallet = try await Wallet(config: WalletConfig(
            storage: .sqlite(at: folder),                                     // .applicationSupport (the default), .inMemory
            trust: TrustConfig(issuerAnchors: issuerRoots,                    // SD-JWT VC x5c, mdoc IACAs, signed metadata
                               readerAnchorsDer: readerRootsDer),             // OpenID4VP request signers, mdoc readers
            issuance: IssuanceConfig(clientId: "wallet-dev", redirectUri: "eudi-wallet://authorize"),
            presentation: PresentationConfig(mdocTransactionDataBinder: { .digest(of: $0) }),  // mdoc transaction data as the reference verifier binds it
            transactionLog: TransactionLogOptions(recordsClaimValues: false)))
        // end snippet
        #expect(wallet.engagementConfig.readerTrustAnchors?.map(\.derEncoded) == readerRootsDer)
        #expect(try await wallet.verifyStorage().isConsistent)
    }

    @Test("wallet.md: a proximity request answered from the store, then the log queried and pruned")
    func proximityAndLog() async throws {
        let parties = try Parties.make()
        let reader = try TestReader.make()
        let wallet = try await Wallet(config: parties.config(proximity: ProximityConfig(connector: reader.holderConnector),
                                                               extraReaderAnchorsDer: [reader.root.derEncoded]))
        let pidId = try await parties.issuePid(into: wallet)
        _ = try await parties.issueMdl(into: wallet)
        let chosenOnTheConsentSheet: Set<ReleasedElement> = [
            ReleasedElement(docType: Parties.mDLType, nameSpace: Parties.nameSpace, identifier: "age_over_18")]
        let engagement = try await wallet.proximity.createEngagement(.qr, config: wallet.engagementConfig)
        let holder = Task {
            // snippet: docs/wallet.md#2
            for await ui in wallet.proximity.eventHub.sessionState {
                if ui.userInteractionRequired, let bytes = ui.deviceRequest,
                   let transfer = wallet.proximity.activeEngagement.current?.transferManager {
                    let request = try DeviceRequest(encoded: bytes)
                    let consent = ConsentSelection(elements: chosenOnTheConsentSheet)   // never "everything requested" by default
                    let provider = try await wallet.documentProvider(for: request, consent: consent)
                    let response = try await transfer.createResponse(deviceRequest: request, documentProvider: provider)
                    try await transfer.sendDeviceResponse(response)
                }
                if ui.isTerminal { break }
            }
            // end snippet
        }
        let session = try MdocReader(connector: BLEConnector(party: .reader, modes: [.peripheralServer]) { [air = reader.air] in air.makeRadio() },
                                     trustAnchors: [parties.issuer.trustAnchors.iaca])
        try await session.engage(qrCodeUri: engagement.qrCodeUri ?? "")
        let verified = try await session.request([ItemsRequest(docType: Parties.mDLType, nameSpaces: [NameSpaced(Parties.nameSpace, [
            RequestedElement("age_over_18", false), RequestedElement("family_name", false)])])], readerKey: ReaderAuthenticationKey(
                signer: SoftwareSigner(reader.key), certificateChain: [reader.certificate]))
        await session.end()
        try await holder.value
        #expect(verified.documents.first?.value(nameSpace: Parties.nameSpace, identifier: "age_over_18") == .boolean(true))
        #expect(verified.documents.first?.value(nameSpace: Parties.nameSpace, identifier: "family_name") == nil)
        await wallet.proximity.closeAll()

        let transaction = try await parties.verifier.createTransaction(PresentationRequestOptions(query: TransactionLogTests.pidQuery))
        _ = await terminalState(of: wallet.presentation.start(transaction.authorizationRequestURI))
        let aMonthAgo = Date().addingTimeInterval(86_400)   // in the future here: everything is older
        // snippet: docs/wallet.md#3
        let log = wallet.transactionLog
        let withVerifiers = try await log.entries(TransactionFilter(kind: .remotePresentation))
        let aboutThePid = try await log.entries(TransactionFilter(credentialId: pidId))
        try await log.delete(id: withVerifiers[0].id)
        try await log.delete(TransactionFilter(until: aMonthAgo))          // everything older
        // end snippet
        #expect(aboutThePid.count == 2, "the PID's issuance and its presentation")
        #expect(try await log.entries().isEmpty)
    }

    @Test("trust.md: roots from PEM into the configuration; a chain checked under a policy")
    func trust() async throws {
        let parties = try Parties.make()
        let bundledIssuerRootsPEM = parties.issuer.trustAnchors.pem
        let bundledReaderRootsPEM = parties.verifier.pki.anchors.map(\.pemEncoded).joined()
        // snippet: docs/trust.md#1
        let issuerRoots = try X509Certificate.parsePEM(bundledIssuerRootsPEM)     // IACAs and SD-JWT VC issuer roots
        let readerRoots = try X509Certificate.parsePEM(bundledReaderRootsPEM)     // verifiers' and readers' roots
        let config = WalletConfig(trust: TrustConfig(issuerAnchors: issuerRoots,
                                                     readerAnchorsDer: readerRoots.map(\.derEncoded)))
        // end snippet
        #expect(config.trust.issuerAnchors.count == 2)
        let wallet = try await Wallet(config: WalletConfig(storage: .inMemory, trust: config.trust, httpClient: parties.http))
        _ = try await parties.issuePid(into: wallet)

        let clock = ManualClock(Date())
        let caKey = try ECPrivateKey.generate(curve: .p256)
        let root = try CertificateBuilder.iaca(subject: DistinguishedName([(.commonName, "IACA")]),
                                               notBefore: clock.now.addingTimeInterval(-60), notAfter: clock.now.addingTimeInterval(3600))
            .selfSigned(with: .ec(caKey))
        let leaf = try CertificateBuilder.mdocDocumentSigner(subject: DistinguishedName([(.commonName, "DS")]),
                                                             subjectPublicKeyInfoDER: try ECPrivateKey.generate(curve: .p256).publicKey.spkiDER,
                                                             notBefore: clock.now.addingTimeInterval(-60), notAfter: clock.now.addingTimeInterval(3600))
            .signed(by: root, key: .ec(caKey))
        let intermediates: [X509Certificate] = []
        do {
            let issuerRoots = [root]
            // snippet: docs/trust.md#2
            let chain = try X509ChainValidator(anchors: issuerRoots)
                .validate(leaf: leaf, intermediates: intermediates, at: clock.now, policy: .mdocDocumentSigner)
            print(chain.leaf.subject.commonName ?? "", "under", chain.anchor.subject.rfc4514String)
            // end snippet
            #expect(chain.anchor == root)
        }
    }
}
