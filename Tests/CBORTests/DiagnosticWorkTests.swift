import Testing
@testable import CBOR

/// Rendering diagnostic notation costs work linear in the input, counted in bytes read and
/// bytes allocated (never timed), and a total-work limit bounds what any input can cost
/// (issue 12: "decoder amplification").
@Suite("Diagnostic notation does linear, bounded work")
struct DiagnosticWorkTests {
    /// `levels` nested tag-24 byte strings around a byte string of `payload` bytes, each
    /// level with a 4-byte length head: `d8 18 5a <len> ( d8 18 5a <len> ( ... ) )`, built
    /// in one pass (heads first, outermost first, each length known from the inside out).
    static func nestedTag24(levels: Int, payload: Int) -> [UInt8] {
        var lengths = [5 + payload]
        for _ in 0..<levels { lengths.append(7 + lengths[lengths.count - 1]) }
        var bytes: [UInt8] = []
        bytes.reserveCapacity(lengths[levels])
        for level in stride(from: levels, to: 0, by: -1) {
            bytes += [0xd8, 0x18, 0x5a] + bigEndian(lengths[level - 1])
        }
        bytes += [0x5a] + bigEndian(payload)
        bytes += repeatElement(0xab, count: payload)
        return bytes
    }

    static func bigEndian(_ value: Int) -> [UInt8] {
        [UInt8(value >> 24 & 0xff), UInt8(value >> 16 & 0xff), UInt8(value >> 8 & 0xff), UInt8(value & 0xff)]
    }

    static let expand = CBORDiagnosticOptions(expandEmbeddedCBOR: true, pretty: true)

    @Test("8 MiB of nested tag-24 byte strings is decoded and printed, expanded, reading and allocating at most a few times its size")
    func nestedTag24IsLinear() throws {
        let input = Self.nestedTag24(levels: 120, payload: 8 << 20)
        let n = input.count
        #expect(n > 8 << 20)
        let item = try CBOR.decodeItem(input)
        let rendering = try item.renderDiagnostic(options: Self.expand)
        // Every level was expanded (the 120 openings come first), and the payload printed once, as hex.
        let opening = Array("24(<< ".utf8)
        #expect(Array(rendering.text.utf8.prefix(120 * opening.count)) == Array([[UInt8]](repeating: opening, count: 120).joined()))
        #expect(rendering.text.utf8.dropFirst(120 * opening.count).starts(with: "h'abab".utf8))
        #expect(rendering.text.utf8.count < 2 * n + 64 * 120 * 10)
        // The input is read about once (heads at each level, the payload when printed);
        // the allocations are the hex digits (2 bytes per byte), copied into the output (2),
        // made a String once (2), plus the node tables.
        #expect(rendering.work.bytesRead <= 2 * n)
        #expect(rendering.work.bytesAllocated <= 7 * n)
        // The old printer re-decoded, and copied, the rest of the input at every level:
        // 120 levels of an 8 MiB payload would have been about 120 × n bytes.
    }

    @Test("the same input through a value, and at a small work limit, is bounded too: workLimitExceeded, or a truncated text")
    func valuePathAndLimit() throws {
        let input = Self.nestedTag24(levels: 40, payload: 1 << 20)
        let value = try CBOR.decode(input)
        let rendering = try value.renderDiagnostic(options: Self.expand)
        #expect(rendering.work.total <= 9 * input.count)
        var small = Self.expand
        small.maxWork = 512 << 10
        #expect(throws: CBORError.workLimitExceeded(limit: 512 << 10)) { try value.renderDiagnostic(options: small) }
        #expect(throws: CBORError.workLimitExceeded(limit: 512 << 10)) { try CBOR.decodeItem(input).renderDiagnostic(options: small) }
        let truncated = try CBOR.decodeItem(input).diagnostic(options: small)
        #expect(truncated.hasSuffix("/ output truncated: work limit of 524288 bytes reached /"))
        #expect(truncated.utf8.count < (512 << 10) + 100)
    }

    @Test("pretty-printing deep nesting, which repeats the indentation on every line, stops at the work limit")
    func indentationAmplification() throws {
        // 200 nested arrays around 200,000 one-byte elements: ~200 KB of input, but pretty
        // output of ~400 bytes of indentation per element (80 MB).
        let depth = 200, elements = 200_000
        var input = [UInt8](repeating: 0x81, count: depth)
        input += [0x9a] + Self.bigEndian(elements) + [UInt8](repeating: 0x01, count: elements)
        let item = try CBOR.decodeItem(input)
        var options = CBORDiagnosticOptions(pretty: true)
        options.maxWork = 8 << 20
        #expect(throws: CBORError.workLimitExceeded(limit: 8 << 20)) { try item.renderDiagnostic(options: options) }
        // On one line the same input is cheap.
        let compact = try item.renderDiagnostic(options: CBORDiagnosticOptions())
        #expect(compact.work.total <= 8 * input.count)
    }

