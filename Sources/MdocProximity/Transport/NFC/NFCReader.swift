import WalletRuntime

/// A reader's NFC link to an mdoc: one command APDU out, its response back (a
/// platform's ISO-DEP `transceive`). ``NFCHostCardEmulation`` is one in-process.
public protocol APDUChannel: Sendable {
    /// Sends `command` and returns the response APDU.
    func transceive(_ command: [UInt8]) async throws(ProximityError) -> [UInt8]
}

extension NFCHostCardEmulation: APDUChannel {
    /// The entry point itself, as the reader's channel (in-process tests and demos).
    public func transceive(_ command: [UInt8]) async throws(ProximityError) -> [UInt8] {
        await process(command)
    }
}

/// The reader's side of NFC engagement (ISO 18013-5 §8.2.2.1): reads the mdoc's
/// NDEF file over an ``APDUChannel``. A static Handover Select is read as is; a TNEP
/// Service Parameter record starts negotiated handover, in which the reader writes a
/// Service Select, then its Handover Request, and reads the Handover Select.
public enum NFCReaderEngagement {
    /// The result: the Handover Select as read and, in negotiated handover, the request written.
    public struct Outcome: Sendable {
        /// The Handover Select.
        public let select: HandoverSelect
        /// The Handover Request the reader wrote (negotiated handover).
        public let request: [UInt8]?
    }

    /// Engages with the mdoc on `channel`. `request` is the Handover Request to write if
    /// the mdoc negotiates; `maxChunk` bounds each READ / UPDATE BINARY.
    public static func engage(over channel: any APDUChannel, request: [UInt8]?, maxChunk: Int = 255) async throws(ProximityError) -> Outcome {
        try await expectSuccess(channel, CommandAPDU(ins: NFCApplication.select, p1: 0x04, data: NFCApplication.ndef, le: 256))
        try await expectSuccess(channel, CommandAPDU(ins: NFCApplication.select, p2: 0x0C, data: [0xE1, 0x04]))
        let initial = try await readNDEF(channel, maxChunk: maxChunk)
        let records = try NDEFMessage.decode(initial)
        if records.first?.type == ConnectionHandover.handoverSelectType {
            return Outcome(select: try ConnectionHandover.parseHandoverSelect(initial), request: nil)
        }
        guard let parameter = records.first, TNEP.offeredService(parameter) == TNEP.handoverService else {
            throw .invalidEngagement(.notHandoverSelect)
        }
        guard let request else { throw .invalidEngagement(.handover(.unexpectedHandoverMessage)) }
        try await writeNDEF(channel, try NDEFMessage.encode([TNEP.serviceSelect()]), maxChunk: maxChunk)
        guard TNEP.isSuccessStatus(try NDEFMessage.decode(try await readNDEF(channel, maxChunk: maxChunk))) else {
            throw .invalidEngagement(.handover(.unknownService(TNEP.handoverService)))
        }
        try await writeNDEF(channel, request, maxChunk: maxChunk)
        let select = try await readNDEF(channel, maxChunk: maxChunk)
        return Outcome(select: try ConnectionHandover.parseHandoverSelect(select), request: request)
    }

    private static func expectSuccess(_ channel: any APDUChannel, _ command: CommandAPDU) async throws(ProximityError) {
        let response = try ResponseAPDU(encoded: try await channel.transceive(try command.encoded()))
        guard response.statusWord == ResponseAPDU.success else { throw .malformedFrame(.unexpectedStatus(response.statusWord)) }
    }

    private static func readBinary(_ channel: any APDUChannel, offset: Int, length: Int) async throws(ProximityError) -> [UInt8] {
        let command = CommandAPDU(ins: NFCApplication.readBinary, p1: UInt8(offset >> 8 & 0x7F), p2: UInt8(offset & 0xff), le: length)
        let response = try ResponseAPDU(encoded: try await channel.transceive(try command.encoded()))
        guard response.statusWord == ResponseAPDU.success else { throw .malformedFrame(.unexpectedStatus(response.statusWord)) }
        return response.data
    }

    private static func readNDEF(_ channel: any APDUChannel, maxChunk: Int) async throws(ProximityError) -> [UInt8] {
        let header = try await readBinary(channel, offset: 0, length: 2)
        guard header.count == 2 else { throw .malformedFrame(.tooShort(length: header.count, minimum: 2)) }
        let length = Int(header[0]) << 8 | Int(header[1])
        guard length <= NFCApplication.maxNDEFFileSize - 2 else {
            throw .malformedFrame(.declaredLengthTooLarge(declared: length, limit: NFCApplication.maxNDEFFileSize - 2))
        }
        var message: [UInt8] = []
        while message.count < length {
            let chunk = try await readBinary(channel, offset: 2 + message.count, length: min(maxChunk, length - message.count))
            guard !chunk.isEmpty else { throw .malformedFrame(.lengthMismatch(declared: length, actual: message.count)) }
            message += chunk
        }
        return Array(message.prefix(length))
    }

