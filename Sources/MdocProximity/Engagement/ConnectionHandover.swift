import CBOR
import Foundation
import Mdoc

/// The carrier power state of an Alternative Carrier record (NFC Forum Connection
/// Handover 1.5 §6.2).
public enum CarrierPowerState: UInt8, Hashable, Sendable {
    /// Off.
    case inactive = 0
    /// On.
    case active = 1
    /// Being switched on.
    case activating = 2
    /// Not known.
    case unknown = 3
}

/// An Alternative Carrier record ("ac"): names a carrier configuration record by id,
/// and auxiliary records (the device engagement, "mdoc").
public struct AlternativeCarrier: Hashable, Sendable {
    /// The carrier's power state.
    public var powerState: CarrierPowerState
    /// The id of the carrier configuration record.
    public var carrierDataReference: [UInt8]
    /// The ids of auxiliary records.
    public var auxiliaryDataReferences: [[UInt8]]

    /// An alternative carrier record.
    public init(powerState: CarrierPowerState = .active, carrierDataReference: [UInt8], auxiliaryDataReferences: [[UInt8]] = []) {
        self.powerState = powerState
        self.carrierDataReference = carrierDataReference
        self.auxiliaryDataReferences = auxiliaryDataReferences
    }

    /// The record: CPS, CARRIER_DATA_REFERENCE (length + id), the count of auxiliary
    /// references and each (length + id).
    public func record() throws(ProximityError) -> NDEFRecord {
        let references = [carrierDataReference] + auxiliaryDataReferences
        guard references.allSatisfy({ $0.count <= 255 }), auxiliaryDataReferences.count <= 255 else {
            throw .messageTooLarge(size: references.map(\.count).max() ?? 0, limit: 255)
        }
        var payload: [UInt8] = [powerState.rawValue, UInt8(carrierDataReference.count)] + carrierDataReference
        payload.append(UInt8(auxiliaryDataReferences.count))
        for reference in auxiliaryDataReferences { payload += [UInt8(reference.count)] + reference }
        return NDEFRecord(typeNameFormat: NDEFRecord.wellKnown, type: ConnectionHandover.alternativeCarrierType, payload: payload)
    }

    /// Parses an "ac" record's payload.
    public init(payload: [UInt8]) throws(ProximityError) {
        var reader = ByteReader(payload)
        let state = try reader.byte()
        powerState = CarrierPowerState(rawValue: state & 0x03) ?? .unknown
        carrierDataReference = try reader.bytes(Int(try reader.byte()))
        let count = Int(try reader.byte())
        var auxiliary: [[UInt8]] = []
        for _ in 0..<count { auxiliary.append(try reader.bytes(Int(try reader.byte()))) }
        auxiliaryDataReferences = auxiliary
        guard reader.isAtEnd else { throw .malformedFrame(.lengthMismatch(declared: payload.count - reader.remaining, actual: payload.count)) }
    }
}

/// Bluetooth LE out-of-band data: the AD structures of an
/// `application/vnd.bluetooth.le.oob` carrier configuration record (Bluetooth Core
/// Specification Supplement §1; ISO 18013-5 §8.2.2.2 for what an mdoc puts in it).
public struct BLEOutOfBandData: Hashable, Sendable {
    /// The LE Role AD value (Core Specification Supplement §1.17).
    public enum LERole: UInt8, Hashable, Sendable {
        /// Only the peripheral role.
        case peripheralOnly = 0x00
        /// Only the central role.
        case centralOnly = 0x01
        /// Both, peripheral preferred.
        case peripheralPreferred = 0x02
        /// Both, central preferred.
        case centralPreferred = 0x03
    }

    /// AD type 0x1B: LE Bluetooth Device Address, 7 bytes (the address, least
    /// significant byte first, then the address type: 0 public, 1 random).
    public var deviceAddress: [UInt8]?
    /// AD type 0x1C: LE Role.
    public var role: LERole?
    /// AD type 0x07: the complete list of 128-bit service UUIDs (the SDK writes and
    /// reads one).
    public var serviceUUID: UUID?

    /// Out-of-band data with the given fields.
    public init(deviceAddress: [UInt8]? = nil, role: LERole?, serviceUUID: UUID? = nil) {
        self.deviceAddress = deviceAddress
        self.role = role
        self.serviceUUID = serviceUUID
    }

