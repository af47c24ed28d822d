import Foundation
import Testing
@testable import CBOR

@Suite("Malformed input is rejected with a typed error at the right offset")
struct MalformedInputTests {
    static let validItems = [
        "a26161016162820203",                 // {"a": 1, "b": [2, 3]}
        "fb3ff199999999999a",                 // 1.1
        "7f657374726561646d696e67ff",         // (_ "strea", "ming")
        "c249010000000000000000",             // 2(h'010000000000000000')
        "bf61610161629f0203ffff",             // {_ "a": 1, "b": [_ 2, 3]}
        "1b000000e8d4a51000",                 // 1000000000000
        "d818458301020304",                   // 24(h'8301020304')
    ]

    @Test("every truncation of a valid item ends in unexpectedEnd at the cut or a length that does not fit",
          arguments: validItems)
    func truncations(_ text: String) throws {
        let bytes = try hex(text)
        for length in 0..<bytes.count {
            let error = decodeError(Array(bytes[0..<length]))
            switch error {
            case .unexpectedEnd(let offset)?:
                #expect(offset == length, "cut at \(length)")
            case .lengthTooLarge(let offset, _)?:
                #expect(offset < length, "cut at \(length)")
            default:
                Issue.record("cut at \(length) of \(text): \(String(describing: error))")
            }
        }
    }

    @Test("additional information 28, 29 and 30 is reserved on every major type")
    func reservedAdditionalInfo() {
        for major in UInt8(0)...7 {
            for info in UInt8(28)...30 {
                let initial = major << 5 | info
                #expect(decodeError([initial]) == .reservedAdditionalInfo(offset: 0, value: info))
                #expect(decodeError([0x82, 0x01, initial]) == .reservedAdditionalInfo(offset: 2, value: info))
            }
        }
    }

    @Test("indefinite length on integers and tags is not well-formed")
    func indefiniteOnWrongMajorTypes() {
        #expect(decodeError([0x1F]) == .invalidIndefiniteLength(offset: 0))
        #expect(decodeError([0x3F]) == .invalidIndefiniteLength(offset: 0))
        #expect(decodeError([0x81, 0xDF]) == .invalidIndefiniteLength(offset: 1))
    }

    @Test("a break outside an indefinite-length item is rejected where it appears")
    func strayBreak() throws {
        #expect(decodeError([0xFF]) == .unexpectedBreak(offset: 0))
        #expect(try decodeError(try hex("8201ff")) == .unexpectedBreak(offset: 2))
        #expect(try decodeError(try hex("c1ff")) == .unexpectedBreak(offset: 1))
        // A break in value position of an indefinite map.
        #expect(try decodeError(try hex("bf6161ff")) == .unexpectedBreak(offset: 3))
        // A break ending an indefinite array inside a definite one is fine; one more is not.
        #expect(try decodeError(try hex("819fffff")) == .trailingBytes(offset: 3))
    }

    @Test("indefinite-length strings accept only definite chunks of their own major type")
    func indefiniteChunks() throws {
        #expect(try decodeError(try hex("5f41006161ff")) == .invalidIndefiniteChunk(offset: 3))   // text chunk in bytes
        #expect(try decodeError(try hex("7f616141 00ff")) == .invalidIndefiniteChunk(offset: 3))  // bytes chunk in text
        #expect(try decodeError(try hex("5f5fffff")) == .invalidIndefiniteChunk(offset: 1))       // nested indefinite
        #expect(try decodeError(try hex("5f01ff")) == .invalidIndefiniteChunk(offset: 1))         // integer chunk
        #expect(try decodeError(try hex("5f4101")) == .unexpectedEnd(offset: 3))                  // missing break
        #expect(try decodeError(try hex("9f0102")) == .unexpectedEnd(offset: 3))
        #expect(try decodeError(try hex("bf0102")) == .unexpectedEnd(offset: 3))
        #expect((try? CBOR.decode(hex("5fff"))) == .byteString([]))
    }

    @Test("text strings must be valid UTF-8: no overlongs, surrogates, truncations or stray continuations")
    func invalidUTF8() throws {
        #expect(try decodeError(try hex("62c080")) == .invalidUTF8(offset: 1))          // overlong NUL
        #expect(try decodeError(try hex("63e08080")) == .invalidUTF8(offset: 1))        // overlong 3-byte
        #expect(try decodeError(try hex("64f0808080")) == .invalidUTF8(offset: 1))      // overlong 4-byte
        #expect(try decodeError(try hex("63eda080")) == .invalidUTF8(offset: 1))        // U+D800 surrogate
        #expect(try decodeError(try hex("6261e2")) == .invalidUTF8(offset: 2))          // truncated sequence
        #expect(try decodeError(try hex("6180")) == .invalidUTF8(offset: 1))            // lone continuation
        #expect(try decodeError(try hex("64f4908080")) == .invalidUTF8(offset: 1))      // above U+10FFFF
        #expect(try decodeError(try hex("61ff")) == .invalidUTF8(offset: 1))
        // Each chunk must be valid on its own (RFC 8949 §3.2.3), even if the join would be.
        #expect(try decodeError(try hex("7f61c361bcff")) == .invalidUTF8(offset: 2))
        #expect((try? CBOR.decode(hex("62c3bc"))) == .textString("ü"))
    }

