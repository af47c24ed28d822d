import Foundation
import Mdoc
import WalletCrypto
import WalletRuntime

/// A platform's Bluetooth LE stack as the SDK needs it: it performs
/// ``BLERadioCommand``s and reports every callback as a ``BLERadioEvent``. A
/// CoreBluetooth adapter (CBPeripheralManager / CBCentralManager) or an Android one
/// (BluetoothGattServer / BluetoothGatt) implements it in a few lines per command;
/// ``SimulatedBLEAir`` implements it in-process for tests and benchmarks.
public protocol BLERadio: Sendable {
    /// Where the radio reports its callbacks; set once, before the first command.
    func setEventHandler(_ handler: @escaping @Sendable (BLERadioEvent) -> Void)
    /// Performs one command. Results come back as events, on any thread.
    func perform(_ command: BLERadioCommand)
}

/// The thin driver of a ``BLEGattMachine``: an ``MdocTransport`` over a ``BLERadio``.
///
/// Radio callbacks may arrive on any thread and may re-enter (a radio may report an
/// event while performing a command); the driver applies them to the machine one at a
/// time under a lock and performs the resulting commands in the machine's order,
/// outside the lock, from whichever caller is draining.
public final class BLETransport: MdocTransport {
    private struct Core {
        var machine: BLEGattMachine
        var pending: [BLEGattMachine.Effect] = []
        var draining = false
    }

    private let core: LockedBox<Core>
    private let radio: any BLERadio
    private let inbox: Mailbox<[UInt8]>
    private let link: Mailbox<Bool>

    /// A transport driving `machine` over `radio`; nothing happens before ``start()``.
    public init(machine: BLEGattMachine, radio: any BLERadio, clock: any WalletClock = SystemClock()) {
        self.core = LockedBox(Core(machine: machine))
        self.radio = radio
        self.inbox = Mailbox(clock: clock)
        self.link = Mailbox(clock: clock)
    }

    /// `.ble`.
    public var transmissionType: TransmissionType { .ble }

    /// Where the link stands.
    public var phase: BLEGattMachine.Phase { core.withLock { $0.machine.phase } }

    /// Whether messages go over L2CAP.
    public var usesL2CAP: Bool { core.withLock { $0.machine.usingL2CAP } }

    /// Connects the radio's callbacks and starts advertising or scanning.
    public func start() {
        radio.setEventHandler { [weak self] event in self?.handle(event) }
        apply { $0.start() }
    }

    /// Feeds one radio callback (what a platform adapter calls).
    public func handle(_ event: BLERadioEvent) {
        apply { $0.handle(event) }
    }

    /// Waits until the transfer may begin (start signal or L2CAP channel).
    func waitUntilEstablished(timeout: Duration?) async throws(ProximityError) {
        let established = try await link.next(timeout: timeout)
        guard established else { throw .connectionClosed }
    }

    /// Sends one message in MTU-sized values (or over L2CAP).
    public func send(_ message: [UInt8]) async throws(ProximityError) {
        var failure: ProximityError?
        apply { machine in
            do throws(ProximityError) { return try machine.send(message) } catch { failure = error; return [] }
        }
        if let failure { throw failure }
    }

    /// The next whole message.
    public func receive(timeout: Duration?) async throws(ProximityError) -> [UInt8] {
        try await inbox.next(timeout: timeout)
    }

    /// Sends the end signal and disconnects.
    public func close() async {
        apply { $0.close() }
        inbox.finish()
        link.finish()
    }

    private func apply(_ step: (inout BLEGattMachine) -> [BLEGattMachine.Effect]) {
        let drain = core.withLock { core -> Bool in
            core.pending += step(&core.machine)
            guard !core.draining else { return false }
            core.draining = true
            return true
        }
        guard drain else { return }
        // The pending effects are taken as a batch: a message of n values is n effects,
        // and taking them one at a time from the front of the array moved the rest each
        // time (quadratic in n). Effects added while a batch runs form the next batch, so
        // the order is unchanged.
        while true {
            let batch = core.withLock { core -> [BLEGattMachine.Effect] in
                if core.pending.isEmpty { core.draining = false }
                let batch = core.pending
                core.pending = []
                return batch
            }
            guard !batch.isEmpty else { return }
            for effect in batch { perform(effect) }
        }
    }

