/// A JSON value (RFC 8259): the one JSON model of the SDK, used by JOSE headers, JWK
/// members, JWT claims, SD-JWT disclosures and every OpenID4VCI/VP message.
///
/// Objects keep member order (``JSONObject``). Integers that fit `Int64` stay exact.
/// Parse with ``parse(_:limits:)`` (strict), write with ``serialized`` (member order)
/// or ``canonicalSerialized`` (members sorted, for thumbprints and stable digests).
public enum JSONValue: Sendable, Hashable {
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
    /// An object (member names are unique, order kept).
    case object(JSONObject)

    /// The string, if this is a string.
    public var stringValue: String? { if case .string(let value) = self { return value } else { return nil } }
    /// The boolean, if this is a boolean.
    public var boolValue: Bool? { if case .bool(let value) = self { return value } else { return nil } }
    /// The members, if this is an object.
    public var objectValue: JSONObject? { if case .object(let value) = self { return value } else { return nil } }
    /// The elements, if this is an array.
    public var arrayValue: [JSONValue]? { if case .array(let value) = self { return value } else { return nil } }
    /// Whether this is `null`.
    public var isNull: Bool { if case .null = self { return true } else { return false } }
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
    /// The number as an `Int`, if it is an integer that fits.
    public var intValue: Int? { int64Value.flatMap { Int(exactly: $0) } }
    /// The elements, if this is an array of strings only.
    public var stringArrayValue: [String]? {
        guard case .array(let elements) = self else { return nil }
        var strings: [String] = []
        strings.reserveCapacity(elements.count)
        for element in elements {
            guard case .string(let text) = element else { return nil }
            strings.append(text)
        }
        return strings
    }

    /// The JSON type of the value, for error messages.
    public var kind: JSONKind {
        switch self {
        case .null: .null
        case .bool: .bool
        case .integer, .number: .number
        case .string: .string
        case .array: .array
        case .object: .object
        }
    }

    /// Member `key` of an object (`nil` for a missing member or a non-object).
    public subscript(key: String) -> JSONValue? { objectValue?[key] }

    /// An object value from a dictionary, members sorted by name.
    public static func object(_ members: [String: JSONValue]) -> JSONValue { .object(JSONObject(members)) }
}

/// The six JSON types (RFC 8259 §3), used to say what was expected.
public enum JSONKind: String, Sendable, Hashable {
    /// `null`.
    case null
    /// `true`/`false`.
    case bool
    /// A number.
    case number
    /// A string.
    case string
    /// An array.
    case array
    /// An object.
    case object
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
    /// An object value with members in the order written; a repeated key keeps its last value.
    public init(dictionaryLiteral elements: (String, JSONValue)...) { self = .object(JSONObject(elements)) }
    /// `null`.
    public init(nilLiteral: ()) { self = .null }
}

extension JSONValue {
    /// Parses UTF-8 JSON strictly (RFC 8259): one value, no trailing data, no duplicate
    /// member names (RFC 7515 §5.2 and RFC 8259 §4 let a parser reject them), no invalid
    /// UTF-8 or lone surrogates, within `limits`. Work and memory are linear in the input.
    public static func parse(_ bytes: some Collection<UInt8>, limits: JSONLimits = JSONLimits()) throws(JSONError) -> JSONValue {
        guard bytes.count <= limits.maxBytes else { throw JSONError(.documentTooLarge(limit: limits.maxBytes), at: 0) }
        return try JSONParser.parse(Array(bytes), maxDepth: limits.maxDepth)
    }

    /// Parses a JSON text given as a string; see ``parse(_:limits:)``.
    public static func parse(_ text: String, limits: JSONLimits = JSONLimits()) throws(JSONError) -> JSONValue {
        try parse(text.utf8Bytes, limits: limits)
    }

    /// Parses `bytes` and requires a JSON object.
    public static func parseObject(_ bytes: some Collection<UInt8>, limits: JSONLimits = JSONLimits()) throws(JSONError) -> JSONObject {
        let value = try parse(bytes, limits: limits)
        guard case .object(let members) = value else { throw JSONError(.wrongType(member: nil, expected: .object, actual: value.kind)) }
        return members
    }

    /// Parses a string and requires a JSON object.
    public static func parseObject(_ text: String, limits: JSONLimits = JSONLimits()) throws(JSONError) -> JSONObject {
        try parseObject(text.utf8Bytes, limits: limits)
    }
}

/// Bounds on what ``JSONValue/parse(_:limits:)`` accepts, checked before work is done.
public struct JSONLimits: Sendable, Hashable {
    /// The deepest nesting of arrays and objects (default 64).
    public var maxDepth: Int
    /// The largest document in bytes (default 16 MiB).
    public var maxBytes: Int

    /// Limits; the defaults suit every protocol message the SDK handles.
    public init(maxDepth: Int = 64, maxBytes: Int = 16 << 20) {
        self.maxDepth = maxDepth
        self.maxBytes = maxBytes
    }
}
