
/// An ISO/IEC 7816-4 command APDU, short or extended length.
public struct CommandAPDU: Sendable, Hashable {
    /// Class byte (0x00; 0x10 when more commands of a chain follow).
    public var cla: UInt8
    /// Instruction.
    public var ins: UInt8
    /// Parameter 1.
    public var p1: UInt8
    /// Parameter 2.
    public var p2: UInt8
    /// Command data (at most 65,535 bytes).
    public var data: [UInt8]
    /// Expected response length (Ne), 1...65,536; `nil` for none.
    public var le: Int?

    /// Creates a command.
    public init(cla: UInt8 = 0x00, ins: UInt8, p1: UInt8 = 0, p2: UInt8 = 0, data: [UInt8] = [], le: Int? = nil) {
        self.cla = cla
        self.ins = ins
        self.p1 = p1
        self.p2 = p2
        self.data = data
        self.le = le
    }

    /// Whether the encoding needs extended length fields.
    public var needsExtendedLength: Bool { data.count > 255 || (le ?? 0) > 256 }

    /// The encoded APDU; extended length when `extended` or when the sizes need it.
    public func encoded(extended: Bool = false) throws(ProximityError) -> [UInt8] {
        guard data.count <= 65_535 else { throw .messageTooLarge(size: data.count, limit: 65_535) }
        if let le, !(1...65_536).contains(le) { throw .malformedFrame(.invalidLe(le)) }
        let useExtended = extended || needsExtendedLength
        var bytes = [cla, ins, p1, p2]
        if !data.isEmpty {
            if useExtended {
                bytes += [0x00, UInt8(data.count >> 8), UInt8(data.count & 0xff)]
            } else {
                bytes.append(UInt8(data.count))
            }
            bytes += data
        }
        if let le {
            if useExtended {
                let value = le == 65_536 ? 0 : le
                if data.isEmpty { bytes.append(0x00) }
                bytes += [UInt8(value >> 8), UInt8(value & 0xff)]
            } else {
                bytes.append(le == 256 ? 0 : UInt8(le))
            }
        }
        return bytes
    }

    /// Parses an APDU (cases 1-4, short and extended; ISO/IEC 7816-3 §12.1.3).
    public init(encoded bytes: [UInt8]) throws(ProximityError) {
        guard bytes.count >= 4 else { throw .malformedFrame(.tooShort(length: bytes.count, minimum: 4)) }
        cla = bytes[0]; ins = bytes[1]; p1 = bytes[2]; p2 = bytes[3]
        let body = Array(bytes[4...])
        data = []
        le = nil
        if body.isEmpty { return }                                        // case 1
        if body.count == 1 { le = body[0] == 0 ? 256 : Int(body[0]); return }  // case 2 short
        if body[0] != 0 {                                                  // short Lc
            let lc = Int(body[0])
            switch body.count {
            case 1 + lc: data = Array(body[1...])                        // case 3 short
            case 2 + lc: data = Array(body[1...lc]); le = body[lc + 1] == 0 ? 256 : Int(body[lc + 1])  // case 4 short
            default: throw .malformedFrame(.lengthMismatch(declared: lc, actual: body.count - 1))
            }
            return
        }
        // Extended: first body byte 0x00.
        if body.count == 3 {                                               // case 2 extended
            let value = Int(body[1]) << 8 | Int(body[2])
            le = value == 0 ? 65_536 : value
            return
        }
        guard body.count >= 4 else { throw .malformedFrame(.tooShort(length: bytes.count, minimum: 8)) }
        let lc = Int(body[1]) << 8 | Int(body[2])
        guard lc > 0 else { throw .malformedFrame(.zeroExtendedLc) }
        switch body.count {
        case 3 + lc: data = Array(body[3...])                             // case 3 extended
        case 5 + lc:                                                       // case 4 extended
            data = Array(body[3..<(3 + lc)])
            let value = Int(body[3 + lc]) << 8 | Int(body[4 + lc])
            le = value == 0 ? 65_536 : value
        default: throw .malformedFrame(.lengthMismatch(declared: lc, actual: body.count - 3))
        }
    }
}

/// An ISO/IEC 7816-4 response APDU: data and a status word.
public struct ResponseAPDU: Sendable, Hashable {
    /// Response data.
    public var data: [UInt8]
    /// The status word (SW1 SW2).
    public var statusWord: UInt16

    /// Normal processing.
    public static let success: UInt16 = 0x9000
    /// Wrong length.
    public static let wrongLength: UInt16 = 0x6700
    /// Conditions of use not satisfied.
    public static let conditionsNotSatisfied: UInt16 = 0x6985
    /// Wrong parameters P1-P2.
    public static let wrongParameters: UInt16 = 0x6B00
    /// Instruction not supported.
    public static let instructionNotSupported: UInt16 = 0x6D00
    /// Class not supported.
    public static let classNotSupported: UInt16 = 0x6E00

    /// Creates a response.
    public init(data: [UInt8] = [], statusWord: UInt16) {
        self.data = data
        self.statusWord = statusWord
    }