    private func perform(_ effect: BLEGattMachine.Effect) {
        switch effect {
        case .radio(let command): radio.perform(command)
        case .established: link.push(true)
        case .message(let message): inbox.push(message)
        case .ended(let ending):
            switch ending {
            case .byPeer, .locally: inbox.finish(.connectionClosed); link.finish(.connectionClosed)
            case .failed(let error): inbox.finish(error); link.finish(error)
            }
        }
    }
}

/// Listens and connects over BLE with a platform radio, for either party: the holder
/// (``SessionRole/mdoc``) or the reader. Which GATT role it plays follows from the mode
/// and the party (``BLEMode/gattRole(of:)``); the engagement announces the mode and a
/// fresh service UUID.
public struct BLEConnector: MdocTransportConnector {
    /// The party this connector acts for.
    public let party: SessionRole
    /// The modes it supports, in order of preference.
    public let modes: [BLEMode]
    /// Whether it uses L2CAP when the peer offers it.
    public let useL2CAP: Bool
    /// The PSM of this side's L2CAP channel when it is the GATT server (announced in
    /// peripheral server mode, option 21).
    public let l2capPSM: UInt16?
    /// The BLE device address announced in peripheral server mode (option 20), if any.
    public let peripheralAddress: [UInt8]?
    private let makeRadio: @Sendable () -> any BLERadio
    private let makeServiceUUID: @Sendable () -> UUID
    private let clock: any WalletClock

    /// A connector that opens a fresh radio session with `makeRadio` for each link.
    public init(party: SessionRole, modes: [BLEMode] = [.peripheralServer, .centralClient], useL2CAP: Bool = false,
                l2capPSM: UInt16? = nil, peripheralAddress: [UInt8]? = nil, clock: any WalletClock = SystemClock(),
                makeRadio: @escaping @Sendable () -> any BLERadio) {
        self.init(party: party, modes: modes, useL2CAP: useL2CAP, l2capPSM: l2capPSM, peripheralAddress: peripheralAddress,
                  clock: clock, serviceUUIDs: { SystemRandom().uuid() }, makeRadio: makeRadio)
    }

    /// A connector whose announced service UUIDs come from `serviceUUIDs` (tests
    /// reproducing published vectors).
    init(party: SessionRole, modes: [BLEMode], useL2CAP: Bool, l2capPSM: UInt16?, peripheralAddress: [UInt8]?,
         clock: any WalletClock, serviceUUIDs: @escaping @Sendable () -> UUID, makeRadio: @escaping @Sendable () -> any BLERadio) {
        self.makeServiceUUID = serviceUUIDs
        self.party = party
        self.modes = modes
        self.useL2CAP = useL2CAP
        self.l2capPSM = l2capPSM
        self.peripheralAddress = peripheralAddress
        self.clock = clock
        self.makeRadio = makeRadio
    }

    /// BLE endpoints offering a mode this connector supports.
    public func canConnect(to endpoint: TransportEndpoint) -> Bool { chooseMode(endpoint) != nil }

    private func chooseMode(_ endpoint: TransportEndpoint) -> (BLEMode, UUID)? {
        guard let options = endpoint.bleOptions else { return nil }
        for mode in modes {
            switch mode {
            case .peripheralServer where options.peripheralServerMode:
                if let uuid = options.peripheralServerUUID.flatMap(UUID.init(bytes:)) { return (mode, uuid) }
            case .centralClient where options.centralClientMode:
                if let uuid = (options.centralClientUUID ?? options.peripheralServerUUID).flatMap(UUID.init(bytes:)) {
                    return (mode, uuid)
                }
            default: continue
            }
        }
        return nil
    }

