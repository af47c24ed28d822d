/// A CBOR data item (RFC 8949 §3), as a plain value.
///
/// Every major type has a case. Integers are split the way the wire splits them:
/// `.unsigned(n)` is the number `n` (major type 0) and `.negative(n)` is the number
/// `-1 - n` (major type 1), so the full range from -2^64 to 2^64 - 1 is representable.
///
/// Equality and hashing are structural and exact: floating-point cases compare by bit
/// pattern (so `NaN == NaN` and `0.0 != -0.0`), text strings compare by their UTF-8
/// bytes (no Unicode normalisation, RFC 8949 §5.6), maps compare in entry order, and
/// cases of different widths (`.half`, `.float`, `.double`) are never equal to each other.
///
/// Values built by hand are trusted: encoding and comparing them recurse, so do not
/// build values nested deeper than a few thousand levels. Values produced by the
/// decoder are bounded by ``CBORDecodingOptions/maxDepth``.
public enum CBOR: Sendable {
    /// Major type 0: an unsigned integer `n`.
    case unsigned(UInt64)
    /// Major type 1: the negative integer `-1 - n`.
    case negative(UInt64)
    /// Major type 2: a byte string.
    case byteString([UInt8])
    /// Major type 3: a UTF-8 text string.
    case textString(String)
    /// Major type 4: an array of data items.
    case array([CBOR])
    /// Major type 5: a map whose entries keep their order.
    case map(CBORMap)
    /// Major type 6: a tag number and the tagged content.
    indirect case tagged(UInt64, CBOR)
    /// Major type 7: a simple value other than false, true, null and undefined.
    ///
    /// Values 20...23 encode as false, true, null and undefined (and decode as those
    /// cases). Values 24...31 are reserved (RFC 8949 §3.3): they encode as `f8 18`...`f8 1f`,
    /// which decoders reject unless ``CBORDecodingOptions/allowReservedSimpleValues`` is on.
    case simple(UInt8)
    /// Simple values 20 and 21.
    case boolean(Bool)
    /// Simple value 22.
    case null
    /// Simple value 23.
    case undefined
    /// A half-precision float (IEEE 754 binary16), kept as its raw bits so the type is
    /// available on every platform. See ``halfValue`` and ``half(exactly:)``.
    case half(UInt16)
    /// A single-precision float (IEEE 754 binary32).
    case float(Float)
    /// A double-precision float (IEEE 754 binary64).
    case double(Double)
}

// MARK: - Construction

extension CBOR {
    /// Creates an integer item: `.unsigned` for zero and above, `.negative` below zero.
    public init(_ int: Int) {
        if int >= 0 {
            self = .unsigned(UInt64(int))
        } else {
            // -1 - int cannot overflow for any negative Int.
            self = .negative(UInt64(-1 - int))
        }
    }

    /// Creates an unsigned integer item.
    public init(_ value: UInt64) {
        self = .unsigned(value)
    }

    /// Creates an integer item from any integer type, or returns nil when the value is
    /// outside -2^64 ... 2^64 - 1.
    public init?<T: BinaryInteger>(exactly value: T) {
        if value >= 0 {
            guard let unsigned = UInt64(exactly: value) else { return nil }
            self = .unsigned(unsigned)
        } else {
            // -1 - value == ~value for two's complement integers, and is non-negative.
            guard let magnitude = UInt64(exactly: ~value) else { return nil }
            self = .negative(magnitude)
        }
    }

    /// Creates a text string item.
    public init(_ string: String) {
        self = .textString(string)
    }

    /// Creates a byte string item.
    public init(_ bytes: [UInt8]) {
        self = .byteString(bytes)
    }

    /// Creates a boolean item.
    public init(_ bool: Bool) {
        self = .boolean(bool)
    }

    /// Creates a half-precision float item when `value` is exactly representable in
    /// binary16 (NaN payloads included), or returns nil.
    public static func half(exactly value: Double) -> CBOR? {
        guard let single = FloatBits.exactFloat(value),
              let bits = FloatBits.exactHalfBits(single) else { return nil }
        return .half(bits)
    }
}

// MARK: - Literals

extension CBOR: ExpressibleByIntegerLiteral {
    /// Creates an integer item from an integer literal.
    public init(integerLiteral value: Int) {
        self.init(value)
    }
}

extension CBOR: ExpressibleByStringLiteral {
    /// Creates a text string item from a string literal.
    public init(stringLiteral value: String) {
        self = .textString(value)
    }
}

extension CBOR: ExpressibleByArrayLiteral {
    /// Creates an array item from an array literal.
    public init(arrayLiteral elements: CBOR...) {
        self = .array(elements)
    }
}

extension CBOR: ExpressibleByDictionaryLiteral {
    /// Creates a map item from a dictionary literal, keeping the literal's order.
    public init(dictionaryLiteral elements: (CBOR, CBOR)...) {
        self = .map(CBORMap(elements))
    }
}

extension CBOR: ExpressibleByBooleanLiteral {
    /// Creates a boolean item from a boolean literal.
    public init(booleanLiteral value: Bool) {
        self = .boolean(value)
    }
}

extension CBOR: ExpressibleByFloatLiteral {
    /// Creates a double-precision float item from a float literal.
    public init(floatLiteral value: Double) {
        self = .double(value)
    }
}

extension CBOR: ExpressibleByNilLiteral {
    /// Creates `null` from `nil`.
    ///
    /// Mind `CBOR?` values: in `value["k"] == nil` Swift may read `nil` as `CBOR.null`;
    /// write `value["k"] == CBOR?.none` or `value["k"] == .null` to say which you mean.
    public init(nilLiteral: ()) {
        self = .null
    }
}

