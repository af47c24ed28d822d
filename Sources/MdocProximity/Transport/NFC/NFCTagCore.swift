/// The application identifiers and files the mdoc's NFC side answers (ISO 18013-5
/// §8.2.2.1 and §8.3.3.1.2; NFC Forum Type 4 Tag 2.0).
public enum NFCApplication {
    /// The NDEF Tag Application (NFC Forum Type 4 Tag).
    public static let ndef: [UInt8] = [0xD2, 0x76, 0x00, 0x00, 0x85, 0x01, 0x01]
    /// The mdoc data transfer application (ISO 18013-5 §8.3.3.1.2).
    public static let mdocDataTransfer: [UInt8] = [0xA0, 0x00, 0x00, 0x02, 0x48, 0x04, 0x00]
    /// The Capability Container file.
    public static let capabilityContainerFile: UInt16 = 0xE103
    /// The NDEF file.
    public static let ndefFile: UInt16 = 0xE104
    /// The largest NDEF file this tag offers (and the largest READ/UPDATE it accepts).
    public static let maxNDEFFileSize = 0x7FFF
    /// INS of SELECT.
    public static let select: UInt8 = 0xA4
    /// INS of READ BINARY.
    public static let readBinary: UInt8 = 0xB0
    /// INS of UPDATE BINARY.
    public static let updateBinary: UInt8 = 0xD6
    /// Status: file or application not found.
    public static let fileNotFound: UInt16 = 0x6A82
    /// Status: wrong offset or length.
    public static let wrongOffset: UInt16 = 0x6B00
}

/// The TNEP records of negotiated handover (NFC Forum Tag NDEF Exchange Protocol 1.0):
/// Service Parameter ("Tp"), Service Select ("Ts") and Status ("Te").
public enum TNEP {
    /// The connection handover service.
    public static let handoverService = "urn:nfc:sn:handover"

    /// The Service Parameter record the tag offers: TNEP version 1.0, the service URI,
    /// single-response mode, the minimum waiting time, up to 15 extensions, and the
    /// largest NDEF message.
    public static func serviceParameter(service: String = handoverService, maxNDEFSize: Int = NFCApplication.maxNDEFFileSize) -> NDEFRecord {
        let uri = Array(service.utf8.prefix(255))
        return NDEFRecord(typeNameFormat: NDEFRecord.wellKnown, type: Array("Tp".utf8),
                          payload: [0x10, UInt8(uri.count)] + uri + [0x00, 0x00, 0x0F, UInt8(maxNDEFSize >> 8 & 0xff), UInt8(maxNDEFSize & 0xff)])
    }

    /// A Service Select record for `service`.
    public static func serviceSelect(service: String = handoverService) -> NDEFRecord {
        let uri = Array(service.utf8.prefix(255))
        return NDEFRecord(typeNameFormat: NDEFRecord.wellKnown, type: Array("Ts".utf8), payload: [UInt8(uri.count)] + uri)
    }

    /// A Status record (0: success).
    public static func status(_ value: UInt8) -> NDEFRecord {
        NDEFRecord(typeNameFormat: NDEFRecord.wellKnown, type: Array("Te".utf8), payload: [value])
    }

    /// The service a Service Select record names.
    static func selectedService(_ record: NDEFRecord) -> String? {
        guard record.typeNameFormat == NDEFRecord.wellKnown, record.type == Array("Ts".utf8),
              let length = record.payload.first, record.payload.count == Int(length) + 1 else { return nil }
        return String(decoding: record.payload.dropFirst(), as: UTF8.self)
    }

    /// Whether a message is a successful Status message.
    static func isSuccessStatus(_ records: [NDEFRecord]) -> Bool {
        records.count == 1 && records[0].type == Array("Te".utf8) && records[0].payload == [0x00]
    }

    /// The service a Service Parameter record offers.
    static func offeredService(_ record: NDEFRecord) -> String? {
        guard record.typeNameFormat == NDEFRecord.wellKnown, record.type == Array("Tp".utf8), record.payload.count >= 2 else { return nil }
        let length = Int(record.payload[1])
        guard record.payload.count >= 2 + length else { return nil }
        return String(decoding: record.payload[2..<(2 + length)], as: UTF8.self)
    }
}