    @Test("nested indefinite-length tag-24 content is joined (copied) once, not once per level: work stays linear")
    func indefiniteNesting() throws {
        // 24(_ h'…') wrapping 24(_ h'…') …, 60 levels around 1 MiB.
        var inner: [UInt8] = [0x5a] + Self.bigEndian(1 << 20) + [UInt8](repeating: 0x01, count: 1 << 20)
        for _ in 0..<60 {
            inner = [0xd8, 0x18, 0x5f, 0x5a] + Self.bigEndian(inner.count) + inner + [0xff]
        }
        let rendering = try CBOR.decodeItem(inner).renderDiagnostic(options: Self.expand)
        // The outer level is expanded; the levels inside its joined copy are shown as chunks.
        #expect(rendering.text.hasPrefix("24(<< 24((_ h'"))
        #expect(rendering.work.bytesRead <= 3 * inner.count)
        #expect(rendering.work.bytesAllocated <= 8 * inner.count)
    }

    @Test("expansion still shows what it did before: nested items, indefinite lengths, and content that is not one item")
    func expansionUnchanged() throws {
        let nested = CBOR.embedded([CBOR.embedded(["a": 1]), CBOR.embedded(.byteString([0xff]))])
        let item = try CBOR.decodeItem(nested.encoded())
        let expand = CBORDiagnosticOptions(expandEmbeddedCBOR: true)
        #expect(item.diagnostic(options: expand) == #"24(<< [24(<< {"a": 1} >>), 24(<< h'ff' >>)] >>)"#)
        #expect(nested.diagnostic(options: expand) == item.diagnostic(options: expand))
        // A text string, an indefinite-length string and an indefinite tag-24 content.
        let bytes: [UInt8] = [0x83, 0x62, 0x68, 0x69, 0x5f, 0x41, 0x01, 0x41, 0x02, 0xff, 0xd8, 0x18, 0x5f, 0x42, 0x81, 0x01, 0xff]
        #expect(try CBOR.decodeItem(bytes).diagnostic(options: expand) == #"["hi", (_ h'01', h'02'), 24(<< [1] >>)]"#)
        // Duplicate keys in embedded content are not one valid item here: left as bytes.
        let duplicate: [UInt8] = [0xd8, 0x18, 0x45, 0xa2, 0x01, 0x02, 0x01, 0x03]
        #expect(try CBOR.decodeItem(duplicate).diagnostic(options: expand) == "24(h'a201020103')")
    }
}

/// Decoding is linear too when map keys are themselves maps nested deep (each key's
/// duplicate check used to hash the whole key again at every level).
@Suite("Decoding does linear work with nested map keys")
struct NestedMapKeyTests {
    /// `levels` maps, each with 16 small keys and one key that is the next map, around a
    /// byte string of `payload` bytes at the bottom (built in one pass).
    static func nestedKeys(levels: Int, payload: Int) -> [UInt8] {
        var level: [UInt8] = [0xb1]
        for key in 0..<16 { level += [UInt8(key), 0x00] }
        var bytes: [UInt8] = []
        bytes.reserveCapacity(levels * (level.count + 1) + payload + 5)
        for _ in 0..<levels { bytes += level }
        bytes += [0x5a] + DiagnosticWorkTests.bigEndian(payload)
        bytes += repeatElement(0, count: payload)
        bytes += repeatElement(0x00, count: levels)   // each map's value for its nested key
        return bytes
    }

    @Test("a 1 MiB map whose keys nest 120 maps deep is decoded hashing each byte once, and a repeated nested key is still a duplicate")
    func nestedKeysAreLinear() throws {
        let input = Self.nestedKeys(levels: 120, payload: 1 << 20)
        var parser = CBORParser(bytes: input, start: 0, end: input.count, options: .default, recordNodes: false)
        let value = try parser.parseItem(depth: 0)
        #expect(parser.position == input.count)
        #expect(parser.bytesHashed <= input.count)
        #expect(parser.bytesRead <= 2 * input.count)
        #expect(try CBOR.decode(input) == value)
        // The same nested key twice in one map is refused, whatever its depth.
        let key = Self.nestedKeys(levels: 3, payload: 4)
        let twice: [UInt8] = [0xa2] + key + [0x01] + key + [0x02]
        #expect(throws: CBORError.duplicateMapKey(offset: 1 + key.count + 1)) { try CBOR.decode(twice) }
        // Equal content split into chunks is the same key.
        let chunked: [UInt8] = [0xa2, 0x43, 0x01, 0x02, 0x03, 0x00, 0x5f, 0x41, 0x01, 0x42, 0x02, 0x03, 0xff, 0x00]
        #expect(throws: CBORError.duplicateMapKey(offset: 6)) { try CBOR.decode(chunked) }
        // Floats of different widths are different keys, as CBOR equality says.
        let widths: [UInt8] = [0xa2, 0xf9, 0x3c, 0x00, 0x00, 0xfa, 0x3f, 0x80, 0x00, 0x00, 0x00]
        #expect(try CBOR.decode(widths).mapValue?.count == 2)
    }
}
