import Foundation
import Mdoc

/// One NDEF record (NFC Forum NDEF 1.0), short or long form.
public struct NDEFRecord: Sendable, Hashable {
    /// Type name format (1 well-known, 2 media type, 4 external).
    public var typeNameFormat: UInt8
    /// Record type.
    public var type: [UInt8]
    /// Record id.
    public var id: [UInt8]
    /// Payload.
    public var payload: [UInt8]

    /// Creates a record.
    public init(typeNameFormat: UInt8, type: [UInt8], id: [UInt8] = [], payload: [UInt8]) {
        self.typeNameFormat = typeNameFormat
        self.type = type
        self.id = id
        self.payload = payload
    }
}

/// NDEF message encoding and the NFC static handover of ISO 18013-5 §8.2.2.1.
public enum NDEFMessage {
    /// The largest message parsed.
    public static let maxSize = 64 * 1024

    /// Encodes records into one message (MB on the first, ME on the last).
    public static func encode(_ records: [NDEFRecord]) -> [UInt8] {
        var bytes: [UInt8] = []
        for (index, record) in records.enumerated() {
            let short = record.payload.count < 256
            var header = record.typeNameFormat & 0x07
            if index == 0 { header |= 0x80 }
            if index == records.count - 1 { header |= 0x40 }
            if short { header |= 0x10 }
            if !record.id.isEmpty { header |= 0x08 }
            bytes.append(header)
            bytes.append(UInt8(record.type.count))
            if short {
                bytes.append(UInt8(record.payload.count))
            } else {
                let n = UInt32(record.payload.count)
                bytes += [UInt8(n >> 24), UInt8(n >> 16 & 0xff), UInt8(n >> 8 & 0xff), UInt8(n & 0xff)]
            }
            if !record.id.isEmpty { bytes.append(UInt8(record.id.count)) }
            bytes += record.type + record.id + record.payload
        }
        return bytes
    }

    /// Parses a message; rejects chunked records and lengths beyond the input.
    public static func decode(_ bytes: [UInt8]) throws(ProximityError) -> [NDEFRecord] {
        guard bytes.count <= maxSize else { throw .messageTooLarge(size: bytes.count, limit: maxSize) }
        var records: [NDEFRecord] = []
        var offset = 0
        func take(_ count: Int) throws(ProximityError) -> [UInt8] {
            guard count >= 0, count <= bytes.count - offset else {
                throw .malformedFrame(.lengthMismatch(declared: count, actual: bytes.count - offset))
            }
            defer { offset += count }
            return Array(bytes[offset..<(offset + count)])
        }
        while offset < bytes.count {
            let header = try take(1)[0]
            guard header & 0x20 == 0 else { throw .malformedFrame(.invalidHeader("chunked NDEF record")) }
            let typeLength = Int(try take(1)[0])
            let payloadLength: Int
            if header & 0x10 != 0 {
                payloadLength = Int(try take(1)[0])
            } else {
                let b = try take(4)
                payloadLength = Int(b[0]) << 24 | Int(b[1]) << 16 | Int(b[2]) << 8 | Int(b[3])
            }
            let idLength = header & 0x08 != 0 ? Int(try take(1)[0]) : 0
            let type = try take(typeLength), id = try take(idLength), payload = try take(payloadLength)
            records.append(NDEFRecord(typeNameFormat: header & 0x07, type: type, id: id, payload: payload))
            if header & 0x40 != 0 { break }
        }
        guard offset == bytes.count, !records.isEmpty else {
            throw .malformedFrame(.invalidHeader("NDEF message end"))
        }
        return records
    }

    /// The external type of the device engagement record (ISO 18013-5 §8.2.2.1).
    public static let deviceEngagementType = Array("iso.org:18013:deviceengagement".utf8)
    /// The media type of the SDK's TCP carrier configuration record.
    public static let tcpCarrierType = Array("application/vnd.walletsdk.tcp".utf8)

    /// A static Handover Select message: the Hs record (version 1.5) naming one
    /// alternative carrier, that carrier's configuration record, and the device
    /// engagement record with id "mdoc".
    public static func handoverSelect(deviceEngagement: DeviceEngagement, carrier: NDEFRecord) -> [UInt8] {
        // Alternative Carrier record: CPS active (1), carrier data reference = carrier id,
        // one auxiliary data reference "mdoc".
        let mdoc = Array("mdoc".utf8)
        let ac = NDEFRecord(typeNameFormat: 1, type: Array("ac".utf8),
                            payload: [0x01, UInt8(carrier.id.count)] + carrier.id + [0x01, UInt8(mdoc.count)] + mdoc)
        let hs = NDEFRecord(typeNameFormat: 1, type: Array("Hs".utf8), payload: [0x15] + encode([ac]))
        let engagement = NDEFRecord(typeNameFormat: 4, type: deviceEngagementType, id: mdoc,
                                    payload: deviceEngagement.encodedBytes)
        return encode([hs, carrier, engagement])
    }

    /// The device engagement and carrier records of a Handover Select message.
    public static func parseHandoverSelect(_ bytes: [UInt8]) throws(ProximityError) -> (DeviceEngagement, [NDEFRecord]) {
        let records = try decode(bytes)
        guard let first = records.first, first.typeNameFormat == 1, first.type == Array("Hs".utf8) else {
            throw .invalidEngagement("not a Handover Select message")
        }
        guard let record = records.first(where: { $0.typeNameFormat == 4 && $0.type == deviceEngagementType }) else {
            throw .invalidEngagement("no device engagement record")
        }
        do {
            return (try DeviceEngagement(encoded: record.payload), Array(records.dropFirst()))
        } catch {
            throw .invalidEngagement("device engagement: \(error)")
        }
    }
}
