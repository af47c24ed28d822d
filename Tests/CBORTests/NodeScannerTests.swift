import Testing
@testable import CBOR

/// ``CBORNodeScanner`` (the fast path of exact-bytes decoding) against ``CBORParser``:
/// whenever the scanner gives a node table it is the parser's, node for node, and
/// whatever the parser refuses the scanner leaves to it.
@Suite("The node scanner agrees with the parser")
struct NodeScannerTests {
    private static let optionSets: [CBORDecodingOptions] = [
        .default,
        CBORDecodingOptions(maxDepth: 2),
        CBORDecodingOptions(maxItems: 5),
        CBORDecodingOptions(maxStringLength: 3),
        CBORDecodingOptions(rejectDuplicateMapKeys: false),
        CBORDecodingOptions(allowReservedSimpleValues: true),
        CBORDecodingOptions(maxDepth: 0),
    ]

    /// The parser's node table, or nil when it throws.
    private static func parserNodes(_ bytes: [UInt8], _ options: CBORDecodingOptions) -> [CBORNode]? {
        var parser = CBORParser(bytes: bytes, start: 0, end: bytes.count, options: options, recordNodes: true)
        do {
            _ = try parser.parseItem(depth: 0)
            return parser.nodes
        } catch {
            return nil
        }
    }

    /// Checks the property for one input under every option set; returns how many
    /// (input, options) pairs the scanner handled itself.
    @discardableResult
    private static func check(_ bytes: [UInt8], sourceLocation: SourceLocation = #_sourceLocation) -> Int {
        var handled = 0
        for options in optionSets {
            let expected = parserNodes(bytes, options)
            guard let scanned = CBORNodeScanner.scan(bytes, start: 0, end: bytes.count, options: options) else { continue }
            handled += 1
            #expect(scanned == expected, "\(hexString(bytes))", sourceLocation: sourceLocation)
        }
        return handled
    }

    @Test("every RFC 8949 Appendix A vector: the same nodes, or left to the parser")
    func appendixA() throws {
        let vectors = AppendixAVector.all
        #expect(vectors.count > 50)
        var handled = 0
        for vector in vectors { handled += Self.check(try hex(vector.hex)) }
        #expect(handled > 200)    // most vectors are definite-length
    }

    @Test("an mdoc-like document, every truncation and every single-byte change of it")
    func mutations() throws {
        let item: CBOR = .map(CBORMap([
            ("digestID", 7), ("random", .byteString([1, 2, 3, 4])), ("elementIdentifier", "family_name"),
            ("elementValue", .array([.map(CBORMap([("code", "B"), (1, .tagged(1004, "2024-01-31"))])), .double(1.5),
                                     .boolean(true), .null, .simple(40), .negative(9)])),
            (-1, .map(CBORMap([(2, 3), (1, 4), ("a", 5), ("b", 6)]))),
        ]))
        // Handled under the default, lenient-key and reserved-simple options; refused at
        // depth 2 and 0, at 5 items and at 3-byte strings.
        let document = item.encoded()
        #expect(Self.check(document) == 3)
        #expect(Self.check(CBOR.embedded(item).encoded()) == 5)
        for length in 0..<document.count { Self.check(Array(document[..<length])) }
        var changed = 0
        for offset in document.indices {
            for value: UInt8 in [0x00, 0x18, 0x1F, 0x5F, 0x7F, 0x9F, 0xBF, 0xF8, 0xFF, document[offset] ^ 0x01, document[offset] &+ 1] {
                var mutated = document
                mutated[offset] = value
                changed += Self.check(mutated)
            }
        }
        #expect(changed > 1000)
    }

    @Test("maps: keys in order, out of order, repeated, past 16, of other kinds")
    func maps() throws {
        func map(_ keys: [CBOR]) -> [UInt8] { CBOR.map(CBORMap(keys.map { ($0, CBOR.null) })).encoded() }
        let cases: [[CBOR]] = [
            (0..<40).map { CBOR($0) },                       // increasing: no lookup
            (0..<40).reversed().map { CBOR($0) },            // decreasing: past 16 the parser decides
            (0..<10).reversed().map { CBOR($0) },            // decreasing, within 16
            [1, 2, 3, 2], ["b", "a", "b"], ["a", .byteString([0x61])], [-1, 0, -1],
            (0..<16).map { CBOR("k\($0)") } + ["k3"],
            [.array([1]), 2], [.tagged(1, 0), 1], [1.5, 2.5], [.boolean(true), .null],
        ]
        for keys in cases { Self.check(map(keys)) }
        // A repeated key is refused by both (the scanner leaves it to the parser).
        #expect(CBORNodeScanner.scan(map([1, 2, 1]), start: 0, end: 7, options: .default) == nil)
        #expect(Self.parserNodes(map([1, 2, 1]), .default) == nil)
        // Increasing keys far past 16 stay on the fast path.
        let long = map((0..<1000).map { CBOR($0) })
        #expect(CBORNodeScanner.scan(long, start: 0, end: long.count, options: .default) != nil)
    }

    @Test("a seeded stream of random definite items: identical tables")
    func randomItems() {
        var generator = Generator(state: 0x5EED)
        var handled = 0
        for _ in 0..<400 { handled += Self.check(generator.item(depth: 0).encoded()) }
        #expect(handled > 1000)
    }

    /// Random CBOR values (definite lengths, as the encoder writes them).
    private struct Generator {
        var state: UInt64
        mutating func next(_ bound: UInt64) -> UInt64 {
            state = state &* 6364136223846793005 &+ 1442695040888963407
            return (state >> 33) % bound
        }
        mutating func item(depth: Int) -> CBOR {
            switch next(depth > 3 ? 6 : 9) {
            case 0: return .unsigned(next(2) == 0 ? next(30) : state)
            case 1: return .negative(next(300))
            case 2: return .byteString((0..<next(6)).map { _ in UInt8(next(256)) })
            case 3: return .textString(["", "a", "é", "key", "日本"][Int(next(5))])
            case 4: return [.boolean(true), .null, .undefined, .simple(UInt8(32 + next(200))), .half(0x3C00), .double(2.5)][Int(next(6))]
            case 5: return .tagged(next(2) == 0 ? 24 : next(100_000), .unsigned(next(10)))
            case 6, 7:
                return .array((0..<next(5)).map { _ in item(depth: depth + 1) })
            default:
                var map = CBORMap()
                for _ in 0..<next(6) {
                    let key: CBOR = next(2) == 0 ? .unsigned(next(8)) : .textString(["a", "b", "c"][Int(next(3))])
                    map[key] = item(depth: depth + 1)
                }
                return .map(map)
            }
        }
    }
}