    /// The AD structures (length, type, data): address, role, then UUID, as ISO
    /// 18013-5 Annex D shows them. UUIDs go least significant byte first.
    public var payload: [UInt8] {
        var bytes: [UInt8] = []
        if let address = deviceAddress, address.count == 7 { bytes += [0x08, 0x1B] + address }
        if let role { bytes += [0x02, 0x1C, role.rawValue] }
        if let serviceUUID { bytes += [0x11, 0x07] + serviceUUID.bytes.reversed() }
        return bytes
    }

    /// Parses the AD structures; structures of other types are skipped.
    public init(payload: [UInt8]) throws(ProximityError) {
        var reader = ByteReader(payload)
        var address: [UInt8]?, role: LERole?, uuid: UUID?
        while !reader.isAtEnd {
            let length = Int(try reader.byte())
            guard length > 0 else { continue }
            let type = try reader.byte()
            let data = try reader.bytes(length - 1)
            switch type {
            case 0x1B:
                guard data.count == 7 else { throw .malformedFrame(.lengthMismatch(declared: 7, actual: data.count)) }
                address = data
            case 0x1C:
                guard data.count == 1, let value = LERole(rawValue: data[0]) else {
                    throw .malformedFrame(.lengthMismatch(declared: 1, actual: data.count))
                }
                role = value
            case 0x06, 0x07:
                // One or more 128-bit UUIDs, least significant byte first; the last is used.
                guard data.count % 16 == 0, data.count >= 16 else {
                    throw .malformedFrame(.lengthMismatch(declared: 16, actual: data.count))
                }
                uuid = UUID(bytes: Array(data.suffix(16).reversed()))
            default:
                continue
            }
        }
        self.init(deviceAddress: address, role: role, serviceUUID: uuid)
    }
}

/// One carrier of a Handover Select or Request: its configuration, as ISO 18013-5
/// §8.2.2.1 defines the records.
public enum HandoverCarrier: Hashable, Sendable {
    /// Bluetooth LE (`application/vnd.bluetooth.le.oob`, id "0").
    case ble(BLEOutOfBandData)
    /// NFC data transfer (`iso.org:18013:nfc`, id "nfc"): the mdoc's APDU data limits
    /// (absent in a reader's Handover Request).
    case nfc(maxCommandDataLength: UInt64?, maxResponseDataLength: UInt64?)
    /// Wi-Fi Aware (`application/vnd.wfa.nan`, id "W").
    case wifiAware(WiFiAwareCarrier)
    /// A carrier this module does not model (kept as read), including the SDK's own
    /// test carriers (`application/vnd.walletsdk.retrieval`, id "sdk", whose payload is
    /// the DeviceRetrievalMethod CBOR).
    case other(NDEFRecord)

    /// The media type of the SDK's test carriers (TCP, in-memory): not an ISO carrier.
    public static let sdkCarrierType = Array("application/vnd.walletsdk.retrieval".utf8)

    /// The carrier configuration record.
    public func record() -> NDEFRecord {
        switch self {
        case .ble(let data):
            return NDEFRecord(typeNameFormat: NDEFRecord.mediaType, type: ConnectionHandover.bleCarrierType, id: Array("0".utf8),
                              payload: data.payload)
        case .nfc(let command, let response):
            // Version 1, then (length, type, big-endian value) for each limit given.
            var payload: [UInt8] = [0x01]
            if let command { payload += Self.lengthField(type: 0x01, value: command) }
            if let response { payload += Self.lengthField(type: 0x02, value: response) }
            return NDEFRecord(typeNameFormat: NDEFRecord.externalType, type: ConnectionHandover.nfcCarrierType,
                              id: Array("nfc".utf8), payload: payload)
        case .wifiAware(let carrier):
            return NDEFRecord(typeNameFormat: NDEFRecord.mediaType, type: ConnectionHandover.wifiAwareCarrierType,
                              id: Array("W".utf8), payload: carrier.payload)
        case .other(let record):
            return record
        }
    }

    private static func lengthField(type: UInt8, value: UInt64) -> [UInt8] {
        let bytes: [UInt8] = value > 0xFFFF ? [UInt8(value >> 16 & 0xff), UInt8(value >> 8 & 0xff), UInt8(value & 0xff)]
            : [UInt8(value >> 8 & 0xff), UInt8(value & 0xff)]
        return [UInt8(bytes.count + 1), type] + bytes
    }

