import Foundation

/// What a platform's Bluetooth stack reports to the GATT state machine (a CoreBluetooth
/// or Android adapter turns each callback into one of these).
public enum BLERadioEvent: Hashable, Sendable {
    /// Client: a peripheral advertising the service UUID was found.
    case peripheralDiscovered(BLEPeerID)
    /// Both: the link is up (the server sees a central connect; the client its connect succeed).
    case connected(BLEPeerID)
    /// Both: the ATT MTU was negotiated.
    case mtuNegotiated(Int)
    /// Client: the service was discovered with these characteristics.
    case servicesDiscovered([BLECharacteristic])
    /// Server: the client subscribed to a characteristic. Client: a subscription was confirmed.
    case subscribed(BLECharacteristic)
    /// Server: the client reads a characteristic (answer with ``BLERadioCommand/respondToRead(_:_:)``).
    case readRequested(BLECharacteristic)
    /// Client: a read returned this value.
    case readCompleted(BLECharacteristic, [UInt8])
    /// Server: the client wrote this value.
    case written(BLECharacteristic, [UInt8])
    /// Client: the server notified this value.
    case notified(BLECharacteristic, [UInt8])
    /// Both: the L2CAP channel is open.
    case l2capOpened
    /// Both: bytes arrived on the L2CAP channel (any chunking).
    case l2capReceived([UInt8])
    /// Both: the link is down.
    case disconnected
    /// Both: the platform reported a failure with its own code.
    case failed(code: Int)
}

/// What the GATT state machine asks the platform's Bluetooth stack to do.
public enum BLERadioCommand: Hashable, Sendable {
    /// Server: publish the service.
    case publishService(BLEServiceDefinition)
    /// Server: advertise the service UUID.
    case startAdvertising(UUID)
    /// Server: stop advertising.
    case stopAdvertising
    /// Client: scan for the service UUID.
    case startScanning(UUID)
    /// Client: stop scanning.
    case stopScanning
    /// Client: connect to a discovered peripheral.
    case connect(BLEPeerID)
    /// Client: discover the service.
    case discoverService(UUID)
    /// Client: read a characteristic.
    case read(BLECharacteristic)
    /// Client: subscribe to a characteristic's notifications.
    case subscribe(BLECharacteristic)
    /// Client: write a value (without response).
    case write(BLECharacteristic, [UInt8])
    /// Server: answer a read.
    case respondToRead(BLECharacteristic, [UInt8])
    /// Server: notify a value.
    case notify(BLECharacteristic, [UInt8])
    /// Client: open the L2CAP channel with this PSM.
    case openL2CAP(psm: UInt16)
    /// Both: send bytes on the L2CAP channel.
    case l2capSend([UInt8])
    /// Both: drop the link.
    case disconnect
}

/// How a BLE link ended.
public enum BLELinkEnding: Equatable, Sendable {
    /// The peer sent the end signal or disconnected after the transfer started.
    case byPeer
    /// This side closed it.
    case locally
    /// It failed.
    case failed(ProximityError)
}

/// The BLE transfer of ISO 18013-5 §8.3.3.1.1 as a sans-IO state machine, for either
/// GATT role in either mode: platform callbacks in (``BLERadioEvent``), radio commands
/// and session events out (``Effect``). No Bluetooth API, no threads, no clock: a
/// CoreBluetooth or Android adapter performs the commands and feeds the callbacks,
/// and ``BLETransport`` drives it as an ``MdocTransport``.
///
/// The flow: the server publishes the service and advertises its UUID; the client
/// scans, connects, discovers, reads Ident in central client mode (and refuses a
/// reader whose Ident is not HKDF(EDeviceKeyBytes, "BLEIdent")), subscribes to State
/// and Server2Client and writes the start signal (0x01) to State, or opens the L2CAP
/// channel instead when both sides use it. Messages go in values of at most MTU − 3
/// bytes with a leading continuation byte (``BLEMessageFramer``) or, over L2CAP, back
/// to back. Either side ends with the end signal (0x02) and a disconnect.
public struct BLEGattMachine: Sendable {
    /// Where the link stands.
    public enum Phase: String, Hashable, Sendable {
        /// Not started.
        case idle
        /// Server: advertising, waiting for a client.
        case advertising
        /// Server: connected, waiting for the start signal (or the L2CAP channel).
        case awaitingStart
        /// Client: scanning for the service UUID.
        case scanning
        /// Client: connecting to the peripheral found.
        case connecting
        /// Client: discovering the service.
        case discovering
        /// Client: reading the reader's Ident (central client mode).
        case identifying
        /// Client: reading the L2CAP PSM, or waiting for the channel.
        case openingL2CAP
        /// Client: subscribing to State and Server2Client.
        case subscribing
        /// Messages flow.
        case transferring
        /// The link has ended (see ``BLEGattMachine/ending``).
        case ended
    }

