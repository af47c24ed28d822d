import Foundation
import Testing
@testable import CBOR
import WalletEncoding

/// A JSON value with numbers kept as their literal text, so 18446744073709551616 and
/// 1.1 can be compared exactly. WalletEncoding's `JSONValue` keeps an integer beyond
/// Int64 only as a `Double`, in which 18446744073709551615 and 18446744073709551616 are
/// the same number, so the vectors of 2^64 - 1, 2^64 and -2^64 could not be checked with it.
indirect enum VectorJSON: Sendable, CustomStringConvertible {
    case number(String), string(String), bool(Bool), null
    case array([VectorJSON]), object([(String, VectorJSON)])

    subscript(key: String) -> VectorJSON? {
        if case .object(let pairs) = self { return pairs.first { $0.0 == key }?.1 }
        return nil
    }

    var description: String {
        switch self {
        case .number(let text): text
        case .string(let text): "\"\(text)\""
        case .bool(let value): String(value)
        case .null: "null"
        case .array(let items): "[" + items.map(\.description).joined(separator: ",") + "]"
        case .object(let pairs): "{" + pairs.map { "\"\($0.0)\":\($0.1)" }.joined(separator: ",") + "}"
        }
    }
}

/// A strict RFC 8259 reader for the vector file that keeps number literals: anything
/// malformed (a bad escape or `\u` digit, a lone surrogate, a missing `:` or `,`, a
/// truncated document, trailing bytes) throws with its offset, so a damaged vector file
/// fails the suite instead of yielding other test data.
struct VectorJSONReader {
    struct Failure: Error, CustomStringConvertible {
        let offset: Int
        let problem: String
        var description: String { "\(problem) at byte \(offset)" }
    }

    private let bytes: [UInt8]
    private var index = 0

    static func parse(_ bytes: [UInt8]) throws(Failure) -> VectorJSON {
        var reader = VectorJSONReader(bytes: bytes)
        let value = try reader.value(depth: 0)
        reader.skipWhitespace()
        guard reader.index == bytes.count else { throw reader.fail("trailing bytes") }
        return value
    }

    private init(bytes: [UInt8]) { self.bytes = bytes }

    private func fail(_ problem: String) -> Failure { Failure(offset: index, problem: problem) }

    private mutating func skipWhitespace() {
        while index < bytes.count, [0x09, 0x0A, 0x0D, 0x20].contains(bytes[index]) { index += 1 }
    }

    private mutating func next() throws(Failure) -> UInt8 {
        guard index < bytes.count else { throw fail("unexpected end") }
        defer { index += 1 }
        return bytes[index]
    }

    private mutating func expect(_ character: Character) throws(Failure) {
        skipWhitespace()
        guard try next() == character.asciiValue else { index -= 1; throw fail("expected \(character)") }
    }

    private mutating func value(depth: Int) throws(Failure) -> VectorJSON {
        guard depth < 32 else { throw fail("nesting too deep") }
        skipWhitespace()
        guard index < bytes.count else { throw fail("unexpected end") }
        switch bytes[index] {
        case UInt8(ascii: "{"):
            index += 1
            var pairs: [(String, VectorJSON)] = []
            skipWhitespace()
            if index < bytes.count, bytes[index] == UInt8(ascii: "}") { index += 1; return .object(pairs) }
            repeat {
                skipWhitespace()
                guard index < bytes.count, bytes[index] == UInt8(ascii: "\"") else { throw fail("expected a member name") }
                index += 1
                let key = try string()
                try expect(":")
                pairs.append((key, try value(depth: depth + 1)))
                skipWhitespace()
            } while try separator(closing: "}")
            return .object(pairs)
        case UInt8(ascii: "["):
            index += 1
            var items: [VectorJSON] = []
            skipWhitespace()
            if index < bytes.count, bytes[index] == UInt8(ascii: "]") { index += 1; return .array(items) }
            repeat {
                items.append(try value(depth: depth + 1))
                skipWhitespace()
            } while try separator(closing: "]")
            return .array(items)
        case UInt8(ascii: "\""):
            index += 1
            return .string(try string())
        case UInt8(ascii: "t"): try literal("true"); return .bool(true)
        case UInt8(ascii: "f"): try literal("false"); return .bool(false)
        case UInt8(ascii: "n"): try literal("null"); return .null
        default: return .number(try number())
        }
    }

