#if canImport(Observation)
import Mdoc
import Observation

/// What a SwiftUI share screen binds to: the manager's ``SessionUiState`` and active
/// engagement as Observation properties on the main actor, and the screen's actions.
///
/// ```swift
/// @State private var model = ProximityShareModel(manager: wallet.proximity)
/// var body: some View { ShareView(ui: model.ui, onShare: { Task { await model.share(using: provider) } }) }
/// ```
///
/// The model follows the manager's streams from its creation until it is released: its
/// observers hold it weakly and are cancelled when it goes, so a screen that closes
/// releases everything it opened. Actions never throw into a button handler: a failure
/// lands in ``lastError`` (a ``ProximityError``, whose `localizedDescription` is fit to
/// show) and the session's own end is in ``ui``.
@available(macOS 14, iOS 17, tvOS 17, watchOS 10, *)
@MainActor @Observable
public final class ProximityShareModel {
    /// The manager whose engagements this model shows.
    public let manager: MdocEngagementManager
    /// The state to render: phase, label, QR/NFC modes, consent, outcome.
    public private(set) var ui: SessionUiState
    /// The engagement on screen (its QR code, its transfer), if any.
    public private(set) var activeEngagement: MdocEngagement?
    /// The last action that failed, until the next action starts.
    public private(set) var lastError: ProximityError?

    @ObservationIgnored private var observers: [Task<Void, Never>] = []

    /// A model following `manager` from now on.
    public init(manager: MdocEngagementManager) {
        self.manager = manager
        self.ui = manager.eventHub.currentSessionState
        self.activeEngagement = manager.activeEngagement.current
        let states = manager.eventHub.sessionState, engagements = manager.activeEngagement
        observers = [
            Task { [weak self] in
                for await state in states {
                    guard let self else { return }
                    self.ui = state
                }
            },
            Task { [weak self] in
                for await engagement in engagements {
                    guard let self else { return }
                    self.activeEngagement = engagement
                }
            },
        ]
    }

    deinit {
        for observer in observers { observer.cancel() }
    }

    /// The text of the QR code to show, while one is shown.
    public var qrCodeText: String? { ui.qrMode == .display ? ui.qrCodePayload : nil }

    /// Shows a QR code for a reader to scan (device engagement by QR).
    public func showQr(config: EngagementConfig = EngagementConfig()) async {
        await create(.qr, config: config)
    }

    /// Connects to a reader whose engagement QR code the app scanned (reverse engagement).
    public func connect(toScannedReader readerEngagementUri: String, config: EngagementConfig = EngagementConfig()) async {
        await create(.toApp, config: config.with(readerEngagementUri: readerEngagementUri))
    }

    /// Arms NFC engagement (it then stays armed for the app's lifetime).
    public func armNfc(config: EngagementConfig = EngagementConfig()) async {
        await create(.nfc, config: config)
    }

    /// Answers the request on screen with what `documentProvider` selects and releases;
    /// the session then ends with status 20.
    public func share(using documentProvider: any MdocDocumentProvider) async {
        lastError = nil
        guard let transfer = activeEngagement?.transferManager, let request = await transfer.deviceRequest else {
            lastError = .invalidState(.noRequestPending)
            return
        }
        do throws(ProximityError) {
            let response = try await transfer.createResponse(deviceRequest: request, documentProvider: documentProvider)
            try await transfer.sendDeviceResponse(response)
        } catch {
            lastError = error
        }
    }

    /// Declines the request on screen.
    public func decline() async {
        lastError = nil
        guard let transfer = activeEngagement?.transferManager else {
            lastError = .invalidState(.noRequestPending)
            return
        }
        do throws(ProximityError) { try await transfer.decline() } catch { lastError = error }
    }

    /// Closes the QR sheet; a session a reader already started goes on.
    public func closeQr() async {
        lastError = nil
        await manager.closeQrEngagement()
    }

    /// Ends everything on screen: the session in progress ends CANCELED (a request
    /// waiting for consent is declined).
    public func cancel() async {
        lastError = nil
        await manager.closeAll()
    }

    private func create(_ type: EngagementType, config: EngagementConfig) async {
        lastError = nil
        do throws(ProximityError) { try await manager.createEngagement(type, config: config) } catch { lastError = error }
    }
}
#endif
