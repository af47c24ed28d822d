#if canImport(Observation)
import Mdoc
import Observation
import Testing
@testable import MdocProximity

/// Waits, on the main actor, until `condition` holds for `model`: re-checked after each
/// change Observation reports (no polling, no sleeps).
@MainActor
func until(_ model: ProximityShareModel, _ condition: @escaping @MainActor (ProximityShareModel) -> Bool) async {
    while !condition(model) {
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            withObservationTracking { _ = condition(model) } onChange: { continuation.resume() }
        }
    }
}

/// Issue 17 item 6: the `@MainActor` observable model a SwiftUI screen binds to.
@Suite("ProximityShareModel: the observable share screen model")
@MainActor
struct ProximityShareModelTests {
    @Test("the model follows a QR session over BLE: QR text, consent, share, SUCCESS; the reader gets the elements")
    func qrSessionThroughTheModel() async throws {
        let fixtures = try await SessionFixtures.make()
        let (holder, readerSide) = Carrier.blePeripheralServer.connectors()
        let model = ProximityShareModel(manager: MdocEngagementManager(connector: holder))
        #expect(model.ui == .idle)
        await model.showQr(config: testConfig)
        #expect(model.lastError == nil)
        await until(model) { $0.qrCodeText != nil }
        let uri = try #require(model.qrCodeText)
        #expect(model.activeEngagement?.qrCodeUri == uri)
        let reader = try MdocReader(connector: readerSide, trustAnchors: [fixtures.iaca], messageTimeout: hangGuard)
        let verified = Task {
            try await reader.engage(qrCodeUri: uri)
            return try await reader.request([SessionFixtures.request()])
        }
        await until(model) { $0.ui.userInteractionRequired }
        #expect(model.ui.parseDeviceRequest()?.docRequests.first?.itemsRequest.docType == SessionFixtures.mDL)
        await model.share(using: fixtures.provider)
        #expect(model.lastError == nil)
        let document = try #require(try await verified.value.documents.first)
        #expect(document.value(nameSpace: SessionFixtures.nameSpace, identifier: "family_name") == "Doe")
        await until(model) { $0.ui.isTerminal }
        #expect(model.ui.terminalOutcome == .success)
        #expect(model.qrCodeText == nil)
        await model.cancel()
        await until(model) { $0.ui == .idle }
    }

    @Test("actions without a request fail into lastError with a typed, displayable error")
    func actionsWithoutARequest() async throws {
        let fixtures = try await SessionFixtures.make()
        let model = ProximityShareModel(manager: MdocEngagementManager(connector: InMemoryTransport.Exchange()))
        await model.share(using: fixtures.provider)
        #expect(model.lastError == .invalidState(.noRequestPending))
        #expect(model.lastError?.errorDescription?.isEmpty == false)
        await model.decline()
        #expect(model.lastError == .invalidState(.noRequestPending))
        await model.connect(toScannedReader: "not an engagement")
        #expect(model.lastError == .invalidEngagement(.invalidURI))
        await model.showQr(config: testConfig)
        #expect(model.lastError == nil)   // each action clears the last failure
        await model.cancel()
    }

    @Test("a released model is deallocated: its observers hold it weakly and end with it")
    func releasedModelIsFreed() async throws {
        let manager = MdocEngagementManager(connector: InMemoryTransport.Exchange())
        weak var released: ProximityShareModel?
        do {
            let model = ProximityShareModel(manager: manager)
            released = model
            await model.showQr(config: testConfig)
            await until(model) { $0.qrCodeText != nil }
        }
        #expect(released == nil)
        await manager.closeAll()
    }
}
#endif
