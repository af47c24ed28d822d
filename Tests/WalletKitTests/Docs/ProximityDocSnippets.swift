import Foundation
import Mdoc
import MdocProximity
import Testing
import WalletCrypto
#if canImport(SwiftUI)
import SwiftUI
#endif

#if !canImport(Combine)
// Combine's names, for the share model of docs/proximity.md on platforms without Combine.
protocol ObservableObject: AnyObject {}
@propertyWrapper struct Published<Value> {
    var wrappedValue: Value
    init(wrappedValue: Value) { self.wrappedValue = wrappedValue }
}
#else
import Combine
#endif

// docs/proximity.md #1, compiled as written.
// snippet: docs/proximity.md#1
@MainActor
final class ShareModel: ObservableObject {
    @Published private(set) var ui = SessionUiState.idle
    let manager = MdocEngagementManager(connector: TCPConnector())   // your BLE connector on a device
    private let documents: any MdocDocumentProvider
    private var observer: Task<Void, Never>?

    init(documents: any MdocDocumentProvider) {
        self.documents = documents
        observer = Task { [manager] in
            for await state in manager.eventHub.sessionState {
                self.ui = state                      // one collector, routed by phase in the view
            }
        }
    }

    func showQr() async throws { try await manager.createEngagement(.qr) }

    func scanned(readerUri: String) async throws {
        try await manager.createEngagement(.toApp, config: EngagementConfig().with(readerEngagementUri: readerUri))
    }

    func share() async throws {
        guard let bytes = ui.deviceRequest,
              let transfer = manager.activeEngagement.current?.transferManager else { return }
        let request = try DeviceRequest(encoded: bytes)
        let response = try await transfer.createResponse(deviceRequest: request, documentProvider: documents)
        try await transfer.sendDeviceResponse(response)   // ends the session with status 20
    }

    func decline() async { try? await manager.activeEngagement.current?.transferManager?.decline() }
}
// end snippet

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
struct ShareView: View {
    @ObservedObject var model: ShareModel
    var body: some View {
        switch model.ui.phase {
        case .engagement:
            VStack {
                Text(model.ui.substateLabel)
                if model.ui.qrMode == .display, let uri = model.manager.activeEngagement.current?.qrCodeUri {
                    QRCodeImage(text: uri)
                }
                if model.ui.nfcMode == .foreground { Text("Hold near the reader") }
                if model.ui.nfcMode == .background { Image(systemName: "wave.3.right").opacity(0.5) }
            }
            .overlay { if model.ui.isSuspended { SuspendedOverlay() } }
        case .transfer:
            if model.ui.userInteractionRequired, let parsed = model.ui.parseDeviceRequest() {
                ConsentSheet(request: parsed, onShare: { Task { try await model.share() } },
                             onDecline: { Task { await model.decline() } })
            } else if let progress = model.ui.progressHint {
                ProgressView(value: Double(progress))           // 0.3 data received, 0.7 data sent
            } else {
                ProgressView(model.ui.substateLabel)             // connecting: indeterminate
            }
        case .terminal:
            ResultView(outcome: model.ui.terminalOutcome, message: model.ui.terminalMessage)
        }
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

    @Test("the share model starts idle and follows its manager")
    @MainActor
    func shareModel() async throws {
        let model = ShareModel(documents: StaticDocumentProvider(documents: [], signer: SoftwareSigner(try ECPrivateKey.generate(curve: .p256)),
                                                                 consent: { _ in .nothing }))
        #expect(model.ui == .idle)
        _ = Self.reader
    }
}
