import CBOR
import Foundation
import Mdoc
import Testing
import WalletCrypto
import WalletRuntime
@testable import MdocProximity

/// The lifecycle of issue 17 item 4 as the spec's patterns describe it, end to end:
/// closing the QR sheet, app cancel, a second engagement mid-transfer, NFC for the app's
/// lifetime, every timeout, `decline()` only after a request, pruning, and no retain
/// cycle. Order comes from the state streams and the event hub; timeouts fire when a
/// `TestClock` is advanced, never on the wall clock.
@Suite("Proximity lifecycle (issue 17 item 4)", .timeLimit(.minutes(10)))
struct LifecycleTests {
    /// The request event of engagement `id` (or of any engagement), once it arrives.
    static func consentPrompt(on manager: MdocEngagementManager, engagement id: EngagementID? = nil) -> Task<MdocRetrievalEvent?, Never> {
        let stream = manager.eventHub.transferEvents
        return Task {
            for await event in stream where event.state == .awaitingConsent && (id == nil || event.engagementId == id) {
                return event
            }
            return nil
        }
    }

    /// The request of a `documentsSelectionProcessStart` event.
    static func request(of event: MdocRetrievalEvent?) throws -> DeviceRequest {
        guard case .documentsSelectionProcessStart(let data) = try #require(event).kind else {
            throw SharedVectors.Missing(description: "not a request event: \(String(describing: event))")
        }
        return try DeviceRequest(encoded: data)
    }

    // MARK: Spec pattern 4

    @Test("closing the QR sheet after the reader connected keeps the session going to SUCCESS (spec pattern 4)",
          arguments: Carrier.allCases)
    func closeQrSheetAfterConnect(carrier: Carrier) async throws {
        let fixtures = try await SessionFixtures.make()
        let (holder, readerSide) = carrier.connectors()
        let manager = MdocEngagementManager(connector: holder)
        let nfc = try await manager.createEngagement(.nfc, config: testConfig)     // NFC for the app's lifetime
        let qr = try await manager.createEngagement(.qr, config: testConfig)       // the QR modal opens
        let uri = try #require(qr.qrCodeUri)
        let recorder = collect(manager.eventHub.sessionState) { $0.isTerminal }
        let transfer = collect(manager.eventHub.sessionState) { $0.phase == .transfer }
        let reader = try MdocReader(connector: readerSide, trustAnchors: [fixtures.iaca], messageTimeout: hangGuard)
        try await reader.engage(qrCodeUri: uri)
        _ = await transfer.value                  // TRANSFER: the modal dismisses itself...
        await manager.closeQrEngagement()         // ...and its onDismiss closes the QR engagement
        #expect(await manager.engagements.map(\.id).contains(qr.id))
        let consent = respond(on: manager, provider: fixtures.provider, choice: .accept)
        let verified = try await reader.request([SessionFixtures.request()])
        let states = await recorder.value
        await consent.value
        #expect(verified.documents.first?.value(nameSpace: SessionFixtures.nameSpace, identifier: "family_name") == "Doe")
        #expect(states.dropFirst().allSatisfy { $0.engagementId == qr.id })
        let request = states.first { $0.userInteractionRequired }?.deviceRequest
        #expect(request != nil)
        #expect(states.anonymized == [
            ui(.engagement, .scanQr, nfc: .background, qr: .display),
            ui(.transfer, .connecting, nfc: .background),
            ui(.transfer, .connected, nfc: .background),
            ui(.transfer, .reviewRequest, nfc: .background, interaction: true, request: request),
            ui(.transfer, .sharing, nfc: .background),
            ui(.transfer, .transferring, nfc: .background, progress: 0.7),
            ui(.terminal, .completed, nfc: .background, outcome: .success, reason: .transferCompleted),
        ])
        // On TERMINAL the sample shows the result and dismisses the sheet: that closes the
        // finished QR engagement, and NFC takes the screen.
        await manager.closeQrEngagement()
        #expect(await manager.engagements.map(\.id) == [nfc.id])
        #expect(manager.eventHub.currentSessionState.anonymized == ui(.engagement, .holdNearReader, nfc: .foreground))
        #expect(await manager.nfc.isArmed)
        await manager.closeAll()
    }

    // MARK: App cancel

    @Test("the app cancelling at the consent prompt ends the session CANCELED (not ERROR), and the state stays",
          arguments: Carrier.allCases)
    func appCancelAtConsent(carrier: Carrier) async throws {
        let fixtures = try await SessionFixtures.make()
        let (holder, readerSide) = carrier.connectors()
        let manager = MdocEngagementManager(connector: holder)
        let qr = try await manager.createEngagement(.qr, config: testConfig)
        let recorder = collect(manager.eventHub.sessionState) { $0.isTerminal }
        let prompt = Self.consentPrompt(on: manager, engagement: qr.id)
        let reader = try MdocReader(connector: readerSide, trustAnchors: [fixtures.iaca], messageTimeout: hangGuard)
        try await reader.engage(qrCodeUri: try #require(qr.qrCodeUri))
        let pending = Task { try await reader.request([SessionFixtures.request()]) }
        _ = await prompt.value
        let transfer = try #require(qr.transferManager)
        await transfer.close()                    // the user taps Cancel
        // The reader is told the session ended (status 20).
        await #expect(throws: ProximityError.sessionTerminated) { try await pending.value }
        let states = await recorder.value.anonymized
        let request = states.first { $0.userInteractionRequired }?.deviceRequest
        #expect(states == [
            ui(.engagement, .scanQr, qr: .display),
            ui(.transfer, .connecting),
            ui(.transfer, .connected),
            ui(.transfer, .reviewRequest, interaction: true, request: request),
            ui(.terminal, .canceled, outcome: .canceled, reason: .canceledByApp),
        ])
        #expect(await transfer.ending == .cancelled)
        await #expect(throws: ProximityError.invalidState(.sessionEnded)) { try await transfer.decline() }
        // The terminal state stays until the app starts something new.
        _ = await manager.engagements
        #expect(manager.eventHub.currentSessionState.anonymized == states.last)
        await manager.closeAll()
    }

    @Test("closing an engagement while its response is built ends it CANCELED, and the NFC engagement it suspended resumes")
    func closeWhileResponding() async throws {
        let fixtures = try await SessionFixtures.make()
        let exchange = InMemoryTransport.Exchange()
        let manager = MdocEngagementManager(connector: exchange)
        let nfc = try await manager.createEngagement(.nfc, config: testConfig)
        let qr = try await manager.createEngagement(.qr, config: testConfig)
        let recorder = collect(manager.eventHub.sessionState) { $0.nfcMode == .foreground }
        let prompt = Self.consentPrompt(on: manager, engagement: qr.id)
        let reader = try MdocReader(connector: exchange, trustAnchors: [fixtures.iaca], messageTimeout: hangGuard)
        try await reader.engage(qrCodeUri: try #require(qr.qrCodeUri))
        let pending = Task { try await reader.request([SessionFixtures.request()]) }
        let request = try Self.request(of: await prompt.value)
        #expect(nfc.isSuspended)
        // The user accepts; while the provider works, the app closes the engagement.
        let gate = Gate()
        let provider = LifecycleBugTests.GatedProvider(inner: fixtures.provider, gate: gate)
        let transfer = try #require(qr.transferManager)
        let building = Task { try await transfer.createResponse(deviceRequest: request, documentProvider: provider) }
        await gate.arrivals(1)
        await manager.close(qr.id)
        gate.open()
        await #expect(throws: ProximityError.invalidState(.sessionEnded)) { try await building.value }
        await #expect(throws: ProximityError.sessionTerminated) { try await pending.value }
        let states = await recorder.value.anonymized
        #expect(states == [
            ui(.engagement, .scanQr, nfc: .background, qr: .display),
            ui(.transfer, .connecting, nfc: .background),
            ui(.transfer, .connected, nfc: .background),
            ui(.transfer, .reviewRequest, nfc: .background, interaction: true, request: request.encodedBytes),
            ui(.transfer, .sharing, nfc: .background),
            ui(.terminal, .canceled, nfc: .background, outcome: .canceled, reason: .canceledByApp),
            ui(.engagement, .holdNearReader, nfc: .foreground),
        ])
        #expect(states.allSatisfy { $0.terminalOutcome != .error })
        #expect(!nfc.isSuspended)
        #expect(manager.eventHub.recentEngagementEvents(count: 100).filter { $0.engagementId == nfc.id }.map(\.kind).suffix(2)
                == [.suspended, .resumed])
        // The resumed NFC engagement serves the next reader.
        let consent = respond(on: manager, provider: fixtures.provider, choice: .accept, engagement: nfc.id)
        let next = try MdocReader(connector: exchange, trustAnchors: [fixtures.iaca], messageTimeout: hangGuard)
        try await next.engage(nfc: manager.nfc)
        #expect(try await next.request([SessionFixtures.request()]).documents.count == 1)
        await consent.value
        await manager.closeAll()
    }

    // MARK: The response answers the pending request

    @Test("createResponse refuses a request other than the one the reader sent; the pending one is then answered")
    func responseToAnotherRequest() async throws {
        let fixtures = try await SessionFixtures.make()
        let (holder, readerSide) = Carrier.inMemory.connectors()
        let manager = MdocEngagementManager(connector: holder)
        let engagement = try await manager.createEngagement(.qr, config: testConfig)
        let prompt = Self.consentPrompt(on: manager, engagement: engagement.id)
        let reader = try MdocReader(connector: readerSide, trustAnchors: [fixtures.iaca], messageTimeout: hangGuard)
        try await reader.engage(qrCodeUri: try #require(engagement.qrCodeUri))
        let pending = Task { try await reader.request([SessionFixtures.request(["age_over_18"])]) }
        let request = try Self.request(of: await prompt.value)
        let transfer = try #require(engagement.transferManager)
        // A request the app built (or kept from another session) asking for more.
        let other = DeviceRequest(docRequests: [DocRequest(itemsRequest: SessionFixtures.request(["family_name", "age_over_18"]))])
        await #expect(throws: ProximityError.invalidState(.requestMismatch)) {
            _ = try await transfer.createResponse(deviceRequest: other, documentProvider: fixtures.provider)
        }
        #expect(await transfer.phase == .awaitingConsent)
        try await transfer.sendDeviceResponse(try await transfer.createResponse(deviceRequest: request, documentProvider: fixtures.provider))
        let response = try await pending.value
        #expect(response.documents.first?.issuerSigned.flatMap(\.elements).map(\.identifier) == ["age_over_18"])
    }

    // MARK: A second engagement mid-transfer

    @Test("an engagement created while a QR session transfers waits suspended, refuses readers, and takes over after the session",
          arguments: Carrier.allCases)
    func secondEngagementMidTransfer(carrier: Carrier) async throws {
        let fixtures = try await SessionFixtures.make()
        let (holder, readerSide) = carrier.connectors()
        let manager = MdocEngagementManager(connector: holder)
        let first = try await manager.createEngagement(.qr, config: testConfig)
        let recorder = collect(manager.eventHub.sessionState) { $0.engagementId != nil && $0.engagementId != first.id }
        let prompt = Self.consentPrompt(on: manager, engagement: first.id)
        let readerA = try MdocReader(connector: readerSide, trustAnchors: [fixtures.iaca], messageTimeout: hangGuard)
        try await readerA.engage(qrCodeUri: try #require(first.qrCodeUri))
        let pendingA = Task { try await readerA.request([SessionFixtures.request()]) }
        let request = try Self.request(of: await prompt.value)
        // Mid-transfer, the app opens another QR sheet.
        let secondEvents = manager.eventHub.engagementEvents
        let second = try await manager.createEngagement(.qr, config: testConfig)
        let secondUri = try #require(second.qrCodeUri)
        #expect(second.isSuspended)
        #expect(manager.activeEngagement.current?.id == first.id)
        #expect(manager.eventHub.currentSessionState.engagementId == first.id)
        #expect(manager.eventHub.currentSessionState.userInteractionRequired)
        let announced = manager.eventHub.recentEngagementEvents(count: 100).filter { $0.engagementId == second.id }.map(\.kind)
        #expect(announced == [.qrShow(qrCodeData: secondUri), .suspended])
        // A reader that scans the suspended code is refused.
        let readerB = try MdocReader(connector: readerSide, trustAnchors: [fixtures.iaca], messageTimeout: hangGuard)
        try await readerB.engage(qrCodeUri: secondUri)
        await #expect(throws: ProximityError.self) { try await readerB.request([SessionFixtures.request()]) }
        await readerB.abort()
        #expect(manager.eventHub.currentSessionState.engagementId == first.id)
        // The first session completes.
        let transfer = try #require(first.transferManager)
        try await transfer.sendDeviceResponse(try await transfer.createResponse(deviceRequest: request, documentProvider: fixtures.provider))
        #expect(try await pendingA.value.documents.count == 1)
        let states = await recorder.value
        #expect(states.anonymized == [
            ui(.engagement, .scanQr, qr: .display),
            ui(.transfer, .connecting),
            ui(.transfer, .connected),
            ui(.transfer, .reviewRequest, interaction: true, request: request.encodedBytes),
            ui(.transfer, .sharing),
            ui(.transfer, .transferring, progress: 0.7),
            ui(.terminal, .completed, outcome: .success, reason: .transferCompleted),
            ui(.engagement, .scanQr, qr: .display),
        ])
        #expect(states.dropLast().allSatisfy { $0.engagementId == first.id })
        #expect(states.last?.engagementId == second.id)
        #expect(states.last?.qrCodePayload == secondUri)
        #expect(!second.isSuspended)
        #expect(manager.activeEngagement.current?.id == second.id)
        var resumed = false
        for await event in secondEvents where event.engagementId == second.id && event.kind == .resumed {
            resumed = true
            break
        }
        #expect(resumed)
        // The second engagement now serves a reader.
        let consent = respond(on: manager, provider: fixtures.provider, choice: .accept, engagement: second.id)
        let readerC = try MdocReader(connector: readerSide, trustAnchors: [fixtures.iaca], messageTimeout: hangGuard)
        try await readerC.engage(qrCodeUri: secondUri)
        #expect(try await readerC.request([SessionFixtures.request()]).documents.count == 1)
        await consent.value
        await manager.closeAll()
    }

    // MARK: NFC for the app's lifetime

    @Test("background NFC stays armed: three readers in a row complete sessions, each with a fresh NFC engagement and key",
          arguments: Carrier.allCases)
    func nfcThreeSessionsInARow(carrier: Carrier) async throws {
        let fixtures = try await SessionFixtures.make()
        let (holder, readerSide) = carrier.connectors()
        let manager = MdocEngagementManager(connector: holder)
        var armed = try await manager.createEngagement(.nfc, config: testConfig)
        var keys: Set<[UInt8]> = [armed.deviceEngagement.security.eDeviceKeyEncoded]
        for round in 1...3 {
            let id = armed.id
            let ended = collect(manager.eventHub.sessionState) { $0.isTerminal && $0.engagementId == id }
            let rearmed = collect(manager.eventHub.engagementEvents) { $0.kind == .nfcEngagement && $0.engagementId != id }
            let consent = respond(on: manager, provider: fixtures.provider, choice: .accept, engagement: id)
            let reader = try MdocReader(connector: readerSide, trustAnchors: [fixtures.iaca], messageTimeout: hangGuard)
            try await reader.engage(nfc: manager.nfc)
            let verified = try await reader.request([SessionFixtures.request()])
            await consent.value
            #expect(verified.documents.first?.value(nameSpace: SessionFixtures.nameSpace, identifier: "family_name") == "Doe",
                    "round \(round)")
            // The session ran on the armed engagement, bound to its Handover Select.
            let transcript = try #require(await armed.transferManager?.sessionTranscript)
            #expect(transcript.handover == .nfc(handoverSelect: try #require(armed.nfcHandoverSelect), handoverRequest: nil))
            #expect(await reader.sessionTranscript == transcript)
            let last = try #require(await ended.value.last)
            #expect(last.anonymized == ui(.terminal, .completed, nfc: .foreground, outcome: .success, reason: .transferCompleted))
            // Re-armed in the background with a new engagement and ephemeral key.
            let next = try #require(await rearmed.value.last).engagementId
            armed = try #require(await manager.engagements.first { $0.id == next })
            #expect(armed.type == .nfc)
            #expect(keys.insert(armed.deviceEngagement.security.eDeviceKeyEncoded).inserted, "round \(round): key reused")
            #expect(await manager.nfc.isArmed)
            let select = try ConnectionHandover.parseHandoverSelect(try #require(armed.nfcHandoverSelect))
            #expect(select.deviceEngagement.encodedBytes == armed.deviceEngagement.encodedBytes)
        }
        #expect(keys.count == 4)
        // Finished NFC engagements leave once the next reader connects: the last session
        // (its terminal state on screen) and the armed one remain, and the hub's maps
        // hold no more.
        let remaining = await manager.engagements.map(\.id)
        #expect(remaining.count == 2, "engagements left: \(remaining.count)")
        #expect(remaining.last == armed.id)
        #expect(manager.eventHub.currentStateByEngagement().current.count <= 2)
        #expect(manager.eventHub.latestTransferEventByEngagement().current.count <= 1)
        await manager.closeAll()
        #expect(await manager.nfc.isArmed == false)
    }

    // MARK: Timeouts

    @Test("a TCP connect that never answers ends the reverse engagement with the connect timeout; the late connection is closed")
    func tcpConnectTimeout() async throws {
        // A blocking connect held at a semaphore stands for a peer that never answers: the
        // kernel cannot be made to drop SYNs deterministically, the dial seam can.
        let clock = TestClock()
        let lateListener = try privateTCPListener()
        let latePort = try #require(lateListener.endpoint.tcpAddress).port
        let release = DispatchSemaphore(value: 0)
        let connector = TCPConnector(clock: clock, dial: { _, _ in
            release.wait()
            return SocketHandle.connect(host: "127.0.0.1", port: latePort)
        })
        let manager = MdocEngagementManager(connector: connector, clock: clock)
        let recorder = collect(manager.eventHub.sessionState) { $0.isTerminal }
        let readerKey = try ECPrivateKey.generate(curve: .p256)
        let uri = ReaderEngagement(security: EngagementSecurity(eDeviceKey: readerKey.publicKey),
                                   connectionMethods: [TransportEndpoint.tcp(host: "127.0.0.1", port: 9).retrievalMethod]).uri
        var config = testConfig.with(readerEngagementUri: uri)
        config.connectTimeout = .seconds(15)
        let toApp = try await manager.createEngagement(.toApp, config: config)
        await clock.waitForSleepers(1)            // the connect's timer
        clock.advance(by: .seconds(16))
        let states = await recorder.value.anonymized
        #expect(states.last == ui(.terminal, .failed, outcome: .error, reason: .failed(.timeout(seconds: 15))))
        #expect(states.contains(ui(.transfer, .connecting)))
        let errors = manager.eventHub.recentEngagementEvents(count: 100).filter { $0.engagementId == toApp.id }.compactMap {
            if case .error(let error) = $0.kind { return error } else { return nil }
        }
        #expect(errors == [.timeout(seconds: 15)])
        #expect(toApp.transferManager == nil)
        // The connect completes after all: that connection is closed at once, never used.
        release.signal()
        let late = try await lateListener.accept(timeout: hangGuard)
        await #expect(throws: ProximityError.connectionClosed) { try await late.receive(timeout: hangGuard) }
        await late.close()
        await lateListener.close()
        await manager.closeAll()
    }

    @Test("an engagement no reader reaches in time ends ERROR with the timeout and closes its listener", arguments: Carrier.allCases)
    func engagementTimeout(carrier: Carrier) async throws {
        let clock = TestClock()
        let connector = CountingConnector(carrier.connectors(clock: clock).holder)
        let manager = MdocEngagementManager(connector: connector, clock: clock)
        var config = testConfig
        config.engagementTimeout = .seconds(60)
        let qr = try await manager.createEngagement(.qr, config: config)
        let recorder = collect(manager.eventHub.sessionState) { $0.isTerminal }
        #expect(connector.openListeners == 1)
        await clock.waitForSleepers(1)
        clock.advance(by: .seconds(61))
        let states = await recorder.value
        #expect(states.anonymized == [
            ui(.engagement, .scanQr, qr: .display),
            ui(.terminal, .failed, outcome: .error, reason: .failed(.timeout(seconds: 60))),
        ])
        #expect(states.allSatisfy { $0.engagementId == qr.id })
        _ = await manager.engagements
        #expect(connector.openListeners == 0)
        await manager.closeAll()
    }

    /// A provider that never answers (until the test lets it go, to leave nothing behind).
    struct SilentProvider: MdocDocumentProvider {
        let inner: StaticDocumentProvider
        let gate: Gate
        func credentials(for request: DeviceRequest) async throws(DocumentProviderError) -> [IssuerSigned] {
            await gate.wait()
            throw .storeUnavailable
        }
        func authentication(for credential: IssuerSigned) -> DeviceAuthenticationMethod { inner.authentication(for: credential) }
        func consent(for request: DeviceRequest) async throws(DocumentProviderError) -> ConsentSelection {
            try await inner.consent(for: request)
        }
    }

    @Test("a document provider that never answers ends the session ERROR with the provider timeout, and the reader is told")
    func providerTimeout() async throws {
        let fixtures = try await SessionFixtures.make()
        let clock = TestClock()
        let exchange = InMemoryTransport.Exchange()
        let manager = MdocEngagementManager(connector: exchange, clock: clock)
        var config = testConfig
        config.providerTimeout = .seconds(10)
        let qr = try await manager.createEngagement(.qr, config: config)
        let recorder = collect(manager.eventHub.sessionState) { $0.isTerminal }
        let prompt = Self.consentPrompt(on: manager, engagement: qr.id)
        let reader = try MdocReader(connector: exchange, trustAnchors: [fixtures.iaca], messageTimeout: hangGuard)
        try await reader.engage(qrCodeUri: try #require(qr.qrCodeUri))
        let pending = Task { try await reader.request([SessionFixtures.request()]) }
        let request = try Self.request(of: await prompt.value)
        let transfer = try #require(qr.transferManager)
        let gate = Gate()
        let building = Task {
            try await transfer.createResponse(deviceRequest: request, documentProvider: SilentProvider(inner: fixtures.provider, gate: gate))
        }
        await gate.arrivals(1)
        await clock.waitForSleepers(2)            // the session's provider timer and the wait for the provider
        clock.advance(by: .seconds(11))
        await #expect(throws: ProximityError.timeout(seconds: 10)) { try await building.value }
        await #expect(throws: ProximityError.sessionTerminated) { try await pending.value }
        let states = await recorder.value.anonymized
        #expect(states.last == ui(.terminal, .failed, outcome: .error, reason: .failed(.timeout(seconds: 10))))
        #expect(states.contains(ui(.transfer, .sharing)))
        #expect(await transfer.ending == .failed(.timeout(seconds: 10)))
        gate.open()
        await manager.closeAll()
    }

    // MARK: Decisions, pruning, references

    @Test("decline() before any request is refused with a typed error and changes nothing")
    func declineBeforeRequest() async throws {
        let fixtures = try await SessionFixtures.make()
        let exchange = InMemoryTransport.Exchange()
        let manager = MdocEngagementManager(connector: exchange)
        let qr = try await manager.createEngagement(.qr, config: testConfig)
        let recorder = collect(manager.eventHub.sessionState) { $0.isTerminal }
        let selected = collect(manager.eventHub.transferEvents) { $0.engagementId == qr.id && $0.state == .transmissionTypeSelected }
        let reader = try MdocReader(connector: exchange, trustAnchors: [fixtures.iaca], messageTimeout: hangGuard)
        try await reader.engage(qrCodeUri: try #require(qr.qrCodeUri))   // connected; no request sent yet
        _ = await selected.value
        let transfer = try #require(qr.transferManager)
        let before = manager.eventHub.eventTimeline().count
        let stateBefore = manager.eventHub.currentSessionState
        await #expect(throws: ProximityError.invalidState(.noRequestPending)) { try await transfer.decline() }
        #expect(await transfer.phase == .awaitingEstablishment)
        #expect(await transfer.ending == nil)
        #expect(manager.eventHub.eventTimeline().count == before)
        #expect(manager.eventHub.currentSessionState == stateBefore)
        // The session goes on as if nothing happened.
        let consent = respond(on: manager, provider: fixtures.provider, choice: .accept, engagement: qr.id)
        #expect(try await reader.request([SessionFixtures.request()]).documents.count == 1)
        await consent.value
        #expect(await recorder.value.last?.terminalOutcome == .success)
        await manager.closeAll()
    }

    @Test("a closed engagement leaves no entry in the hub's per-engagement maps or the projection")
    func hubMapsPruned() async throws {
        let fixtures = try await SessionFixtures.make()
        let exchange = InMemoryTransport.Exchange()
        let manager = MdocEngagementManager(connector: exchange)
        let hub = manager.eventHub
        let nfc = try await manager.createEngagement(.nfc, config: testConfig)
        let qr = try await manager.createEngagement(.qr, config: testConfig)
        let consent = respond(on: manager, provider: fixtures.provider, choice: .accept, engagement: qr.id)
        let reader = try MdocReader(connector: exchange, trustAnchors: [fixtures.iaca], messageTimeout: hangGuard)
        try await reader.engage(qrCodeUri: try #require(qr.qrCodeUri))
        _ = try await reader.request([SessionFixtures.request()])
        await consent.value
        await qr.transferManager?.waitUntilEnded()
        #expect(hub.latestTransferEventByEngagement().current[qr.id] != nil)
        #expect(hub.currentTransferStateByEngagement().current[qr.id] == .completed)
        await manager.close(qr.id)
        #expect(hub.latestEventByEngagement().current[qr.id] == nil)
        #expect(hub.latestTransferEventByEngagement().current[qr.id] == nil)
        #expect(hub.currentStateByEngagement().current[qr.id] == nil)
        #expect(hub.currentTransferStateByEngagement().current[qr.id] == nil)
        #expect(hub.context.engagements[qr.id] == nil)
        #expect(Set(hub.currentStateByEngagement().current.keys) == [nfc.id])
        // A QR engagement no reader used, and then the rest.
        let unused = try await manager.createEngagement(.qr, config: testConfig)
        #expect(hub.currentStateByEngagement().current[unused.id] == .qrShown)
        await manager.closeAll()
        #expect(hub.latestEventByEngagement().current.isEmpty)
        #expect(hub.latestTransferEventByEngagement().current.isEmpty)
        #expect(hub.currentStateByEngagement().current.isEmpty)
        #expect(hub.currentTransferStateByEngagement().current.isEmpty)
        #expect(hub.context.engagements.isEmpty)
        #expect(hub.currentSessionState == .idle)
    }

    @Test("dropping the last reference to a manager with engagements and a session deallocates it and ends its session")
    func managerDeallocates() async throws {
        let fixtures = try await SessionFixtures.make()
        let exchange = InMemoryTransport.Exchange()
        weak var weakManager: MdocEngagementManager?
        let hub = MdocEventHub()
        let reader = try MdocReader(connector: exchange, trustAnchors: [fixtures.iaca], messageTimeout: hangGuard)
        let pending: Task<VerifiedResponse, any Error>
        do {
            let manager = MdocEngagementManager(connector: exchange, eventHub: hub)
            weakManager = manager
            try await manager.createEngagement(.nfc, config: testConfig)
            let qr = try await manager.createEngagement(.qr, config: testConfig)
            let prompt = Self.consentPrompt(on: manager, engagement: qr.id)
            try await reader.engage(qrCodeUri: try #require(qr.qrCodeUri))
            pending = Task { try await reader.request([SessionFixtures.request()]) }
            _ = await prompt.value               // a session waits for consent
        }
        await poll { weakManager == nil }
        #expect(weakManager == nil)
        // Its deinit ended the session and closed its listeners.
        await #expect(throws: ProximityError.self) { try await pending.value }
        await poll { exchange.listenerCount == 0 }
        #expect(exchange.listenerCount == 0)
    }

    // MARK: TCP listener close vs. the accept thread

    @Test("closing a TCP listener while accepts are in flight, 30 times: every accept ends with a connection or .connectionClosed, no socket is disturbed")
    func tcpListenerCloseRacesAccept() async throws {
        // A pair opened first: a stray close or shutdown of a reused descriptor number would break it.
        let sentinelListener = try privateTCPListener()
        let sentinelPort = try #require(sentinelListener.endpoint.tcpAddress).port
        async let sentinelAccepted = sentinelListener.accept(timeout: hangGuard)
        let sentinelClient = try await TCPTransport.connect(host: "127.0.0.1", port: sentinelPort)
        let sentinelServer = try await sentinelAccepted
        await sentinelListener.close()
        var served = 0, refused = 0
        for round in 0..<30 {
            let listener = try privateTCPListener()
            let port = try #require(listener.endpoint.tcpAddress).port
            let accepts = (0..<3).map { _ in
                Task { () -> Result<any MdocTransport, ProximityError> in
                    do throws(ProximityError) { return .success(try await listener.accept(timeout: nil)) } catch { return .failure(error) }
                }
            }
            await poll { listener.waitingAcceptCount >= 3 }
            #expect(listener.waitingAcceptCount == 3, "round \(round)")
            // A client connects: served before the close (even rounds) or racing it (odd rounds).
            let client = Task { () -> TCPTransport? in try? await TCPTransport.connect(host: "127.0.0.1", port: port) }
            if round.isMultiple(of: 2) {
                await poll { listener.waitingAcceptCount <= 2 }
            }
            await listener.close()
            var connections: [any MdocTransport] = []
            for accept in accepts {
                switch await accept.value {
                case .success(let transport): connections.append(transport)
                case .failure(let error): #expect(error == .connectionClosed, "round \(round): \(error)")
                }
            }
            #expect(connections.count <= 1, "round \(round)")
            if round.isMultiple(of: 2) { #expect(connections.count == 1, "round \(round): the client was not served") }
            let connected = await client.value
            if let server = connections.first, let connected {
                try await connected.send([UInt8(round & 0xff)])
                #expect(try await server.receive(timeout: hangGuard) == [UInt8(round & 0xff)])
                try await server.send([0xAC])
                #expect(try await connected.receive(timeout: hangGuard) == [0xAC])
                served += 1
            } else if let connected {
                // Connected into the backlog, never accepted: the close ended it.
                await #expect(throws: ProximityError.self) { try await connected.receive(timeout: hangGuard) }
                refused += 1
            }
            for connection in connections { await connection.close() }
            await connected?.close()
            await #expect(throws: ProximityError.connectionClosed) { try await listener.accept(timeout: nil) }
        }
        #expect(served >= 15)   // every even round serves its client
        try await sentinelClient.send([1, 2, 3])
        #expect(try await sentinelServer.receive(timeout: hangGuard) == [1, 2, 3])
        try await sentinelServer.send([4])
        #expect(try await sentinelClient.receive(timeout: hangGuard) == [4])
        await sentinelClient.close()
        await sentinelServer.close()
        _ = refused
    }
}

/// Wraps a connector and counts its listeners that are still open.
final class CountingConnector: MdocTransportConnector {
    private let inner: any MdocTransportConnector
    private let open = LockedBox(0)

    init(_ inner: any MdocTransportConnector) { self.inner = inner }

    var openListeners: Int { open.withLock { $0 } }

    func canConnect(to endpoint: TransportEndpoint) -> Bool { inner.canConnect(to: endpoint) }

    func connect(to endpoint: TransportEndpoint, context: ConnectionContext, timeout: Duration?) async throws(ProximityError) -> any MdocTransport {
        try await inner.connect(to: endpoint, context: context, timeout: timeout)
    }

    func listen(context: ConnectionContext) async throws(ProximityError) -> any MdocTransportListener {
        let listener = try await inner.listen(context: context)
        open.withLock { $0 += 1 }
        return Listener(inner: listener, onClose: { [open] in open.withLock { $0 -= 1 } })
    }

    final class Listener: MdocTransportListener {
        let inner: any MdocTransportListener
        private let onClose: LockedBox<(@Sendable () -> Void)?>

        init(inner: any MdocTransportListener, onClose: @escaping @Sendable () -> Void) {
            self.inner = inner
            self.onClose = LockedBox(onClose)
        }

        var endpoint: TransportEndpoint { inner.endpoint }

        func accept(timeout: Duration?) async throws(ProximityError) -> any MdocTransport {
            try await inner.accept(timeout: timeout)
        }

        func close() async {
            await inner.close()
            let once = onClose.withLock { closure -> (@Sendable () -> Void)? in
                defer { closure = nil }
                return closure
            }
            once?()
        }
    }
}
