import CBOR
import Foundation
import Mdoc
import Testing
import WalletEncoding
@testable import MdocProximity

@Suite("BLE and NFC carrier codecs")
struct CarrierCodecTests {
    static func bytes(_ count: Int, seed: UInt8 = 7) -> [UInt8] {
        (0..<count).map { UInt8(truncatingIfNeeded: $0 &* 31 &+ Int(seed)) }
    }

    @Test("BLE fragments round-trip at the smallest and largest MTU and around fragment boundaries")
    func bleRoundTrips() throws {
        for mtu in [23, 24, 185, 517] {
            let framer = try BLEMessageFramer(mtu: mtu)
            let per = mtu - 4
            for size in [0, 1, per - 1, per, per + 1, 2 * per, 50_000] {
                let message = Self.bytes(size)
                let fragments = framer.fragments(of: message)
                #expect(fragments.allSatisfy { $0.count <= mtu - 3 })
                #expect(fragments.dropLast().allSatisfy { $0[0] == 0x01 })
                #expect(fragments.last?[0] == 0x00)
                #expect(fragments.count == max(1, (size + per - 1) / per))
                var reassembler = BLEMessageReassembler(mtu: mtu)
                var out: [UInt8]?
                for fragment in fragments {
                    #expect(out == nil)
                    out = try reassembler.append(fragment)
                }
                #expect(out == message)
                #expect(!reassembler.hasPartialMessage)
            }
        }
    }

