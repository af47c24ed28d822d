import Foundation
import Mdoc
import MdocProximity
import Testing
import WalletCrypto
import WalletKit
import WalletRuntime
#if canImport(UIKit)
import UIKit
#endif

#if !canImport(UIKit)
// The few UIKit names the specification's view controllers use, so that they compile
// (and run) where UIKit does not exist. Labels report what they show.
@MainActor class UIView {
    var isHidden = false
    var alpha: Double = 1
}
@MainActor final class UILabel: UIView {
    let shown = StateStream<String?>(initial: nil)
    var text: String? { didSet { shown.send(text) } }
}
@MainActor final class UIProgressView: UIView { var progress: Float = 0 }
@MainActor final class UIActivityIndicatorView: UIView {
    func startAnimating() {}
    func stopAnimating() {}
}
@MainActor class UIViewController {
    func viewDidLoad() {}
    func present(_ viewController: UIViewController, animated: Bool) {}
}
#endif

// The specification's "iOS/Swift" example, as written there.
// spec: proximity-events-and-ui.txt
class WalletViewController: UIViewController {
    private var manager: MdocEngagementManager!
    private var stateObserver: Task<Void, Never>?

    override func viewDidLoad() {
        super.viewDidLoad()

        // Observe session state using Kotlin Flow adapter
        stateObserver = Task {
            for await state in manager.eventHub.sessionState {
                await updateUI(state: state)
            }
        }
    }

    deinit {
        stateObserver?.cancel()
    }

    @MainActor
    private func updateUI(state: SessionUiState) {
        switch state.phase {
        case .engagement:
            handleEngagement(state: state)
        case .transfer:
            handleTransfer(state: state)
        case .terminal:
            handleTerminal(state: state)
        }
    }

    private func handleEngagement(state: SessionUiState) {
        statusLabel.text = state.substateLabel

        // Handle QR mode
        switch state.qrMode {
        case .display:
            qrCodeView.isHidden = false
        case .none, .scan:
            qrCodeView.isHidden = true
        }

        // Handle NFC mode
        switch state.nfcMode {
        case .disabled:
            nfcPromptView.isHidden = true
            nfcIcon.isHidden = true
        case .background:
            nfcPromptView.isHidden = true
            nfcIcon.isHidden = false
            nfcIcon.alpha = 0.5
        case .foreground:
            nfcPromptView.isHidden = false
            nfcIcon.isHidden = false
            nfcIcon.alpha = 1.0
        }

        // Handle suspension
        if state.isSuspended {
            overlayView.isHidden = false
            statusLabel.text = "Suspended - another session active"
        }
    }

    private func handleTransfer(state: SessionUiState) {
        statusLabel.text = state.substateLabel
        qrCodeView.isHidden = true

        if state.userInteractionRequired {
            showConsentSheet(deviceRequest: state.deviceRequest!)
        } else if let progress = state.progressHint {
            progressView.progress = progress
            progressView.isHidden = false
        } else {
            activityIndicator.startAnimating()
        }
    }

    private func handleTerminal(state: SessionUiState) {
        activityIndicator.stopAnimating()

        switch state.terminalOutcome {
        case .success:
            showAlert(title: "Success!", message: "Data shared successfully")
        case .declined:
            showAlert(title: "Declined", message: "You chose not to share")
        case .canceled:
            showAlert(title: "Canceled", message: state.terminalMessage ?? "Session canceled")
        case .error:
            showAlert(title: "Error", message: state.terminalMessage ?? "An error occurred")
        default:
            break
        }
    }
}
// end spec

/// The host app's own parts of the example: its outlets and dialogs, and how it gets its manager.
extension WalletViewController {
    static let statusLabel = UILabel()
    static let alerts = StateStream<String?>(initial: nil)
    var statusLabel: UILabel { Self.statusLabel }
    var qrCodeView: UIView { UIView() }
    var nfcPromptView: UIView { UIView() }
    var nfcIcon: UIView { UIView() }
    var overlayView: UIView { UIView() }
    var progressView: UIProgressView { UIProgressView() }
    var activityIndicator: UIActivityIndicatorView { UIActivityIndicatorView() }
    func showConsentSheet(deviceRequest: [UInt8]) {}
    func showAlert(title: String, message: String) { Self.alerts.send(title) }
    func attach(_ manager: MdocEngagementManager) { self.manager = manager }
}