    /// After a member or element: true at `,`, false at the closing bracket.
    private mutating func separator(closing: Character) throws(Failure) -> Bool {
        let byte = try next()
        if byte == UInt8(ascii: ",") { return true }
        if byte == closing.asciiValue { return false }
        index -= 1
        throw fail("expected , or \(closing)")
    }

    private mutating func literal(_ word: String) throws(Failure) {
        for expected in word.utf8 {
            guard try next() == expected else { index -= 1; throw fail("expected \(word)") }
        }
    }

    /// RFC 8259 §6: -? (0 | [1-9][0-9]*) (. [0-9]+)? ([eE] [+-]? [0-9]+)?, kept as text.
    private mutating func number() throws(Failure) -> String {
        let start = index
        func digits(_ reader: inout VectorJSONReader) throws(Failure) {
            let first = reader.index
            while reader.index < reader.bytes.count, (0x30...0x39).contains(reader.bytes[reader.index]) { reader.index += 1 }
            guard reader.index > first else { throw reader.fail("expected a digit") }
        }
        if index < bytes.count, bytes[index] == UInt8(ascii: "-") { index += 1 }
        if index < bytes.count, bytes[index] == UInt8(ascii: "0") { index += 1 } else { try digits(&self) }
        if index < bytes.count, bytes[index] == UInt8(ascii: ".") { index += 1; try digits(&self) }
        if index < bytes.count, bytes[index] | 0x20 == UInt8(ascii: "e") {
            index += 1
            if index < bytes.count, bytes[index] == UInt8(ascii: "+") || bytes[index] == UInt8(ascii: "-") { index += 1 }
            try digits(&self)
        }
        return String(decoding: bytes[start..<index], as: UTF8.self)
    }

    /// The rest of a string after its opening quote; raw bytes must be UTF-8.
    private mutating func string() throws(Failure) -> String {
        var utf8: [UInt8] = []
        while true {
            let byte = try next()
            switch byte {
            case UInt8(ascii: "\""):
                guard let text = String(bytes: utf8, encoding: .utf8) else { throw fail("a string that is not UTF-8") }
                return text
            case UInt8(ascii: "\\"):
                let escape = try next()
                switch escape {
                case UInt8(ascii: "\""), UInt8(ascii: "\\"), UInt8(ascii: "/"): utf8.append(escape)
                case UInt8(ascii: "b"): utf8.append(0x08)
                case UInt8(ascii: "f"): utf8.append(0x0C)
                case UInt8(ascii: "n"): utf8.append(0x0A)
                case UInt8(ascii: "r"): utf8.append(0x0D)
                case UInt8(ascii: "t"): utf8.append(0x09)
                case UInt8(ascii: "u"):
                    var code = try hex4()
                    if (0xD800..<0xDC00).contains(code) {
                        guard try next() == UInt8(ascii: "\\"), try next() == UInt8(ascii: "u") else {
                            throw fail("a high surrogate without its low surrogate")
                        }
                        let low = try hex4()
                        guard (0xDC00..<0xE000).contains(low) else { throw fail("a high surrogate without its low surrogate") }
                        code = 0x10000 + ((code - 0xD800) << 10) + (low - 0xDC00)
                    }
                    guard let scalar = Unicode.Scalar(code) else { throw fail("a lone low surrogate") }
                    utf8.append(contentsOf: Array(String(Character(scalar)).utf8))
                default:
                    index -= 1
                    throw fail("an invalid escape")
                }
            case 0x00..<0x20:
                index -= 1
                throw fail("a control character in a string")
            default:
                utf8.append(byte)
            }
        }
    }