    /// Reads a carrier configuration record.
    public init(record: NDEFRecord) throws(ProximityError) {
        switch (record.typeNameFormat, record.type) {
        case (NDEFRecord.mediaType, ConnectionHandover.bleCarrierType):
            self = .ble(try BLEOutOfBandData(payload: record.payload))
        case (NDEFRecord.externalType, ConnectionHandover.nfcCarrierType):
            var reader = ByteReader(record.payload)
            _ = try reader.byte()   // version
            var command: UInt64?, response: UInt64?
            while !reader.isAtEnd {
                let length = Int(try reader.byte())
                guard (2...9).contains(length) else { throw .malformedFrame(.lengthMismatch(declared: length, actual: 3)) }
                let type = try reader.byte()
                let value = try reader.bytes(length - 1).reduce(UInt64(0)) { $0 << 8 | UInt64($1) }
                if type == 0x01 { command = value } else if type == 0x02 { response = value }
            }
            self = .nfc(maxCommandDataLength: command, maxResponseDataLength: response)
        case (NDEFRecord.mediaType, ConnectionHandover.wifiAwareCarrierType):
            self = .wifiAware(try WiFiAwareCarrier(payload: record.payload))
        default:
            self = .other(record)
        }
    }

    /// The carrier an mdoc announces for one of its retrieval methods. In negotiated
    /// handover the UUID of central client mode is left out: the reader gave it in its
    /// Handover Request (ISO 18013-5 §8.3.3.1.1.2).
    public init?(mdocRetrievalMethod method: DeviceRetrievalMethod, negotiated: Bool = false) {
        switch method {
        case .ble(_, let options):
            let peripheral = options.peripheralServerMode, central = options.centralClientMode
            let role: BLEOutOfBandData.LERole
            let uuid: [UInt8]?
            switch (peripheral, central) {
            case (true, true): role = .centralPreferred; uuid = options.centralClientUUID ?? options.peripheralServerUUID
            case (true, false): role = .peripheralOnly; uuid = options.peripheralServerUUID
            case (false, true): role = .centralOnly; uuid = negotiated ? nil : options.centralClientUUID
            case (false, false): return nil
            }
            let address = options.peripheralServerDeviceAddress.flatMap { $0.count == 6 ? $0 + [0x01] : nil }
            self = .ble(BLEOutOfBandData(deviceAddress: address, role: role, serviceUUID: uuid.flatMap(UUID.init(bytes:))))
        case .nfc(_, let options):
            self = .nfc(maxCommandDataLength: options.maxCommandDataLength, maxResponseDataLength: options.maxResponseDataLength)
        case .wifiAware:
            return nil
        case .other:
            self = .other(NDEFRecord(typeNameFormat: NDEFRecord.mediaType, type: Self.sdkCarrierType, id: Array("sdk".utf8),
                                     payload: method.cbor.encoded()))
        }
    }

    /// The retrieval method this carrier offers, as read from the mdoc's Handover
    /// Select (`readerUUID`: the UUID the reader sent in its Handover Request, for a
    /// central client mode carrier without one).
    public func mdocRetrievalMethod(readerUUID: UUID? = nil) -> DeviceRetrievalMethod? {
        switch self {
        case .ble(let data):
            guard let role = data.role else { return nil }
            let uuid = (data.serviceUUID ?? readerUUID)?.bytes
            let address = data.deviceAddress.map { Array($0.prefix(6)) }
            switch role {
            case .peripheralOnly:
                return .ble(.init(peripheralServerMode: true, centralClientMode: false, peripheralServerUUID: uuid,
                                  peripheralServerDeviceAddress: address))
            case .centralOnly:
                return .ble(.init(peripheralServerMode: false, centralClientMode: true, centralClientUUID: uuid))
            case .peripheralPreferred, .centralPreferred:
                return .ble(.init(peripheralServerMode: true, centralClientMode: true, peripheralServerUUID: uuid,
                                  centralClientUUID: uuid, peripheralServerDeviceAddress: address))
            }
        case .nfc(let command, let response):
            return .nfc(.init(maxCommandDataLength: command ?? 255, maxResponseDataLength: response ?? 256))
        case .wifiAware(let carrier):
            return .wifiAware(carrier.retrievalOptions)
        case .other(let record):
            guard record.type == Self.sdkCarrierType, let item = try? CBOR.decode(record.payload) else { return nil }
            return try? DeviceRetrievalMethod(cbor: item)
        }
    }
}

/// One alternative of a parsed Handover Select or Request: an alternative carrier record
/// resolved to the carrier configuration it names, with its power state.
public struct HandoverAlternative: Hashable, Sendable {
    /// The carrier power state of the alternative carrier record.
    public let powerState: CarrierPowerState
    /// The carrier its configuration record describes.
    public let carrier: HandoverCarrier

