import CBOR
import Foundation
import Mdoc
import WalletCrypto
import WalletRuntime
import WalletEncoding

/// The holder's entry point to proximity presentation: creates QR, NFC and reverse
/// (to-app) engagements, keeps exactly one of them active, and routes every event to
/// its ``eventHub``.
///
/// The lifecycle, as the spec describes it:
/// - several engagements may exist (NFC armed in the background while a QR code is
///   shown); the newest QR or to-app engagement becomes active, NFC when nothing else
///   is, and a reader connecting through NFC takes over from a shown QR code;
/// - a session in progress keeps the screen: when a reader connects to one engagement
///   the others are suspended (with `suspended` events) and refuse connections, an
///   engagement created meanwhile waits suspended, and after the session all are
///   resumed (`resumed` events); one created during the session becomes active then;
/// - a finished session's terminal state stays visible until the app starts something
///   new (creates or closes an engagement) or a reader connects to another engagement;
/// - NFC stays armed for the app's lifetime: after each NFC session a fresh NFC
///   engagement (new ephemeral key) is armed on ``nfc``;
/// - ``closeQrEngagement()`` after a reader connected only closes the QR sheet: the
///   session goes on;
/// - waits are bounded (engagement timeout, connect timeout, message and provider
///   timeouts), and a closed engagement's late connection is refused, never served.
///
/// The manager holds no strong reference to itself through its tasks: dropping the
/// last reference to it ends its engagements.
public actor MdocEngagementManager {
    /// The hub of every engagement's events and the UI projection.
    public nonisolated let eventHub: MdocEventHub
    /// The NFC entry point for the platform's host card emulation service.
    public nonisolated let nfc: NFCHostCardEmulation

    private let connector: any MdocTransportConnector
    private let nfcSettings: NFCEngagementSettings
    private let clock: any WalletClock
    private let makeEphemeralKey: @Sendable () throws(ProximityError) -> ECPrivateKey
    /// The executor the manager's own tasks (and its sessions') prefer; `nil`: the pool.
    private nonisolated let executor: (any TaskExecutor)?
    private let active = StateStream<MdocEngagement?>(initial: nil)

    private enum Stage { case armed, transferring, finished }
    private struct Entry {
        let engagement: MdocEngagement
        let config: EngagementConfig
        let eDeviceKey: ECPrivateKey
        var handover: Handover
        var stage = Stage.armed
        var listeners: [any MdocTransportListener] = []
        var tasks: [Task<Void, Never>] = []
        /// Suspended by the manager because another session transfers.
        var autoSuspended = false
        /// Created by the app while another session transferred: becomes active after it.
        var activatesAfterTransfer = false
        /// To-app and negotiated-BLE engagements connect instead of listening.
        var connectEndpoint: TransportEndpoint?
        var readerEngagement: ReaderEngagement?
        var nfcListener: NFCDataTransferListener?
    }
    private var entries: [EngagementID: Entry] = [:]
    private var order: [EngagementID] = []

    /// A manager whose engagements use `connector` (a platform BLE connector on a device;
    /// the SDK's TCP and in-memory carriers in tests and tools), NFC engagements served
    /// by ``nfc`` as `nfcSettings` say, and time from `clock`.
    ///
    /// With an `executor` (``ProximityExecutor/shared``), the tasks the manager starts for
    /// its engagements and sessions prefer it, so that a session's work stays on its
    /// thread; without, they run on the cooperative pool.
    public init(connector: any MdocTransportConnector, nfcSettings: NFCEngagementSettings = NFCEngagementSettings(),
                eventHub: MdocEventHub = MdocEventHub(), clock: any WalletClock = SystemClock(),
                executor: (any TaskExecutor)? = nil) {
        self.init(connector: connector, nfcSettings: nfcSettings, eventHub: eventHub, clock: clock,
                  ephemeralKeys: { () throws(ProximityError) -> ECPrivateKey in try EphemeralKey.generate() },
                  executor: executor)
    }

    /// A manager whose ephemeral keys come from `ephemeralKeys` (tests reproducing
    /// published vectors).
    init(connector: any MdocTransportConnector, nfcSettings: NFCEngagementSettings, eventHub: MdocEventHub,
         clock: any WalletClock, ephemeralKeys: @escaping @Sendable () throws(ProximityError) -> ECPrivateKey,
         executor: (any TaskExecutor)? = nil) {
        self.executor = executor
        self.connector = connector
        self.nfcSettings = nfcSettings
        self.eventHub = eventHub
        self.clock = clock
        self.makeEphemeralKey = ephemeralKeys
        self.nfc = NFCHostCardEmulation(maxResponseDataLength: Int(min(nfcSettings.maxResponseDataLength, 65_536)))
    }

    deinit {
        for entry in entries.values {
            for task in entry.tasks { task.cancel() }
            let listeners = entry.listeners
            let transfer = entry.engagement.transferManager
            Task(executorPreference: executor) {
                for listener in listeners { await listener.close() }
                await transfer?.close()
            }
        }
    }

    /// The active engagement: the current one first, then every change.
    public nonisolated var activeEngagement: ObservedValue<MdocEngagement?> { ObservedValue(active) }

    /// Every open engagement, oldest first.
    public var engagements: [MdocEngagement] { order.compactMap { entries[$0]?.engagement } }

    // MARK: Creating

    /// Creates an engagement of `type`.
    ///
    /// `.qr` listens on the connector; `.nfc` arms ``nfc`` (and the connector's
    /// listener as a carrier); `.toApp` reads the reader's engagement from
    /// `config.readerEngagementUri` and connects to it.
    @discardableResult
    public func createEngagement(_ type: EngagementType, config: EngagementConfig = EngagementConfig())
        async throws(ProximityError) -> MdocEngagement {
        let key = try makeEphemeralKey()
        let id = EngagementID()
        let security = EngagementSecurity(eDeviceKey: key.publicKey)
        let context = ConnectionContext(eDeviceKeyBytes: security.eDeviceKeyBytes)
        switch type {
        case .qr:
            let listener = try await connector.listen(context: context)
            let engagement = DeviceEngagement(security: security, deviceRetrievalMethods: [listener.endpoint.retrievalMethod])
            let created = MdocEngagement(id: id, type: .qr, deviceEngagement: engagement, qrCodeUri: engagement.uri, nfcHandoverSelect: nil)
            var entry = Entry(engagement: created, config: config, eDeviceKey: key, handover: .qr)
            entry.listeners = [listener]
            insert(entry, announcing: .qrShow(qrCodeData: engagement.uri))
            startAccepting(id)
            return created
        case .nfc:
            // One NFC engagement at a time: the entry point serves the newest.
            for existing in order where entries[existing]?.engagement.type == .nfc && entries[existing]?.stage == .armed {
                await close(existing)
            }
            return try await armNFC(id: id, key: key, config: config)
        case .toApp:
            guard let uri = config.readerEngagementUri else { throw .invalidEngagement(.missingReaderEngagementURI) }
            let reader = try ReverseEngagement.readerEngagement(uri: uri)
            guard let endpoint = reader.connectionMethods.lazy.map(TransportEndpoint.init(retrievalMethod:))
                .first(where: connector.canConnect) else {
                throw .invalidEngagement(.noUsableConnectionMethod)
            }
            let engagement = DeviceEngagement(security: security)
            let created = MdocEngagement(id: id, type: .toApp, deviceEngagement: engagement, qrCodeUri: nil, nfcHandoverSelect: nil)
            var entry = Entry(engagement: created, config: config, eDeviceKey: key, handover: ReverseEngagement.handover(for: reader))
            entry.connectEndpoint = endpoint
            entry.readerEngagement = reader
            insert(entry, announcing: nil)
            if !created.isSuspended { startConnecting(id) }
            return created
        }
    }

    /// Suspends the active engagement: it refuses connections until resumed.
    public func suspend() {
        guard let id = activeID, let engagement = entries[id]?.engagement, !engagement.isSuspended else { return }
        engagement.setSuspended(true)
        publish(id, .suspended)
    }

    /// Resumes the active engagement.
    public func resume() {
        guard let id = activeID, let entry = entries[id], entry.engagement.isSuspended, !entry.autoSuspended else { return }
        entry.engagement.setSuspended(false)
        publish(id, .resumed)
    }

    // MARK: Closing

    /// Closes the QR sheet: QR engagements that no reader connected to are closed (as
    /// are finished ones); a session a reader started through a QR code goes on.
    public func closeQrEngagement() async {
        for id in order where entries[id]?.engagement.type == .qr {
            // A session that already ended is finished, even before its end was processed
            // here: the app dismisses the sheet on the terminal state it just saw.
            if entries[id]?.stage == .transferring, let transfer = entries[id]?.engagement.transferManager,
               await transfer.phase != .ended { continue }
            await close(id)
        }
    }

    /// Closes every engagement; a request waiting for consent is declined, any other
    /// session in progress is canceled.
    public func closeAll() async {
        for id in order { await close(id, resumingOthers: false) }
    }

    /// Closes one engagement and its session. Closing the engagement whose session
    /// transfers ends that session as its end would: the engagements it suspended resume,
    /// one created meanwhile becomes active.
    public func close(_ id: EngagementID) async {
        await close(id, resumingOthers: true)
    }

    private func close(_ id: EngagementID, resumingOthers: Bool) async {
        guard let entry = entries.removeValue(forKey: id) else { return }
        order.removeAll { $0 == id }
        for task in entry.tasks { task.cancel() }
        if entry.engagement.type == .nfc { await nfc.disarm(id) }
        if let transfer = entry.engagement.transferManager {
            if await transfer.phase == .awaitingConsent { try? await transfer.decline() } else { await transfer.close() }
        }
        for listener in entry.listeners { await listener.close() }
        // The monitor of a transferring session was cancelled with the tasks above, so
        // `transferEnded` will not run for it: release what the session held here.
        var resumed: [EngagementID] = []
        var activate: EngagementID?
        if entry.stage == .transferring, resumingOthers { (resumed, activate) = releaseSuspended() }
        if let activate, let engagement = entries[activate]?.engagement {
            active.send(engagement)
        } else if activeID == id {
            active.send(nextActive().flatMap { entries[$0]?.engagement })
        }
        // One UI step for the close and the new active engagement; the resumptions after it.
        publish(id, .closed)
        for other in resumed { publish(other, .resumed) }
        eventHub.prune(id)
    }

    // MARK: Internals: state

    private var activeID: EngagementID? { active.current?.id }

    private var context: EngagementContext {
        var engagements: [EngagementID: EngagementContext.Entry] = [:]
        for (id, entry) in entries {
            engagements[id] = .init(type: entry.engagement.type, isSuspended: entry.engagement.isSuspended,
                                    qrCodeData: entry.engagement.qrCodeUri)
        }
        return EngagementContext(engagements: engagements, activeId: activeID)
    }

    private func publish(_ id: EngagementID, _ kind: MdocEngagementEvent.Kind) {
        eventHub.publish(.engagement(MdocEngagementEvent(engagementId: id, time: clock.now, kind: kind)), context: context)
    }

    private var isTransferring: Bool { entries.values.contains { $0.stage == .transferring } }

    /// The engagement to show after `closed` left: a waiting NFC one, else the newest.
    private func nextActive() -> EngagementID? {
        order.last { entries[$0]?.engagement.type == .nfc && entries[$0]?.stage == .armed } ?? order.last
    }

    /// Adds an engagement. While another session transfers it waits suspended;
    /// otherwise finished sessions leave the screen and it becomes active as the rules say.
    /// `announcedLater`: the caller publishes the announcement (and, while another
    /// session transfers, the suspension after it) once the engagement can be reached.
    private func insert(_ entry: Entry, announcing kind: MdocEngagementEvent.Kind?, byApp: Bool = true,
                        announcedLater: Bool = false) {
        let id = entry.engagement.id
        let deferred = isTransferring
        if !deferred, byApp {
            for finished in order where entries[finished]?.stage == .finished { drop(finished) }
        }
        entries[id] = entry
        order.append(id)
        if deferred {
            entry.engagement.setSuspended(true)
            entries[id]?.autoSuspended = true
            entries[id]?.activatesAfterTransfer = byApp && entry.engagement.type != .nfc
            if announcedLater {
                eventHub.updateContext(context)
                return
            }
            if let kind { publish(id, kind) }
            publish(id, .suspended)
            return
        }
        let becomesActive = entry.engagement.type != .nfc || activeID == nil
        if becomesActive, activeID != id { active.send(entry.engagement) }
        eventHub.updateContext(context)   // the new engagement's first state, then its announcement
        if let kind { publish(id, kind) }
    }

    /// Forgets a finished engagement without events (its session already ended).
    private func drop(_ id: EngagementID) {
        guard entries.removeValue(forKey: id) != nil else { return }
        order.removeAll { $0 == id }
        if activeID == id { active.send(nil) }
        eventHub.prune(id)
    }

    // MARK: Internals: NFC

    private func armNFC(id: EngagementID, key: ECPrivateKey, config: EngagementConfig,
                        byApp: Bool = true) async throws(ProximityError) -> MdocEngagement {
        let security = EngagementSecurity(eDeviceKey: key.publicKey)
        let engagement = DeviceEngagement(security: security)
        var listeners: [any MdocTransportListener] = []
        var carriers: [HandoverCarrier] = []
        let nfcEndpoint = TransportEndpoint.nfc(maxCommandDataLength: nfcSettings.maxCommandDataLength,
                                                maxResponseDataLength: nfcSettings.maxResponseDataLength)
        let nfcListener = nfcSettings.offersNFCDataTransfer ? NFCDataTransferListener(endpoint: nfcEndpoint, clock: clock) : nil
        var select: [UInt8]?
        if nfcSettings.handover == .static {
            if nfcSettings.offersConnector {
                let listener = try await connector.listen(context: ConnectionContext(eDeviceKeyBytes: security.eDeviceKeyBytes))
                listeners.append(listener)
                if let carrier = HandoverCarrier(mdocRetrievalMethod: listener.endpoint.retrievalMethod) { carriers.append(carrier) }
            }
            if let nfcListener {
                listeners.append(nfcListener)
                if let carrier = HandoverCarrier(mdocRetrievalMethod: nfcEndpoint.retrievalMethod) { carriers.append(carrier) }
            }
            select = try ConnectionHandover.handoverSelect(deviceEngagement: engagement, carriers: carriers)
        }
        let created = MdocEngagement(id: id, type: .nfc, deviceEngagement: engagement, qrCodeUri: nil, nfcHandoverSelect: select)
        var entry = Entry(engagement: created, config: config, eDeviceKey: key,
                          handover: select.map { .nfc(handoverSelect: $0, handoverRequest: nil) } ?? .qr)
        entry.listeners = listeners
        entry.nfcListener = nfcListener
        insert(entry, announcing: nil, byApp: byApp, announcedLater: true)
        let waitsSuspended = entries[id]?.autoSuspended == true
        if !listeners.isEmpty { startAccepting(id) }
        let tagHandover: NFCTagCore.Handover
        var negotiation: (@Sendable (HandoverRequest) async -> [UInt8]?)?
        if let select {
            tagHandover = .staticSelect(select)
        } else {
            tagHandover = .negotiated
            negotiation = { [weak self] request in await self?.negotiate(id, request) }
        }
        let onHandover: @Sendable ([UInt8], [UInt8]?) -> Void = { [weak self, executor] select, request in
            Task(executorPreference: executor) { await self?.handoverCompleted(id, select: select, request: request) }
        }
        let onDataTransfer: @Sendable (NFCDataTransferLink) -> Void = { link in nfcListener?.offer(link) }
        let arming = NFCArming(engagementId: id, handover: tagHandover, clock: clock, negotiate: negotiation,
                               onHandover: onHandover, onDataTransfer: onDataTransfer)
        await nfc.arm(arming)
        // Announced ("hold near reader") only once a tap reaches this engagement: a re-armed
        // engagement's announcement is the app's and the tests' sign that NFC is ready again.
        guard entries[id] != nil else {
            await nfc.disarm(id)   // closed while arming
            return created
        }
        publish(id, .nfcEngagement)
        if waitsSuspended { publish(id, .suspended) }
        return created
    }

    /// Negotiated handover: picks a carrier of the reader's request this side can use
    /// and answers with the Handover Select (ISO 18013-5 §8.2.2.1).
    private func negotiate(_ id: EngagementID, _ request: HandoverRequest) async -> [UInt8]? {
        guard let entry = entries[id], entry.stage == .armed, !entry.engagement.isSuspended else { return nil }
        for carrier in request.carriers.map(\.carrier) {
            switch carrier {
            case .nfc where entry.nfcListener != nil:
                guard let listener = entry.nfcListener,
                      let offered = HandoverCarrier(mdocRetrievalMethod: listener.endpoint.retrievalMethod),
                      let select = try? ConnectionHandover.handoverSelect(deviceEngagement: entry.engagement.deviceEngagement,
                                                                           carriers: [offered]) else { continue }
                entries[id]?.listeners = [listener]
                settle(id, select: select, request: request.encodedBytes)
                startAccepting(id)
                return select
            case .ble(let offer) where nfcSettings.offersConnector:
                // The reader as GATT server (its role includes peripheral): the mdoc is the
                // central client and connects to the reader's UUID.
                guard let uuid = offer.serviceUUID, offer.role != .centralOnly else { continue }
                let endpoint = TransportEndpoint.ble(.init(peripheralServerMode: false, centralClientMode: true, centralClientUUID: uuid.bytes))
                guard connector.canConnect(to: endpoint) else { continue }
                let address = (connector as? BLEConnector)?.peripheralAddress.flatMap { $0.count == 6 ? $0 + [0x01] : nil }
                let answer = HandoverCarrier.ble(BLEOutOfBandData(deviceAddress: address, role: .centralOnly))
                guard let select = try? ConnectionHandover.handoverSelect(deviceEngagement: entry.engagement.deviceEngagement,
                                                                          carriers: [answer]) else { continue }
                entries[id]?.connectEndpoint = endpoint
                settle(id, select: select, request: request.encodedBytes)
                return select
            default:
                continue
            }
        }
        return nil
    }

    private func settle(_ id: EngagementID, select: [UInt8], request: [UInt8]) {
        entries[id]?.handover = .nfc(handoverSelect: select, handoverRequest: request)
        entries[id]?.engagement.setHandoverSelect(select)
    }

    /// The reader read the whole Handover Select.
    private func handoverCompleted(_ id: EngagementID, select: [UInt8], request: [UInt8]?) {
        guard let entry = entries[id], entry.stage == .armed, entry.connectEndpoint != nil,
              entry.tasks.isEmpty else { return }
        startConnecting(id)
    }

    // MARK: Internals: connections

    private func startAccepting(_ id: EngagementID) {
        guard let entry = entries[id] else { return }
        let listeners = entry.listeners
        let timeout = entry.config.engagementTimeout
        let task = Task(executorPreference: executor) { [weak self] in
            let result = await Self.acceptFirst(listeners, timeout: timeout)
            guard let self else {
                if case .success(let transport) = result { await transport.close() }
                return
            }
            await self.accepted(id, result)
        }
        entries[id]?.tasks.append(task)
    }

    /// The first connection any of `listeners` accepts (the others stop waiting).
    private static func acceptFirst(_ listeners: [any MdocTransportListener], timeout: Duration?) async
        -> Result<any MdocTransport, ProximityError> {
        await withTaskGroup(of: Result<any MdocTransport, ProximityError>.self) { group in
            for listener in listeners {
                group.addTask {
                    do throws(ProximityError) { return .success(try await listener.accept(timeout: timeout)) } catch { return .failure(error) }
                }
            }
            var failure = ProximityError.connectionClosed
            var winner: (any MdocTransport)?
            while let result = await group.next() {
                switch result {
                case .success(let transport):
                    if winner == nil {
                        winner = transport
                        group.cancelAll()
                    } else {
                        await transport.close()
                    }
                case .failure(let error):
                    if error != .cancelled { failure = error }
                }
            }
            return winner.map { .success($0) } ?? .failure(failure)
        }
    }

    private func accepted(_ id: EngagementID, _ result: Result<any MdocTransport, ProximityError>) async {
        // The engagement may have been closed while the accept waited.
        guard let entry = entries[id], entry.stage == .armed else {
            if case .success(let transport) = result { await transport.close() }
            return
        }
        entries[id]?.tasks.removeAll()
        switch result {
        case .failure(let error):
            // The engagement can no longer be reached: stop listening.
            for listener in entry.listeners { await listener.close() }
            guard entries[id]?.stage == .armed else { return }
            entries[id]?.listeners = []
            guard error != .connectionClosed, error != .cancelled else { return }
            entries[id]?.stage = .finished
            publish(id, .error(error))
            if entry.engagement.type == .nfc { await rearmNFC(after: id) }
        case .success(let transport):
            if entry.engagement.isSuspended {
                // Suspended engagements refuse readers and keep listening.
                await transport.close()
                if entries[id]?.stage == .armed { startAccepting(id) }
                return
            }
            for listener in entry.listeners { await listener.close() }
            guard entries[id]?.stage == .armed else {
                await transport.close()
                return
            }
            entries[id]?.listeners = []
            await begin(id, transport: transport)
        }
    }

    private func startConnecting(_ id: EngagementID) {
        guard let entry = entries[id], let endpoint = entry.connectEndpoint else { return }
        let reverse = entry.readerEngagement != nil
        let engagement = entry.engagement.deviceEngagement
        let timeout = entry.config.connectTimeout
        // In reverse engagement the reader cannot know EDeviceKey beforehand, so there is no
        // BLE Ident to check; after a negotiated handover it read it from the Handover Select.
        let context = reverse ? ConnectionContext() : ConnectionContext(eDeviceKeyBytes: engagement.security.eDeviceKeyBytes)
        if reverse, let type = endpoint.transmissionType { publish(id, .connecting(type)) }
        let task = Task(executorPreference: executor) { [weak self, connector] in
            var result: Result<any MdocTransport, ProximityError>
            do throws(ProximityError) {
                let transport = try await connector.connect(to: endpoint, context: context, timeout: timeout)
                result = .success(transport)
                if reverse {
                    // Reverse engagement: the mdoc's first message carries its DeviceEngagement.
                    do throws(ProximityError) { try await transport.send(ReverseEngagement.deviceEngagementMessage(engagement)) } catch {
                        await transport.close()
                        result = .failure(error)
                    }
                }
            } catch {
                result = .failure(error)
            }
            guard let self else {
                if case .success(let transport) = result { await transport.close() }
                return
            }
            await self.connected(id, result)
        }
        entries[id]?.tasks.append(task)
    }

    private func connected(_ id: EngagementID, _ result: Result<any MdocTransport, ProximityError>) async {
        // A closed engagement neither starts a session nor reports an error.
        guard entries[id]?.stage == .armed else {
            if case .success(let transport) = result { await transport.close() }
            return
        }
        entries[id]?.tasks.removeAll()
        switch result {
        case .failure(let error):
            entries[id]?.stage = .finished
            publish(id, .error(error))
        case .success(let transport):
            await begin(id, transport: transport)
        }
    }

    /// A reader connected: the session starts and takes the screen.
    private func begin(_ id: EngagementID, transport: any MdocTransport) async {
        guard let entry = entries[id] else {
            await transport.close()
            return
        }
        entries[id]?.stage = .transferring
        // The connection and the switch of the active engagement are one UI step.
        if activeID != id { active.send(entry.engagement) }
        // A reader connecting to another engagement takes the screen from finished
        // sessions: they leave (or NFC re-armed after each session would pile them up).
        for finished in order where finished != id && entries[finished]?.stage == .finished { drop(finished) }
        if entry.engagement.type == .nfc {
            publish(id, .connected(transport.transmissionType))
        } else if entry.readerEngagement == nil {
            publish(id, .connecting(transport.transmissionType))
        }
        for other in order where other != id {
            guard let otherEntry = entries[other], otherEntry.stage == .armed, !otherEntry.engagement.isSuspended else { continue }
            otherEntry.engagement.setSuspended(true)
            entries[other]?.autoSuspended = true
            publish(other, .suspended)
        }
        let core = HolderSessionCore(
            eDeviceKey: entry.eDeviceKey, deviceEngagement: entry.engagement.deviceEngagement,
            handover: entries[id]?.handover ?? entry.handover,
            expectedReaderKey: entry.readerEngagement?.security.eDeviceKeyEncoded,
            readerTrustAnchors: entry.config.readerTrustAnchors,
            requireReaderAuthentication: entry.config.requireReaderAuthentication,
            messageTimeout: entry.config.messageTimeout, providerTimeout: entry.config.providerTimeout)
        let transfer = TransferManager(engagementId: id, transport: transport, hub: eventHub, clock: clock, core: core,
                                       providerTimeout: entry.config.providerTimeout, executor: executor)
        entry.engagement.setTransferManager(transfer)
        await transfer.start()
        let monitor = Task(executorPreference: executor) { [weak self] in
            await transfer.waitUntilEnded()
            await self?.transferEnded(id)
        }
        entries[id]?.tasks.append(monitor)
    }

    /// The session ended: its terminal state stays; the others resume; NFC is re-armed.
    private func transferEnded(_ id: EngagementID) async {
        guard let entry = entries[id], entry.stage == .transferring else { return }
        entries[id]?.stage = .finished
        entries[id]?.tasks.removeAll()
        let (resumed, activate) = releaseSuspended()
        for other in resumed { publish(other, .resumed) }
        if let activate, let engagement = entries[activate]?.engagement {
            active.send(engagement)
            eventHub.updateContext(context)
        }
        if entry.engagement.type == .nfc { await rearmNFC(after: id) }
    }

    /// Resumes the engagements suspended for a session that ended (without events: the
    /// caller publishes them), starts the reverse engagements that waited for it, and
    /// returns those resumed and the one created meanwhile that becomes active.
    private func releaseSuspended() -> (resumed: [EngagementID], activate: EngagementID?) {
        var resumed: [EngagementID] = []
        var activate: EngagementID?
        for other in order where entries[other]?.autoSuspended == true {
            guard let otherEntry = entries[other] else { continue }
            entries[other]?.autoSuspended = false
            otherEntry.engagement.setSuspended(false)
            resumed.append(other)
            if otherEntry.activatesAfterTransfer {
                entries[other]?.activatesAfterTransfer = false
                activate = other
                if otherEntry.connectEndpoint != nil, otherEntry.readerEngagement != nil { startConnecting(other) }
            }
        }
        return (resumed, activate)
    }

    /// Arms a fresh NFC engagement after one finished, in the background.
    private func rearmNFC(after id: EngagementID) async {
        guard let config = entries[id]?.config else { return }
        guard let key = try? makeEphemeralKey() else { return }
        _ = try? await armNFC(id: EngagementID(), key: key, config: config, byApp: false)
    }
}
