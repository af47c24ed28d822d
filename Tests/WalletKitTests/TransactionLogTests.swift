import Foundation
import Mdoc
import MdocProximity
import OpenID4VCI
import OpenID4VP
import ReferenceParties
import Testing
import WalletCrypto
import WalletEncoding
import WalletKit
import WalletRuntime
import WalletStorage

/// Issue 15 acceptance 4: each flow leaves one entry with the right counterparty, claim
/// paths and outcome, and no claim value unless the app opted in.
@Suite("Transaction log through the wallet", .timeLimit(.minutes(15)))
struct TransactionLogTests {
    static let pidQuery = VerifierQuery(credentials: [
        .sdJwt(id: "pid", vct: [Parties.pidType], claims: [.init(path: ["family_name"]), .init(path: ["address", "locality"])]),
    ])

    @Test("issuance: one entry naming the issuer (trusted), the credential and its claim paths, without values")
    func issuance() async throws {
        let parties = try Parties.make()
        let wallet = try await Wallet(config: parties.config())
        let id = try await parties.issuePid(into: wallet)
        let entries = try await wallet.transactionLog.entries()
        #expect(entries.count == 1)
        let entry = try #require(entries.first)
        #expect(entry.kind == .issuance)
        #expect(entry.outcome == .completed)
        #expect(entry.counterparty == TransactionCounterparty(identifier: "https://issuer.example", name: "Reference Issuer", trusted: true))
        #expect(entry.credentials.map(\.credentialId) == [id])
        #expect(entry.credentials.first?.type == Parties.pidType)
        let paths = entry.credentials.first?.claimPaths ?? []
        #expect(paths.contains([.string("family_name")]) && paths.contains([.string("address")]))
        #expect(!paths.contains([.string("cnf")]) && !paths.contains([.string("vct")]), "technical claims are not the subject's")
        #expect(entry.claimValues == nil)
    }

    @Test("issuance with claim values opted in keeps them (encrypted in the store) and reads them back")
    func issuanceWithValues() async throws {
        let parties = try Parties.make()
        let wallet = try await Wallet(config: parties.config(claimValues: true))
        let id = try await parties.issuePid(into: wallet)
        let entry = try #require(try await wallet.transactionLog.entries().first)
        #expect(entry.claimValues?[id]?[#"["family_name"]"#] == "Mustermann")
    }

    @Test("a refused tx_code: one failed entry with the OAuth error code, nothing stored")
    func failedIssuance() async throws {
        let parties = try Parties.make()
        let wallet = try await Wallet(config: parties.config())
        let offer = try await parties.issuer.createOffer(.preAuthorized([IssuerCredentialConfiguration.pidId], txCode: .init(value: "111111")))
        let resolved = try await wallet.issuance.resolveOffer(offer.byValue)
        let state = await terminalState(of: wallet.issuance.start(.fromOffer(resolved, configurationId: IssuerCredentialConfiguration.pidId,
                                                                              txCode: "222222")))
        guard case .failed(.authorizationFailed(oauthError: "invalid_grant", _)) = state else { Issue.record("\(state)"); return }
        let entries = try await wallet.transactionLog.entries()
        #expect(entries.count == 1)
        #expect(entries.first?.outcome == .failed(reason: "invalid_grant"))
        #expect(entries.first?.counterparty.identifier == "https://issuer.example")
        #expect(entries.first?.credentials == [])
        #expect(try await wallet.credentials.list().isEmpty)
    }

