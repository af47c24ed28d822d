import Testing
@testable import CBOR

/// Duplicate map keys on each of the parser's paths (keys compared in place while they
/// increase, in a short array, in a set; digests once another kind of key appears), and
/// item values built from the node table.
@Suite("Map keys on every path; item values built on demand")
struct MapKeyAndLazyValueTests {
    /// A map head for `count` entries.
    private static func mapHead(_ count: Int) -> [UInt8] {
        count < 24 ? [0xA0 | UInt8(count)] : [0xB9, UInt8(count >> 8), UInt8(count & 0xFF)]
    }

    /// A text string key `k<n>`, definite.
    private static func key(_ n: Int) -> [UInt8] {
        let text = Array("k\(n)".utf8)
        return [0x60 | UInt8(text.count)] + text
    }

    /// The same key as an indefinite-length text string of one-byte chunks.
    private static func chunkedKey(_ n: Int) -> [UInt8] {
        [0x7F] + Array("k\(n)".utf8).flatMap { [0x61, $0] } + [0xFF]
    }

    /// Both decoders' error for `bytes` (they must agree), or nil when both accept.
    private func bothErrors(_ bytes: [UInt8]) -> CBORError? {
        let value = decodeError(bytes)
        let item = decodingError { () throws(CBORError) in _ = try CBOR.decodeItem(bytes) }
        #expect(value == item)
        return value
    }

    @Test("a key repeated after keys of every kind and count is a duplicate in both decoders, at its offset")
    func duplicatesOnEveryPath() throws {
        // Offsets: the map head, then each entry is key + a one-byte value.
        for count in [1, 2, 15, 16, 17, 40] {
            for order in ["increasing", "decreasing"] {
                let keys = order == "increasing" ? Array(0..<count) : Array((0..<count).reversed())
                var body: [UInt8] = []
                for n in keys { body += Self.key(100 + n) + [0x00] }
                // Accepted without the repeat.
                #expect(bothErrors(Self.mapHead(count) + body) == nil)
                // The first key again, definite: compared in place.
                let head = Self.mapHead(count + 1)
                #expect(bothErrors(head + body + Self.key(100 + keys[0]) + [0x00])
                        == .duplicateMapKey(offset: head.count + body.count), "\(count) \(order)")
                // The first key again as chunks: every key turns into a digest.
                #expect(bothErrors(head + body + Self.chunkedKey(100 + keys[0]) + [0x00])
                        == .duplicateMapKey(offset: head.count + body.count), "\(count) \(order) chunked")
                // The last key again: the one in-place comparison that matters.
                #expect(bothErrors(head + body + Self.key(100 + keys[count - 1]) + [0x00])
                        == .duplicateMapKey(offset: head.count + body.count), "\(count) \(order) last")
            }
        }
        // A chunked key first, then its definite twin: the digest path from the start.
        #expect(bothErrors([0xA2] + Self.chunkedKey(7) + [0x00] + Self.key(7) + [0x00])
                == .duplicateMapKey(offset: 1 + Self.chunkedKey(7).count + 1))
    }

    @Test("keys are equal by value: a longer integer head is the same key, a byte string is not a text string, an indefinite map's keys are checked")
    func keyEquality() throws {
        // 1 and 1 with a one-byte argument (not preferred, accepted by default).
        #expect(bothErrors([0xA2, 0x01, 0x00, 0x18, 0x01, 0x00]) == .duplicateMapKey(offset: 3))
        // -1 and 0 differ; -1 twice does not.
        #expect(bothErrors([0xA2, 0x20, 0x00, 0x00, 0x00]) == nil)
        #expect(bothErrors([0xA2, 0x20, 0x00, 0x38, 0x00, 0x00]) == .duplicateMapKey(offset: 3))
        // "ab" as text and as bytes, and "ab" vs "ac".
        #expect(bothErrors([0xA2, 0x62, 0x61, 0x62, 0x00, 0x42, 0x61, 0x62, 0x00]) == nil)
        #expect(bothErrors([0xA2, 0x62, 0x61, 0x62, 0x00, 0x62, 0x61, 0x63, 0x00]) == nil)
        // Empty strings are one key.
        #expect(bothErrors([0xA2, 0x60, 0x00, 0x60, 0x00]) == .duplicateMapKey(offset: 3))
        // Indefinite-length map, increasing then repeated.
        #expect(bothErrors([0xBF, 0x01, 0x00, 0x02, 0x00, 0x01, 0x00, 0xFF]) == .duplicateMapKey(offset: 5))
        #expect(bothErrors([0xBF, 0x01, 0x00, 0x02, 0x00, 0xFF]) == nil)
        // Allowed duplicates keep both entries, and the first wins on lookup in both forms.
        let lenient = CBORDecodingOptions(rejectDuplicateMapKeys: false)
        let twice: [UInt8] = [0xA2, 0x61, 0x61, 0x01, 0x61, 0x61, 0x02]
        #expect(try CBOR.decode(twice, options: lenient)["a"] == 1)
        let item = try CBOR.decodeItem(twice, options: lenient)
        #expect(item["a"]?.value == 1)
        #expect(item.count == 2)
    }

    @Test("an item's value, count, tag and key lookups equal those of the decoded value, for every kind of item")
    func valuesFromNodes() throws {
        let inputs = [
            // {1: [_ 1, -2, h'0102', (_ "a", "bc")], "k": 24("x"), 1.5: simple(99), false: null}
            "a4019f01214201027f616162626dff ff616bd818617" + "8f93e00f863f4f6",
            // {_ "a": [_ ], (_ h'01', h''): {_ }, "c": 1(1.0e300)}
            "bf6161 9fff 5f4101 40ff bfff 6163 c1fb7e37e43c8800759c ff",
            // A half, a float, undefined, a big unsigned, a big negative.
            "85 f97c00 fa47c35000 f7 1bffffffffffffffff 3bfffffffffffffffe",
        ]
        for text in inputs {
            let bytes = try hex(text.replacingOccurrences(of: " ", with: ""))
            let value = try CBOR.decode(bytes)
            let item = try CBOR.decodeItem(bytes)
            #expect(item.value == value)
            #expect(item.value.encoded() == value.encoded())
            #expect(item.count == (value.mapValue?.count ?? value.arrayValue?.count ?? 0))
            for (k, child) in item.children.enumerated() {
                let expected: CBOR
                switch value {
                case .array(let elements): expected = elements[k]
                case .map(let map): expected = k % 2 == 0 ? map.entries[k / 2].key : map.entries[k / 2].value
                default: continue
                }
                #expect(child.value == expected)
                #expect(child.tag == expected.tag)
                #expect(child.count == (expected.mapValue?.count ?? expected.arrayValue?.count ?? 0))
                // Every key finds its own value, whatever its kind.
                if case .map(let map) = value, k % 2 == 0 {
                    #expect(item[map.entries[k / 2].key]?.value == map.entries[k / 2].value)
                }
            }
        }
        // Lookup by a key of another kind or length misses.
        let item = try CBOR.decodeItem(hex("a2616101 4161 02"))
        #expect(item["a"]?.value == 1)
        #expect(item[.byteString([0x61])]?.value == 2)
        #expect(item["ab"] == nil)
        #expect(item[.unsigned(0)] == nil)
        #expect(item[.textString("")] == nil)
    }
}
