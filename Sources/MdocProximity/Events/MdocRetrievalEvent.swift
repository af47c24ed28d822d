import Foundation

/// An event in the data-retrieval (transfer) part of a session (state orders
/// 100-199, final events 200 and above).
public struct MdocRetrievalEvent: Equatable, Sendable {
    /// What happened.
    public enum Kind: Equatable, Sendable {
        /// The carrier for the transfer was chosen.
        case transmissionTypeSelected(TransmissionType)
        /// The session channel is up (SessionEstablishment exchanged or about to be).
        case connected
        /// A SessionData message with a further request arrived (`byteCount` bytes).
        case sessionDataReceived(byteCount: Int)
        /// The DeviceRequest was decrypted and waits for the user's consent;
        /// `data` holds its CBOR bytes.
        case documentsSelectionProcessStart(data: [UInt8])
        /// The user accepted; the response is being built.
        case documentsSelectionProcessAccepted
        /// The user declined; the session ends without documents.
        case documentsSelectionProcessDeclined
        /// The DeviceResponse was sent (`byteCount` bytes of SessionData).
        case sessionDataSend(byteCount: Int)
        /// The holder ended the session (status 20) after responding.
        case sessionTerminationSend
        /// The reader ended the session (status 20 or a closed channel).
        case sessionTerminationReceived(afterResponse: Bool)
        /// The app cancelled the session (status 20 was sent).
        case cancelled
        /// The transfer failed.
        case error(ProximityError)
    }

    /// The engagement this transfer belongs to.
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

    /// The event's position in the lifecycle: 100-199 transfer, 200+ final.
    public var stateOrder: Int { state.order }

    /// The transfer state this event leaves the session in.
    public var state: MdocTransferState {
        switch kind {
        case .transmissionTypeSelected: return .transmissionTypeSelected
        case .connected: return .connected
        case .sessionDataReceived: return .sessionDataReceived
        case .documentsSelectionProcessStart: return .awaitingConsent
        case .documentsSelectionProcessAccepted: return .accepted
        case .documentsSelectionProcessDeclined: return .declined
        case .sessionDataSend: return .sessionDataSent
        case .sessionTerminationSend: return .completed
        case .sessionTerminationReceived: return .terminatedByReader
        case .cancelled: return .cancelled
        case .error: return .failed
        }
    }

    /// The case name, for logs.
    public var name: String { state.rawValue }
}

/// The state of a transfer, as the latest retrieval event left it.
public enum MdocTransferState: String, Hashable, Sendable, CaseIterable {
    /// The carrier was chosen.
    case transmissionTypeSelected
    /// The channel is up.
    case connected
    /// A further request arrived.
    case sessionDataReceived
    /// Waiting for the user's decision on the DeviceRequest.
    case awaitingConsent
    /// The user accepted.
    case accepted
    /// The response was sent.
    case sessionDataSent
    /// The holder completed the session (final).
    case completed
    /// The user declined (final).
    case declined
    /// The reader ended the session (final).
    case terminatedByReader
    /// The app cancelled the session (final).
    case cancelled
    /// The transfer failed (final).
    case failed

    /// The state order: 100-199 transfer, 200+ final.
    public var order: Int {
        switch self {
        case .transmissionTypeSelected: return 100
        case .connected: return 110
        case .sessionDataReceived: return 120
        case .awaitingConsent: return 130
        case .accepted: return 140
        case .sessionDataSent: return 150
        case .completed: return 200
        case .declined: return 210
        case .terminatedByReader: return 220
        case .cancelled: return 230
        case .failed: return 250
        }
    }
}