    @Test("remote presentation: the verifier's client_id and trust, the disclosed paths of the chosen credential, completed")
    func remotePresentation() async throws {
        let parties = try Parties.make()
        let wallet = try await Wallet(config: parties.config())
        let id = try await parties.issuePid(into: wallet)
        let transaction = try await parties.verifier.createTransaction(PresentationRequestOptions(
            query: Self.pidQuery, responseMode: .directPostJwt, delivery: .byReference(method: .post)))
        let state = await terminalState(of: wallet.presentation.start(transaction.authorizationRequestURI))
        guard case .completed = state else { Issue.record("\(state)"); return }
        #expect(await parties.verifier.verdict(for: transaction.id)?.outcome == .accepted)
        let entries = try await wallet.transactionLog.entries(TransactionFilter(kind: .remotePresentation))
        #expect(entries.count == 1)
        let entry = try #require(entries.first)
        #expect(entry.counterparty == TransactionCounterparty(identifier: transaction.clientId, name: "Reference Verifier", trusted: true))
        #expect(entry.outcome == .completed)
        #expect(entry.credentials == [TransactionCredential(credentialId: id, type: Parties.pidType,
                                                            claimPaths: [[.string("address"), .string("locality")], [.string("family_name")]])])
        #expect(entry.claimValues == nil)
        #expect(try await wallet.transactionLog.entries().count == 2, "the issuance and the presentation")
    }

    @Test("remote presentation with values opted in: exactly the disclosed values")
    func remotePresentationValues() async throws {
        let parties = try Parties.make()
        let wallet = try await Wallet(config: parties.config(claimValues: true))
        let id = try await parties.issuePid(into: wallet)
        let transaction = try await parties.verifier.createTransaction(PresentationRequestOptions(query: Self.pidQuery))
        _ = await terminalState(of: wallet.presentation.start(transaction.authorizationRequestURI))
        let entry = try #require(try await wallet.transactionLog.entries(TransactionFilter(kind: .remotePresentation)).first)
        #expect(entry.claimValues == [id: ["[\"family_name\"]": "Mustermann", "[\"address\",\"locality\"]": "Koeln"]])
    }

    /// How the response URI's exchange ends, after (or instead of) the verifier taking the POST.
    enum ResponseEnding: Sendable, CaseIterable {
        case redirectAfterReceiving, timeoutAfterReceiving, answerTooLarge, connectionNeverMade
    }

    @Test("a response POST that ends without a clear answer: failed, and the log lists what the verifier may hold unless no connection was made",
          arguments: ResponseEnding.allCases)
    func responseWithoutClearAnswer(ending: ResponseEnding) async throws {
        let parties = try Parties.make()
        var config = parties.config()
        config.httpClient = ResponseTamperer(inner: parties.http, ending: ending)
        let wallet = try await Wallet(config: config)
        let id = try await parties.issuePid(into: wallet)
        let transaction = try await parties.verifier.createTransaction(PresentationRequestOptions(query: Self.pidQuery))
        let state = await terminalState(of: wallet.presentation.start(transaction.authorizationRequestURI))
        guard case .failed = state else { Issue.record("\(state)"); return }
        let entry = try #require(try await wallet.transactionLog.entries(TransactionFilter(kind: .remotePresentation)).first)
        if ending == .connectionNeverMade {
            #expect(await parties.verifier.verdict(for: transaction.id)?.outcome == .pending)
            #expect(entry.credentials.isEmpty)
        } else {
            #expect(await parties.verifier.verdict(for: transaction.id)?.outcome == .accepted)
            #expect(entry.credentials.map(\.credentialId) == [id])
        }
    }

    @Test("a declined request: declined, nothing disclosed; an untrusted one: failed, trusted false, never resolved")
    func declinedAndUntrusted() async throws {
        let parties = try Parties.make()
        let wallet = try await Wallet(config: parties.config())
        _ = try await parties.issuePid(into: wallet)
        let transaction = try await parties.verifier.createTransaction(PresentationRequestOptions(query: Self.pidQuery))
        let declined = await terminalState(of: wallet.presentation.start(transaction.authorizationRequestURI)) { _ in nil }
        guard case .declined = declined else { Issue.record("\(declined)"); return }
        let untrusted = try await parties.verifier.createTransaction(PresentationRequestOptions(query: Self.pidQuery, faults: [.untrustedChain]))
        let failed = await terminalState(of: wallet.presentation.start(untrusted.authorizationRequestURI))
        guard case .failed(.verifierNotTrusted) = failed else { Issue.record("\(failed)"); return }
        let entries = try await wallet.transactionLog.entries(TransactionFilter(kind: .remotePresentation))
        try #require(entries.count == 2)
        #expect(entries.map(\.outcome) == [.failed(reason: "verifierNotTrusted"), .declined])
        #expect(entries.allSatisfy { $0.credentials.isEmpty })
        #expect(entries[0].counterparty.trusted == false)
        #expect(entries[0].counterparty.identifier == untrusted.clientId, "the client_id of the request link")
        #expect(entries[1].counterparty == TransactionCounterparty(identifier: transaction.clientId, name: "Reference Verifier", trusted: true))
    }

    @Test("DC API presentation: the origin-bound client id, the disclosed paths, completed; the verifier accepts the response")
    func dcApi() async throws {
        let parties = try Parties.make()
        let wallet = try await Wallet(config: parties.config())
        let id = try await parties.issuePid(into: wallet)
        let origin = Parties.verifierOrigin
        let transaction = try await parties.verifier.createDcApiRequest(DcApiRequestOptions(
            query: Self.pidQuery, signed: true, expectedOrigins: [origin], encrypted: true))
        let session = wallet.presentation.startDcApi(transaction.requestJSON.serialized, origin: origin)
        let state = await terminalState(of: session)
        guard case .completed(_, let response?) = state else { Issue.record("\(state)"); return }
        let verdict = try await parties.verifier.verifyDcApiResponse(try JSONValue.parse(response), transactionId: transaction.id, origin: origin)
        #expect(verdict.outcome == .accepted)
        let entry = try #require(try await wallet.transactionLog.entries(TransactionFilter(kind: .dcApiPresentation)).first)
        #expect(entry.counterparty.identifier == transaction.clientId)
        #expect(entry.counterparty.trusted == true)
        #expect(entry.outcome == .completed)
        #expect(entry.credentials.map(\.credentialId) == [id])
        #expect(entry.credentials.first?.claimPaths == [[.string("address"), .string("locality")], [.string("family_name")]])
        #expect(entry.claimValues == nil)
    }

    /// Parties, a reader the wallet trusts, and a wallet holding an mDL (its id).
    static func proximityWallet() async throws -> (Parties, TestReader, Wallet, CredentialId) {
        let parties = try Parties.make()
        let reader = try TestReader.make()
        let wallet = try await Wallet(config: parties.config(proximity: ProximityConfig(connector: reader.holderConnector),
                                                               extraReaderAnchorsDer: [reader.root.derEncoded]))
        return (parties, reader, wallet, try await parties.issueMdl(into: wallet))
    }

    /// The mDL elements named, in the mDL namespace.
    static func mdl(_ identifiers: String...) -> Set<ReleasedElement> {
        Set(identifiers.map { ReleasedElement(docType: Parties.mDLType, nameSpace: Parties.nameSpace, identifier: $0) })
    }

    @Test("proximity: the reader's certificate subject, trusted, the released elements only, completed; an instance is spent")
    func proximity() async throws {
        let (parties, reader, wallet, id) = try await Self.proximityWallet()
        let released = Self.mdl("family_name", "age_over_18")
        let recorded = wallet.transactionLog.recorded
        let verified = try await reader.present(from: wallet, releasing: released, issuerAnchors: [parties.issuer.trustAnchors.iaca])
        #expect(verified.documents.first?.value(nameSpace: Parties.nameSpace, identifier: "family_name") == .textString("Mustermann"))
        #expect(verified.documents.first?.value(nameSpace: Parties.nameSpace, identifier: "portrait") == nil, "asked for, not released")
        let entry = try #require(await recorded.first { $0.kind == .proximityPresentation })
        #expect(entry.counterparty == TransactionCounterparty(identifier: reader.certificate.subject.rfc4514String,
                                                              name: "Test Reader", trusted: true))
        #expect(entry.outcome == .completed)
        #expect(entry.credentials == [TransactionCredential(credentialId: id, type: Parties.mDLType, claimPaths: [
            [.string(Parties.nameSpace), .string("age_over_18")], [.string(Parties.nameSpace), .string("family_name")]])])
        #expect(entry.claimValues == nil)
        #expect(try await wallet.credentials.remainingInstances(of: id) == 2, "a oneTime instance of three spent")
        await wallet.proximity.closeAll()
    }

    @Test("proximity, two document requests of one docType: both are answered by the credential, and the log lists what either released")
    func proximitySameDocTypeTwice() async throws {
        let (parties, reader, wallet, id) = try await Self.proximityWallet()
        let released = Self.mdl("family_name", "age_over_18")
        let recorded = wallet.transactionLog.recorded
        let requests = [
            ItemsRequest(docType: Parties.mDLType, nameSpaces: [NameSpaced(Parties.nameSpace, [RequestedElement("age_over_18", false)])]),
            ItemsRequest(docType: Parties.mDLType, nameSpaces: [NameSpaced(Parties.nameSpace, [RequestedElement("family_name", false)])]),
        ]
        let verified = try await reader.present(from: wallet, releasing: released, issuerAnchors: [parties.issuer.trustAnchors.iaca],
                                                requests: requests)
        #expect(verified.documents.contains { $0.value(nameSpace: Parties.nameSpace, identifier: "family_name") == .textString("Mustermann") })
        let entry = try #require(await recorded.first { $0.kind == .proximityPresentation })
        #expect(entry.outcome == .completed)
        #expect(entry.credentials == [TransactionCredential(credentialId: id, type: Parties.mDLType, claimPaths: [
            [.string(Parties.nameSpace), .string("age_over_18")], [.string(Parties.nameSpace), .string("family_name")]])])
        await wallet.proximity.closeAll()
    }

    @Test("proximity, a response sent without ending the session, then a second request declined: declined, and the log lists the first response",
          arguments: [false, true])
    func proximityResponseThenDecline(sameRequestAgain: Bool) async throws {
        let (parties, testReader, wallet, id) = try await Self.proximityWallet()
        let recorded = wallet.transactionLog.recorded
        let released = Self.mdl("family_name")
        let engagement = try await wallet.proximity.createEngagement(.qr, config: wallet.engagementConfig)
        let holder = Task {
            var answered = 0
            for await state in wallet.proximity.eventHub.sessionState {
                if state.userInteractionRequired, let bytes = state.deviceRequest,
                   let transfer = wallet.proximity.activeEngagement.current?.transferManager {
                    answered += 1
                    guard answered == 1, let request = try? DeviceRequest(encoded: bytes) else {
                        try? await transfer.decline()
                        continue
                    }
                    do {
                        let provider = try await wallet.documentProvider(for: request, consent: ConsentSelection(elements: released))
                        try await transfer.sendDeviceResponse(try await transfer.createResponse(deviceRequest: request, documentProvider: provider),
                                                              terminate: false)
                    } catch {
                        Issue.record("holder: \(error)")
                    }
                }
                if state.isTerminal { break }
            }
        }
        defer { holder.cancel() }
        let reader = try MdocReader(connector: BLEConnector(party: .reader, modes: [.peripheralServer]) { [air = testReader.air] in air.makeRadio() },
                                    trustAnchors: [parties.issuer.trustAnchors.iaca])
        try await reader.engage(qrCodeUri: engagement.qrCodeUri ?? "")
        // The same request twice has the same bytes only without reader authentication
        // (each readerAuth signature is fresh).
        let key = sameRequestAgain ? nil : ReaderAuthenticationKey(signer: SoftwareSigner(testReader.key),
                                                                    certificateChain: [testReader.certificate])
        let first = try await reader.request([ItemsRequest(docType: Parties.mDLType, nameSpaces: [
            NameSpaced(Parties.nameSpace, [RequestedElement("family_name", false)])])], readerKey: key)
        #expect(first.documents.first?.value(nameSpace: Parties.nameSpace, identifier: "family_name") == .textString("Mustermann"))
        _ = try? await reader.request([ItemsRequest(docType: Parties.mDLType, nameSpaces: [
            NameSpaced(Parties.nameSpace, [RequestedElement(sameRequestAgain ? "family_name" : "age_over_18", false)])])], readerKey: key)
        await reader.abort()
        await holder.value
        let entry = try #require(await recorded.first { $0.kind == .proximityPresentation })
        #expect(entry.outcome == .declined)
        #expect(entry.credentials == [TransactionCredential(credentialId: id, type: Parties.mDLType, claimPaths: [
            [.string(Parties.nameSpace), .string("family_name")]])])
        await wallet.proximity.closeAll()
    }

    @Test("proximity: a request of two docTypes the wallet can answer only one of spends nothing: no instance, no key")
    func documentProviderSpendsNothingUnanswerable() async throws {
        let (_, _, wallet, id) = try await Self.proximityWallet()
        let photoId = "org.iso.23220.photoid.1"
        let request = DeviceRequest(docRequests: [
            DocRequest(itemsRequest: ItemsRequest(docType: Parties.mDLType, nameSpaces: [
                NameSpaced(Parties.nameSpace, [RequestedElement("family_name", false)])])),
            DocRequest(itemsRequest: ItemsRequest(docType: photoId, nameSpaces: [
                NameSpaced("org.iso.23220.1", [RequestedElement("family_name", false)])])),
        ])
        let consent = ConsentSelection(elements: Self.mdl("family_name").union([
            ReleasedElement(docType: photoId, nameSpace: "org.iso.23220.1", identifier: "family_name")]))
        await #expect(throws: WalletError.noMatchingCredential(docType: photoId)) {
            _ = try await wallet.documentProvider(for: request, consent: consent)
        }
        #expect(try await wallet.credentials.remainingInstances(of: id) == 3, "the mDL's instance was not spent")
        #expect(try await wallet.verifyStorage().missingKeys.isEmpty)
        // The same when the app names a credential for the second docType that cannot answer.
        await #expect(throws: WalletError.noMatchingCredential(docType: photoId)) {
            _ = try await wallet.documentProvider(for: request, consent: consent, credentials: [photoId: "deleted-meanwhile"])
        }
        #expect(try await wallet.credentials.remainingInstances(of: id) == 3)
        // The mDL alone is answered, with one instance.
        let mdlOnly = ConsentSelection(elements: Self.mdl("family_name"))
        let provider = try await wallet.documentProvider(for: request, consent: mdlOnly)
        #expect(provider.credentialIds == [id])
        #expect(try await wallet.credentials.remainingInstances(of: id) == 2)
        await wallet.close()
    }

    @Test("proximity: concurrent answers share the wallet's mDLs: each finds one with an instance left, none fails while another has one")
    func documentProviderConcurrentCandidates() async throws {
        let (parties, _, wallet, first) = try await Self.proximityWallet()
        let second = try await parties.issueMdl(into: wallet, policy: CredentialPolicy(batchSize: 2, use: .oneTime))
        let request = DeviceRequest(docRequests: [DocRequest(itemsRequest: ItemsRequest(docType: Parties.mDLType, nameSpaces: [
            NameSpaced(Parties.nameSpace, [RequestedElement("family_name", false)])]))])
        let consent = ConsentSelection(elements: Self.mdl("family_name"))
        // Five instances in all, five answers at once.
        let ids = try await withThrowingTaskGroup(of: [CredentialId].self) { group in
            for _ in 0..<5 { group.addTask { try await wallet.documentProvider(for: request, consent: consent).credentialIds } }
            return try await group.reduce(into: []) { $0 += $1 }
        }
        #expect(ids.filter { $0 == first }.count == 3 && ids.filter { $0 == second }.count == 2)
        await #expect(throws: WalletError.noMatchingCredential(docType: Parties.mDLType)) {
            _ = try await wallet.documentProvider(for: request, consent: consent)
        }
        await wallet.close()
    }

    @Test("proximity: a session that Wallet.close() ends while its request waits for consent is logged, declined, before the store closes")
    func closeLogsTheSessionItEnds() async throws {
        let parties = try Parties.make()
        let testReader = try TestReader.make()
        let folder = temporaryFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let config = parties.config(storage: .sqlite(at: folder), proximity: ProximityConfig(connector: testReader.holderConnector),
                                    extraReaderAnchorsDer: [testReader.root.derEncoded])
        let wallet = try await Wallet(config: config)
        _ = try await parties.issueMdl(into: wallet)
        let engagement = try await wallet.proximity.createEngagement(.qr, config: wallet.engagementConfig)
        let awaitingConsent = Task {
            for await state in wallet.proximity.eventHub.sessionState where state.userInteractionRequired { return true }
            return false
        }
        let reader = try MdocReader(connector: BLEConnector(party: .reader, modes: [.peripheralServer]) { [air = testReader.air] in
            air.makeRadio()
        }, trustAnchors: [parties.issuer.trustAnchors.iaca])
        try await reader.engage(qrCodeUri: engagement.qrCodeUri ?? "")
        let asking = Task {
            _ = try? await reader.request([ItemsRequest(docType: Parties.mDLType, nameSpaces: [
                NameSpaced(Parties.nameSpace, [RequestedElement("family_name", false)])])])
        }
        #expect(await awaitingConsent.value)
        // The app closes the wallet with the consent sheet still up: no closeAll first,
        // no wait for the recorder.
        await wallet.close()
        await asking.value
        await reader.abort()
        let reopened = try await Wallet(config: config)
        let entries = try await reopened.transactionLog.entries(TransactionFilter(kind: .proximityPresentation))
        #expect(entries.map(\.outcome) == [.declined])
        #expect(entries.first?.credentials == [])
        await reopened.close()
    }

    @Test("proximity: a provider made after its session ended is not credited to a later session asking the same")
    func providerAfterSessionEnded() async throws {
        let (parties, testReader, wallet, _) = try await Self.proximityWallet()
        let recorded = wallet.transactionLog.recorded
        let items = ItemsRequest(docType: Parties.mDLType, nameSpaces: [NameSpaced(Parties.nameSpace, [RequestedElement("family_name", false)])])
        var entries = recorded.makeAsyncIterator()
        for round in 0..<2 {
            let engagement = try await wallet.proximity.createEngagement(.qr, config: wallet.engagementConfig)
            let holder = Task {
                for await state in wallet.proximity.eventHub.sessionState {
                    if state.userInteractionRequired, let bytes = state.deviceRequest, let request = try? DeviceRequest(encoded: bytes),
                       let transfer = wallet.proximity.activeEngagement.current?.transferManager {
                        if round == 0 {
                            // The reader goes away while the wallet still prepares its answer.
                            await wallet.proximity.close(engagement.id)
                            _ = try? await wallet.documentProvider(for: request, consent: ConsentSelection(elements: Self.mdl("family_name")))
                        } else {
                            // The app answers with a provider of its own that releases nothing.
                            let own = StaticDocumentProvider(documents: [], signer: SoftwareSigner(testReader.key), consent: { _ in .nothing })
                            if let response = try? await transfer.createResponse(deviceRequest: request, documentProvider: own) {
                                try? await transfer.sendDeviceResponse(response)
                            }
                        }
                    }
                    if state.isTerminal { break }
                }
            }
            let reader = try MdocReader(connector: BLEConnector(party: .reader, modes: [.peripheralServer]) { [air = testReader.air] in
                air.makeRadio()
            }, trustAnchors: [parties.issuer.trustAnchors.iaca])
            try await reader.engage(qrCodeUri: engagement.qrCodeUri ?? "")
            _ = try? await reader.request([items])   // no readerAuth: both rounds send the same bytes
            await reader.abort()
            await holder.value
            var entry = try #require(await entries.next())
            while entry.kind != .proximityPresentation { entry = try #require(await entries.next()) }
            #expect(entry.credentials == [], "round \(round)")
        }
        await wallet.proximity.closeAll()
    }

    @Test("proximity with ProximityConfig.executor: the SDK asks the wallet's provider on the executor's thread, and the session completes")
    func proximityOnExecutor() async throws {
        let parties = try Parties.make()
        let reader = try TestReader.make()
        let executor = ProximityExecutor.shared
        let wallet = try await Wallet(config: parties.config(proximity: ProximityConfig(connector: reader.holderConnector, executor: executor),
                                                               extraReaderAnchorsDer: [reader.root.derEncoded]))
        _ = try await parties.issueMdl(into: wallet)
        let executorThread = await withTaskExecutorPreference(executor) { currentThread() }
        let threads = LockedBox<[pthread_t]>([])
        let released = Self.mdl("family_name")
        let recorded = wallet.transactionLog.recorded
        let verified = try await reader.present(from: wallet, releasing: released, issuerAnchors: [parties.issuer.trustAnchors.iaca]) {
            threads.withLock { $0.append(currentThread()) }
        }
        #expect(verified.documents.first?.value(nameSpace: Parties.nameSpace, identifier: "family_name") == .textString("Mustermann"))
        #expect(try #require(await recorded.first { $0.kind == .proximityPresentation }).outcome == .completed)
        let calls = threads.withLock { $0 }
        #expect(!calls.isEmpty)
        #expect(calls.allSatisfy { pthread_equal($0, executorThread) != 0 })
        await wallet.proximity.closeAll()
    }

    @Test("proximity with claim values opted in: exactly the released elements' values")
    func proximityValues() async throws {
        let parties = try Parties.make()
        let reader = try TestReader.make()
        let wallet = try await Wallet(config: parties.config(claimValues: true, proximity: ProximityConfig(connector: reader.holderConnector),
                                                               extraReaderAnchorsDer: [reader.root.derEncoded]))
        let id = try await parties.issueMdl(into: wallet)
        let recorded = wallet.transactionLog.recorded
        _ = try await reader.present(from: wallet, releasing: [
            ReleasedElement(docType: Parties.mDLType, nameSpace: Parties.nameSpace, identifier: "age_over_18")],
                                     issuerAnchors: [parties.issuer.trustAnchors.iaca])
        let entry = try #require(await recorded.first { $0.kind == .proximityPresentation })
        #expect(entry.claimValues == [id: ["[\"org.iso.18013.5.1\",\"age_over_18\"]": true]])
        await wallet.proximity.closeAll()
    }

    @Test("a deferred issuance: one entry, outcome deferred, the credential named without claims; resuming logs completed")
    func deferredIssuance() async throws {
        let parties = try Parties.make(issuer: ReferenceIssuerConfiguration(deferral: DeferredIssuance(interval: 1)))
        let wallet = try await Wallet(config: parties.config())
        let offer = try await parties.issuer.createOffer(.preAuthorized([IssuerCredentialConfiguration.pidId]))
        let state = await terminalState(of: wallet.issuance.start(.fromOffer(try await wallet.issuance.resolveOffer(offer.byValue),
                                                                             configurationId: IssuerCredentialConfiguration.pidId)))
        guard case .deferred(let id, _) = state else { Issue.record("\(state)"); return }
        let deferred = try #require(try await wallet.transactionLog.entries().first)
        #expect(deferred.outcome == .deferred)
        #expect(deferred.credentials == [TransactionCredential(credentialId: id, type: Parties.pidType)])
        #expect(await terminalState(of: wallet.issuance.resumeDeferred(id)) == .completed(IssuanceResult(issued: [id])))
        let entries = try await wallet.transactionLog.entries()
        #expect(entries.map(\.outcome) == [.completed, .deferred])
        #expect(entries.first?.counterparty.identifier == "https://issuer.example")
        #expect(entries.first?.credentials.first?.claimPaths.contains([.string("given_name")]) == true)
    }

    @Test("proximity declined: one declined entry, nothing released, no instance spent")
    func proximityDeclined() async throws {
        let parties = try Parties.make()
        let reader = try TestReader.make()
        let wallet = try await Wallet(config: parties.config(readerAnchors: false, proximity: ProximityConfig(connector: reader.holderConnector)))
        let id = try await parties.issueMdl(into: wallet)
        let recorded = wallet.transactionLog.recorded
        await #expect(throws: ProximityError.self) {
            _ = try await reader.present(from: wallet, releasing: nil, issuerAnchors: [parties.issuer.trustAnchors.iaca])
        }
        let entry = try #require(await recorded.first { $0.kind == .proximityPresentation })
        #expect(entry.outcome == .declined)
        #expect(entry.credentials.isEmpty)
        #expect(entry.counterparty.trusted == nil, "no reader anchors configured")
        #expect(try await wallet.credentials.remainingInstances(of: id) == 3)
        await wallet.proximity.closeAll()
    }

    @Test("a reader whose certificate does not chain to the reader anchors: the session ends, failed, trusted false")
    func untrustedReader() async throws {
        let parties = try Parties.make()
        let reader = try TestReader.make()
        let wallet = try await Wallet(config: parties.config(proximity: ProximityConfig(connector: reader.holderConnector)))
        let id = try await parties.issueMdl(into: wallet)
        let recorded = wallet.transactionLog.recorded
        await #expect(throws: ProximityError.self) {
            _ = try await reader.present(from: wallet, releasing: [], issuerAnchors: [parties.issuer.trustAnchors.iaca])
        }
        let entry = try #require(await recorded.first { $0.kind == .proximityPresentation })
        #expect(entry.outcome == .failed(reason: "readerAuthenticationFailed"))
        #expect(entry.counterparty.trusted == false)
        #expect(entry.credentials.isEmpty)
        #expect(try await wallet.credentials.remainingInstances(of: id) == 3)
        await wallet.proximity.closeAll()
    }

    @Test("a wallet that requires reader authentication ends an anonymous reader's session before consent, and serves a trusted one")
    func requiredReaderAuthentication() async throws {
        let parties = try Parties.make()
        let reader = try TestReader.make()
        let wallet = try await Wallet(config: parties.config(
            proximity: ProximityConfig(connector: reader.holderConnector, requireReaderAuthentication: true),
            extraReaderAnchorsDer: [reader.root.derEncoded]))
        #expect(wallet.engagementConfig.requireReaderAuthentication)
        let id = try await parties.issueMdl(into: wallet)
        let recorded = wallet.transactionLog.recorded
        let asked = LockedBox(0)
        await #expect(throws: ProximityError.self) {
            _ = try await reader.present(from: wallet, releasing: [], issuerAnchors: [parties.issuer.trustAnchors.iaca],
                                         authenticate: false, providerCalled: { asked.withLock { $0 += 1 } })
        }
        let entry = try #require(await recorded.first { $0.kind == .proximityPresentation })
        #expect(entry.outcome == .failed(reason: "readerAuthenticationFailed"))
        #expect(entry.credentials.isEmpty)
        #expect(asked.withLock { $0 } == 0)
        #expect(try await wallet.credentials.remainingInstances(of: id) == 3)
        await wallet.proximity.closeAll()

        let released = Self.mdl("family_name")
        let verified = try await reader.present(from: wallet, releasing: released, issuerAnchors: [parties.issuer.trustAnchors.iaca])
        #expect(verified.documents.first?.value(nameSpace: Parties.nameSpace, identifier: "family_name") == .textString("Mustermann"))
        await wallet.proximity.closeAll()
    }

    @Test("entries are queried by kind and credential, and deleted one by one or by filter")
    func queryAndDelete() async throws {
        let parties = try Parties.make()
        let wallet = try await Wallet(config: parties.config())
        let first = try await parties.issuePid(into: wallet)
        _ = try await parties.issuePid(into: wallet)
        let transaction = try await parties.verifier.createTransaction(PresentationRequestOptions(query: Self.pidQuery))
        _ = await terminalState(of: wallet.presentation.start(transaction.authorizationRequestURI)) { request in
            PresentationSelection(chosen: ["pid": [first]])
        }
        #expect(try await wallet.transactionLog.entries().count == 3)
        #expect(try await wallet.transactionLog.entries(TransactionFilter(credentialId: first)).count == 2)
        let presentation = try #require(try await wallet.transactionLog.entries(TransactionFilter(kind: .remotePresentation)).first)
        try await wallet.transactionLog.delete(id: presentation.id)
        #expect(try await wallet.transactionLog.entries().count == 2)
        #expect(try await wallet.transactionLog.delete(TransactionFilter(kind: .issuance)) == 2)
        #expect(try await wallet.transactionLog.entries().isEmpty)
        await #expect(throws: WalletError.storage(.transactionNotFound(id: presentation.id))) {
            try await wallet.transactionLog.delete(id: presentation.id)
        }
    }

    @Test("a disabled log records nothing")
    func disabled() async throws {
        let parties = try Parties.make()
        var config = parties.config()
        config.transactionLog = TransactionLogOptions(isEnabled: false)
        let wallet = try await Wallet(config: config)
        _ = try await parties.issuePid(into: wallet)
        #expect(try await wallet.transactionLog.entries().isEmpty)
    }
}

