/// The high-level phase of a proximity session.
public enum UiPhase: String, Hashable, Sendable {
    /// QR shown, NFC waiting, reverse engagement starting.
    case engagement
    /// Connecting, exchanging data, waiting for the user's consent.
    case transfer
    /// Finished: see ``SessionUiState/terminalOutcome``.
    case terminal
}

/// How a session ended, for the feedback a UI gives.
public enum TerminalOutcome: String, Hashable, Sendable {
    /// Documents were shared.
    case success
    /// The user declined to share.
    case declined
    /// The reader or the app ended the session before documents were shared.
    case canceled
    /// Something failed.
    case error
}

/// Why a session ended, in more detail than ``TerminalOutcome``; ``text`` is the
/// localized sentence a UI shows.
public enum TerminalReason: Equatable, Sendable {
    /// The response was sent and the session ended.
    case transferCompleted
    /// The user declined.
    case userDeclined
    /// The reader ended the session before a response.
    case readerEnded
    /// The app cancelled the session.
    case canceledByApp
    /// The carrier disconnected during the transfer.
    case disconnected
    /// It failed with this error.
    case failed(ProximityError)

    /// The localized sentence (English by default).
    public var text: String {
        switch self {
        case .transferCompleted: return ProximityStrings.text("terminal.transferCompleted", "Transfer completed successfully")
        case .userDeclined: return ProximityStrings.text("terminal.userDeclined", "User declined to share data")
        case .readerEnded: return ProximityStrings.text("terminal.readerEnded", "The reader ended the session")
        case .canceledByApp: return ProximityStrings.text("terminal.canceledByApp", "The session was canceled")
        case .disconnected: return ProximityStrings.text("terminal.disconnected", "Disconnected")
        case .failed(let error): return error.localizedMessage
        }
    }
}

/// Whether an NFC engagement exists and whether it is the active one.
public enum NfcMode: String, Hashable, Sendable {
    /// No NFC engagement exists.
    case disabled
    /// An NFC engagement exists but another engagement is active.
    case background
    /// The NFC engagement is the active engagement.
    case foreground
}

/// What the QR area of the screen shows.
public enum QrMode: String, Hashable, Sendable {
    /// No QR to show.
    case none
    /// The active QR engagement's code is to be shown (``SessionUiState/qrCodePayload``).
    case display
    /// The app scans a reader's QR (reverse engagement). Managed by the app: the
    /// projector never sets it.
    case scan
}

/// The one value a share screen binds to: a deterministic projection of the
/// active engagement's events (see ``SessionUiProjector``).
public struct SessionUiState: Equatable, Sendable {
    /// The phase.
    public var phase: UiPhase
    /// The current step, as a key of the strings table.
    public var substate: SessionUiLabel
    /// NFC presence and focus.
    public var nfcMode: NfcMode
    /// QR display.
    public var qrMode: QrMode
    /// Whether the active engagement is suspended.
    public var isSuspended: Bool
    /// Progress in 0...1 while data moves; `nil` during set-up (show an indeterminate indicator).
    public var progressHint: Float?
    /// How the session ended, in the terminal phase.
    public var terminalOutcome: TerminalOutcome?
    /// Why it ended, in the terminal phase.
    public var terminalReason: TerminalReason?
    /// Whether the user must accept or decline the request now.
    public var userInteractionRequired: Bool
    /// The CBOR-encoded DeviceRequest to review, while ``userInteractionRequired``.
    public var deviceRequest: [UInt8]?
    /// The engagement this state describes (the active one), if any.
    public var engagementId: EngagementID?
    /// The `mdoc:` URI to render as a QR code, while ``qrMode`` is `.display`.
    public var qrCodePayload: String?

