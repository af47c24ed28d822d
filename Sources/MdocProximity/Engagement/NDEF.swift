
/// One NDEF record (NFC Forum NDEF 1.0), short or long form.
public struct NDEFRecord: Sendable, Hashable {
    /// Type name format 1: NFC Forum well-known type.
    public static let wellKnown: UInt8 = 1
    /// Type name format 2: media type (RFC 2046).
    public static let mediaType: UInt8 = 2
    /// Type name format 4: NFC Forum external type.
    public static let externalType: UInt8 = 4

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

/// NDEF message encoding (NFC Forum NDEF 1.0): records in, bytes out, and back.
public enum NDEFMessage {
    /// The largest message parsed.
    public static let maxSize = 64 * 1024

    /// Encodes records into one message (MB on the first, ME on the last).
    /// - Throws: `messageTooLarge` for a type or id longer than 255 bytes, or a payload
    ///   longer than 2³² − 1.
    public static func encode(_ records: [NDEFRecord]) throws(ProximityError) -> [UInt8] {
        var bytes: [UInt8] = []
        for (index, record) in records.enumerated() {
            guard record.type.count <= 255 else { throw .messageTooLarge(size: record.type.count, limit: 255) }
            guard record.id.count <= 255 else { throw .messageTooLarge(size: record.id.count, limit: 255) }
            guard record.payload.count <= Int(UInt32.max) else {
                throw .messageTooLarge(size: record.payload.count, limit: Int(UInt32.max))
            }
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
            guard header & 0x20 == 0 else { throw .malformedFrame(.chunkedNDEFRecord) }
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
        guard offset == bytes.count, !records.isEmpty else { throw .malformedFrame(.unterminatedNDEFMessage) }
        return records
    }
}