/// A reader with its own authentication PKI, on a simulated BLE link with the wallet.
struct TestReader {
    let air: SimulatedBLEAir
    let root: X509Certificate
    let certificate: X509Certificate
    let key: ECPrivateKey

    static func make() throws -> TestReader {
        let now = Date()
        let rootKey = try ECPrivateKey.generate(curve: .p256)
        let root = try CertificateBuilder.certificateAuthority(
            subject: DistinguishedName([(.commonName, "Test Reader Root"), (.country, "DE")]),
            notBefore: now.addingTimeInterval(-3600), notAfter: now.addingTimeInterval(86_400)).selfSigned(with: .ec(rootKey))
        let key = try ECPrivateKey.generate(curve: .p256)
        let certificate = try CertificateBuilder.mdocReaderAuthentication(
            subject: DistinguishedName([(.commonName, "Test Reader"), (.country, "DE")]), subjectPublicKeyInfoDER: try key.publicKey.spkiDER,
            notBefore: now.addingTimeInterval(-3600), notAfter: now.addingTimeInterval(86_400)).signed(by: root, key: .ec(rootKey))
        return TestReader(air: SimulatedBLEAir(), root: root, certificate: certificate, key: key)
    }

    var holderConnector: BLEConnector { BLEConnector(party: .mdoc, modes: [.peripheralServer]) { [air] in air.makeRadio() } }