    @Test("malformed BLE values give typed errors")
    func bleMalformed() throws {
        #expect(throws: ProximityError.malformedFrame(.invalidMTU(22))) { try BLEMessageFramer(mtu: 22) }
        #expect(throws: ProximityError.malformedFrame(.invalidMTU(518))) { try BLEMessageFramer(mtu: 518) }
        var reassembler = BLEMessageReassembler(mtu: 23, maxMessageSize: 30)
        #expect(throws: ProximityError.malformedFrame(.tooShort(length: 0, minimum: 1))) { try reassembler.append([]) }
        #expect(throws: ProximityError.malformedFrame(.invalidContinuationByte(0x02))) { try reassembler.append([0x02, 1]) }
        #expect(throws: ProximityError.malformedFrame(.declaredLengthTooLarge(declared: 21, limit: 20))) {
            try reassembler.append([0x01] + Self.bytes(20))
        }
        _ = try reassembler.append([0x01] + Self.bytes(19))
        #expect(throws: ProximityError.messageTooLarge(size: 38, limit: 30)) { try reassembler.append([0x00] + Self.bytes(19)) }
        #expect(try BLETransportState(characteristicValue: [0x01]) == .start)
        #expect(try BLETransportState(characteristicValue: [0x02]) == .end)
        #expect(throws: ProximityError.malformedFrame(.invalidStateValue(0x03))) { try BLETransportState(characteristicValue: [0x03]) }
        #expect(throws: ProximityError.malformedFrame(.lengthMismatch(declared: 1, actual: 2))) {
            try BLETransportState(characteristicValue: [0x01, 0x02])
        }
    }

    @Test("L2CAP splits a byte stream into whole CBOR messages whatever the chunking")
    func l2cap() throws {
        let a = CBOR.map(["data": .byteString(Self.bytes(3000))]).encoded()
        let b = CBOR.map(["status": 20]).encoded()
        let stream = a + b
        for chunk in [1, 7, 512, stream.count] {
            var reassembler = L2CAPMessageReassembler()
            var messages: [[UInt8]] = []
            var start = 0
            while start < stream.count {
                let end = min(start + chunk, stream.count)
                messages += try reassembler.append(Array(stream[start..<end]))
                start = end
            }
            #expect(messages == [a, b])
            #expect(reassembler.bufferedByteCount == 0)
        }
        var small = L2CAPMessageReassembler(maxMessageSize: 100)
        #expect(throws: ProximityError.self) { try small.append(a) }
        var broken = L2CAPMessageReassembler()
        #expect(throws: ProximityError.self) { try broken.append([0xff]) }
        // A message, then a map whose first key is an indefinite integer (a fuzzer's find):
        // refused at the chunk that shows it, whole or in 3-byte chunks, although the
        // map's declared size has not arrived (the decoder alone would have waited).
        let stream2: [UInt8] = [0x00, 0xA3, 0x3F, 0xFA, 0xFD, 0x4F, 0xC0, 0x24]
        var whole = L2CAPMessageReassembler()
        #expect(throws: ProximityError.self) { try whole.append(stream2) }
        var chunked = L2CAPMessageReassembler()
        #expect(try chunked.append(Array(stream2[0..<1])) == [[0x00]])
        #expect(try chunked.append(Array(stream2[1..<2])) == [])
        #expect(throws: ProximityError.self) { try chunked.append(Array(stream2[2..<4])) }
        #expect(chunked.bufferedByteCount == 0)
        // A megabyte byte string, then an array declaring more items than have arrived,
        // then a stray break: refused at once, not re-decoded per chunk until the array's
        // declared size has arrived.
        var hostile = L2CAPMessageReassembler()
        let prefix: [UInt8] = [0x82, 0x5A, 0x00, 0x10, 0x00, 0x00] + [UInt8](repeating: 0, count: 1 << 20)
        #expect(try hostile.append(prefix) == [])
        #expect(try hostile.append([0x9A, 0x00, 0x20, 0x00, 0x00]) == [])
        #expect(throws: ProximityError.self) { try hostile.append([0xFF]) }
        #expect(hostile.bufferedByteCount == 0)
    }

    @Test("command APDUs encode and parse in all four cases, short and extended, at the limits")
    func apduCases() throws {
        let cases: [(CommandAPDU, Bool)] = [
            (CommandAPDU(ins: 0xC0), false),
            (CommandAPDU(ins: 0xC0, le: 256), false),
            (CommandAPDU(ins: 0xC0, le: 65_536), true),
            (CommandAPDU(ins: 0xC3, data: Self.bytes(255)), false),
            (CommandAPDU(ins: 0xC3, data: Self.bytes(256)), true),
            (CommandAPDU(ins: 0xC3, data: Self.bytes(65_535), le: 65_536), true),
            (CommandAPDU(cla: 0x10, ins: 0xC3, data: Self.bytes(1), le: 1), false),
        ]
        for (command, extended) in cases {
            let encoded = try command.encoded()
            #expect(command.needsExtendedLength == extended)
            #expect(try CommandAPDU(encoded: encoded) == command)
            // Forced extended encoding parses back too.
            #expect(try CommandAPDU(encoded: command.encoded(extended: true)) == command)
        }
        #expect(try CommandAPDU(ins: 0xC3, data: [1, 2], le: 256).encoded() == [0, 0xC3, 0, 0, 2, 1, 2, 0])
        #expect(try CommandAPDU(ins: 0xC0, le: 65_536).encoded() == [0, 0xC0, 0, 0, 0, 0, 0])
    }

    @Test("malformed APDUs give typed errors")
    func apduMalformed() {
        #expect(throws: ProximityError.malformedFrame(.tooShort(length: 3, minimum: 4))) { try CommandAPDU(encoded: [0, 0xC3, 0]) }
        #expect(throws: ProximityError.malformedFrame(.lengthMismatch(declared: 5, actual: 2))) {
            try CommandAPDU(encoded: [0, 0xC3, 0, 0, 5, 1, 2])
        }
        #expect(throws: ProximityError.malformedFrame(.lengthMismatch(declared: 300, actual: 2))) {
            try CommandAPDU(encoded: [0, 0xC3, 0, 0, 0, 0x01, 0x2c, 1, 2])
        }
        #expect(throws: ProximityError.malformedFrame(.zeroExtendedLc)) {
            try CommandAPDU(encoded: [0, 0xC3, 0, 0, 0, 0, 0, 1])
        }
        #expect(throws: ProximityError.messageTooLarge(size: 65_536, limit: 65_535)) {
            try CommandAPDU(ins: 0xC3, data: Self.bytes(65_536)).encoded()
        }
        #expect(throws: ProximityError.malformedFrame(.tooShort(length: 1, minimum: 2))) { try ResponseAPDU(encoded: [0x90]) }
    }

    @Test("NFC ENVELOPE chaining and GET RESPONSE carry messages both ways at the size limits")
    func nfcExchange() throws {
        for (commandLength, responseLength) in [(255, 256), (65_535, 65_536), (100, 37)] {
            for size in [0, 1, 0x7f, 0x80, 0xff, 0x100, 0xffff, 0x10000, 200_000] {
                let request = Self.bytes(size, seed: 1)
                let answer = Self.bytes(size / 2 + 3, seed: 2)
                var mdoc = NFCEnvelopeAssembler()
                var reader = NFCResponseAssembler()
                var received: [UInt8]?
                var response: ResponseAPDU?
                for command in try NFCDataTransfer.envelopeCommands(for: request, maxCommandDataLength: commandLength) {
                    // Every command survives an encode/parse round trip on the way.
                    let wire = try CommandAPDU(encoded: command.encoded())
                    switch try mdoc.handle(wire) {
                    case .reply(let reply): #expect(reply.statusWord == 0x9000); #expect(wire.cla == 0x10)
                    case .message(let message):
                        received = message
                        response = try mdoc.respond(with: answer, maxResponseDataLength: responseLength)
                    }
                }
                #expect(received == request)
                var result: [UInt8]?
                var next = response
                while let current = next {
                    next = nil
                    switch try reader.handle(ResponseAPDU(encoded: current.encoded)) {
                    case .message(let message): result = message
                    case .next(let command):
                        #expect(command.ins == 0xC0)
                        if case .reply(let reply) = try mdoc.handle(command) { next = reply }
                    }
                }
                #expect(result == answer)
            }
        }
    }

    @Test("malformed NFC data objects and statuses give typed errors")
    func nfcMalformed() throws {
        #expect(throws: ProximityError.malformedFrame(.invalidTag(0x54))) { try NFCDataTransfer.unwrap([0x54, 0]) }
        #expect(throws: ProximityError.malformedFrame(.lengthMismatch(declared: 3, actual: 2))) {
            try NFCDataTransfer.unwrap([0x53, 3, 1, 2])
        }
        #expect(throws: ProximityError.malformedFrame(.invalidBERLength(0x84))) {
            try NFCDataTransfer.unwrap([0x53, 0x84, 0, 0, 0, 1, 0])
        }
        #expect(throws: ProximityError.malformedFrame(.declaredLengthTooLarge(declared: 0x10000, limit: 10))) {
            try NFCDataTransfer.unwrap([0x53, 0x83, 1, 0, 0], maxMessageSize: 10)
        }
        #expect(throws: ProximityError.messageTooLarge(size: 0x1000000, limit: 0xFFFFFF)) {
            try NFCDataTransfer.wrap(Self.bytes(0x1000000))
        }
        var mdoc = NFCEnvelopeAssembler()
        #expect(throws: ProximityError.malformedFrame(.invalidParameters(p1: 1, p2: 0))) {
            try mdoc.handle(CommandAPDU(ins: 0xC3, p1: 1, data: [0x53, 0]))
        }
        #expect(try mdoc.handle(CommandAPDU(ins: 0xA4)) == .reply(ResponseAPDU(statusWord: 0x6D00)))
        #expect(try mdoc.handle(CommandAPDU(ins: 0xC0, le: 10)) == .reply(ResponseAPDU(statusWord: 0x6985)))
        var reader = NFCResponseAssembler()
        #expect(throws: ProximityError.malformedFrame(.unexpectedStatus(0x6A82))) {
            try reader.handle(ResponseAPDU(statusWord: 0x6A82))
        }
    }

    @Test("NFC tag: arming a new engagement keeps a chained response's GET RESPONSE; leaving the field drops it")
    func nfcTagRearmMidChain() throws {
        for leaveField in [false, true] {
            var tag = NFCTagCore(handover: .staticSelect([0xD1]), maxResponseDataLength: 16)
            let select = try CommandAPDU(ins: NFCApplication.select, p1: 0x04, data: NFCApplication.mdocDataTransfer).encoded()
            #expect(tag.handle(select) == .respondAndReport(ResponseAPDU(statusWord: ResponseAPDU.success), .dataTransferSelected))
            let envelope = try CommandAPDU(ins: NFCDataTransfer.envelope, data: NFCDataTransfer.wrap([0xA0]), le: 256).encoded()
            #expect(tag.handle(envelope) == .needReply(message: [0xA0]))
            let answer = Self.bytes(40)
            var pieces = [tag.provideReply(answer)]
            if leaveField { tag.deactivate() }
            tag.arm(.staticSelect([0xD1, 0x01]))
            let getResponse = try CommandAPDU(ins: NFCDataTransfer.getResponse, le: 256).encoded()
            while pieces.count < 8, pieces.last.map({ $0.statusWord >> 8 == 0x61 }) == true {
                guard case .respond(let next) = tag.handle(getResponse) else { Issue.record("not a response"); return }
                pieces.append(next)
            }
            if leaveField {
                #expect(pieces.count == 2)
                #expect(pieces.last?.statusWord == ResponseAPDU.conditionsNotSatisfied)
            } else {
                var reader = NFCResponseAssembler()
                var result: [UInt8]?
                for piece in pieces { if case .message(let message) = try reader.handle(piece) { result = message } }
                #expect(result == answer)
            }
        }
    }

    @Test("the ISO 18013-5 Annex D NFC Handover Select (BLE carrier) is produced byte for byte from its DeviceEngagement and BLE parameters")
    func annexDHandoverSelect() throws {
        let file = "mdoc/annex_d_device_engagement.json"
        let published = try SharedVectors.hex(file, "expected", "nfc_handover_select_message_hex")
        // The QR DeviceEngagement of Annex D D.3.1: BLE, mdoc central client mode with its UUID.
        let qrEngagement = try DeviceEngagement(encoded: try SharedVectors.hex(file, "expected", "device_engagement_hex"))
        let method = try #require(qrEngagement.deviceRetrievalMethods.first)
        guard case .ble(_, let options) = method else { Issue.record("not BLE: \(method)"); return }
        #expect(!options.peripheralServerMode && options.centralClientMode)
        // The same inputs give the QR DeviceEngagement back exactly.
        #expect(DeviceEngagement(security: qrEngagement.security, deviceRetrievalMethods: [method]).encodedBytes
                == qrEngagement.encodedBytes)
        // Over NFC the carriers travel in the Handover Select, so its DeviceEngagement has no
        // retrieval methods (D.5.2); in negotiated handover the central client UUID is the
        // reader's (§8.3.3.1.1.2), so the carrier leaves it out. The LE address (random,
        // least significant byte first) is the one Annex D's mdoc announces.
        let annexDAddress: [UInt8] = [0x28, 0x12, 0x8b, 0x37, 0x28, 0x28, 0x01]
        guard case .ble(var oob) = try #require(HandoverCarrier(mdocRetrievalMethod: method, negotiated: true)) else {
            Issue.record("no BLE carrier for \(method)"); return
        }
        #expect(oob == BLEOutOfBandData(role: .centralOnly))
        oob.deviceAddress = annexDAddress
        let nfcEngagement = DeviceEngagement(security: qrEngagement.security)
        let built = try ConnectionHandover.handoverSelect(deviceEngagement: nfcEngagement, carriers: [.ble(oob)])
        #expect(Hex.encode(built) == Hex.encode(published))
        #expect(built.count == 195)
        // And it reads back as what it was built from.
        let parsed = try ConnectionHandover.parseHandoverSelect(published)
        #expect(parsed.version == 0x15)
        #expect(parsed.carriers.map(\.powerState) == [.active])
        #expect(parsed.carriers.map(\.carrier) == [.ble(oob)])
        #expect(parsed.deviceEngagement.encodedBytes == nfcEngagement.encodedBytes)
        #expect(parsed.deviceEngagement.security.eDeviceKeyBytes == (try SharedVectors.hex(file, "expected", "e_device_key_bytes_hex")))
    }
}
