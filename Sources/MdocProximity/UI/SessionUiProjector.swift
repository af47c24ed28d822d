/// What the projector needs to know about the manager's engagements to compute
/// NFC mode, QR mode and suspension.
public struct EngagementContext: Hashable, Sendable {
    /// One engagement as the projector sees it.
    public struct Entry: Hashable, Sendable {
        /// How it was made.
        public var type: EngagementType
        /// Whether it is suspended.
        public var isSuspended: Bool
        /// For a QR engagement: the `mdoc:` URI its code shows.
        public var qrCodeData: String?

        /// Creates an entry.
        public init(type: EngagementType, isSuspended: Bool = false, qrCodeData: String? = nil) {
            self.type = type
            self.isSuspended = isSuspended
            self.qrCodeData = qrCodeData
        }
    }

    /// Every open engagement.
    public var engagements: [EngagementID: Entry]
    /// The active engagement, if any.
    public var activeId: EngagementID?

    /// Creates a context.
    public init(engagements: [EngagementID: Entry] = [:], activeId: EngagementID? = nil) {
        self.engagements = engagements
        self.activeId = activeId
    }
}

/// Turns raw engagement and retrieval events into ``SessionEvent``s and folds
/// them into one ``SessionUiState`` for the active engagement. A value with no
/// I/O: feed it events and a context, read the state.
///
/// Rules: the phase moves engagement → transfer → terminal and never back for an
/// engagement; `qrMode` is `.display` only while a QR engagement is active and in
/// its engagement phase (never `.scan`); `nfcMode` is `.disabled` without an NFC
/// engagement, `.foreground` when NFC is active and `.background` otherwise;
/// `isSuspended` mirrors the active engagement's suspension; progress is 0.3
/// after data was received and 0.7 after data was sent.
public struct SessionUiProjector: Sendable {
    /// The per-engagement part of the state (everything but the modes).
    struct Progress: Equatable, Sendable {
        var phase: UiPhase
        var label: SessionUiLabel
        var progressHint: Float?
        var outcome: TerminalOutcome?
        var reason: TerminalReason?
        var userInteractionRequired = false
        var deviceRequest: [UInt8]?
        var qrCodeData: String?
    }

    private var progress: [EngagementID: Progress] = [:]
    /// The engagements and which one is active.
    public private(set) var context = EngagementContext()

    /// A projector with no engagements.
    public init() {}

    /// The simplified event for a raw event, given the type of its engagement.
    public static func sessionEvent(for event: MdocEvent, engagementType: EngagementType?) -> SessionEvent? {
        switch event {
        case .engagement(let event):
            switch event.kind {
            case .qrShow(let data): return .qrShow(qrCodeData: data)
            case .nfcEngagement: return .nfcPromptShown
            case .connecting: return .transferConnecting
            case .connected: return engagementType == .nfc ? .nfcHandoverSuccess : .transferConnected
            case .suspended, .resumed, .closed: return nil
            case .disconnected: return .terminal(outcome: .canceled, reason: .disconnected)
            case .error(let error): return .terminal(outcome: .error, reason: .failed(error))
            }
        case .transfer(let event):
            switch event.kind {
            case .transmissionTypeSelected: return .transferConnecting
            case .connected: return .transferConnected
            case .sessionDataReceived: return .transferProgress(fraction: 0.3)
            case .documentsSelectionProcessStart(let data): return .userInteractionRequired(deviceRequest: data)
            case .documentsSelectionProcessAccepted: return .userAccepted
            case .documentsSelectionProcessDeclined: return .userDeclined
            case .sessionDataSend: return .transferProgress(fraction: 0.7)
            case .sessionTerminationSend:
                return .terminal(outcome: .success, reason: .transferCompleted)
            case .sessionTerminationReceived(let afterResponse):
                return afterResponse
                    ? .terminal(outcome: .success, reason: .transferCompleted)
                    : .terminal(outcome: .canceled, reason: .readerEnded)
            case .cancelled: return .terminal(outcome: .canceled, reason: .canceledByApp)
            case .error(let error): return .terminal(outcome: .error, reason: .failed(error))
            }
        }
    }

    /// Replaces the engagement context (engagements created, closed, activated,
    /// suspended). Engagements that left the context lose their progress.
    public mutating func update(context: EngagementContext) {
        self.context = context
        progress = progress.filter { context.engagements[$0.key] != nil }
    }

