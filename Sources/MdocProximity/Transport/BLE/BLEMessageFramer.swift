import CBOR

/// Splits session messages into GATT characteristic values (ISO 18013-5
/// §8.3.3.1.1.6): each value is at most MTU − 3 bytes, its first byte says
/// whether more of the message follows (0x01) or this is the last part (0x00).
public struct BLEMessageFramer: Sendable, Hashable {
    /// The smallest ATT MTU (Bluetooth Core, Vol 3 Part F §3.2.8).
    public static let minimumMTU = 23
    /// The largest ATT MTU.
    public static let maximumMTU = 517
    /// "More follows."
    public static let moreFollows: UInt8 = 0x01
    /// "Last part."
    public static let lastPart: UInt8 = 0x00

    /// The negotiated ATT MTU.
    public let mtu: Int

    /// A framer for `mtu` (23...517).
    public init(mtu: Int) throws(ProximityError) {
        guard (Self.minimumMTU...Self.maximumMTU).contains(mtu) else { throw .malformedFrame(.invalidMTU(mtu)) }
        self.mtu = mtu
    }

    /// Message bytes per characteristic value: MTU − 3 (ATT header) − 1 (continuation byte).
    public var payloadPerFragment: Int { mtu - 4 }

    /// The characteristic values that carry `message`, in order (an empty message is one value `[0x00]`).
    public func fragments(of message: [UInt8]) -> [[UInt8]] {
        guard !message.isEmpty else { return [[Self.lastPart]] }
        var fragments: [[UInt8]] = []
        fragments.reserveCapacity(message.count / payloadPerFragment + 1)
        var start = 0
        while start < message.count {
            let end = min(start + payloadPerFragment, message.count)
            fragments.append([end < message.count ? Self.moreFollows : Self.lastPart] + message[start..<end])
            start = end
        }
        return fragments
    }
}

/// Reassembles messages from GATT characteristic values (the inverse of
/// ``BLEMessageFramer``), enforcing a size limit before buffering more.
public struct BLEMessageReassembler: Sendable {
    /// The largest message accepted.
    public let maxMessageSize: Int
    /// The MTU the peer negotiated: longer values are rejected.
    public let mtu: Int
    private var buffer: [UInt8] = []

    /// A reassembler for values of at most `mtu − 3` bytes and messages of at most `maxMessageSize`.
    public init(mtu: Int = BLEMessageFramer.maximumMTU, maxMessageSize: Int = TCPTransport.defaultMaxMessageSize) {
        self.mtu = mtu
        self.maxMessageSize = maxMessageSize
    }

    /// Whether part of a message is buffered.
    public var hasPartialMessage: Bool { !buffer.isEmpty }

    /// Adds one characteristic value; returns the message when this was its last part.
    public mutating func append(_ value: [UInt8]) throws(ProximityError) -> [UInt8]? {
        guard let first = value.first else { throw .malformedFrame(.tooShort(length: 0, minimum: 1)) }
        guard value.count <= mtu - 3 else {
            throw .malformedFrame(.declaredLengthTooLarge(declared: value.count, limit: mtu - 3))
        }
        guard first == BLEMessageFramer.moreFollows || first == BLEMessageFramer.lastPart else {
            buffer.removeAll()
            throw .malformedFrame(.invalidContinuationByte(first))
        }
        guard buffer.count + value.count - 1 <= maxMessageSize else {
            let size = buffer.count + value.count - 1
            buffer.removeAll()
            throw .messageTooLarge(size: size, limit: maxMessageSize)
        }
        buffer.append(contentsOf: value.dropFirst())
        guard first == BLEMessageFramer.lastPart else { return nil }
        defer { buffer.removeAll(keepingCapacity: false) }
        return buffer
    }
}

/// The values of the BLE State characteristic (ISO 18013-5 §8.3.3.1.1.5).
public enum BLETransportState: UInt8, Sendable, Hashable {
    /// The reader signals the start of data retrieval.
    case start = 0x01
    /// Either side signals the end of the session.
    case end = 0x02

    /// The characteristic value.
    public var characteristicValue: [UInt8] { [rawValue] }

    /// Parses a State characteristic value (exactly one byte, 0x01 or 0x02).
    public init(characteristicValue value: [UInt8]) throws(ProximityError) {
        guard value.count == 1 else { throw .malformedFrame(.lengthMismatch(declared: 1, actual: value.count)) }
        guard let state = BLETransportState(rawValue: value[0]) else { throw .malformedFrame(.invalidStateValue(value[0])) }
        self = state
    }
}

/// Splits an L2CAP byte stream into session messages. Over L2CAP (ISO 18013-5
/// §8.3.3.1.1.7) messages are sent back to back without a continuation byte;
/// each is one CBOR data item, so the item's own length delimits it.
public struct L2CAPMessageReassembler: Sendable {
    /// The largest message accepted.
    public let maxMessageSize: Int
    private var buffer: [UInt8] = []

    /// A reassembler with a size limit.
    public init(maxMessageSize: Int = TCPTransport.defaultMaxMessageSize) {
        self.maxMessageSize = maxMessageSize
    }

    /// Bytes buffered towards the next message.
    public var bufferedByteCount: Int { buffer.count }

    /// Adds received bytes; returns every message they complete, in order.
    public mutating func append(_ bytes: [UInt8]) throws(ProximityError) -> [[UInt8]] {
        buffer.append(contentsOf: bytes)
        var messages: [[UInt8]] = []
        while !buffer.isEmpty {
            let count: Int
            do {
                count = try CBOR.decodePrefix(buffer).byteCount
            } catch {
                // A declared length beyond the buffered bytes may simply not have arrived yet.
                var incomplete = false
                if case .unexpectedEnd = error { incomplete = true }
                if case .lengthTooLarge(_, let length) = error, length <= UInt64(maxMessageSize) { incomplete = true }
                guard incomplete else {
                    buffer.removeAll()
                    throw .malformedFrame(.notCBOR(error))
                }
                guard buffer.count <= maxMessageSize else {
                    let size = buffer.count
                    buffer.removeAll()
                    throw .messageTooLarge(size: size, limit: maxMessageSize)
                }
                break
            }
            guard count <= maxMessageSize else {
                buffer.removeAll()
                throw .messageTooLarge(size: count, limit: maxMessageSize)
            }
            messages.append(Array(buffer[..<count]))
            buffer.removeFirst(count)
        }
        return messages
    }

    /// The messages of `message` split at arbitrary points is just the message:
    /// L2CAP needs no framing on send. Returned for symmetry with the GATT framer.
    public static func frame(_ message: [UInt8]) -> [UInt8] { message }
}
