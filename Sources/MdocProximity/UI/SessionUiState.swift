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
    /// The active QR engagement's code is to be shown.
    case display
    /// The app scans a reader's QR (reverse engagement). Managed by the app: the
    /// projector never sets it.
    case scan
}

/// The one value a share screen binds to: a deterministic projection of the
/// active engagement's events (see ``SessionUiProjector``).
public struct SessionUiState: Hashable, Sendable {
    /// The phase.
    public var phase: UiPhase
    /// A short label for the current step ("Connecting…", "Review request", ...).
    public var substateLabel: String
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
    /// Details on how the session ended.
    public var terminalMessage: String?
    /// Whether the user must accept or decline the request now.
    public var userInteractionRequired: Bool
    /// The CBOR-encoded DeviceRequest to review, while ``userInteractionRequired``.
    public var deviceRequest: [UInt8]?

    /// Creates a state.
    public init(phase: UiPhase, substateLabel: String, nfcMode: NfcMode = .disabled, qrMode: QrMode = .none,
                isSuspended: Bool = false, progressHint: Float? = nil, terminalOutcome: TerminalOutcome? = nil,
                terminalMessage: String? = nil, userInteractionRequired: Bool = false, deviceRequest: [UInt8]? = nil) {
        self.phase = phase
        self.substateLabel = substateLabel
        self.nfcMode = nfcMode
        self.qrMode = qrMode
        self.isSuspended = isSuspended
        self.progressHint = progressHint
        self.terminalOutcome = terminalOutcome
        self.terminalMessage = terminalMessage
        self.userInteractionRequired = userInteractionRequired
        self.deviceRequest = deviceRequest
    }

    /// The state before any engagement exists.
    public static let idle = SessionUiState(phase: .engagement, substateLabel: SessionUiLabel.idle)

    /// Whether the session has finished.
    public var isTerminal: Bool { phase == .terminal }
}

/// The labels the projector puts in ``SessionUiState/substateLabel``.
public enum SessionUiLabel {
    /// No engagement.
    public static let idle = "Ready"
    /// A QR engagement before its code is shown.
    public static let preparingQr = "Preparing QR code"
    /// An NFC engagement before it is ready for a tap.
    public static let preparingNfc = "Preparing NFC"
    /// A reverse engagement before it connects.
    public static let preparingToApp = "Starting engagement"
    /// The QR code is shown.
    public static let scanQr = "Scan the QR with reader"
    /// The NFC engagement waits for a tap.
    public static let holdNearReader = "Hold near reader"
    /// Connecting.
    public static let connecting = "Connecting…"
    /// Connected.
    public static let connected = "Connected"
    /// Waiting for consent.
    public static let reviewRequest = "Review request"
    /// After consent.
    public static let sharing = "Sharing credentials…"
    /// Data moving.
    public static let transferring = "Transferring…"
    /// Terminal, success.
    public static let completed = "Completed"
    /// Terminal, declined.
    public static let declined = "Declined"
    /// Terminal, canceled.
    public static let canceled = "Canceled"
    /// Terminal, error.
    public static let failed = "Failed"
}

/// The simplified events that drive ``SessionUiState``, mapped from raw hub events.
public enum SessionEvent: Hashable, Sendable {
    /// The QR code is shown (from ``MdocEngagementEvent/Kind/qrShow(qrCodeData:)``).
    case qrShow
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
    case terminal(outcome: TerminalOutcome, message: String?)
}