    /// `61XX`: XX more bytes (0 meaning 256 or more) are available with GET RESPONSE.
    public var remainingBytes: Int? {
        statusWord >> 8 == 0x61 ? (statusWord & 0xff == 0 ? 256 : Int(statusWord & 0xff)) : nil
    }

    /// Data followed by SW1 SW2.
    public var encoded: [UInt8] { data + [UInt8(statusWord >> 8), UInt8(statusWord & 0xff)] }

    /// Parses a response (at least the two status bytes).
    public init(encoded bytes: [UInt8]) throws(ProximityError) {
        guard bytes.count >= 2 else { throw .malformedFrame(.tooShort(length: bytes.count, minimum: 2)) }
        data = Array(bytes[..<(bytes.count - 2)])
        statusWord = UInt16(bytes[bytes.count - 2]) << 8 | UInt16(bytes[bytes.count - 1])
    }
}

/// The NFC data-transfer APDUs of ISO 18013-5 §8.3.3.1.2: the reader wraps each
/// message in a BER-TLV data object with tag 0x53 and sends it in ENVELOPE
/// commands (INS 0xC3), chained with CLA 0x10 when it exceeds one command; the
/// mdoc answers with its message in the response, and the reader fetches what
/// did not fit with GET RESPONSE (INS 0xC0) while the status is 61XX.
public enum NFCDataTransfer {
    /// INS of ENVELOPE.
    public static let envelope: UInt8 = 0xC3
    /// INS of GET RESPONSE.
    public static let getResponse: UInt8 = 0xC0
    /// CLA bit: more commands of this chain follow (ISO/IEC 7816-4 §5.4.1).
    public static let chainingBit: UInt8 = 0x10
    /// Tag of the data object that carries a message.
    public static let messageTag: UInt8 = 0x53
    /// The largest message a DO'53' may carry here (BER length of up to 3 bytes).
    public static let maxMessageSize = 0xFF_FFFF

    /// `message` as the BER-TLV data object 0x53.
    public static func wrap(_ message: [UInt8]) throws(ProximityError) -> [UInt8] {
        let n = message.count
        guard n <= maxMessageSize else { throw .messageTooLarge(size: n, limit: maxMessageSize) }
        let length: [UInt8]
        switch n {
        case ..<0x80: length = [UInt8(n)]
        case ..<0x100: length = [0x81, UInt8(n)]
        case ..<0x10000: length = [0x82, UInt8(n >> 8), UInt8(n & 0xff)]
        default: length = [0x83, UInt8(n >> 16), UInt8(n >> 8 & 0xff), UInt8(n & 0xff)]
        }
        return [messageTag] + length + message
    }

    /// The message inside a DO'53', checking its tag and length.
    public static func unwrap(_ object: [UInt8], maxMessageSize limit: Int = maxMessageSize) throws(ProximityError) -> [UInt8] {
        guard object.count >= 2 else { throw .malformedFrame(.tooShort(length: object.count, minimum: 2)) }
        guard object[0] == messageTag else { throw .malformedFrame(.invalidTag(object[0])) }
        var length = 0
        var offset = 2
        switch object[1] {
        case ..<0x80: length = Int(object[1])
        case 0x81...0x83:
            let count = Int(object[1] & 0x7f)
            guard object.count >= 2 + count else { throw .malformedFrame(.tooShort(length: object.count, minimum: 2 + count)) }
            for byte in object[2..<(2 + count)] { length = length << 8 | Int(byte) }
            offset += count
        default: throw .malformedFrame(.invalidBERLength(object[1]))
        }
        guard length <= limit else { throw .malformedFrame(.declaredLengthTooLarge(declared: length, limit: limit)) }
        guard object.count - offset == length else {
            throw .malformedFrame(.lengthMismatch(declared: length, actual: object.count - offset))
        }
        return Array(object[offset...])
    }

    /// The ENVELOPE commands that carry `message` from the reader, each with at
    /// most `maxCommandDataLength` bytes of data; all but the last are chained.
    /// The last asks for `expectedResponseLength` bytes.
    public static func envelopeCommands(for message: [UInt8], maxCommandDataLength: Int,
                                        expectedResponseLength: Int = 65_536) throws(ProximityError) -> [CommandAPDU] {
        guard (1...65_535).contains(maxCommandDataLength) else { throw .malformedFrame(.invalidMTU(maxCommandDataLength)) }
        let object = try wrap(message)
        var commands: [CommandAPDU] = []
        var start = 0
        while start < object.count {
            let end = min(start + maxCommandDataLength, object.count)
            let last = end == object.count
            commands.append(CommandAPDU(cla: last ? 0x00 : chainingBit, ins: envelope, data: Array(object[start..<end]),
                                        le: last ? expectedResponseLength : nil))
            start = end
        }
        return commands
    }