/// The mdoc's NFC side as a sans-IO state machine: command APDUs in, response APDUs
/// out. It emulates an NFC Forum Type 4 Tag whose NDEF file holds the static Handover
/// Select, or runs negotiated handover over TNEP (Service Parameter → Service Select →
/// Status → Handover Request → Handover Select), and serves the mdoc data transfer
/// application (ENVELOPE / GET RESPONSE with DO'53' messages, ISO 18013-5 §8.3.3.1.2).
///
/// Where an answer needs the rest of the SDK (the Handover Select for a reader's
/// request, the session's reply to a message), ``handle(_:)`` returns a step that asks
/// for it, and the driver (``NFCHostCardEmulation``) provides it.
public struct NFCTagCore: Sendable {
    /// How the tag engages.
    public enum Handover: Sendable, Equatable {
        /// Not armed: the NDEF application is not offered.
        case none
        /// Static handover: the NDEF file holds this Handover Select.
        case staticSelect([UInt8])
        /// Negotiated handover over TNEP.
        case negotiated
    }

    /// What the tag tells its driver besides the response.
    public enum Event: Equatable, Sendable {
        /// The reader read the whole Handover Select: engagement is done.
        case handoverCompleted(select: [UInt8], request: [UInt8]?)
        /// The reader selected the mdoc data transfer application.
        case dataTransferSelected
    }

    /// The outcome of one command.
    public enum Step: Equatable, Sendable {
        /// Answer with this response.
        case respond(ResponseAPDU)
        /// Answer with this response and handle the event.
        case respondAndReport(ResponseAPDU, Event)
        /// The reader sent a Handover Request: call ``provideHandoverSelect(_:)`` with the answer.
        case needHandoverSelect(HandoverRequest)
        /// A whole message of the reader arrived: call ``provideReply(_:)`` with the session's answer.
        case needReply(message: [UInt8])

        /// Equality by case and response (a Handover Request compares by its bytes).
        public static func == (lhs: Step, rhs: Step) -> Bool {
            switch (lhs, rhs) {
            case (.respond(let a), .respond(let b)): return a == b
            case (.respondAndReport(let a, let x), .respondAndReport(let b, let y)): return a == b && x == y
            case (.needHandoverSelect(let a), .needHandoverSelect(let b)): return a.encodedBytes == b.encodedBytes
            case (.needReply(let a), .needReply(let b)): return a == b
            default: return false
            }
        }
    }

    private enum Application { case none, ndef, dataTransfer }
    private enum Negotiation { case idle, awaitingServiceSelect, awaitingRequest, answering(request: [UInt8]), answered }

    /// How the tag engages now.
    public private(set) var handover: Handover
    private var application = Application.none
    private var selectedFile: UInt16?
    private var ndefFile: [UInt8] = [0, 0]
    private var negotiation = Negotiation.idle
    private var servedSelect: (select: [UInt8], request: [UInt8]?)?
    private var envelope: NFCEnvelopeAssembler
    private let maxResponseDataLength: Int

    /// A tag engaging as `handover`, answering data transfer with at most
    /// `maxResponseDataLength` bytes per response.
    public init(handover: Handover = .none, maxMessageSize: Int = NFCDataTransfer.maxMessageSize,
                maxResponseDataLength: Int = 256) {
        self.handover = handover
        self.envelope = NFCEnvelopeAssembler(maxMessageSize: maxMessageSize)
        self.maxResponseDataLength = min(max(maxResponseDataLength, 1), 65_536)
    }

    /// Arms the tag for a new engagement (the previous one's state is dropped).
    ///
    /// A data transfer in progress stays selected, with the rest of a chained response
    /// still served by GET RESPONSE: the manager re-arms as soon as a session ends, which
    /// can be before the reader has fetched the last pieces of the final response. Its
    /// messages go to the link of the session that ended, which refuses them; the reader
    /// engages again by selecting the NDEF application.
    public mutating func arm(_ handover: Handover) {
        self.handover = handover
        if application != .dataTransfer { application = .none }
        selectedFile = nil
        negotiation = .idle
        servedSelect = nil
        ndefFile = [0, 0]
    }

    /// The field was lost: selections are forgotten (the engagement stays armed).
    public mutating func deactivate() {
        application = .none
        selectedFile = nil
        switch negotiation {
        case .answering, .answered: negotiation = .idle
        default: break
        }
    }