    /// Engages the wallet's QR code, asks for three mDL elements with reader
    /// authentication, and lets the wallet's user release `releasing` (nil: decline);
    /// `providerCalled` runs where the SDK asks the wallet's provider for credentials.
    func present(from wallet: Wallet, releasing: Set<ReleasedElement>?, issuerAnchors: [X509Certificate],
                 authenticate: Bool = true, requests: [ItemsRequest]? = nil,
                 providerCalled: (@Sendable () -> Void)? = nil) async throws -> VerifiedResponse {
        let engagement = try await wallet.proximity.createEngagement(.qr, config: wallet.engagementConfig)
        let holder = Task {
            for await state in wallet.proximity.eventHub.sessionState {
                if state.userInteractionRequired, let bytes = state.deviceRequest,
                   let transfer = wallet.proximity.activeEngagement.current?.transferManager {
                    guard let releasing, let request = try? DeviceRequest(encoded: bytes) else {
                        try? await transfer.decline()
                        continue
                    }
                    do {
                        let provider = ObservedProvider(base: try await wallet.documentProvider(for: request, consent: ConsentSelection(elements: releasing)),
                                                        called: providerCalled)
                        let response = try await transfer.createResponse(deviceRequest: request, documentProvider: provider)
                        try await transfer.sendDeviceResponse(response)
                    } catch {
                        Issue.record("holder: \(error)")
                    }
                }
                if state.isTerminal { break }
            }
        }
        defer { holder.cancel() }
        let reader = try MdocReader(connector: BLEConnector(party: .reader, modes: [.peripheralServer]) { [air] in air.makeRadio() },
                                    trustAnchors: issuerAnchors)
        try await reader.engage(qrCodeUri: engagement.qrCodeUri ?? "")
        let items = ItemsRequest(docType: Parties.mDLType, nameSpaces: [NameSpaced(Parties.nameSpace, [
            RequestedElement("family_name", false), RequestedElement("age_over_18", false), RequestedElement("portrait", false)])])
        let verified = try await reader.request(
            requests ?? [items], readerKey: authenticate ? ReaderAuthenticationKey(signer: SoftwareSigner(key), certificateChain: [certificate]) : nil)
        await reader.end()
        await holder.value
        return verified
    }
}

