import Foundation
import Mdoc
import WalletRuntime

/// One engagement of the holder: its DeviceEngagement (fresh ephemeral key), what to
/// show or serve (QR URI, NFC Handover Select), and the transfer session once a
/// reader connects.
public final class MdocEngagement: Sendable, Identifiable {
    /// The engagement's identifier.
    public let id: EngagementID
    /// How it was made.
    public let type: EngagementType
    /// The DeviceEngagement offered (ISO 18013-5 §8.2.1.1).
    public let deviceEngagement: DeviceEngagement
    /// For `.qr`: the `mdoc:` URI to render as a QR code.
    public let qrCodeUri: String?

    private struct State {
        var transferManager: TransferManager?
        var isSuspended = false
        var handoverSelect: [UInt8]?
    }
    private let state: LockedBox<State>

    init(id: EngagementID, type: EngagementType, deviceEngagement: DeviceEngagement, qrCodeUri: String?,
         nfcHandoverSelect: [UInt8]?) {
        self.id = id
        self.type = type
        self.deviceEngagement = deviceEngagement
        self.qrCodeUri = qrCodeUri
        self.state = LockedBox(State(handoverSelect: nfcHandoverSelect))
    }

    /// For `.nfc`: the NDEF Handover Select served to a reader (in negotiated handover,
    /// once it was negotiated).
    public var nfcHandoverSelect: [UInt8]? { state.withLock { $0.handoverSelect } }

    /// The transfer session, once a reader connected.
    public var transferManager: TransferManager? { state.withLock { $0.transferManager } }

    /// Whether the engagement is suspended (it refuses connections).
    public var isSuspended: Bool { state.withLock { $0.isSuspended } }

    func setTransferManager(_ manager: TransferManager) { state.withLock { $0.transferManager = manager } }
    func setSuspended(_ value: Bool) { state.withLock { $0.isSuspended = value } }
    func setHandoverSelect(_ select: [UInt8]) { state.withLock { $0.handoverSelect = select } }
}

/// How NFC engagements of a manager work.
public struct NFCEngagementSettings: Sendable {
    /// Static handover (the Handover Select is fixed when armed) or negotiated
    /// handover (the reader writes a Handover Request first, over TNEP).
    public enum Handover: String, Sendable {
        /// Static handover.
        case `static`
        /// Negotiated handover.
        case negotiated
    }

    /// The handover.
    public var handover: Handover
    /// Whether the manager's connector carries the session (its listener's endpoint
    /// is offered as a carrier; in negotiated handover, a reader's BLE offer is taken
    /// when the connector can reach it).
    public var offersConnector: Bool
    /// Whether NFC itself carries the session (the mdoc data transfer application).
    public var offersNFCDataTransfer: Bool
    /// The largest command data field the mdoc accepts (announced to the reader).
    public var maxCommandDataLength: UInt64
    /// The largest response data field the mdoc sends.
    public var maxResponseDataLength: UInt64

    /// Settings.
    public init(handover: Handover = .static, offersConnector: Bool = true, offersNFCDataTransfer: Bool = false,
                maxCommandDataLength: UInt64 = 255, maxResponseDataLength: UInt64 = 256) {
        self.handover = handover
        self.offersConnector = offersConnector
        self.offersNFCDataTransfer = offersNFCDataTransfer
        self.maxCommandDataLength = maxCommandDataLength
        self.maxResponseDataLength = maxResponseDataLength
    }
}

/// The holder's NFC data transfer as a listener: a connection is the reader selecting
/// the mdoc data transfer application on the ``NFCHostCardEmulation``.
final class NFCDataTransferListener: MdocTransportListener {
    let endpoint: TransportEndpoint
    private let links: Mailbox<NFCDataTransferLink>

    init(endpoint: TransportEndpoint, clock: any WalletClock) {
        self.endpoint = endpoint
        self.links = Mailbox(clock: clock)
    }

    /// Offers the link a SELECT of the data-transfer application opened. Each SELECT
    /// closes the link before it, so only the newest waits to be accepted: older ones,
    /// queued while a negotiated handover had not yet chosen NFC, are dropped.
    func offer(_ link: NFCDataTransferLink) {
        guard let replaced = links.pushReplacing(link) else { return link.close(reason: .connectionClosed) }
        for stale in replaced { stale.close(reason: .connectionClosed) }
    }

    /// How many links wait to be accepted (for tests).
    var queuedLinks: Int { links.bufferedCount }

    func accept(timeout: Duration?) async throws(ProximityError) -> any MdocTransport {
        try await links.next(timeout: timeout)
    }

    func close() async {
        for link in links.finishDiscarding(.connectionClosed) { link.close(reason: .connectionClosed) }
    }
}