    /// Applies a raw event and returns the simplified event it mapped to, if any.
    @discardableResult
    public mutating func apply(_ event: MdocEvent) -> SessionEvent? {
        let id = event.engagementId
        let type = context.engagements[id]?.type
        guard let sessionEvent = Self.sessionEvent(for: event, engagementType: type) else { return nil }
        // An engagement-level disconnect only ends a session that was transferring.
        if case .engagement(let raw) = event, case .disconnected = raw.kind,
           progress(for: id).phase != .transfer { return nil }
        apply(sessionEvent, to: id)
        return sessionEvent
    }

    /// Applies a simplified event to one engagement's progress.
    public mutating func apply(_ event: SessionEvent, to id: EngagementID) {
        var current = progress(for: id)
        guard current.phase != .terminal else { return }   // terminal is final
        switch event {
        case .qrShow(let data):
            guard current.phase == .engagement else { return }
            current.label = .scanQr
            current.qrCodeData = data
        case .nfcPromptShown:
            guard current.phase == .engagement else { return }
            current.label = .holdNearReader
        case .nfcHandoverSuccess, .transferConnecting:
            current.phase = .transfer
            current.label = .connecting
            current.progressHint = nil
        case .transferConnected:
            current.phase = .transfer
            current.label = .connected
        case .userInteractionRequired(let request):
            current.phase = .transfer
            current.label = .reviewRequest
            current.userInteractionRequired = true
            current.deviceRequest = request
            current.progressHint = nil
        case .userAccepted:
            current.label = .sharing
            current.userInteractionRequired = false
            current.deviceRequest = nil
        case .userDeclined:
            current = Self.terminal(.declined, reason: .userDeclined)
        case .transferProgress(let fraction):
            current.phase = .transfer
            current.label = .transferring
            current.progressHint = min(max(fraction, 0), 1)
            current.userInteractionRequired = false
            current.deviceRequest = nil
        case .terminal(let outcome, let reason):
            current = Self.terminal(outcome, reason: reason)
        }
        progress[id] = current
    }

    /// Forgets one engagement's progress (it starts over from its initial state).
    public mutating func reset(_ id: EngagementID) { progress[id] = nil }

    /// Forgets every engagement's progress.
    public mutating func resetAll() { progress.removeAll() }

    /// The UI state of the active engagement (``SessionUiState/idle`` without one).
    public var state: SessionUiState {
        let nfcMode: NfcMode
        if let active = context.activeId, context.engagements[active]?.type == .nfc {
            nfcMode = .foreground
        } else if context.engagements.values.contains(where: { $0.type == .nfc }) {
            nfcMode = .background
        } else {
            nfcMode = .disabled
        }
        guard let active = context.activeId, let entry = context.engagements[active] else {
            var idle = SessionUiState.idle
            idle.nfcMode = nfcMode
            return idle
        }
        let current = progress(for: active)
        let showsQr = entry.type == .qr && current.phase == .engagement
        return SessionUiState(
            phase: current.phase, substate: current.label, nfcMode: nfcMode,
            qrMode: showsQr ? .display : .none,
            isSuspended: entry.isSuspended, progressHint: current.progressHint,
            terminalOutcome: current.outcome, terminalReason: current.reason,
            userInteractionRequired: current.userInteractionRequired, deviceRequest: current.deviceRequest,
            engagementId: active, qrCodePayload: showsQr ? (current.qrCodeData ?? entry.qrCodeData) : nil)
    }

    private func progress(for id: EngagementID) -> Progress {
        if let existing = progress[id] { return existing }
        let label: SessionUiLabel
        switch context.engagements[id]?.type {
        case .qr: label = .preparingQr
        case .nfc: label = .preparingNfc
        case .toApp: label = .preparingToApp
        case nil: label = .idle
        }
        return Progress(phase: .engagement, label: label)
    }

    private static func terminal(_ outcome: TerminalOutcome, reason: TerminalReason) -> Progress {
        let label: SessionUiLabel
        switch outcome {
        case .success: label = .completed
        case .declined: label = .declined
        case .canceled: label = .canceled
        case .error: label = .failed
        }
        return Progress(phase: .terminal, label: label, outcome: outcome, reason: reason)
    }
}