    @Test("a length of 2^63 fails at once with lengthTooLarge")
    func hugeLength() throws {
        let length: UInt64 = 1 << 63
        #expect(try decodeError(try hex("5b8000000000000000")) == .lengthTooLarge(offset: 0, length: length))
        #expect(try decodeError(try hex("7b8000000000000000")) == .lengthTooLarge(offset: 0, length: length))
        #expect(try decodeError(try hex("9b8000000000000000")) == .lengthTooLarge(offset: 0, length: length))
        #expect(try decodeError(try hex("bb8000000000000000")) == .lengthTooLarge(offset: 0, length: length))
        #expect(try decodeError(try hex("5bffffffffffffffff")) == .lengthTooLarge(offset: 0, length: .max))
    }

    @Test("a 1 GiB length claimed in 10 bytes fails promptly without allocating it")
    func gibibyteClaim() throws {
        let bytes = try hex("5a40000000") + [1, 2, 3, 4, 5]
        #expect(bytes.count == 10)
        #expect(decodeError(bytes) == .lengthTooLarge(offset: 0, length: 1 << 30))
        // Counted, not timed (issue 10): the parser stops at the head, having read its five
        // bytes and copied nothing.
        var parser = CBORParser(bytes: bytes, start: 0, end: bytes.count, options: .default, recordNodes: true)
        #expect(throws: CBORError.lengthTooLarge(offset: 0, length: 1 << 30)) { try parser.parseItem(depth: 0) }
        #expect(parser.bytesRead == 5 && parser.bytesCopied == 0 && parser.bytesStructure == 0)
        #expect(parser.nodes.count == 1 && parser.position == 5)
        #expect(try decodeError(hex("825a40000000")) == .lengthTooLarge(offset: 1, length: 1 << 30))
    }

    @Test("an array declaring 2^32 items in 9 bytes fails at once")
    func hugeArrayCount() throws {
        #expect(try decodeError(try hex("9b0000000100000000")) == .lengthTooLarge(offset: 0, length: 1 << 32))
        #expect(try decodeError(try hex("9affffffff00")) == .lengthTooLarge(offset: 0, length: 0xFFFF_FFFF))
        // A map needs two bytes per entry.
        #expect(try decodeError(try hex("a20102")) == .lengthTooLarge(offset: 0, length: 2))
    }

    @Test("nesting 10,000 levels deep gives a depth error, not a stack overflow")
    func deepNesting() {
        let depth = 10_000
        #expect(decodeError([UInt8](repeating: 0x81, count: depth) + [0]) == .depthLimitExceeded(offset: 257))
        #expect(decodeError([UInt8](repeating: 0x9F, count: depth)) == .depthLimitExceeded(offset: 257))
        #expect(decodeError([UInt8](repeating: 0xC1, count: depth) + [0]) == .depthLimitExceeded(offset: 257))
        // {1: {1: ...}}: the map at depth k starts at 2k; its key at 2k + 1 has depth k + 1.
        var maps: [UInt8] = []
        for _ in 0..<depth { maps += [0xA1, 0x01] }
        maps.append(0)
        #expect(decodeError(maps) == .depthLimitExceeded(offset: 513))
        let deepItem = decodingError { () throws(CBORError) in
            _ = try CBOR.decodeItem([UInt8](repeating: 0x81, count: depth) + [0])
        }
        #expect(deepItem == .depthLimitExceeded(offset: 257))
        // Exactly at the limit is fine.
        #expect(decodeError([UInt8](repeating: 0x81, count: 256) + [0]) == nil)
    }

