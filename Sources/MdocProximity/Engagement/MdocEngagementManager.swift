import CBOR
import COSE
import Foundation
import Mdoc
import WalletCrypto
import WalletRuntime
import WalletEncoding

/// The holder's entry point to proximity presentation: creates QR, NFC and
/// reverse (to-app) engagements, keeps exactly one of them active, and routes
/// every event to its ``eventHub``.
///
/// Several engagements may exist at once (NFC waiting in the background while
/// a QR code is shown); the newest QR or to-app engagement becomes active, an
/// NFC engagement becomes active when nothing else is, and an NFC handover
/// takes over from a shown QR code. Each engagement has a fresh ephemeral key.
public actor MdocEngagementManager {
    /// The hub of every engagement's events and the UI projection.
    public nonisolated let eventHub: MdocEventHub
    private let connector: any MdocTransportConnector
    private let active = StateStream<MdocEngagement?>(initial: nil)

    private struct Entry {
        let engagement: MdocEngagement
        var listener: (any MdocTransportListener)?
        var task: Task<Void, Never>?
    }
    private var entries: [EngagementID: Entry] = [:]
    private var order: [EngagementID] = []

    /// A manager whose engagements use `connector` (TCP on loopback by default).
    public init(connector: any MdocTransportConnector = TCPConnector(), eventHub: MdocEventHub = MdocEventHub()) {
        self.connector = connector
        self.eventHub = eventHub
    }

    /// The active engagement: the current one first, then every change.
    public nonisolated var activeEngagement: ObservedValue<MdocEngagement?> { ObservedValue(active) }

    /// Every open engagement, oldest first.
    public var engagements: [MdocEngagement] { order.compactMap { entries[$0]?.engagement } }

    /// Creates an engagement of `type`.
    ///
    /// `.qr` and `.nfc` listen for a reader on the connector; `.toApp` reads the
    /// reader's engagement from `config.readerEngagementUri` and connects to it.
    @discardableResult
    public func createEngagement(_ type: EngagementType, config: EngagementConfig = EngagementConfig())
        async throws(ProximityError) -> MdocEngagement {
        let eDeviceKey: ECPrivateKey
        do { eDeviceKey = try ECPrivateKey.generate(curve: .p256) } catch {
            throw .transportFailed("ephemeral key: \(error)")
        }
        let id = EngagementID()
        switch type {
        case .qr, .nfc:
            let listener = try await connector.listen()
            let deviceEngagement = DeviceEngagement(security: EngagementSecurity(eDeviceKey: eDeviceKey.publicKey),
                                                    deviceRetrievalMethods: [listener.endpoint.retrievalMethod])
            let select = type == .nfc
                ? NDEFMessage.handoverSelect(deviceEngagement: deviceEngagement, carrier: listener.endpoint.carrierRecord) : nil
            let engagement = MdocEngagement(id: id, type: type, deviceEngagement: deviceEngagement,
                                            qrCodeUri: type == .qr ? deviceEngagement.uri : nil, nfcHandoverSelect: select)
            entries[id] = Entry(engagement: engagement, listener: listener)
            order.append(id)
            let becomesActive = type == .qr || activeID == nil
            setActive(becomesActive ? id : activeID)
            if type == .qr {
                eventHub.publish(MdocEngagementEvent(engagementId: id, kind: .qrShow(qrCodeData: deviceEngagement.uri)))
            } else {
                eventHub.publish(MdocEngagementEvent(engagementId: id, kind: .nfcEngagement))
            }
            let handover: Handover = select.map { .nfc(handoverSelect: $0, handoverRequest: nil) } ?? .qr
            entries[id]?.task = Task { [weak self] in
                await self?.acceptLoop(id: id, listener: listener, config: config, eDeviceKey: eDeviceKey,
                                       deviceEngagement: deviceEngagement, handover: handover)
            }
            return engagement
        case .toApp:
            guard let uri = config.readerEngagementUri else { throw .invalidEngagement("no reader engagement URI") }
            let readerEngagement = try ReaderEngagementURI.parse(uri)
            guard let endpoint = readerEngagement.connectionMethods.lazy.compactMap(TransportEndpoint.init(retrievalMethod:)).first else {
                throw .invalidEngagement("no connection method this SDK can use")
            }
            let deviceEngagement = DeviceEngagement(security: EngagementSecurity(eDeviceKey: eDeviceKey.publicKey))
            let engagement = MdocEngagement(id: id, type: .toApp, deviceEngagement: deviceEngagement,
                                            qrCodeUri: nil, nfcHandoverSelect: nil)
            entries[id] = Entry(engagement: engagement)
            order.append(id)
            setActive(id)
            entries[id]?.task = Task { [weak self] in
                await self?.connectToReader(id: id, endpoint: endpoint, config: config, eDeviceKey: eDeviceKey,
                                            deviceEngagement: deviceEngagement, readerEngagement: readerEngagement)
            }
            return engagement
        }
    }

    /// Suspends the active engagement: it refuses connections until resumed.
    public func suspend() {
        guard let id = activeID, let engagement = entries[id]?.engagement else { return }
        engagement.setSuspended(true)
        eventHub.publish(.engagement(MdocEngagementEvent(engagementId: id, kind: .suspended)), context: context)
    }

    /// Resumes the active engagement.
    public func resume() {
        guard let id = activeID, let engagement = entries[id]?.engagement else { return }
        engagement.setSuspended(false)
        eventHub.publish(.engagement(MdocEngagementEvent(engagementId: id, kind: .resumed)), context: context)
    }

    /// Closes every QR engagement (for example when the QR sheet is dismissed).
    public func closeQrEngagement() async {
        for id in order where entries[id]?.engagement.type == .qr { await close(id) }
    }

    /// Closes every engagement; a request waiting for consent is declined.
    public func closeAll() async {
        for id in order { await close(id) }
    }

    /// Closes one engagement and its session.
    public func close(_ id: EngagementID) async {
        guard let entry = entries.removeValue(forKey: id) else { return }
        order.removeAll { $0 == id }
        if let transfer = entry.engagement.transferManager { await transfer.close() }
        await entry.listener?.close()
        entry.task?.cancel()
        if activeID == id {
            let next = order.last(where: { entries[$0]?.engagement.type == .nfc }) ?? order.last
            active.send(next.flatMap { entries[$0]?.engagement })
        }
        eventHub.publish(.engagement(MdocEngagementEvent(engagementId: id, kind: .closed)), context: context)
    }

    // MARK: Internals

    private var activeID: EngagementID? { active.current?.id }

    private var context: EngagementContext {
        var engagements: [EngagementID: EngagementContext.Entry] = [:]
        for (id, entry) in entries {
            engagements[id] = .init(type: entry.engagement.type, isSuspended: entry.engagement.isSuspended)
        }
        return EngagementContext(engagements: engagements, activeId: activeID)
    }

    private func setActive(_ id: EngagementID?) {
        if active.current?.id != id { active.send(id.flatMap { entries[$0]?.engagement }) }
        eventHub.updateContext(context)
    }

    private func acceptLoop(id: EngagementID, listener: any MdocTransportListener, config: EngagementConfig,
                            eDeviceKey: ECPrivateKey, deviceEngagement: DeviceEngagement, handover: Handover) async {
        while true {
            let transport: any MdocTransport
            do {
                transport = try await listener.accept(timeout: config.engagementTimeout)
            } catch {
                if entries[id] != nil, error != .connectionClosed {
                    eventHub.publish(MdocEngagementEvent(engagementId: id, kind: .error(reason: error.description)))
                }
                return
            }
            guard let engagement = entries[id]?.engagement else { await transport.close(); return }
            // A suspended engagement, or one whose session already started, refuses connections.
            if engagement.isSuspended || engagement.transferManager != nil {
                await transport.close()
                continue
            }
            await listener.close()
            if engagement.type == .nfc {
                // The reader read the Handover Select over NFC and connected: NFC takes over,
                // in one step with the event (the NFC background flow).
                for other in entries.values where other.engagement.id != id { other.engagement.setSuspended(true) }
                active.send(engagement)
                eventHub.publish(.engagement(MdocEngagementEvent(engagementId: id, kind: .connected(transport.transmissionType))),
                                 context: context)
            } else {
                if activeID != id { active.send(engagement) }
                eventHub.publish(.engagement(MdocEngagementEvent(engagementId: id, kind: .connecting(transport.transmissionType))),
                                 context: context)
            }
            let transfer = TransferManager(engagementId: id, transport: transport, hub: eventHub, config: config,
                                           eDeviceKey: eDeviceKey, deviceEngagement: deviceEngagement, handover: handover)
            engagement.setTransferManager(transfer)
            await transfer.start()
            return
        }
    }

    private func connectToReader(id: EngagementID, endpoint: TransportEndpoint, config: EngagementConfig,
                                 eDeviceKey: ECPrivateKey, deviceEngagement: DeviceEngagement,
                                 readerEngagement: ReaderEngagement) async {
        eventHub.publish(MdocEngagementEvent(engagementId: id, kind: .connecting(endpoint.transmissionType)))
        do {
            let transport = try await connector.connect(to: endpoint, timeout: config.messageTimeout)
            // Reverse engagement: the mdoc's first message carries its DeviceEngagement.
            try await transport.send(ReaderEngagementURI.deviceEngagementMessage(deviceEngagement))
            guard let engagement = entries[id]?.engagement else { await transport.close(); return }
            let transfer = TransferManager(engagementId: id, transport: transport, hub: eventHub, config: config,
                                           eDeviceKey: eDeviceKey, deviceEngagement: deviceEngagement,
                                           handover: ReaderEngagementURI.handover(for: readerEngagement))
            engagement.setTransferManager(transfer)
            await transfer.start()
        } catch {
            eventHub.publish(MdocEngagementEvent(engagementId: id, kind: .error(reason: error.description)))
        }
    }
}