#if canImport(UIKit)
// The specification's "Pattern 3" example: `@IBAction` methods without arguments are an
// iOS dialect, so it compiles where UIKit exists (not on Linux).
// spec: proximity-events-and-ui.txt
class ShareViewController: UIViewController {
    private var isScanning = false

    override func viewDidLoad() {
        super.viewDidLoad()

        // No NFC on iOS holder - state.nfcMode will always be DISABLED

        // Observe session state
        Task {
            for await state in manager.eventHub.sessionState {
                await MainActor.run {
                    // NFC always disabled
                    nfcIcon.isHidden = true

                    // Handle engagement-driven QR display
                    if state.qrMode == .display {
                        showQrCodeView()
                    } else if !isScanning {
                        hideQrView()
                    }
                }
            }
        }
    }

    @IBAction func showQrPressed() {
        // Create QR engagement to display QR code
        Task {
            try await manager.createEngagement(type: .QR, config: qrConfig)
            // state.qrMode will become DISPLAY
        }
    }

    @IBAction func scanQrPressed() {
        // Open scanner (UI-managed, before engagement)
        isScanning = true
        showQrScanner { [weak self] scannedUri in
            guard let self = self else { return }
            self.isScanning = false

            // NOW create TO_APP engagement with scanned URI
            Task {
                try await self.manager.createEngagement(
                    type: .TO_APP,
                    config: self.toAppConfig.copy(readerEngagementUri: scannedUri)
                )
                // state.qrMode stays NONE (no QR to display)
            }
        }
    }

    private func showQrScanner(onScan: @escaping (String) -> Void) {
        // Show camera-based QR scanner
        let scanner = QRScannerViewController()
        scanner.onScanComplete = onScan
        present(scanner, animated: true)
    }
}
// end spec

extension ShareViewController {
    static let sharedManager = MdocEngagementManager(connector: TCPConnector())
    var manager: MdocEngagementManager { Self.sharedManager }
    var qrConfig: EngagementConfig { EngagementConfig() }
    var toAppConfig: EngagementConfig { EngagementConfig() }
    var nfcIcon: UIView { UIView() }
    func showQrCodeView() {}
    func hideQrView() {}
}
final class QRScannerViewController: UIViewController { var onScanComplete: ((String) -> Void)? }
#endif

#if !canImport(UIKit)
@Suite("The proximity specification's Swift example, against Wallet", .timeLimit(.minutes(15)))
struct ProximitySpecSnippets {
    @Test("the view controller follows wallet.proximity: the QR label, then the outcome of a declined session")
    @MainActor
    func viewController() async throws {
        let reader = try TestReader.make()
        let wallet = try await Wallet(config: WalletConfig(storage: .inMemory, proximity: ProximityConfig(connector: reader.holderConnector)))
        let controller = WalletViewController()
        controller.attach(wallet.proximity)
        var labels = WalletViewController.statusLabel.shown.states.makeAsyncIterator()
        var alerts = WalletViewController.alerts.states.makeAsyncIterator()
        controller.viewDidLoad()
        let engagement = try await wallet.proximity.createEngagement(type: .QR, config: wallet.engagementConfig)
        while let label = await labels.next() { if label == "Scan the QR with reader" { break } }
        let session = try MdocReader(connector: BLEConnector(party: .reader, modes: [.peripheralServer]) { [air = reader.air] in air.makeRadio() },
                                     trustAnchors: [])
        try await session.engage(qrCodeUri: engagement.qrCodeUri ?? "")
        let requesting = Task {
            try await session.request([ItemsRequest(docType: "org.iso.18013.5.1.mDL", nameSpaces: [NameSpaced("org.iso.18013.5.1", [RequestedElement("age_over_18", false)])])])
        }
        // The user declines on the consent sheet.
        for await state in wallet.proximity.eventHub.sessionState where state.userInteractionRequired {
            try await wallet.proximity.activeEngagement.current?.transferManager?.decline()
            break
        }
        _ = try? await requesting.value
        while let alert = await alerts.next() { if alert == "Declined" { break } }
        await wallet.proximity.closeAll()
    }
}
#endif