    private static func writeNDEF(_ channel: any APDUChannel, _ message: [UInt8], maxChunk: Int) async throws(ProximityError) {
        // TNEP: NLEN 0 first, then the message, then its length.
        try await expectSuccess(channel, CommandAPDU(ins: NFCApplication.updateBinary, data: [0, 0]))
        var offset = 0
        while offset < message.count {
            let end = min(offset + maxChunk, message.count)
            let position = 2 + offset
            try await expectSuccess(channel, CommandAPDU(ins: NFCApplication.updateBinary, p1: UInt8(position >> 8 & 0x7F),
                                                         p2: UInt8(position & 0xff), data: Array(message[offset..<end])))
            offset = end
        }
        try await expectSuccess(channel, CommandAPDU(ins: NFCApplication.updateBinary,
                                                     data: [UInt8(message.count >> 8 & 0xff), UInt8(message.count & 0xff)]))
    }
}

/// The reader's end of NFC data transfer (ISO 18013-5 §8.3.3.1.2) over an
/// ``APDUChannel``: each message goes out in ENVELOPE commands (chained as the mdoc's
/// maximum command data length requires) and the mdoc's answer is collected with
/// GET RESPONSE; it is then what ``receive(timeout:)`` returns.
public final class NFCReaderTransport: MdocTransport {
    private let channel: any APDUChannel
    private let maxCommandDataLength: Int
    private let inbox: Mailbox<[UInt8]>

    /// Selects the mdoc data transfer application on `channel`.
    public static func open(over channel: any APDUChannel, maxCommandDataLength: Int = 255,
                            clock: any WalletClock = SystemClock()) async throws(ProximityError) -> NFCReaderTransport {
        let select = CommandAPDU(ins: NFCApplication.select, p1: 0x04, data: NFCApplication.mdocDataTransfer, le: 256)
        let response = try ResponseAPDU(encoded: try await channel.transceive(try select.encoded()))
        guard response.statusWord == ResponseAPDU.success else { throw .malformedFrame(.unexpectedStatus(response.statusWord)) }
        return NFCReaderTransport(channel: channel, maxCommandDataLength: maxCommandDataLength, clock: clock)
    }

    private init(channel: any APDUChannel, maxCommandDataLength: Int, clock: any WalletClock) {
        self.channel = channel
        self.maxCommandDataLength = min(max(maxCommandDataLength, 1), 65_535)
        self.inbox = Mailbox(clock: clock)
    }

    /// `.nfc`.
    public var transmissionType: TransmissionType { .nfc }

    /// Sends `message` and collects the mdoc's answer for ``receive(timeout:)``.
    public func send(_ message: [UInt8]) async throws(ProximityError) {
        guard !inbox.isFinished else { throw .connectionClosed }
        var assembler = NFCResponseAssembler()
        var last: ResponseAPDU?
        for command in try NFCDataTransfer.envelopeCommands(for: message, maxCommandDataLength: maxCommandDataLength) {
            last = try ResponseAPDU(encoded: try await channel.transceive(try command.encoded(extended: command.needsExtendedLength)))
            if command.cla & NFCDataTransfer.chainingBit != 0, last?.statusWord != ResponseAPDU.success {
                throw .malformedFrame(.unexpectedStatus(last?.statusWord ?? 0))
            }
        }
        var next = last
        while let response = next {
            next = nil
            switch try assembler.handle(response) {
            case .message(let answer): inbox.push(answer)
            case .next(let command):
                next = try ResponseAPDU(encoded: try await channel.transceive(try command.encoded()))
            }
        }
    }

    /// The mdoc's answer to the last message sent.
    public func receive(timeout: Duration?) async throws(ProximityError) -> [UInt8] {
        try await inbox.next(timeout: timeout)
    }

    /// Ends the link on this side.
    public func close() async { inbox.finish() }
}

/// Connects a reader to an mdoc's NFC data transfer over an ``APDUChannel`` (the
/// reader's side of an NFC retrieval method).
public struct NFCReaderConnector: MdocTransportConnector {
    private let channel: any APDUChannel
    private let clock: any WalletClock

    /// A connector over `channel`.
    public init(channel: any APDUChannel, clock: any WalletClock = SystemClock()) {
        self.channel = channel
        self.clock = clock
    }

    /// NFC endpoints.
    public func canConnect(to endpoint: TransportEndpoint) -> Bool { endpoint.transmissionType == .nfc }

    /// Selects the data transfer application, honouring the mdoc's command limit.
    public func connect(to endpoint: TransportEndpoint, context: ConnectionContext,
                        timeout: Duration?) async throws(ProximityError) -> any MdocTransport {
        guard case .nfc(_, let options) = endpoint.retrievalMethod else { throw .transportFailed(.unsupportedEndpoint) }
        return try await NFCReaderTransport.open(over: channel, maxCommandDataLength: Int(min(options.maxCommandDataLength, 65_535)),
                                                 clock: clock)
    }

    /// A reader does not listen over NFC.
    public func listen(context: ConnectionContext) async throws(ProximityError) -> any MdocTransportListener {
        throw .transportFailed(.unsupportedEndpoint)
    }
}