    @Test("maxDepth is clamped to maxSupportedDepth, and the deepest accepted value can be used")
    func depthCeiling() throws {
        let limit = CBORDecodingOptions.maxSupportedDepth
        let options = CBORDecodingOptions(maxDepth: 1_000_000)
        #expect(decodeError([UInt8](repeating: 0x81, count: limit + 1) + [0], options: options)
                == .depthLimitExceeded(offset: limit + 1))
        let bytes = [UInt8](repeating: 0x81, count: limit) + [0]
        let value = try CBOR.decode(bytes, options: options)
        #expect(value.encoded() == bytes)
        #expect(value == value)
        #expect(value.diagnostic().count == 2 * limit + 1)
        let item = try CBOR.decodeItem(bytes, options: options)
        #expect(item.diagnostic(options: .init(pretty: true)).count > limit)
    }

    @Test("simple values below 32 must not use the two-byte form")
    func twoByteSimpleValues() {
        for value in UInt8(0)..<32 {
            #expect(decodeError([0xF8, value]) == .invalidSimpleValue(offset: 0))
        }
        #expect((try? CBOR.decode(hex("f820"))) == .simple(32))
    }

    @Test("bytes after the top-level item are rejected by decode but reported by decodePrefix")
    func trailingBytes() throws {
        #expect(try decodeError(hex("0102")) == .trailingBytes(offset: 1))
        #expect(decodeError([]) == .unexpectedEnd(offset: 0))
        let (value, used) = try CBOR.decodePrefix(hex("820102ff"))
        #expect(value == [1, 2])
        #expect(used == 3)
        #expect(try CBOR.decodeSequence(hex("0102f6")) == [1, 2, nil])
    }

    @Test("input, item and string limits are enforced")
    func limits() throws {
        #expect(try decodeError(try hex("4401020304"), options: .init(maxInputSize: 4)) == .inputTooLarge(size: 5))
        #expect(try decodeError(try hex("83010203"), options: .init(maxItems: 3)) == .itemLimitExceeded(offset: 3))
        #expect(try decodeError(try hex("4401020304"), options: .init(maxStringLength: 3)) == .lengthTooLarge(offset: 0, length: 4))
        #expect(try decodeError(hex("5f420102420304ff"), options: .init(maxStringLength: 3))
                == .lengthTooLarge(offset: 4, length: 4))
        #expect(try decodeError(try hex("8181818100"), options: .init(maxDepth: 3)) == .depthLimitExceeded(offset: 4))
    }

    @Test("strict options reject non-preferred heads and floats, indefinite lengths, and unsorted keys")
    func strictOptions() throws {
        let preferred = CBORDecodingOptions(requirePreferredSerialization: true)
        #expect(try decodeError(try hex("1801"), options: preferred) == .nonPreferredEncoding(offset: 0))
        #expect(try decodeError(try hex("82011900ff"), options: preferred) == .nonPreferredEncoding(offset: 2))
        #expect(try decodeError(try hex("5a0000000161"), options: preferred) == .nonPreferredEncoding(offset: 0))
        #expect(try decodeError(try hex("fb3ff8000000000000"), options: preferred) == .nonPreferredEncoding(offset: 0))
        #expect(try decodeError(try hex("fa3fc00000"), options: preferred) == .nonPreferredEncoding(offset: 0))
        #expect(try decodeError(try hex("fb3ff199999999999a"), options: preferred) == nil)
        #expect(try decodeError(try hex("1818"), options: preferred) == nil)
        #expect(try decodeError(try hex("1801")) == nil)

        let definite = CBORDecodingOptions(allowIndefiniteLength: false)
        #expect(try decodeError(try hex("9fff"), options: definite) == .indefiniteLengthNotAllowed(offset: 0))
        #expect(try decodeError(try hex("815fff"), options: definite) == .indefiniteLengthNotAllowed(offset: 1))

        let sorted = CBORDecodingOptions(requireSortedMapKeys: true)
        #expect(try decodeError(try hex("a2020001 00"), options: sorted) == .unsortedMapKeys(offset: 3))
        #expect(try decodeError(try hex("a2616101 0a02"), options: sorted) == .unsortedMapKeys(offset: 4))
        #expect(try decodeError(try hex("a20a0161 6102"), options: sorted) == nil)
    }

    @Test("duplicate map keys are rejected by default, also in large maps, and can be allowed")
    func duplicateKeys() throws {
        #expect(try decodeError(hex("a201010102")) == .duplicateMapKey(offset: 3))
        #expect(try decodeError(hex("a2616101616102")) == .duplicateMapKey(offset: 4))
        var big: [UInt8] = [0xB8, 40]
        for key in UInt8(0)..<39 { big += [0x18, 0x40 &+ key, 0x00] }
        big += [0x18, 0x40 + 20, 0x00]
        #expect(decodeError(big) == .duplicateMapKey(offset: 2 + 39 * 3))
        let lenient = CBORDecodingOptions(rejectDuplicateMapKeys: false)
        let value = try CBOR.decode(hex("a201010102"), options: lenient)
        #expect(value.mapValue?.count == 2)
        #expect(value[1] == 1)    // the first entry wins on lookup
    }
}