    /// Four hex digits of a `\u` escape; any other character is an error, never a zero.
    private mutating func hex4() throws(Failure) -> UInt32 {
        var value: UInt32 = 0
        for _ in 0..<4 {
            let byte = try next()
            let digit: UInt32
            switch byte {
            case UInt8(ascii: "0")...UInt8(ascii: "9"): digit = UInt32(byte - UInt8(ascii: "0"))
            case UInt8(ascii: "a")...UInt8(ascii: "f"): digit = UInt32(byte - UInt8(ascii: "a") + 10)
            case UInt8(ascii: "A")...UInt8(ascii: "F"): digit = UInt32(byte - UInt8(ascii: "A") + 10)
            default:
                index -= 1
                throw fail("a \\u escape with a non-hex digit")
            }
            value = value << 4 | digit
        }
        return value
    }
}

struct AppendixAVector: Sendable, CustomTestStringConvertible {
    let hex: String
    let roundtrip: Bool
    let diagnostic: String?
    let decoded: VectorJSON?
    var testDescription: String { hex }

    struct MalformedVector: Error, CustomStringConvertible {
        let position: Int
        var description: String { "vector \(position) has no hex string or roundtrip flag" }
    }

    /// The vectors, or why the file could not be read (``AppendixAVectorTests/vectorFileLoads()`` reports it).
    static let loaded: Result<[AppendixAVector], any Error> = Result {
        let root = URL(fileURLWithPath: #filePath).resolvingSymlinksInPath()
            .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        let file = root.deletingLastPathComponent().appendingPathComponent("shared/vectors/cbor/rfc8949_appendix_a.json")
        guard case .array(let items)? = try VectorJSONReader.parse([UInt8](try Data(contentsOf: file)))["vectors"] else {
            throw MalformedVector(position: -1)
        }
        return try items.enumerated().map { position, item in
            guard case .string(let hex)? = item["hex"], case .bool(let roundtrip)? = item["roundtrip"] else {
                throw MalformedVector(position: position)
            }
            var diagnostic: String?
            if case .string(let text)? = item["diagnostic"] { diagnostic = text }
            return AppendixAVector(hex: hex, roundtrip: roundtrip, diagnostic: diagnostic, decoded: item["decoded"])
        }
    }

    static var all: [AppendixAVector] { (try? loaded.get()) ?? [] }
}

/// The decimal text of an integer item, including bignums (tags 2 and 3).
func decimalText(_ value: CBOR) -> String? {
    switch value {
    case .unsigned(let n): return String(n)
    case .negative(let n): return DiagnosticPrinter.negativeDecimal(n)
    case .tagged(2, .byteString(let bytes)): return bigDecimal(bytes, addOne: false)
    case .tagged(3, .byteString(let bytes)): return "-" + bigDecimal(bytes, addOne: true)
    default: return nil
    }
}

/// Base-256 to base-10 by repeated division (optionally of the value plus one).
func bigDecimal(_ bytes: [UInt8], addOne: Bool) -> String {
    var number = bytes
    if addOne {
        var carry = 1
        for k in number.indices.reversed() where carry > 0 {
            let sum = Int(number[k]) + carry
            number[k] = UInt8(sum & 0xFF)
            carry = sum >> 8
        }
        if carry > 0 { number.insert(1, at: 0) }
    }
    var digits: [Character] = []
    while number.contains(where: { $0 != 0 }) {
        var remainder = 0
        for k in number.indices {
            let current = remainder * 256 + Int(number[k])
            number[k] = UInt8(current / 10)
            remainder = current % 10
        }
        digits.append(Character(String(remainder)))
    }
    return digits.isEmpty ? "0" : String(digits.reversed())
}

/// Structural comparison of a decoded item with the published JSON value.
func matches(_ value: CBOR, _ json: VectorJSON) -> Bool {
    switch json {
    case .number(let text):
        if text.contains(where: { ".eE".contains($0) }) {
            guard let expected = Double(text), let actual = value.doubleValue else { return false }
            return expected == actual && expected.sign == actual.sign
        }
        return decimalText(value) == text
    case .string(let text): return value.stringValue == text
    case .bool(let bool): return value.boolValue == bool
    case .null: return value.isNull
    case .array(let items):
        guard let elements = value.arrayValue, elements.count == items.count else { return false }
        return zip(elements, items).allSatisfy { matches($0, $1) }
    case .object(let pairs):
        guard let map = value.mapValue, map.count == pairs.count else { return false }
        return pairs.allSatisfy { key, expected in map[.textString(key)].map { matches($0, expected) } ?? false }
    }
}

@Suite("RFC 8949 Appendix A vectors")
struct AppendixAVectorTests {
    @Test("the vector file is found and holds every published example")
    func vectorFileLoads() throws {
        #expect(try AppendixAVector.loaded.get().count == 75)
    }