    /// The mdoc's answer to the last ENVELOPE of a request: the first
    /// `maxResponseDataLength` bytes of the wrapped `message` with 61XX while more
    /// remains, and the rest in chunks for the GET RESPONSE commands that follow.
    public static func responses(for message: [UInt8], maxResponseDataLength: Int) throws(ProximityError) -> [ResponseAPDU] {
        guard (1...65_536).contains(maxResponseDataLength) else { throw .malformedFrame(.invalidMTU(maxResponseDataLength)) }
        let object = try wrap(message)
        var responses: [ResponseAPDU] = []
        var start = 0
        while start < object.count {
            let end = min(start + maxResponseDataLength, object.count)
            let remaining = object.count - end
            let status: UInt16 = remaining == 0 ? ResponseAPDU.success : 0x6100 | UInt16(remaining >= 256 ? 0 : remaining)
            responses.append(ResponseAPDU(data: Array(object[start..<end]), statusWord: status))
            start = end
        }
        return responses
    }

    /// The GET RESPONSE command for `remaining` more bytes (as a 61XX status announced).
    public static func getResponseCommand(expectedLength: Int) -> CommandAPDU {
        CommandAPDU(ins: getResponse, le: min(max(expectedLength, 1), 65_536))
    }
}

/// The mdoc's side of NFC data transfer: collects chained ENVELOPE commands
/// into the reader's message and serves its own answer, in pieces, to GET RESPONSE.
public struct NFCEnvelopeAssembler: Sendable {
    /// The largest message accepted.
    public let maxMessageSize: Int
    private var chain: [UInt8] = []
    private var pending: [ResponseAPDU] = []

    /// An assembler with a size limit.
    public init(maxMessageSize: Int = NFCDataTransfer.maxMessageSize) { self.maxMessageSize = maxMessageSize }

    /// What a command yields.
    public enum Outcome: Sendable, Hashable {
        /// Reply with this APDU and wait for the next command.
        case reply(ResponseAPDU)
        /// A whole message arrived; answer it with ``NFCEnvelopeAssembler/respond(with:maxResponseDataLength:)``.
        case message([UInt8])
    }

    /// Handles one command from the reader.
    public mutating func handle(_ command: CommandAPDU) throws(ProximityError) -> Outcome {
        switch command.ins {
        case NFCDataTransfer.envelope:
            guard command.p1 == 0, command.p2 == 0 else { throw .malformedFrame(.invalidParameters(p1: command.p1, p2: command.p2)) }
            guard command.cla & ~NFCDataTransfer.chainingBit == 0 else { throw .malformedFrame(.invalidClass(command.cla)) }
            guard chain.count + command.data.count <= maxMessageSize + 4 else {
                chain.removeAll()
                throw .messageTooLarge(size: chain.count + command.data.count, limit: maxMessageSize)
            }
            chain += command.data
            if command.cla & NFCDataTransfer.chainingBit != 0 { return .reply(ResponseAPDU(statusWord: ResponseAPDU.success)) }
            defer { chain.removeAll() }
            return .message(try NFCDataTransfer.unwrap(chain, maxMessageSize: maxMessageSize))
        case NFCDataTransfer.getResponse:
            guard !pending.isEmpty else { return .reply(ResponseAPDU(statusWord: ResponseAPDU.conditionsNotSatisfied)) }
            return .reply(pending.removeFirst())
        default:
            return .reply(ResponseAPDU(statusWord: ResponseAPDU.instructionNotSupported))
        }
    }

    /// The response to the ENVELOPE that completed a message; later pieces wait for GET RESPONSE.
    public mutating func respond(with message: [UInt8], maxResponseDataLength: Int) throws(ProximityError) -> ResponseAPDU {
        var responses = try NFCDataTransfer.responses(for: message, maxResponseDataLength: maxResponseDataLength)
        let first = responses.removeFirst()
        pending = responses
        return first
    }
}

/// The reader's side of a response: collects the pieces of the mdoc's answer.
public struct NFCResponseAssembler: Sendable {
    /// The largest message accepted.
    public let maxMessageSize: Int
    private var buffer: [UInt8] = []

    /// An assembler with a size limit.
    public init(maxMessageSize: Int = NFCDataTransfer.maxMessageSize) { self.maxMessageSize = maxMessageSize }

    /// What a response yields.
    public enum Outcome: Sendable, Hashable {
        /// Send this GET RESPONSE next.
        case next(CommandAPDU)
        /// The whole message.
        case message([UInt8])
    }

    /// Handles one response APDU.
    public mutating func handle(_ response: ResponseAPDU) throws(ProximityError) -> Outcome {
        guard buffer.count + response.data.count <= maxMessageSize + 4 else {
            buffer.removeAll()
            throw .messageTooLarge(size: buffer.count + response.data.count, limit: maxMessageSize)
        }
        if let remaining = response.remainingBytes {
            buffer += response.data
            return .next(NFCDataTransfer.getResponseCommand(expectedLength: remaining == 256 ? 65_536 : remaining))
        }
        guard response.statusWord == ResponseAPDU.success else {
            buffer.removeAll()
            throw .malformedFrame(.unexpectedStatus(response.statusWord))
        }
        buffer += response.data
        defer { buffer.removeAll() }
        return .message(try NFCDataTransfer.unwrap(buffer, maxMessageSize: maxMessageSize))
    }
}