// MARK: - Accessors

extension CBOR {
    /// The integer value when this is an integer item that fits in `Int`.
    public var intValue: Int? {
        switch self {
        case .unsigned(let n): return Int(exactly: n)
        case .negative(let n):
            guard let magnitude = Int(exactly: n) else { return nil }
            return -1 - magnitude
        default: return nil
        }
    }

    /// The value of an unsigned integer item (major type 0).
    public var uint64Value: UInt64? {
        if case .unsigned(let n) = self { return n }
        return nil
    }

    /// The bytes of a byte string item.
    public var bytesValue: [UInt8]? {
        if case .byteString(let bytes) = self { return bytes }
        return nil
    }

    /// The string of a text string item.
    public var stringValue: String? {
        if case .textString(let string) = self { return string }
        return nil
    }

    /// The elements of an array item.
    public var arrayValue: [CBOR]? {
        if case .array(let elements) = self { return elements }
        return nil
    }

    /// The entries of a map item.
    public var mapValue: CBORMap? {
        if case .map(let map) = self { return map }
        return nil
    }

    /// The value of a boolean item.
    public var boolValue: Bool? {
        if case .boolean(let bool) = self { return bool }
        return nil
    }

    /// The numeric value of a half, single or double precision float item.
    public var doubleValue: Double? {
        switch self {
        case .half(let bits): return FloatBits.double(fromHalf: bits)
        case .float(let value): return Double(value)
        case .double(let value): return value
        default: return nil
        }
    }

    /// The value of a half-precision item, widened to `Double`.
    public var halfValue: Double? {
        if case .half(let bits) = self { return FloatBits.double(fromHalf: bits) }
        return nil
    }

    /// The tag number of a tagged item.
    public var tag: UInt64? {
        if case .tagged(let tag, _) = self { return tag }
        return nil
    }

    /// The content of a tagged item.
    public var tagContent: CBOR? {
        if case .tagged(_, let content) = self { return content }
        return nil
    }

    /// True for `null`.
    public var isNull: Bool {
        if case .null = self { return true }
        return false
    }

    /// Looks up `key` in a map item (first matching entry); nil for other items.
    public subscript(key: CBOR) -> CBOR? {
        mapValue?[key]
    }

    /// Looks up the text key `key` in a map item.
    public subscript(key: String) -> CBOR? {
        mapValue?[.textString(key)]
    }

    /// For an array item, the element at `index` (nil when out of range); for a map
    /// item, the value under the integer key `index` (as COSE and mdoc maps use).
    public subscript(index: Int) -> CBOR? {
        switch self {
        case .array(let elements):
            // Not a ternary: there `nil` would become `CBOR.null` through the nil literal.
            guard elements.indices.contains(index) else { return nil }
            return elements[index]
        case .map(let map):
            return map[CBOR(index)]
        default:
            return nil
        }
    }
}

// MARK: - Equality and hashing

extension CBOR: Hashable {
    /// Exact structural equality; see the type's documentation.
    public static func == (lhs: CBOR, rhs: CBOR) -> Bool {
        switch (lhs, rhs) {
        case let (.unsigned(a), .unsigned(b)): return a == b
        case let (.negative(a), .negative(b)): return a == b
        case let (.byteString(a), .byteString(b)): return a == b
        case let (.textString(a), .textString(b)): return a.utf8.elementsEqual(b.utf8)
        case let (.array(a), .array(b)): return a == b
        case let (.map(a), .map(b)): return a == b
        case let (.tagged(t1, c1), .tagged(t2, c2)): return t1 == t2 && c1 == c2
        case let (.simple(a), .simple(b)): return a == b
        case let (.boolean(a), .boolean(b)): return a == b
        case (.null, .null), (.undefined, .undefined): return true
        case let (.half(a), .half(b)): return a == b
        case let (.float(a), .float(b)): return a.bitPattern == b.bitPattern
        case let (.double(a), .double(b)): return a.bitPattern == b.bitPattern
        default: return false
        }
    }

    /// Hashes the item consistently with `==`.
    public func hash(into hasher: inout Hasher) {
        switch self {
        case .unsigned(let n): hasher.combine(0 as UInt8); hasher.combine(n)
        case .negative(let n): hasher.combine(1 as UInt8); hasher.combine(n)
        case .byteString(let b): hasher.combine(2 as UInt8); hasher.combine(b)
        case .textString(let s):
            hasher.combine(3 as UInt8)
            hasher.combine(s.utf8.count)
            for byte in s.utf8 { hasher.combine(byte) }
        case .array(let a): hasher.combine(4 as UInt8); hasher.combine(a)
        case .map(let m): hasher.combine(5 as UInt8); hasher.combine(m)
        case .tagged(let t, let c): hasher.combine(6 as UInt8); hasher.combine(t); hasher.combine(c)
        case .simple(let v): hasher.combine(7 as UInt8); hasher.combine(v)
        case .boolean(let b): hasher.combine(8 as UInt8); hasher.combine(b)
        case .null: hasher.combine(9 as UInt8)
        case .undefined: hasher.combine(10 as UInt8)
        case .half(let bits): hasher.combine(11 as UInt8); hasher.combine(bits)
        case .float(let f): hasher.combine(12 as UInt8); hasher.combine(f.bitPattern)
        case .double(let d): hasher.combine(13 as UInt8); hasher.combine(d.bitPattern)
        }
    }
}

extension CBOR: CustomStringConvertible {
    /// The item in single-line diagnostic notation (RFC 8949 §8).
    public var description: String {
        diagnostic()
    }
}