    /// An alternative; a parser makes these from the records it reads.
    public init(powerState: CarrierPowerState, carrier: HandoverCarrier) {
        self.powerState = powerState
        self.carrier = carrier
    }
}

/// A parsed Handover Select message (what an mdoc serves over NFC).
public struct HandoverSelect: Sendable {
    /// The Connection Handover version (0x15 for 1.5).
    public let version: UInt8
    /// The carriers, in the order of the alternative carrier records, with their power states.
    public let carriers: [HandoverAlternative]
    /// The device engagement record's DeviceEngagement.
    public let deviceEngagement: DeviceEngagement
    /// The message exactly as read: it goes into the SessionTranscript's handover.
    public let encodedBytes: [UInt8]
}

/// A parsed Handover Request message (what a reader writes in negotiated handover).
public struct HandoverRequest: Sendable {
    /// The Connection Handover version.
    public let version: UInt8
    /// The collision resolution random number.
    public let randomNumber: UInt16?
    /// The carriers the reader offers, in order.
    public let carriers: [HandoverAlternative]
    /// The reader's engagement record, if any (`iso.org:18013:readerengagement`).
    public let readerEngagement: [UInt8]?
    /// The message exactly as read: it goes into the SessionTranscript's handover.
    public let encodedBytes: [UInt8]
}

/// NFC connection handover for ISO 18013-5 §8.2.2.1: the static Handover Select an
/// mdoc serves, the Handover Request / Select of negotiated handover, and their parsers.
public enum ConnectionHandover {
    /// Connection Handover 1.5.
    public static let version: UInt8 = 0x15
    /// "Hs".
    public static let handoverSelectType = Array("Hs".utf8)
    /// "Hr".
    public static let handoverRequestType = Array("Hr".utf8)
    /// "ac".
    public static let alternativeCarrierType = Array("ac".utf8)
    /// "cr".
    public static let collisionResolutionType = Array("cr".utf8)
    /// The external type of the device engagement record.
    public static let deviceEngagementType = Array("iso.org:18013:deviceengagement".utf8)
    /// The external type of the reader engagement record.
    public static let readerEngagementType = Array("iso.org:18013:readerengagement".utf8)
    /// The media type of the Bluetooth LE carrier.
    public static let bleCarrierType = Array("application/vnd.bluetooth.le.oob".utf8)
    /// The external type of the NFC carrier.
    public static let nfcCarrierType = Array("iso.org:18013:nfc".utf8)
    /// The media type of the Wi-Fi Aware carrier.
    public static let wifiAwareCarrierType = Array("application/vnd.wfa.nan".utf8)
    /// The id of the device engagement record.
    public static let mdocReference = Array("mdoc".utf8)

    /// A Handover Select message: the Hs record (version 1.5) with one active
    /// alternative carrier per carrier, each naming the device engagement record
    /// "mdoc" as auxiliary data; the carrier configuration records; and the device
    /// engagement record (ISO 18013-5 §8.2.2.1, in the order of Annex D).
    public static func handoverSelect(deviceEngagement: DeviceEngagement, carriers: [HandoverCarrier]) throws(ProximityError) -> [UInt8] {
        let records = carriers.map { $0.record() }
        var alternatives: [NDEFRecord] = []
        for record in records {
            alternatives.append(try AlternativeCarrier(carrierDataReference: record.id, auxiliaryDataReferences: [mdocReference]).record())
        }
        let hs = NDEFRecord(typeNameFormat: NDEFRecord.wellKnown, type: handoverSelectType,
                            payload: [version] + (alternatives.isEmpty ? [] : try NDEFMessage.encode(alternatives)))
        let engagement = NDEFRecord(typeNameFormat: NDEFRecord.externalType, type: deviceEngagementType, id: mdocReference,
                                    payload: deviceEngagement.encodedBytes)
        return try NDEFMessage.encode([hs] + records + [engagement])
    }