    /// Handles one command APDU.
    public mutating func handle(_ bytes: [UInt8]) -> Step {
        let command: CommandAPDU
        do { command = try CommandAPDU(encoded: bytes) } catch { return .respond(ResponseAPDU(statusWord: ResponseAPDU.wrongLength)) }
        guard command.cla & ~NFCDataTransfer.chainingBit == 0 else {
            return .respond(ResponseAPDU(statusWord: ResponseAPDU.classNotSupported))
        }
        switch command.ins {
        case NFCApplication.select: return select(command)
        case NFCApplication.readBinary: return readBinary(command)
        case NFCApplication.updateBinary: return updateBinary(command)
        case NFCDataTransfer.envelope, NFCDataTransfer.getResponse:
            guard application == .dataTransfer else { return .respond(ResponseAPDU(statusWord: ResponseAPDU.conditionsNotSatisfied)) }
            do {
                switch try envelope.handle(command) {
                case .reply(let response): return .respond(response)
                case .message(let message): return .needReply(message: message)
                }
            } catch {
                return .respond(ResponseAPDU(statusWord: ResponseAPDU.wrongLength))
            }
        default:
            return .respond(ResponseAPDU(statusWord: ResponseAPDU.instructionNotSupported))
        }
    }

    /// The answer to a Handover Request (`nil`: no carrier could be offered).
    public mutating func provideHandoverSelect(_ select: [UInt8]?) -> ResponseAPDU {
        guard case .answering(let request) = negotiation, case .negotiated = handover else {
            return ResponseAPDU(statusWord: ResponseAPDU.conditionsNotSatisfied)
        }
        guard let select, select.count <= NFCApplication.maxNDEFFileSize - 2 else {
            negotiation = .idle
            return ResponseAPDU(statusWord: ResponseAPDU.conditionsNotSatisfied)
        }
        ndefFile = Self.file(select)
        servedSelect = (select, request)
        negotiation = .answered
        return ResponseAPDU(statusWord: ResponseAPDU.success)
    }

    /// The session's answer to the reader's message (`nil`: the session ended without one).
    public mutating func provideReply(_ message: [UInt8]?) -> ResponseAPDU {
        guard let message else { return ResponseAPDU(statusWord: ResponseAPDU.conditionsNotSatisfied) }
        do {
            return try envelope.respond(with: message, maxResponseDataLength: maxResponseDataLength)
        } catch {
            return ResponseAPDU(statusWord: ResponseAPDU.conditionsNotSatisfied)
        }
    }

    // MARK: Type 4 Tag

    private mutating func select(_ command: CommandAPDU) -> Step {
        switch (command.p1, command.p2 & 0xF3) {
        case (0x04, 0x00):   // by name (AID)
            if command.data == NFCApplication.ndef {
                guard handover != .none else { return .respond(ResponseAPDU(statusWord: NFCApplication.fileNotFound)) }
                application = .ndef
                selectedFile = nil
                return .respond(ResponseAPDU(statusWord: ResponseAPDU.success))
            }
            if command.data == NFCApplication.mdocDataTransfer {
                application = .dataTransfer
                envelope = NFCEnvelopeAssembler(maxMessageSize: envelope.maxMessageSize)
                return .respondAndReport(ResponseAPDU(statusWord: ResponseAPDU.success), .dataTransferSelected)
            }
            return .respond(ResponseAPDU(statusWord: NFCApplication.fileNotFound))
        case (0x00, 0x00):   // by file identifier
            guard application == .ndef, command.data.count == 2 else {
                return .respond(ResponseAPDU(statusWord: NFCApplication.fileNotFound))
            }
            let id = UInt16(command.data[0]) << 8 | UInt16(command.data[1])
            switch id {
            case NFCApplication.capabilityContainerFile:
                selectedFile = id
            case NFCApplication.ndefFile:
                selectedFile = id
                prepareNDEFFile()
            default:
                return .respond(ResponseAPDU(statusWord: NFCApplication.fileNotFound))
            }
            return .respond(ResponseAPDU(statusWord: ResponseAPDU.success))
        default:
            return .respond(ResponseAPDU(statusWord: ResponseAPDU.wrongParameters))
        }
    }

    private mutating func prepareNDEFFile() {
        switch handover {
        case .none:
            ndefFile = [0, 0]
        case .staticSelect(let select):
            ndefFile = Self.file(select)
            servedSelect = (select, nil)
        case .negotiated:
            if case .idle = negotiation {
                let parameter = (try? NDEFMessage.encode([TNEP.serviceParameter()])) ?? []
                ndefFile = Self.file(parameter)
                negotiation = .awaitingServiceSelect
            }
        }
    }