    /// What the machine asks for.
    public enum Effect: Equatable, Sendable {
        /// A command for the platform's Bluetooth stack.
        case radio(BLERadioCommand)
        /// The transfer may begin: the session's messages can flow.
        case established
        /// A whole session message arrived.
        case message([UInt8])
        /// The link ended.
        case ended(BLELinkEnding)
    }

    /// This side's GATT role.
    public let role: BLEGattRole
    /// The mode (fixes the characteristic UUIDs).
    public let mode: BLEMode
    /// The service UUID from the engagement.
    public let serviceUUID: UUID
    /// Server: the Ident value to serve; client: the value the server's Ident must have.
    public let ident: [UInt8]?
    /// Server: the PSM of its L2CAP channel; client: a PSM known from the engagement.
    public let l2capPSM: UInt16?
    /// Whether this side uses L2CAP when the peer offers it.
    public let useL2CAP: Bool

    /// Where the link stands.
    public private(set) var phase: Phase = .idle
    /// How the link ended, once ``phase`` is `.ended`.
    public private(set) var ending: BLELinkEnding?
    /// The negotiated ATT MTU (23 until negotiated).
    public private(set) var mtu = BLEMessageFramer.minimumMTU
    /// Whether messages go over L2CAP.
    public private(set) var usingL2CAP = false

    private var subscriptions: Set<BLECharacteristic> = []
    private var reassembler: BLEMessageReassembler
    private var l2capReassembler: L2CAPMessageReassembler
    private let maxMessageSize: Int

    /// A machine for `role` in `mode` on the service `serviceUUID`.
    public init(role: BLEGattRole, mode: BLEMode, serviceUUID: UUID, ident: [UInt8]? = nil, l2capPSM: UInt16? = nil,
                useL2CAP: Bool = false, maxMessageSize: Int = TCPTransport.defaultMaxMessageSize) {
        self.role = role
        self.mode = mode
        self.serviceUUID = serviceUUID
        self.ident = ident
        self.l2capPSM = l2capPSM
        self.useL2CAP = useL2CAP
        self.maxMessageSize = maxMessageSize
        self.reassembler = BLEMessageReassembler(mtu: BLEMessageFramer.maximumMTU, maxMessageSize: maxMessageSize)
        self.l2capReassembler = L2CAPMessageReassembler(maxMessageSize: maxMessageSize)
    }

    /// Starts: the server publishes and advertises, the client scans.
    public mutating func start() -> [Effect] {
        guard phase == .idle else { return [] }
        switch role {
        case .server:
            phase = .advertising
            return [.radio(.publishService(BLEServiceDefinition(uuid: serviceUUID, mode: mode))),
                    .radio(.startAdvertising(serviceUUID))]
        case .client:
            phase = .scanning
            return [.radio(.startScanning(serviceUUID))]
        }
    }

    /// Handles one platform event.
    public mutating func handle(_ event: BLERadioEvent) -> [Effect] {
        guard phase != .ended else { return [] }
        switch event {
        case .mtuNegotiated(let value):
            mtu = min(max(value, BLEMessageFramer.minimumMTU), BLEMessageFramer.maximumMTU)
            return []
        case .disconnected:
            return end(phase == .transferring ? .byPeer : .failed(.transportFailed(.bluetooth(.disconnected))), disconnect: false)
        case .failed(let code):
            return end(.failed(.transportFailed(.bluetooth(.radio(code: code)))), disconnect: true)
        default:
            break
        }
        switch role {
        case .server: return handleAsServer(event)
        case .client: return handleAsClient(event)
        }
    }

