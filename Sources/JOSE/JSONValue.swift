import Foundation

/// A JSON value as JOSE headers, JWK members and JWT claims carry it.
///
/// Objects are dictionaries; `serialized` writes members in lexicographic order
/// without whitespace, so the output is stable (and, for the members of RFC 7638,
/// the canonical form). Integers that fit `Int64` stay exact.
public enum JSONValue: Sendable, Equatable, Hashable {
    /// `null`.
    case null
    /// `true` or `false`.
    case bool(Bool)
    /// A number without fraction or exponent that fits `Int64`.
    case integer(Int64)
    /// Any other number.
    case number(Double)
    /// A string.
    case string(String)
    /// An array.
    case array([JSONValue])
    /// An object (member names are unique).
    case object([String: JSONValue])

    /// The string, if this is a string.
    public var stringValue: String? { if case .string(let value) = self { return value } else { return nil } }
    /// The boolean, if this is a boolean.
    public var boolValue: Bool? { if case .bool(let value) = self { return value } else { return nil } }
    /// The members, if this is an object.
    public var objectValue: [String: JSONValue]? { if case .object(let value) = self { return value } else { return nil } }
    /// The elements, if this is an array.
    public var arrayValue: [JSONValue]? { if case .array(let value) = self { return value } else { return nil } }
    /// The number as a `Double`, if this is a number.
    public var doubleValue: Double? {
        switch self {
        case .integer(let value): return Double(value)
        case .number(let value): return value
        default: return nil
        }
    }
    /// The number as an `Int64`, if this is an integer (or a double with no fraction in range).
    public var int64Value: Int64? {
        switch self {
        case .integer(let value): return value
        case .number(let value):
            guard value.isFinite, value.rounded() == value, abs(value) < 9.0e18 else { return nil }
            return Int64(value)
        default: return nil
        }
    }

    /// Member `key` of an object (`nil` for a missing member or a non-object).
    public subscript(key: String) -> JSONValue? { objectValue?[key] }

    /// The compact serialization: object members sorted by name, no whitespace,
    /// strings escaped minimally (`"`, `\`, control characters). Non-finite numbers
    /// (which JSON cannot carry) are written as `null`.
    public var serialized: String {
        var output = ""
        Self.write(self, into: &output)
        return output
    }

    /// The UTF-8 bytes of `serialized`.
    public var serializedBytes: [UInt8] { Array(serialized.utf8) }

    private static func write(_ value: JSONValue, into output: inout String) {
        switch value {
        case .null: output += "null"
        case .bool(let flag): output += flag ? "true" : "false"
        case .integer(let number): output += String(number)
        case .number(let number):
            if !number.isFinite {
                output += "null"
            } else if number.rounded() == number, abs(number) < 1e15 {
                output += String(Int64(number))
            } else {
                output += "\(number)"
            }
        case .string(let text): writeString(text, into: &output)
        case .array(let elements):
            output += "["
            for (index, element) in elements.enumerated() {
                if index > 0 { output += "," }
                write(element, into: &output)
            }
            output += "]"
        case .object(let members):
            output += "{"
            // Order by UTF-16 code units, as RFC 7638 §3.3 asks of the canonical form.
            let keys = members.keys.sorted { Array($0.utf16).lexicographicallyPrecedes(Array($1.utf16)) }
            for (index, key) in keys.enumerated() {
                if index > 0 { output += "," }
                writeString(key, into: &output)
                output += ":"
                if let member = members[key] { write(member, into: &output) }
            }
            output += "}"
        }
    }

    private static func writeString(_ text: String, into output: inout String) {
        output += "\""
        for scalar in text.unicodeScalars {
            switch scalar {
            case "\"": output += "\\\""
            case "\\": output += "\\\\"
            case "\n": output += "\\n"
            case "\r": output += "\\r"
            case "\t": output += "\\t"
            case "\u{08}": output += "\\b"
            case "\u{0C}": output += "\\f"
            default:
                if scalar.value < 0x20 {
                    let hex = String(scalar.value, radix: 16)
                    output += "\\u" + String(repeating: "0", count: 4 - hex.count) + hex
                } else {
                    output.unicodeScalars.append(scalar)
                }
            }
        }
        output += "\""
    }
}

extension JSONValue: ExpressibleByStringLiteral, ExpressibleByIntegerLiteral, ExpressibleByFloatLiteral, ExpressibleByBooleanLiteral,
    ExpressibleByArrayLiteral, ExpressibleByDictionaryLiteral, ExpressibleByNilLiteral {
    /// A string value.
    public init(stringLiteral value: String) { self = .string(value) }
    /// An integer value.
    public init(integerLiteral value: Int64) { self = .integer(value) }
    /// A non-integer number.
    public init(floatLiteral value: Double) { self = .number(value) }
    /// A boolean value.
    public init(booleanLiteral value: Bool) { self = .bool(value) }
    /// An array value.
    public init(arrayLiteral elements: JSONValue...) { self = .array(elements) }
    /// An object value; a repeated key keeps its last value.
    public init(dictionaryLiteral elements: (String, JSONValue)...) {
        var members: [String: JSONValue] = [:]
        for (key, value) in elements { members[key] = value }
        self = .object(members)
    }
    /// `null`.
    public init(nilLiteral: ()) { self = .null }
}

extension JSONValue {
    /// Parses UTF-8 JSON strictly (RFC 8259): one value, no trailing data, no
    /// duplicate member names (RFC 7515 §5.2 lets a JOSE parser reject them), nesting
    /// at most `maxDepth` deep.
    public static func parse(_ bytes: [UInt8], maxDepth: Int = 64) throws(JOSEError) -> JSONValue {
        var parser = JSONParser(bytes: bytes, maxDepth: maxDepth)
        return try parser.parseDocument()
    }

    /// Parses a JSON text given as a string; see `parse(_:maxDepth:)`.
    public static func parse(_ text: String, maxDepth: Int = 64) throws(JOSEError) -> JSONValue {
        try parse(Array(text.utf8), maxDepth: maxDepth)
    }

    /// Parses `bytes` and requires a JSON object, naming `what` in the error.
    static func parseObject(_ bytes: [UInt8], what: String) throws(JOSEError) -> [String: JSONValue] {
        guard case .object(let members) = try parse(bytes) else { throw .malformed("\(what) is not a JSON object") }
        return members
    }
}