    private static func file(_ message: [UInt8]) -> [UInt8] {
        [UInt8(message.count >> 8 & 0xff), UInt8(message.count & 0xff)] + message
    }

    private var capabilityContainer: [UInt8] {
        // CCLEN 15, mapping version 2.0, MLe and MLc 0x7FFF, then the NDEF File Control
        // TLV: file E104, size 0x7FFF, read access granted, write access granted only
        // for negotiated handover.
        let write: UInt8 = handover == .negotiated ? 0x00 : 0xFF
        return [0x00, 0x0F, 0x20, 0x7F, 0xFF, 0x7F, 0xFF, 0x04, 0x06, 0xE1, 0x04, 0x7F, 0xFF, 0x00, write]
    }

    private mutating func readBinary(_ command: CommandAPDU) -> Step {
        guard application == .ndef, let file = selectedFile else {
            return .respond(ResponseAPDU(statusWord: ResponseAPDU.conditionsNotSatisfied))
        }
        let content = file == NFCApplication.capabilityContainerFile ? capabilityContainer : ndefFile
        let offset = Int(command.p1 & 0x7F) << 8 | Int(command.p2)
        let length = command.le ?? 256
        guard offset <= content.count else { return .respond(ResponseAPDU(statusWord: NFCApplication.wrongOffset)) }
        let end = min(offset + length, content.count)
        let response = ResponseAPDU(data: Array(content[offset..<end]), statusWord: ResponseAPDU.success)
        // The reader has read the whole Handover Select: engagement is done.
        if file == NFCApplication.ndefFile, end == content.count, content.count > 2, let served = servedSelect,
           content == Self.file(served.select) {
            servedSelect = nil
            return .respondAndReport(response, .handoverCompleted(select: served.select, request: served.request))
        }
        return .respond(response)
    }

    private mutating func updateBinary(_ command: CommandAPDU) -> Step {
        guard application == .ndef, selectedFile == NFCApplication.ndefFile, handover == .negotiated else {
            return .respond(ResponseAPDU(statusWord: ResponseAPDU.conditionsNotSatisfied))
        }
        let offset = Int(command.p1 & 0x7F) << 8 | Int(command.p2)
        let end = offset + command.data.count
        guard end <= NFCApplication.maxNDEFFileSize else { return .respond(ResponseAPDU(statusWord: NFCApplication.wrongOffset)) }
        if ndefFile.count < end { ndefFile += [UInt8](repeating: 0, count: end - ndefFile.count) }
        ndefFile.replaceSubrange(offset..<end, with: command.data)
        // A write that sets a non-zero NLEN completes the message (TNEP: NLEN is written last).
        guard offset == 0, command.data.count >= 2 else { return .respond(ResponseAPDU(statusWord: ResponseAPDU.success)) }
        let length = Int(ndefFile[0]) << 8 | Int(ndefFile[1])
        guard length > 0, ndefFile.count >= 2 + length else { return .respond(ResponseAPDU(statusWord: ResponseAPDU.success)) }
        let message = Array(ndefFile[2..<(2 + length)])
        return receivedNDEF(message)
    }

    private mutating func receivedNDEF(_ message: [UInt8]) -> Step {
        switch negotiation {
        case .awaitingServiceSelect:
            guard let records = try? NDEFMessage.decode(message), records.count == 1,
                  TNEP.selectedService(records[0]) == TNEP.handoverService,
                  let status = try? NDEFMessage.encode([TNEP.status(0)]) else {
                return .respond(ResponseAPDU(statusWord: ResponseAPDU.conditionsNotSatisfied))
            }
            ndefFile = Self.file(status)
            negotiation = .awaitingRequest
            return .respond(ResponseAPDU(statusWord: ResponseAPDU.success))
        case .awaitingRequest:
            guard let request = try? ConnectionHandover.parseHandoverRequest(message) else {
                return .respond(ResponseAPDU(statusWord: ResponseAPDU.conditionsNotSatisfied))
            }
            servedSelect = nil
            negotiation = .answering(request: message)
            return .needHandoverSelect(request)
        case .idle, .answering, .answered:
            return .respond(ResponseAPDU(statusWord: ResponseAPDU.conditionsNotSatisfied))
        }
    }
}