    /// Sends one session message (only while transferring).
    public mutating func send(_ message: [UInt8]) throws(ProximityError) -> [Effect] {
        guard phase == .transferring else {
            throw phase == .ended ? .connectionClosed : .invalidState(.notEngaged)
        }
        guard message.count <= maxMessageSize else { throw .messageTooLarge(size: message.count, limit: maxMessageSize) }
        if usingL2CAP { return [.radio(.l2capSend(L2CAPMessageReassembler.frame(message)))] }
        let framer: BLEMessageFramer
        do { framer = try BLEMessageFramer(mtu: mtu) } catch { throw error }
        let characteristic: BLECharacteristic = role == .server ? .server2Client : .client2Server
        return framer.fragments(of: message).map { fragment in
            role == .server ? .radio(.notify(characteristic, fragment)) : .radio(.write(characteristic, fragment))
        }
    }

    /// Ends the link from this side: the end signal on State (over GATT), then a disconnect.
    public mutating func close() -> [Effect] {
        guard phase != .ended else { return [] }
        var effects: [Effect] = []
        switch phase {
        case .advertising: effects.append(.radio(.stopAdvertising))
        case .scanning: effects.append(.radio(.stopScanning))
        case .transferring where !usingL2CAP:
            let end = BLETransportState.end.characteristicValue
            effects.append(.radio(role == .server ? .notify(.state, end) : .write(.state, end)))
        default: break
        }
        return effects + end(.locally, disconnect: phase != .advertising && phase != .scanning && phase != .idle)
    }

    // MARK: Server

    private mutating func handleAsServer(_ event: BLERadioEvent) -> [Effect] {
        switch event {
        case .connected:
            guard phase == .advertising else { return unexpected() }
            phase = .awaitingStart
            return []
        case .subscribed(let characteristic):
            subscriptions.insert(characteristic)
            return []
        case .readRequested(let characteristic):
            switch characteristic {
            case .ident where mode == .centralClient:
                return [.radio(.respondToRead(.ident, ident ?? []))]
            case .l2cap:
                return [.radio(.respondToRead(.l2cap, l2capPSM.map(Self.encodePSM) ?? []))]
            default:
                return [.radio(.respondToRead(characteristic, []))]
            }
        case .written(.state, let value):
            let signal: BLETransportState
            do { signal = try BLETransportState(characteristicValue: value) } catch { return end(.failed(error), disconnect: true) }
            switch (signal, phase) {
            case (.start, .awaitingStart):
                phase = .transferring
                return [.radio(.stopAdvertising), .established]
            case (.end, _):
                return end(phase == .transferring ? .byPeer : .failed(.connectionClosed), disconnect: true)
            default:
                return unexpected()
            }
        case .written(.client2Server, let value):
            guard phase == .transferring, !usingL2CAP else { return end(.failed(.malformedFrame(.unexpectedFragment)), disconnect: true) }
            return reassemble(value)
        case .l2capOpened:
            guard phase == .awaitingStart || phase == .advertising else { return unexpected() }
            // The client opening the channel is the start of the transfer over L2CAP.
            phase = .transferring
            usingL2CAP = true
            return [.radio(.stopAdvertising), .established]
        case .l2capReceived(let bytes):
            guard phase == .transferring, usingL2CAP else { return unexpected() }
            return reassembleL2CAP(bytes)
        default:
            return unexpected()
        }
    }

    // MARK: Client