/// The wallet's HTTP client, except that the presentation's POST (the one carrying a
/// `vp_token` or an encrypted `response`) ends as `ending` says.
private struct ResponseTamperer: HTTPClient {
    let inner: any HTTPClient
    let ending: TransactionLogTests.ResponseEnding

    func send(_ request: HTTPRequest) async throws(HTTPError) -> HTTPResponse {
        let body = String(decoding: request.body ?? [], as: UTF8.self)
        guard request.method == .post, body.hasPrefix("vp_token=") || body.hasPrefix("response=") || body.contains("&vp_token=")
                || body.contains("&response=") else {
            return try await inner.send(request)
        }
        switch ending {
        case .connectionNeverMade:
            throw .transport(.cannotConnect)
        case .redirectAfterReceiving:
            _ = try await inner.send(request)
            return HTTPResponse(status: 302, headers: ["Location": "https://verifier.example/elsewhere"], body: [])
        case .timeoutAfterReceiving:
            _ = try await inner.send(request)
            throw .timedOut
        case .answerTooLarge:
            _ = try await inner.send(request)
            throw .responseTooLarge(limit: 4 * 1024 * 1024)
        }
    }
}

/// A wallet's document provider, with a call to `called` when the SDK asks it for credentials.
private struct ObservedProvider: MdocDocumentProvider {
    let base: any MdocDocumentProvider
    let called: (@Sendable () -> Void)?

    func credentials(for request: DeviceRequest) async throws(DocumentProviderError) -> [IssuerSigned] {
        called?()
        return try await base.credentials(for: request)
    }

    func authentication(for credential: IssuerSigned) -> DeviceAuthenticationMethod { base.authentication(for: credential) }

    func consent(for request: DeviceRequest) async throws(DocumentProviderError) -> ConsentSelection {
        try await base.consent(for: request)
    }
}

/// The calling thread (a synchronous function, so that async code may ask).
private func currentThread() -> pthread_t { pthread_self() }