    @Test("the vector reader refuses malformed JSON instead of reading other data", arguments: [
        #""\u12G4""#, #""\u00""#, #""\x""#, #""\ud800""#, #""\udc00""#, "\"a\u{01}\"", "[1 2]", #"{"a" 1}"#,
        "[1,]", "01", "1.", "tru", "[1] 2", "\"abc",
    ])
    func readerRefusesMalformedJSON(_ text: String) {
        #expect(throws: VectorJSONReader.Failure.self) { try VectorJSONReader.parse(Array(text.utf8)) }
    }

    @Test("the vector reader keeps number literals and reads escapes")
    func readerKeepsLiterals() throws {
        let value = try VectorJSONReader.parse(Array(#"{"n": [18446744073709551616, -0.0, 1e3], "s": "\u00fc\ud800\udd51\"\\"}"#.utf8))
        guard case .array(let numbers)? = value["n"], case .string(let text)? = value["s"] else {
            Issue.record("unexpected shape \(value)")
            return
        }
        #expect(numbers.map(\.description) == ["18446744073709551616", "-0.0", "1e3"])
        #expect(text == "ü\u{10151}\"\\")
    }

    /// `f818` (simple(24)) comes from RFC 7049; RFC 8949 §3.3 and Appendix F.1 make it
    /// not well-formed, so it needs the legacy option.
    static func options(for vector: AppendixAVector) -> CBORDecodingOptions {
        vector.hex == "f818" ? CBORDecodingOptions(allowReservedSimpleValues: true) : .default
    }

    @Test("simple(24) in two bytes is rejected by default, per RFC 8949 §3.3")
    func legacySimpleValue() throws {
        #expect(try decodeError(try hex("f818")) == .invalidSimpleValue(offset: 0))
        #expect(try decodeError(try hex("f817"), options: .init(allowReservedSimpleValues: true)) == .invalidSimpleValue(offset: 0))
    }

    @Test("each example decodes to its published value or diagnostic notation", arguments: AppendixAVector.all)
    func decodes(_ vector: AppendixAVector) throws {
        let bytes = try hex(vector.hex)
        let options = Self.options(for: vector)
        let item = try CBOR.decodeItem(bytes, options: options)
        #expect(item.value == (try CBOR.decode(bytes, options: options)))
        #expect(Array(item.encodedBytes) == bytes)
        if let diagnostic = vector.diagnostic {
            #expect(item.diagnostic() == diagnostic)
        }
        if let decoded = vector.decoded {
            #expect(matches(item.value, decoded), "\(item.value) vs \(decoded)")
        }
    }

    @Test("each round-trip example re-encodes to exactly the published bytes", arguments: AppendixAVector.all.filter(\.roundtrip))
    func reencodes(_ vector: AppendixAVector) throws {
        let bytes = try hex(vector.hex)
        #expect(hexString(try CBOR.decode(bytes, options: Self.options(for: vector)).encoded()) == vector.hex)
    }

    @Test("examples that do not round-trip re-encode to a definite-length equal value", arguments: AppendixAVector.all.filter { !$0.roundtrip })
    func reencodesEquivalently(_ vector: AppendixAVector) throws {
        let value = try CBOR.decode(hex(vector.hex))
        let reencoded = value.encoded(options: .deterministic)
        let again = try CBOR.decode(reencoded, options: .deterministic)
        #expect(again.diagnostic() == value.diagnostic())
    }
}
