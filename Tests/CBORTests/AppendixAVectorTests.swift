import Foundation
import Testing
@testable import CBOR
import WalletEncoding

/// A JSON value with numbers kept as their literal text, so 18446744073709551616 and
/// 1.1 can be compared exactly.
indirect enum JSONValue: Sendable {
    case number(String), string(String), bool(Bool), null
    case array([JSONValue]), object([(String, JSONValue)])

    subscript(key: String) -> JSONValue? {
        if case .object(let pairs) = self { return pairs.first { $0.0 == key }?.1 }
        return nil
    }
}

/// A small JSON reader for the vector file (RFC 8259), enough for test data.
struct JSONReader {
    let chars: [UInt8]
    var i = 0

    static func parse(_ data: Data) -> JSONValue? {
        var reader = JSONReader(chars: [UInt8](data))
        return reader.value()
    }

    mutating func skip() { while i < chars.count, [9, 10, 13, 32].contains(chars[i]) { i += 1 } }

    mutating func value() -> JSONValue? {
        skip()
        guard i < chars.count else { return nil }
        switch chars[i] {
        case UInt8(ascii: "{"):
            i += 1
            var pairs: [(String, JSONValue)] = []
            skip()
            if chars[i] == UInt8(ascii: "}") { i += 1; return .object(pairs) }
            while true {
                skip()
                guard case .string(let key)? = value() else { return nil }
                skip(); i += 1   // ':'
                guard let v = value() else { return nil }
                pairs.append((key, v))
                skip()
                let c = chars[i]; i += 1
                if c == UInt8(ascii: "}") { return .object(pairs) }
            }
        case UInt8(ascii: "["):
            i += 1
            var items: [JSONValue] = []
            skip()
            if chars[i] == UInt8(ascii: "]") { i += 1; return .array(items) }
            while true {
                guard let v = value() else { return nil }
                items.append(v)
                skip()
                let c = chars[i]; i += 1
                if c == UInt8(ascii: "]") { return .array(items) }
            }
        case UInt8(ascii: "\""):
            i += 1
            var scalars = String.UnicodeScalarView()
            var pendingHigh: UInt32?
            while chars[i] != UInt8(ascii: "\"") {
                if chars[i] == UInt8(ascii: "\\") {
                    let e = chars[i + 1]; i += 2
                    switch e {
                    case UInt8(ascii: "n"): scalars.append("\n")
                    case UInt8(ascii: "t"): scalars.append("\t")
                    case UInt8(ascii: "u"):
                        let code = UInt32(String(decoding: chars[i..<i + 4], as: UTF8.self), radix: 16) ?? 0
                        i += 4
                        if (0xD800..<0xDC00).contains(code) { pendingHigh = code; continue }
                        if let high = pendingHigh, (0xDC00..<0xE000).contains(code) {
                            let combined = 0x10000 + ((high - 0xD800) << 10) + (code - 0xDC00)
                            scalars.append(Unicode.Scalar(combined)!)
                            pendingHigh = nil
                        } else {
                            scalars.append(Unicode.Scalar(code)!)
                        }
                    default: scalars.append(Unicode.Scalar(e))
                    }
                } else {
                    // Copy a UTF-8 sequence verbatim.
                    var end = i + 1
                    while end < chars.count, chars[end] & 0xC0 == 0x80 { end += 1 }
                    scalars.append(contentsOf: String(decoding: chars[i..<end], as: UTF8.self).unicodeScalars)
                    i = end
                }
            }
            i += 1
            return .string(String(scalars))
        case UInt8(ascii: "t"): i += 4; return .bool(true)
        case UInt8(ascii: "f"): i += 5; return .bool(false)
        case UInt8(ascii: "n"): i += 4; return .null
        default:
            let start = i
            while i < chars.count, "+-0123456789.eE".utf8.contains(chars[i]) { i += 1 }
            return .number(String(decoding: chars[start..<i], as: UTF8.self))
        }
    }
}

struct AppendixAVector: Sendable, CustomTestStringConvertible {
    let hex: String
    let roundtrip: Bool
    let diagnostic: String?
    let decoded: JSONValue?
    var testDescription: String { hex }

    static let all: [AppendixAVector] = {
        let root = URL(fileURLWithPath: #filePath).resolvingSymlinksInPath()
            .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        let file = root.deletingLastPathComponent().appendingPathComponent("shared/vectors/cbor/rfc8949_appendix_a.json")
        guard let data = try? Data(contentsOf: file), case .array(let items)? = JSONReader.parse(data)?["vectors"] else {
            return []
        }
        return items.compactMap { item in
            guard case .string(let hex)? = item["hex"], case .bool(let roundtrip)? = item["roundtrip"] else { return nil }
            var diagnostic: String?
            if case .string(let text)? = item["diagnostic"] { diagnostic = text }
            return AppendixAVector(hex: hex, roundtrip: roundtrip, diagnostic: diagnostic, decoded: item["decoded"])
        }
    }()
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
func matches(_ value: CBOR, _ json: JSONValue) -> Bool {
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
    func vectorFileLoads() {
        #expect(AppendixAVector.all.count == 75)
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