    private mutating func handleAsClient(_ event: BLERadioEvent) -> [Effect] {
        switch event {
        case .peripheralDiscovered(let peer):
            guard phase == .scanning else { return [] }   // later advertisements of the same service
            phase = .connecting
            return [.radio(.stopScanning), .radio(.connect(peer))]
        case .connected:
            guard phase == .connecting else { return unexpected() }
            phase = .discovering
            return [.radio(.discoverService(serviceUUID))]
        case .servicesDiscovered(let found):
            guard phase == .discovering else { return unexpected() }
            var required: [BLECharacteristic] = [.state, .client2Server, .server2Client]
            if mode == .centralClient, ident != nil { required.append(.ident) }
            if let missing = required.first(where: { !found.contains($0) }) {
                return end(.failed(.transportFailed(.bluetooth(.missingCharacteristic(missing)))), disconnect: true)
            }
            if mode == .centralClient, ident != nil {
                phase = .identifying
                return [.radio(.read(.ident))]
            }
            return startTransfer(l2capAvailable: found.contains(.l2cap))
        case .readCompleted(.ident, let value):
            guard phase == .identifying else { return unexpected() }
            guard value.count == 16 else { return end(.failed(.malformedFrame(.invalidCharacteristicValue(.ident))), disconnect: true) }
            guard value == ident else { return end(.failed(.transportFailed(.bluetooth(.identMismatch))), disconnect: true) }
            return startTransfer(l2capAvailable: true)
        case .readCompleted(.l2cap, let value):
            guard phase == .openingL2CAP else { return unexpected() }
            guard let psm = Self.decodePSM(value) else {
                // No usable PSM: fall back to GATT.
                phase = .subscribing
                return [.radio(.subscribe(.state)), .radio(.subscribe(.server2Client))]
            }
            return [.radio(.openL2CAP(psm: psm))]
        case .subscribed(let characteristic):
            guard phase == .subscribing else { return [] }
            subscriptions.insert(characteristic)
            guard subscriptions.isSuperset(of: [.state, .server2Client]) else { return [] }
            phase = .transferring
            return [.radio(.write(.state, BLETransportState.start.characteristicValue)), .established]
        case .l2capOpened:
            guard phase == .openingL2CAP else { return unexpected() }
            phase = .transferring
            usingL2CAP = true
            return [.established]
        case .notified(.server2Client, let value):
            guard phase == .transferring, !usingL2CAP else { return end(.failed(.malformedFrame(.unexpectedFragment)), disconnect: true) }
            return reassemble(value)
        case .notified(.state, let value):
            let signal: BLETransportState
            do { signal = try BLETransportState(characteristicValue: value) } catch { return end(.failed(error), disconnect: true) }
            guard signal == .end else { return unexpected() }
            return end(phase == .transferring ? .byPeer : .failed(.connectionClosed), disconnect: true)
        case .l2capReceived(let bytes):
            guard phase == .transferring, usingL2CAP else { return unexpected() }
            return reassembleL2CAP(bytes)
        default:
            return unexpected()
        }
    }

    private mutating func startTransfer(l2capAvailable: Bool) -> [Effect] {
        if useL2CAP, let psm = l2capPSM {
            phase = .openingL2CAP
            return [.radio(.openL2CAP(psm: psm))]
        }
        if useL2CAP, l2capAvailable {
            phase = .openingL2CAP
            return [.radio(.read(.l2cap))]
        }
        phase = .subscribing
        return [.radio(.subscribe(.state)), .radio(.subscribe(.server2Client))]
    }

    // MARK: Helpers

    private mutating func reassemble(_ value: [UInt8]) -> [Effect] {
        guard value.count <= mtu - 3 else {
            return end(.failed(.malformedFrame(.declaredLengthTooLarge(declared: value.count, limit: mtu - 3))), disconnect: true)
        }
        do {
            guard let message = try reassembler.append(value) else { return [] }
            return [.message(message)]
        } catch {
            return end(.failed(error), disconnect: true)
        }
    }

    private mutating func reassembleL2CAP(_ bytes: [UInt8]) -> [Effect] {
        do {
            return try l2capReassembler.append(bytes).map(Effect.message)
        } catch {
            return end(.failed(error), disconnect: true)
        }
    }

    private mutating func unexpected() -> [Effect] {
        end(.failed(.transportFailed(.bluetooth(.unexpectedEvent))), disconnect: true)
    }

    private mutating func end(_ ending: BLELinkEnding, disconnect: Bool) -> [Effect] {
        phase = .ended
        self.ending = ending
        return (disconnect ? [.radio(.disconnect)] : []) + [.ended(ending)]
    }

    /// The L2CAP characteristic value: the PSM as a 4-byte big-endian integer (the
    /// SDK's reading; a 2-byte value is accepted too).
    static func encodePSM(_ psm: UInt16) -> [UInt8] { [0, 0, UInt8(psm >> 8), UInt8(psm & 0xff)] }

    static func decodePSM(_ value: [UInt8]) -> UInt16? {
        switch value.count {
        case 2: return UInt16(value[0]) << 8 | UInt16(value[1])
        case 4 where value[0] == 0 && value[1] == 0: return UInt16(value[2]) << 8 | UInt16(value[3])
        default: return nil
        }
    }
}
