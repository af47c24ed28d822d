import Foundation
import Mdoc
import MdocProximity
import Testing
import WalletCrypto
#if canImport(SwiftUI)
import SwiftUI
#endif

#if canImport(SwiftUI)
// docs/proximity.md #2: SwiftUI, compiled where SwiftUI exists (not on Linux). The app's own views:
struct QRCodeImage: View { let text: String; var body: some View { Text(text) } }
struct SuspendedOverlay: View { var body: some View { EmptyView() } }
struct ConsentSheet: View {
    let request: DeviceRequest; let onShare: () -> Void; let onDecline: () -> Void
    var body: some View { EmptyView() }
}
struct ResultView: View { let outcome: TerminalOutcome?; let message: String?; var body: some View { EmptyView() } }
// snippet: docs/proximity.md#2
@available(iOS 17, macOS 14, *)
struct ShareView: View {
    let model: ProximityShareModel              // @Observable: the view follows what it reads
    let documents: any MdocDocumentProvider     // what the user agrees to release
    var body: some View {
        VStack {
            switch model.ui.phase {
            case .engagement:
                Text(model.ui.substateLabel)
                if let text = model.qrCodeText { QRCodeImage(text: text) }
                if model.ui.nfcMode == .foreground { Text("Hold near the reader") }
                if model.ui.nfcMode == .background { Image(systemName: "wave.3.right").opacity(0.5) }
                if model.ui.isSuspended { SuspendedOverlay() }
            case .transfer:
                if model.ui.userInteractionRequired, let parsed = model.ui.parseDeviceRequest() {
                    ConsentSheet(request: parsed, onShare: { Task { await model.share(using: documents) } },
                                 onDecline: { Task { await model.decline() } })
                } else if let progress = model.ui.progressHint {
                    ProgressView(value: Double(progress))       // 0.3 data received, 0.7 data sent
                } else {
                    ProgressView(model.ui.substateLabel)         // connecting: indeterminate
                }
            case .terminal:
                ResultView(outcome: model.ui.terminalOutcome, message: model.ui.terminalMessage)
            }
            if let error = model.lastError { Text(error.localizedDescription) }
        }
        .onDisappear { Task { await model.closeQr() } }    // closes the sheet; a started session goes on
    }
}
// end snippet
#endif

@Suite("docs/proximity.md examples")
struct ProximityDocSnippets {
    /// docs/proximity.md #3, compiled (a reader needs a holder to talk to: the proximity
    /// and wallet tests run the same calls).
    static func reader(bleConnector: BLEConnector, iacaRoots: [X509Certificate], scanned: String,
                       readerAuthKey: ReaderAuthenticationKey) async throws {
                           // snippet: docs/proximity.md#3
                           let reader = try MdocReader(connector: bleConnector, trustAnchors: iacaRoots)
                           try await reader.engage(qrCodeUri: scanned)                  // or engage(nfcHandoverSelect:)
                           let verified = try await reader.request([ItemsRequest(docType: "org.iso.18013.5.1.mDL",
                                                                                 nameSpaces: [NameSpaced("org.iso.18013.5.1", [RequestedElement("age_over_18", false)])])],
                                                                   readerKey: readerAuthKey)   // optional reader authentication
                           print(verified.documents[0].value(nameSpace: "org.iso.18013.5.1", identifier: "age_over_18") ?? "—")
                           await reader.end()
                           // end snippet
    }

    /// docs/proximity.md #4, compiled (MdocProximityTests' `ProximityExecutorTests` run a
    /// whole session this way and check where its jobs ran).
    static func executor(bleConnector: BLEConnector, documents: any MdocDocumentProvider) -> Task<Void, any Error> {
        // snippet: docs/proximity.md#4
        let manager = MdocEngagementManager(connector: bleConnector, executor: ProximityExecutor.shared)
        let consent = Task(executorPreference: ProximityExecutor.shared) {       // the app's side, on the same thread
            for await event in manager.eventHub.transferEvents {
                guard case .documentsSelectionProcessStart(let bytes) = event.kind else { continue }
                let transfer = manager.activeEngagement.current?.transferManager
                let request = try DeviceRequest(encoded: bytes)
                if let response = try await transfer?.createResponse(deviceRequest: request, documentProvider: documents) {
                    try await transfer?.sendDeviceResponse(response)
                }
                break
            }
        }
        // end snippet
        return consent
    }

    /// docs/proximity.md #1, compiled and run over the simulated BLE link.
    @MainActor
    static func shareModel(bleConnector: BLEConnector) async -> ProximityShareModel {
        // snippet: docs/proximity.md#1
        let manager = MdocEngagementManager(connector: bleConnector)   // a BLEConnector over your platform's BLERadio
        let model = ProximityShareModel(manager: manager)              // @Observable, on the main actor
        await model.showQr()                                           // model.qrCodeText, then model.ui follows the session
        // end snippet
        return model
    }

    @Test("the share model of docs/proximity.md shows a BLE QR code and follows its manager")
    @MainActor
    func shareModel() async throws {
        let air = SimulatedBLEAir()
        let model = await Self.shareModel(bleConnector: BLEConnector(party: .mdoc) { air.makeRadio() })
        #expect(model.lastError == nil)
        let text = try #require(model.manager.activeEngagement.current?.qrCodeUri)
        for await state in model.manager.eventHub.sessionState where state.qrCodePayload == text && state.qrMode == .display { break }
        while model.qrCodeText != text { await Task.yield() }   // the model's observer runs on this actor
        #expect(model.ui.phase == .engagement)
        #expect(try DeviceEngagement(uri: text).deviceRetrievalMethods.first.map(TransportEndpoint.init(retrievalMethod:))?.bleOptions != nil)
        await model.cancel()
        _ = Self.reader
    }
}