    /// Connects to the party that announced `endpoint`: advertises or scans as the mode
    /// requires, and returns once the transfer may begin.
    public func connect(to endpoint: TransportEndpoint, context: ConnectionContext,
                        timeout: Duration?) async throws(ProximityError) -> any MdocTransport {
        guard let (mode, uuid) = chooseMode(endpoint) else { throw .transportFailed(.unsupportedEndpoint) }
        let role = mode.gattRole(of: party)
        let ident = mode == .centralClient ? context.eDeviceKeyBytes.map { BLEIdent.value(eDeviceKeyBytes: $0) } : nil
        let psm = role == .server ? l2capPSM : endpoint.bleOptions?.peripheralServerL2CAPPSM.flatMap { UInt16(exactly: $0) }
        let transport = BLETransport(machine: BLEGattMachine(role: role, mode: mode, serviceUUID: uuid, ident: ident,
                                                             l2capPSM: psm, useL2CAP: useL2CAP),
                                     radio: makeRadio(), clock: clock)
        transport.start()
        do {
            try await transport.waitUntilEstablished(timeout: timeout)
        } catch {
            await transport.close()
            throw error
        }
        return transport
    }

    /// Announces a fresh service UUID in the first supported mode and waits for the peer.
    public func listen(context: ConnectionContext) async throws(ProximityError) -> any MdocTransportListener {
        guard let mode = modes.first else { throw .transportFailed(.unsupportedEndpoint) }
        let uuid = makeServiceUUID()
        let role = mode.gattRole(of: party)
        let options: DeviceRetrievalMethod.BLEOptions
        switch mode {
        case .peripheralServer:
            options = .init(peripheralServerMode: true, centralClientMode: false, peripheralServerUUID: uuid.bytes,
                            peripheralServerDeviceAddress: peripheralAddress,
                            peripheralServerL2CAPPSM: role == .server && useL2CAP ? l2capPSM.map(UInt64.init) : nil)
        case .centralClient:
            options = .init(peripheralServerMode: false, centralClientMode: true, centralClientUUID: uuid.bytes)
        }
        let ident = mode == .centralClient ? context.eDeviceKeyBytes.map { BLEIdent.value(eDeviceKeyBytes: $0) } : nil
        let psm = role == .server ? l2capPSM : nil
        let link: @Sendable () -> BLETransport = { [makeRadio, clock, useL2CAP] in
            BLETransport(machine: BLEGattMachine(role: role, mode: mode, serviceUUID: uuid, ident: ident, l2capPSM: psm,
                                                 useL2CAP: useL2CAP),
                         radio: makeRadio(), clock: clock)
        }
        return BLEListener(endpoint: .ble(options), makeLink: link)
    }
}

/// A BLE link waiting for its peer under the engagement's service UUID: the
/// advertisement or scan runs from the moment the listener exists.
///
/// A link that ``accept(timeout:)`` handed out belongs to its session (or to the
/// holder that refused it: a suspended engagement closes the reader's link and accepts
/// again); the next accept advertises or scans anew under the same UUID, so the code an
/// engagement shows stays reachable for as long as it listens.
final class BLEListener: MdocTransportListener {
    let endpoint: TransportEndpoint
    private let makeLink: @Sendable () -> BLETransport
    private struct State {
        var waiting: BLETransport?
        var closed = false
    }
    private let state = LockedBox(State())

    init(endpoint: TransportEndpoint, makeLink: @escaping @Sendable () -> BLETransport) {
        self.endpoint = endpoint
        self.makeLink = makeLink
        let first = makeLink()
        state.withLock { $0.waiting = first }
        first.start()
    }

    func accept(timeout: Duration?) async throws(ProximityError) -> any MdocTransport {
        let (link, fresh) = state.withLock { state -> (BLETransport?, Bool) in
            guard !state.closed else { return (nil, false) }
            if let waiting = state.waiting { return (waiting, false) }
            let link = makeLink()
            state.waiting = link
            return (link, true)
        }
        guard let link else { throw .connectionClosed }
        if fresh { link.start() }
        do {
            try await link.waitUntilEstablished(timeout: timeout)
        } catch {
            // A link that ended before the transfer began cannot be reached again.
            if error != .cancelled, !error.isTimeout { state.withLock { if $0.waiting === link { $0.waiting = nil } } }
            throw error
        }
        state.withLock { if $0.waiting === link { $0.waiting = nil } }
        return link
    }

    /// Stops advertising or scanning; a link already handed out is its session's.
    func close() async {
        let waiting = state.withLock { state -> BLETransport? in
            state.closed = true
            defer { state.waiting = nil }
            return state.waiting
        }
        await waiting?.close()
    }
}

extension ProximityError {
    var isTimeout: Bool { if case .timeout = self { return true } else { return false } }
}