    /// Creates a state.
    public init(phase: UiPhase, substate: SessionUiLabel, nfcMode: NfcMode = .disabled, qrMode: QrMode = .none,
                isSuspended: Bool = false, progressHint: Float? = nil, terminalOutcome: TerminalOutcome? = nil,
                terminalReason: TerminalReason? = nil, userInteractionRequired: Bool = false, deviceRequest: [UInt8]? = nil,
                engagementId: EngagementID? = nil, qrCodePayload: String? = nil) {
        self.phase = phase
        self.substate = substate
        self.nfcMode = nfcMode
        self.qrMode = qrMode
        self.isSuspended = isSuspended
        self.progressHint = progressHint
        self.terminalOutcome = terminalOutcome
        self.terminalReason = terminalReason
        self.userInteractionRequired = userInteractionRequired
        self.deviceRequest = deviceRequest
        self.engagementId = engagementId
        self.qrCodePayload = qrCodePayload
    }

    /// The state before any engagement exists.
    public static let idle = SessionUiState(phase: .engagement, substate: .idle)

    /// A short label for the current step ("Connecting…", "Review request", ...), localized.
    public var substateLabel: String { substate.text }

    /// Details on how the session ended, localized.
    public var terminalMessage: String? { terminalReason?.text }

    /// Whether the session has finished.
    public var isTerminal: Bool { phase == .terminal }
}

/// The steps the projector names in ``SessionUiState/substate``; each is a key of the
/// module's strings table (`Localizable.strings`, English by default).
public enum SessionUiLabel: String, Hashable, Sendable, CaseIterable {
    /// No engagement.
    case idle
    /// A QR engagement before its code is shown.
    case preparingQr
    /// An NFC engagement before it is ready for a tap.
    case preparingNfc
    /// A reverse engagement before it connects.
    case preparingToApp
    /// The QR code is shown.
    case scanQr
    /// The NFC engagement waits for a tap.
    case holdNearReader
    /// Connecting.
    case connecting
    /// Connected.
    case connected
    /// Waiting for consent.
    case reviewRequest
    /// After consent.
    case sharing
    /// Data moving.
    case transferring
    /// Terminal, success.
    case completed
    /// Terminal, declined.
    case declined
    /// Terminal, canceled.
    case canceled
    /// Terminal, error.
    case failed

    /// The English text, used when the strings table has no entry.
    public var defaultText: String {
        switch self {
        case .idle: return "Ready"
        case .preparingQr: return "Preparing QR code"
        case .preparingNfc: return "Preparing NFC"
        case .preparingToApp: return "Starting engagement"
        case .scanQr: return "Scan the QR with reader"
        case .holdNearReader: return "Hold near reader"
        case .connecting: return "Connecting…"
        case .connected: return "Connected"
        case .reviewRequest: return "Review request"
        case .sharing: return "Sharing credentials…"
        case .transferring: return "Transferring…"
        case .completed: return "Completed"
        case .declined: return "Declined"
        case .canceled: return "Canceled"
        case .failed: return "Failed"
        }
    }

    /// The localized text.
    public var text: String { ProximityStrings.text("label.\(rawValue)", defaultText) }
}

/// The simplified events that drive ``SessionUiState``, mapped from raw hub events.
public enum SessionEvent: Equatable, Sendable {
    /// The QR code is shown (from ``MdocEngagementEvent/Kind/qrShow(qrCodeData:)``).
    case qrShow(qrCodeData: String)
    /// The NFC prompt is shown (from ``MdocEngagementEvent/Kind/nfcEngagement``).
    case nfcPromptShown
    /// An NFC handover succeeded (engagement `connected` on an NFC engagement).
    case nfcHandoverSuccess
    /// The transfer is connecting (engagement `connecting` or transfer `transmissionTypeSelected`).
    case transferConnecting
    /// The transfer is connected (engagement `connected` off NFC, or transfer `connected`).
    case transferConnected
    /// The user must review the DeviceRequest (CBOR bytes).
    case userInteractionRequired(deviceRequest: [UInt8])
    /// The user accepted.
    case userAccepted
    /// The user declined.
    case userDeclined
    /// Progress: 0.3 when data was received, 0.7 when data was sent.
    case transferProgress(fraction: Float)
    /// The session ended.
    case terminal(outcome: TerminalOutcome, reason: TerminalReason)
}
