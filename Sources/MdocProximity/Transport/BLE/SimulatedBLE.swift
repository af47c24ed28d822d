import Foundation
import WalletRuntime

/// An in-process BLE "air" for tests, demos and benchmarks: radios made here see each
/// other's advertisements, connect, discover the service, read, subscribe, write and
/// notify characteristic values and open L2CAP channels, with the ATT limits of a real
/// link (values of at most MTU − 3 bytes). Events are delivered synchronously to the
/// peer's handler, so a whole session runs deterministically without threads or timers.
///
/// Not a carrier anyone can reach from outside the process: it exists so that the
/// GATT state machines of both modes are exercised end to end in tests.
public final class SimulatedBLEAir: Sendable {
    /// The ATT MTU every link negotiates.
    public let mtu: Int
    /// L2CAP bytes are delivered in chunks of this size (to exercise reassembly).
    public let l2capChunkSize: Int

    private struct Weak { weak var radio: SimulatedBLERadio? }
    private struct State {
        var radios: [BLEPeerID: Weak] = [:]
        var advertisers: [UUID: BLEPeerID] = [:]
        var scanners: [UUID: [BLEPeerID]] = [:]
        var valuesCarried = 0
        var nextID = 0
    }
    private let state = LockedBox(State())

    /// An empty air.
    public init(mtu: Int = 185, l2capChunkSize: Int = 97) {
        self.mtu = min(max(mtu, BLEMessageFramer.minimumMTU), BLEMessageFramer.maximumMTU)
        self.l2capChunkSize = max(1, l2capChunkSize)
    }

    /// A new radio in this air.
    public func makeRadio() -> SimulatedBLERadio {
        let id = state.withLock { state -> BLEPeerID in
            state.nextID += 1
            return BLEPeerID("sim-\(state.nextID)")
        }
        let radio = SimulatedBLERadio(id: id, air: self)
        state.withLock { $0.radios[id] = Weak(radio: radio) }
        return radio
    }

    /// Characteristic values and L2CAP chunks carried so far (for tests and benchmarks).
    public var valuesCarried: Int { state.withLock { $0.valuesCarried } }

    /// Radios advertising now.
    public var advertiserCount: Int { state.withLock { $0.advertisers.count } }

    fileprivate func radio(_ id: BLEPeerID) -> SimulatedBLERadio? { state.withLock { $0.radios[id]?.radio } }

    fileprivate func advertise(_ uuid: UUID, by id: BLEPeerID) -> [SimulatedBLERadio] {
        state.withLock { state in
            state.advertisers[uuid] = id
            let waiting = state.scanners.removeValue(forKey: uuid) ?? []
            return waiting.compactMap { state.radios[$0]?.radio }
        }
    }

    fileprivate func stopAdvertising(by id: BLEPeerID) {
        state.withLock { state in state.advertisers = state.advertisers.filter { $0.value != id } }
    }

    fileprivate func scan(_ uuid: UUID, by id: BLEPeerID) -> BLEPeerID? {
        state.withLock { state in
            if let advertiser = state.advertisers[uuid] { return advertiser }
            state.scanners[uuid, default: []].append(id)
            return nil
        }
    }

    fileprivate func stopScanning(by id: BLEPeerID) {
        state.withLock { state in
            for key in state.scanners.keys { state.scanners[key]?.removeAll { $0 == id } }
        }
    }

    fileprivate func carried(_ count: Int = 1) { state.withLock { $0.valuesCarried += count } }
}

/// One radio of a ``SimulatedBLEAir``.
public final class SimulatedBLERadio: BLERadio {
    /// This radio's identifier, as peers see it.
    public let id: BLEPeerID
    private let air: SimulatedBLEAir

    private struct State {
        var handler: (@Sendable (BLERadioEvent) -> Void)?
        var service: BLEServiceDefinition?
        var peer: BLEPeerID?
    }
    private let state = LockedBox(State())

    fileprivate init(id: BLEPeerID, air: SimulatedBLEAir) {
        self.id = id
        self.air = air
    }

    /// Sets where events go.
    public func setEventHandler(_ handler: @escaping @Sendable (BLERadioEvent) -> Void) {
        state.withLock { $0.handler = handler }
    }

    private func deliver(_ event: BLERadioEvent) {
        state.withLock { $0.handler }?(event)
    }

    private var peer: SimulatedBLERadio? { state.withLock { $0.peer }.flatMap(air.radio) }

    /// Performs a command against the other radios of the air.
    public func perform(_ command: BLERadioCommand) {
        switch command {
        case .publishService(let definition):
            state.withLock { $0.service = definition }
        case .startAdvertising(let uuid):
            for scanner in air.advertise(uuid, by: id) { scanner.deliver(.peripheralDiscovered(id)) }
        case .stopAdvertising:
            air.stopAdvertising(by: id)
        case .startScanning(let uuid):
            if let found = air.scan(uuid, by: id) { deliver(.peripheralDiscovered(found)) }
        case .stopScanning:
            air.stopScanning(by: id)
        case .connect(let target):
            guard let server = air.radio(target) else { deliver(.failed(code: 1)); return }
            state.withLock { $0.peer = target }
            server.state.withLock { $0.peer = id }
            server.deliver(.connected(id))
            deliver(.connected(target))
            server.deliver(.mtuNegotiated(air.mtu))
            deliver(.mtuNegotiated(air.mtu))
        case .discoverService(let uuid):
            guard let service = peer?.state.withLock({ $0.service }), service.uuid == uuid else {
                deliver(.failed(code: 2))
                return
            }
            deliver(.servicesDiscovered(service.mode.characteristics))
        case .read(let characteristic):
            peer?.deliver(.readRequested(characteristic))
        case .respondToRead(let characteristic, let value):
            peer?.deliver(.readCompleted(characteristic, value))
        case .subscribe(let characteristic):
            peer?.deliver(.subscribed(characteristic))
            deliver(.subscribed(characteristic))
        case .write(let characteristic, let value):
            guard value.count <= air.mtu - 3 else { deliver(.failed(code: 3)); return }
            air.carried()
            peer?.deliver(.written(characteristic, value))
        case .notify(let characteristic, let value):
            guard value.count <= air.mtu - 3 else { deliver(.failed(code: 3)); return }
            air.carried()
            peer?.deliver(.notified(characteristic, value))
        case .openL2CAP:
            guard let peer else { deliver(.failed(code: 4)); return }
            peer.deliver(.l2capOpened)
            deliver(.l2capOpened)
        case .l2capSend(let bytes):
            guard let peer else { return }
            var start = 0
            repeat {
                let end = min(start + air.l2capChunkSize, bytes.count)
                air.carried()
                peer.deliver(.l2capReceived(Array(bytes[start..<end])))
                start = end
            } while start < bytes.count
        case .disconnect:
            air.stopAdvertising(by: id)
            air.stopScanning(by: id)
            let other = peer
            state.withLock { $0.peer = nil }
            other?.state.withLock { $0.peer = nil }
            other?.deliver(.disconnected)
        }
    }
}
