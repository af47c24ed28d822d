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
    /// Where the next message's structure has been read to, so that each byte is read
    /// once however the stream is chunked; the decoder then reads each message once.
    private var scanner: CBORPrefixScanner

    /// A reassembler with a size limit.
    public init(maxMessageSize: Int = TCPTransport.defaultMaxMessageSize) {
        self.maxMessageSize = maxMessageSize
        self.scanner = CBORPrefixScanner(limit: maxMessageSize)
    }

    /// Bytes buffered towards the next message.
    public var bufferedByteCount: Int { buffer.count }

    /// Adds received bytes; returns every message they complete, in order.
    public mutating func append(_ bytes: [UInt8]) throws(ProximityError) -> [[UInt8]] {
        buffer.append(contentsOf: bytes)
        var messages: [[UInt8]] = []
        var consumed = 0
        scanning: while consumed < buffer.count {
            let outcome = buffer.withUnsafeBufferPointer { scanner.scan(UnsafeBufferPointer(rebasing: $0[consumed...])) }
            let message: [UInt8]
            switch outcome {
            case .needMore:
                guard buffer.count - consumed <= maxMessageSize else {
                    throw fail(.messageTooLarge(size: buffer.count - consumed, limit: maxMessageSize))
                }
                break scanning
            case .tooLarge(let size):
                throw fail(.messageTooLarge(size: size, limit: maxMessageSize))
            case .complete(let byteCount):
                // The decoder validates what the scanner does not read (UTF-8, simple
                // values, keys) and gives any error.
                message = Array(buffer[consumed..<(consumed + byteCount)])
                do {
                    _ = try CBOR.decodePrefix(message)
                } catch {
                    throw fail(.malformedFrame(.notCBOR(error)))
                }
            case .malformed:
                // No bytes to come can make this well-formed (a reserved head, a stray
                // break, an indefinite integer, nesting past the decoder's depth), so it is
                // refused now: waiting would have the decoder re-read the buffer per chunk.
                let count = try decodeMalformed(from: consumed)
                message = Array(buffer[consumed..<(consumed + count)])
            }
            messages.append(message)
            consumed += message.count
            scanner.reset()
        }
        buffer.removeFirst(consumed)
        return messages
    }

    /// The decoder's error for the item at `offset`, which the scanner found malformed;
    /// its byte count should the decoder read a whole item after all.
    private mutating func decodeMalformed(from offset: Int) throws(ProximityError) -> Int {
        let count: Int
        do {
            count = try CBOR.decodePrefix(Array(buffer[offset...])).byteCount
        } catch {
            throw fail(.malformedFrame(.notCBOR(error)))
        }
        guard count <= maxMessageSize else { throw fail(.messageTooLarge(size: count, limit: maxMessageSize)) }
        return count
    }

    /// Drops everything buffered (the stream cannot be resynchronised) and returns `error`.
    private mutating func fail(_ error: ProximityError) -> ProximityError {
        buffer.removeAll()
        scanner.reset()
        return error
    }

    /// The messages of `message` split at arbitrary points is just the message:
    /// L2CAP needs no framing on send. Returned for symmetry with the GATT framer.
    public static func frame(_ message: [UInt8]) -> [UInt8] { message }
}