/// Reverse engagement helpers (ISO 18013-7 reader engagement via a scanned URI).
public enum ReaderEngagementURI {
    /// The URI scheme prefix.
    public static let scheme = "mdoc-reader:"

    /// Parses an `mdoc-reader:` URI into its ReaderEngagement.
    public static func parse(_ uri: String) throws(ProximityError) -> ReaderEngagement {
        guard uri.hasPrefix(scheme), let bytes = Base64URL.decode(String(uri.dropFirst(scheme.count))) else {
            throw .invalidEngagement("not an mdoc-reader: URI")
        }
        do { return try ReaderEngagement(encoded: bytes) } catch { throw .invalidEngagement("\(error)") }
    }

    /// The mdoc's first message in reverse engagement: `{"deviceEngagementBytes": #6.24(bstr)}`.
    public static func deviceEngagementMessage(_ engagement: DeviceEngagement) -> [UInt8] {
        CBOR.map(["deviceEngagementBytes": CBOR.embedded(encodedBytes: engagement.encodedBytes)]).encoded()
    }

    /// Reads the mdoc's first message in reverse engagement.
    public static func parseDeviceEngagementMessage(_ bytes: [UInt8]) throws(ProximityError) -> DeviceEngagement {
        guard let item = try? CBOR.decodeItem(bytes), let tagged = item["deviceEngagementBytes"],
              tagged.tag == 24, let content = tagged.content?.value.bytesValue else {
            throw .invalidMessage("not a device engagement message")
        }
        do { return try DeviceEngagement(encoded: content) } catch { throw .invalidMessage("\(error)") }
    }

    /// The handover of a reverse-engaged session: `[ReaderEngagementBytes]`, binding
    /// the reader's engagement, as received, into the SessionTranscript.
    public static func handover(for engagement: ReaderEngagement) -> Handover {
        .other(.array([CBOR.embedded(encodedBytes: engagement.encodedBytes)]))
    }
}
