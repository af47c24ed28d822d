import Foundation

/// An event in the engagement part of a session (state orders 0-99, final
/// events 200 and above).
public struct MdocEngagementEvent: Equatable, Sendable {
    /// What happened.
    public enum Kind: Equatable, Sendable {
        /// The QR code is shown; `qrCodeData` is the `mdoc:` URI to render.
        case qrShow(qrCodeData: String)
        /// The NFC engagement is ready for a reader's tap.
        case nfcEngagement
        /// A reader is connecting (or the holder connects to the reader).
        case connecting(TransmissionType)
        /// The engagement completed: the device engagement reached the reader.
        case connected(TransmissionType)
        /// The engagement was suspended (it refuses connections).
        case suspended
        /// The engagement was resumed.
        case resumed
        /// The carrier disconnected before the transfer started.
        case disconnected
        /// The engagement was closed by the app.
        case closed
        /// The engagement failed (a listener or connect error, a timeout).
        case error(ProximityError)
    }

    /// The engagement this event belongs to.
    public let engagementId: EngagementID
    /// When it happened.
    public let time: Date
    /// What happened.
    public let kind: Kind

    /// Creates an event.
    public init(engagementId: EngagementID, time: Date, kind: Kind) {
        self.engagementId = engagementId
        self.time = time
        self.kind = kind
    }

    /// The event's position in the lifecycle: 0-99 engagement, 200+ final.
    public var stateOrder: Int { state.order }

    /// The engagement state this event leaves the engagement in.
    public var state: MdocEngagementState {
        switch kind {
        case .qrShow: return .qrShown
        case .nfcEngagement: return .nfcReady
        case .suspended: return .suspended
        case .resumed: return .resumed
        case .connecting: return .connecting
        case .connected: return .connected
        case .disconnected: return .disconnected
        case .closed: return .closed
        case .error: return .failed
        }
    }

    /// The case name, for logs.
    public var name: String { state.rawValue }
}

/// The state of an engagement, as the latest engagement event left it.
public enum MdocEngagementState: String, Hashable, Sendable, CaseIterable {
    /// The QR code is shown.
    case qrShown
    /// The NFC engagement waits for a tap.
    case nfcReady
    /// Suspended.
    case suspended
    /// Resumed after a suspension.
    case resumed
    /// Connecting.
    case connecting
    /// Connected.
    case connected
    /// Disconnected (final).
    case disconnected
    /// Closed (final).
    case closed
    /// Failed (final).
    case failed

    /// The state order: 0-99 engagement, 200+ final.
    public var order: Int {
        switch self {
        case .qrShown, .nfcReady: return 10
        case .suspended: return 20
        case .resumed: return 21
        case .connecting: return 30
        case .connected: return 50
        case .disconnected: return 200
        case .closed: return 210
        case .failed: return 250
        }
    }
}