    /// A Handover Request message of a reader: the Hr record with the collision
    /// resolution record and one alternative carrier per carrier, then the carrier
    /// configuration records and, if given, the reader engagement record.
    public static func handoverRequest(carriers: [HandoverCarrier], randomNumber: UInt16,
                                       readerEngagement: [UInt8]? = nil) throws(ProximityError) -> [UInt8] {
        let records = carriers.map { $0.record() }
        var embedded = [NDEFRecord(typeNameFormat: NDEFRecord.wellKnown, type: collisionResolutionType,
                                   payload: [UInt8(randomNumber >> 8), UInt8(randomNumber & 0xff)])]
        for record in records {
            embedded.append(try AlternativeCarrier(carrierDataReference: record.id).record())
        }
        let hr = NDEFRecord(typeNameFormat: NDEFRecord.wellKnown, type: handoverRequestType,
                            payload: [version] + (try NDEFMessage.encode(embedded)))
        var all = [hr] + records
        if let readerEngagement {
            all.append(NDEFRecord(typeNameFormat: NDEFRecord.externalType, type: readerEngagementType,
                                  id: Array("mdocreader".utf8), payload: readerEngagement))
        }
        return try NDEFMessage.encode(all)
    }

    /// Parses a Handover Select; the device engagement record is required.
    public static func parseHandoverSelect(_ bytes: [UInt8]) throws(ProximityError) -> HandoverSelect {
        let records = try NDEFMessage.decode(bytes)
        guard let first = records.first, first.typeNameFormat == NDEFRecord.wellKnown, first.type == handoverSelectType,
              let version = first.payload.first else {
            throw .invalidEngagement(.notHandoverSelect)
        }
        guard let engagementRecord = records.first(where: {
            $0.typeNameFormat == NDEFRecord.externalType && $0.type == deviceEngagementType
        }) else {
            throw .invalidEngagement(.noDeviceEngagementRecord)
        }
        let engagement: DeviceEngagement
        do { engagement = try DeviceEngagement(encoded: engagementRecord.payload) } catch { throw .invalidEngagement(.unreadable(error)) }
        let carriers = try carriers(embedded: Array(first.payload.dropFirst()), records: Array(records.dropFirst()))
        return HandoverSelect(version: version, carriers: carriers, deviceEngagement: engagement, encodedBytes: bytes)
    }

    /// Parses a Handover Request.
    public static func parseHandoverRequest(_ bytes: [UInt8]) throws(ProximityError) -> HandoverRequest {
        let records = try NDEFMessage.decode(bytes)
        guard let first = records.first, first.typeNameFormat == NDEFRecord.wellKnown, first.type == handoverRequestType,
              let version = first.payload.first else {
            throw .invalidEngagement(.handover(.unexpectedHandoverMessage))
        }
        let embedded = Array(first.payload.dropFirst())
        var random: UInt16?
        if !embedded.isEmpty, let cr = try NDEFMessage.decode(embedded).first(where: { $0.type == collisionResolutionType }),
           cr.payload.count == 2 {
            random = UInt16(cr.payload[0]) << 8 | UInt16(cr.payload[1])
        }
        let carriers = try carriers(embedded: embedded, records: Array(records.dropFirst()))
        let readerEngagement = records.first { $0.typeNameFormat == NDEFRecord.externalType && $0.type == readerEngagementType }?.payload
        return HandoverRequest(version: version, randomNumber: random, carriers: carriers, readerEngagement: readerEngagement,
                               encodedBytes: bytes)
    }

    private static func carriers(embedded: [UInt8], records: [NDEFRecord]) throws(ProximityError) -> [HandoverAlternative] {
        guard !embedded.isEmpty else { return [] }
        var result: [HandoverAlternative] = []
        for record in try NDEFMessage.decode(embedded) where record.type == alternativeCarrierType {
            let alternative = try AlternativeCarrier(payload: record.payload)
            guard let configuration = records.first(where: { $0.id == alternative.carrierDataReference }) else { continue }
            result.append(HandoverAlternative(powerState: alternative.powerState, carrier: try HandoverCarrier(record: configuration)))
        }
        return result
    }
}

/// Reads bytes front to back with bounds checks (no index reaches past the end).
struct ByteReader {
    private let bytes: [UInt8]
    private var offset = 0

    init(_ bytes: [UInt8]) { self.bytes = bytes }

    var isAtEnd: Bool { offset >= bytes.count }
    var remaining: Int { bytes.count - offset }

    mutating func byte() throws(ProximityError) -> UInt8 {
        guard offset < bytes.count else { throw .malformedFrame(.tooShort(length: bytes.count, minimum: offset + 1)) }
        defer { offset += 1 }
        return bytes[offset]
    }

    mutating func bytes(_ count: Int) throws(ProximityError) -> [UInt8] {
        guard count >= 0, count <= bytes.count - offset else {
            throw .malformedFrame(.lengthMismatch(declared: count, actual: bytes.count - offset))
        }
        defer { offset += count }
        return Array(bytes[offset..<(offset + count)])
    }
}
