import WalletRuntime

/// The entry point for a platform NFC stack in host card emulation: every command APDU
/// the reader sends goes to ``process(_:)``, and what it returns goes back (an Android
/// `HostApduService` forwards `processCommandApdu` here; `onDeactivated` goes to
/// ``deactivated()``). It serves NFC engagement (the static Handover Select, or
/// negotiated handover) for the engagement the ``MdocEngagementManager`` keeps armed,
/// and NFC data transfer for the session that follows when the reader chooses NFC.
///
/// The protocol logic is the sans-IO ``NFCTagCore``; this actor only fetches what the
/// core asks for (a Handover Select for a reader's request, the session's reply to a
/// message). The platform calls it one APDU at a time, as NFC does.
public actor NFCHostCardEmulation {
    private var core: NFCTagCore
    private var arming: NFCArming?
    private var link: NFCDataTransferLink?

    /// An unarmed entry point (it answers "not found" until an NFC engagement arms it).
    public init(maxResponseDataLength: Int = 256) {
        core = NFCTagCore(maxResponseDataLength: maxResponseDataLength)
    }

    /// Handles one command APDU and returns the response APDU.
    public func process(_ command: [UInt8]) async -> [UInt8] {
        switch core.handle(command) {
        case .respond(let response):
            return response.encoded
        case .respondAndReport(let response, let event):
            switch event {
            case .handoverCompleted(let select, let request):
                arming?.onHandover(select, request)
            case .dataTransferSelected:
                link?.close(reason: .connectionClosed)
                let fresh = NFCDataTransferLink(clock: arming?.clock ?? SystemClock())
                link = fresh
                arming?.onDataTransfer?(fresh)
            }
            return response.encoded
        case .needHandoverSelect(let request):
            let select = await arming?.negotiate?(request)
            return core.provideHandoverSelect(select).encoded
        case .needReply(let message):
            guard let link else { return core.provideReply(nil).encoded }
            let reply = await link.exchange(message)
            return core.provideReply(reply).encoded
        }
    }

    /// The reader left the field.
    public func deactivated() {
        core.deactivate()
        link?.close(reason: .transportFailed(.nfc(.deactivated)))
        link = nil
    }

    /// Whether an engagement is armed (for tests and UIs).
    public var isArmed: Bool { arming != nil }

    /// Arms the entry point for one engagement.
    func arm(_ arming: NFCArming) {
        self.arming = arming
        core.arm(arming.handover)
    }

    /// Disarms it if `id` is the armed engagement.
    func disarm(_ id: EngagementID) {
        guard arming?.engagementId == id else { return }
        arming = nil
        core.arm(.none)
    }
}

/// What the manager arms the NFC entry point with.
struct NFCArming: Sendable {
    let engagementId: EngagementID
    let handover: NFCTagCore.Handover
    let clock: any WalletClock
    /// Negotiated handover: the Handover Select for a reader's request (nil: none possible).
    let negotiate: (@Sendable (HandoverRequest) async -> [UInt8]?)?
    /// The reader read the whole Handover Select.
    let onHandover: @Sendable (_ select: [UInt8], _ request: [UInt8]?) -> Void
    /// The reader selected NFC data transfer.
    let onDataTransfer: (@Sendable (NFCDataTransferLink) -> Void)?
}

/// The holder's end of NFC data transfer, as an ``MdocTransport``: the reader's
/// messages arrive whole from the ENVELOPE chains, and each message the holder sends
/// answers the reader's pending ENVELOPE (NFC is command/response: the mdoc speaks
/// only when asked).
final class NFCDataTransferLink: MdocTransport {
    private let inbox: Mailbox<[UInt8]>
    private let replies: Mailbox<[UInt8]>

    init(clock: any WalletClock) {
        inbox = Mailbox(clock: clock)
        replies = Mailbox(clock: clock)
    }

    var transmissionType: TransmissionType { .nfc }

    /// Hands the reader's message to the session and waits for its answer (nil: the session ended).
    func exchange(_ message: [UInt8]) async -> [UInt8]? {
        guard inbox.push(message) else { return nil }
        return try? await replies.next(timeout: nil)
    }

    func send(_ message: [UInt8]) async throws(ProximityError) {
        guard replies.push(message) else { throw .connectionClosed }
    }

    func receive(timeout: Duration?) async throws(ProximityError) -> [UInt8] {
        try await inbox.next(timeout: timeout)
    }

    func close() async { close(reason: .connectionClosed) }

    func close(reason: ProximityError) {
        inbox.finish(reason)
        replies.finish(reason)
    }
}
