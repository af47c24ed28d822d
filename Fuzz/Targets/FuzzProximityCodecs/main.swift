// libFuzzer target for the MdocProximity carrier codecs: BLE GATT fragments and
// state values, L2CAP stream splitting, NFC command/response APDUs, DO'53'
// unwrapping, ENVELOPE chaining and NDEF Handover Select parsing. Bad input
// must give a typed error, never a crash or a hang; accepted input must round-trip.
import CBOR
import MdocProximity

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Stops the run so libFuzzer saves the input that broke an invariant.
func check(_ condition: Bool, _ message: String) {
    if !condition {
        print("FuzzProximityCodecs invariant violated: \(message)")
        abort()
    }
}

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzz(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    let input = Array(UnsafeBufferPointer(start: data, count: size))
    guard let selector = input.first else { return 0 }
    let body = Array(input.dropFirst())

    switch selector % 6 {
    case 0:
        // BLE: split the body into MTU-sized values and feed them back.
        var reassembler = BLEMessageReassembler(mtu: 23 + Int(selector) % 495, maxMessageSize: 1 << 16)
        var offset = 0
        let chunk = max(1, Int(selector) % 40)
        while offset < body.count {
            let end = min(offset + chunk, body.count)
            _ = try? reassembler.append(Array(body[offset..<end]))
            offset = end
        }
        if let framer = try? BLEMessageFramer(mtu: 23 + Int(selector) % 495) {
            var again = BLEMessageReassembler(mtu: framer.mtu, maxMessageSize: 1 << 20)
            var out: [UInt8]?
            for fragment in framer.fragments(of: body) { out = try? again.append(fragment) }
            check(out == body, "BLE framing does not round-trip")
        }
        _ = try? BLETransportState(characteristicValue: body)
    case 1:
        var reassembler = L2CAPMessageReassembler(maxMessageSize: 1 << 16)
        let messages = (try? reassembler.append(body)) ?? []
        check(messages.reduce(0) { $0 + $1.count } <= body.count, "L2CAP produced more bytes than it received")
        for message in messages {
            check((try? CBOR.decodePrefix(message).byteCount) == message.count, "an L2CAP message is not one whole CBOR item")
        }
        // The same stream in 3-byte chunks gives the same messages.
        var chunked = L2CAPMessageReassembler(maxMessageSize: 1 << 16)
        var again: [[UInt8]] = []
        var offset = 0
        while offset < body.count {
            let end = min(offset + 3, body.count)
            guard let more = try? chunked.append(Array(body[offset..<end])) else { break }
            again += more
            offset = end
        }
        if offset >= body.count { check(again == messages, "L2CAP messages depend on the chunking") }
    case 2:
        if let command = try? CommandAPDU(encoded: body) {
            let encoded = try? command.encoded(extended: command.needsExtendedLength)
            check(encoded.flatMap { try? CommandAPDU(encoded: $0) } == command, "APDU does not round-trip")
        }
        if let response = try? ResponseAPDU(encoded: body) { check(response.encoded == body, "response APDU changed") }
    case 3:
        if let message = try? NFCDataTransfer.unwrap(body, maxMessageSize: 1 << 20) {
            check((try? NFCDataTransfer.wrap(message)).flatMap { try? NFCDataTransfer.unwrap($0) } == message,
                  "DO'53' does not round-trip")
        }
    case 4:
        var assembler = NFCEnvelopeAssembler(maxMessageSize: 1 << 16)
        var offset = 0
        while offset + 4 <= body.count {
            let length = min(Int(body[offset]) % 64 + 4, body.count - offset)
            if let command = try? CommandAPDU(encoded: Array(body[offset..<(offset + length)])) {
                _ = try? assembler.handle(command)
            }
            offset += length
        }
    default:
        _ = try? ConnectionHandover.parseHandoverSelect(body)
        _ = try? ConnectionHandover.parseHandoverRequest(body)
        if let records = try? NDEFMessage.decode(body) {
            check((try? NDEFMessage.decode(NDEFMessage.encode(records))) == records, "NDEF does not round-trip")
        }
    }
    return 0
}
