import Foundation
import Mdoc
import WalletRuntime

/// One engagement of the holder: its DeviceEngagement (fresh ephemeral key),
/// what to show or serve (QR URI, NFC Handover Select), and the transfer
/// session once a reader connects.
public final class MdocEngagement: Sendable, Identifiable {
    /// The engagement's identifier.
    public let id: EngagementID
    /// How it was made.
    public let type: EngagementType
    /// The DeviceEngagement offered (ISO 18013-5 §8.2.1.1).
    public let deviceEngagement: DeviceEngagement
    /// For `.qr`: the `mdoc:` URI to render as a QR code.
    public let qrCodeUri: String?
    /// For `.nfc`: the NDEF Handover Select message the NFC service serves to a reader.
    public let nfcHandoverSelect: [UInt8]?

    private struct State {
        var transferManager: TransferManager?
        var isSuspended = false
    }
    private let state = LockedBox(State())

    init(id: EngagementID, type: EngagementType, deviceEngagement: DeviceEngagement, qrCodeUri: String?,
         nfcHandoverSelect: [UInt8]?) {
        self.id = id
        self.type = type
        self.deviceEngagement = deviceEngagement
        self.qrCodeUri = qrCodeUri
        self.nfcHandoverSelect = nfcHandoverSelect
    }

    /// The transfer session, once a reader connected.
    public var transferManager: TransferManager? { state.withLock { $0.transferManager } }

    /// Whether the engagement is suspended (it refuses connections).
    public var isSuspended: Bool { state.withLock { $0.isSuspended } }

    func setTransferManager(_ manager: TransferManager) { state.withLock { $0.transferManager = manager } }
    func setSuspended(_ value: Bool) { state.withLock { $0.isSuspended = value } }
}
