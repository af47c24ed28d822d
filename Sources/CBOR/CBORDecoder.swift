import Foundation

/// Decodes `Decodable` values from CBOR, in the manner of `JSONDecoder`.
///
/// Keyed containers read maps by text key, falling back to the key's `intValue` as an
/// integer key. `[UInt8]` and `Data` read byte strings, `Date` reads tag 0 or tag 1 (or
/// an untagged RFC 3339 string or epoch number), ``CBOR`` takes the item as it is.
/// Integers are range-checked. Every failure is a ``CBORError``: wire errors from
/// ``CBOR/decode(_:options:)-([UInt8],_)``, or `typeMismatch`, `keyNotFound`,
/// `valueNotFound`, `integerOutOfRange` carrying the coding path as `a.b[2]`; errors
/// thrown by custom `init(from:)` are converted (`DecodingError`) or wrapped.
public struct CBORDecoder: Sendable {
    /// Limits and strictness for reading the bytes.
    public var options: CBORDecodingOptions = .default
    /// Contextual information for `init(from:)` implementations.
    public var userInfo: [CodingUserInfoKey: any Sendable] = [:]

    /// Creates a decoder with default settings.
    public init() {}

    /// Decodes a `T` from exactly one CBOR item spanning `bytes`.
    public func decode<T: Decodable>(_ type: T.Type, from bytes: [UInt8]) throws(CBORError) -> T {
        try decode(type, from: try CBOR.decode(bytes, options: options))
    }

    /// Decodes a `T` from exactly one CBOR item spanning `data`.
    public func decode<T: Decodable>(_ type: T.Type, from data: Data) throws(CBORError) -> T {
        try decode(type, from: [UInt8](data))
    }

    /// Decodes a `T` from a ``CBOR`` value.
    public func decode<T: Decodable>(_ type: T.Type, from value: CBOR) throws(CBORError) -> T {
        do {
            return try CBORDecoderImpl(value: value, codingPath: [], userInfo: userInfo).unbox(type)
        } catch {
            throw CBORError.wrapping(error)
        }
    }
}

struct CBORDecoderImpl: Decoder {
    let value: CBOR
    let codingPath: [any CodingKey]
    let userInfoStorage: [CodingUserInfoKey: any Sendable]
    var userInfo: [CodingUserInfoKey: Any] { userInfoStorage }

    init(value: CBOR, codingPath: [any CodingKey], userInfo: [CodingUserInfoKey: any Sendable]) {
        self.value = value
        self.codingPath = codingPath
        self.userInfoStorage = userInfo
    }

    var path: String { codingPathString(codingPath) }

    func child(_ value: CBOR, _ key: any CodingKey) -> CBORDecoderImpl {
        CBORDecoderImpl(value: value, codingPath: codingPath + [key], userInfo: userInfoStorage)
    }

    func container<Key: CodingKey>(keyedBy type: Key.Type) throws -> KeyedDecodingContainer<Key> {
        guard case .map(let map) = value else { throw mismatch("a map") }
        return KeyedDecodingContainer(KeyedDecoding<Key>(decoder: self, map: map))
    }

    func unkeyedContainer() throws -> any UnkeyedDecodingContainer {
        guard case .array(let elements) = value else { throw mismatch("an array") }
        return UnkeyedDecoding(decoder: self, elements: elements)
    }

    func singleValueContainer() throws -> any SingleValueDecodingContainer {
        SingleValueDecoding(decoder: self)
    }

    func mismatch(_ expected: String) -> CBORError {
        if value.isNull || value == .undefined { return .valueNotFound(expected: expected, path: path) }
        return .typeMismatch(expected: expected, path: path)
    }

    // MARK: Unboxing

    func unbox<T: Decodable>(_ type: T.Type) throws -> T {
        if type == CBOR.self, let result = value as? T { return result }
        if type == [UInt8].self, let result = try unboxBytes() as? T { return result }
        if type == Data.self, let result = Data(try unboxBytes()) as? T { return result }
        if type == Date.self, let result = try unboxDate() as? T { return result }
        return try T(from: self)
    }

    func unboxBytes() throws -> [UInt8] {
        guard case .byteString(let bytes) = value else { throw mismatch("a byte string") }
        return bytes
    }

    func unboxDate() throws -> Date {
        let tagged: CBOR
        switch value {
        case .tagged(0, _), .tagged(1, _): tagged = value
        case .textString: tagged = .tagged(0, value)
        case .unsigned, .negative, .half, .float, .double: tagged = .tagged(1, value)
        default: throw mismatch("a date (tag 0 or 1)")
        }
        do {
            return try tagged.dateValue()
        } catch {
            if case .invalidDate(let reason) = error {
                throw CBORError.dataCorrupted(description: reason, path: path)
            }
            throw mismatch("a date (tag 0 or 1)")
        }
    }

    func unboxBool() throws -> Bool {
        guard case .boolean(let bool) = value else { throw mismatch("a boolean") }
        return bool
    }

    func unboxString() throws -> String {
        guard case .textString(let string) = value else { throw mismatch("a text string") }
        return string
    }

    func unboxInteger<T: FixedWidthInteger>(_ type: T.Type) throws -> T {
        switch value {
        case .unsigned(let n):
            guard let result = T(exactly: n) else { throw CBORError.integerOutOfRange(path: path) }
            return result
        case .negative(let n):
            // -1 - n fits T exactly when n fits T (T.min == -1 - T.max).
            guard T.isSigned, let magnitude = T(exactly: n) else { throw CBORError.integerOutOfRange(path: path) }
            return -1 - magnitude
        default:
            throw mismatch("an integer")
        }
    }

    func unboxDouble() throws -> Double {
        switch value {
        case .unsigned(let n): return Double(n)
        case .negative(let n): return -1 - Double(n)
        default:
            guard let double = value.doubleValue else { throw mismatch("a number") }
            return double
        }
    }

    func unboxFloat() throws -> Float {
        let double = try unboxDouble()
        let single = Float(double)
        guard single.isFinite || !double.isFinite else { throw CBORError.integerOutOfRange(path: path) }
        return single
    }
}

struct KeyedDecoding<Key: CodingKey>: KeyedDecodingContainerProtocol {
    let decoder: CBORDecoderImpl
    let map: CBORMap
    /// The first value of each key, for a map too large to search per key: decoding a
    /// dictionary looks up every key of the map, which a search each would make quadratic.
    private let index: [CBOR: CBOR]?
    var codingPath: [any CodingKey] { decoder.codingPath }

    init(decoder: CBORDecoderImpl, map: CBORMap) {
        self.decoder = decoder
        self.map = map
        if map.count > 16 {
            var index: [CBOR: CBOR] = [:]
            index.reserveCapacity(map.count)
            for (key, value) in zip(map.keys, map.values) where index[key] == nil { index[key] = value }
            self.index = index
        } else {
            index = nil
        }
    }

    var allKeys: [Key] {
        map.keys.compactMap { key in
            switch key {
            case .textString(let text): return Key(stringValue: text)
            default: return key.intValue.flatMap { Key(intValue: $0) }
            }
        }
    }

    private func lookup(_ key: Key) -> CBOR? {
        func value(_ key: CBOR) -> CBOR? {
            if let index { return index[key] }
            return map[key]
        }
        if let found = value(.textString(key.stringValue)) { return found }
        if let int = key.intValue { return value(CBOR(int)) }
        return nil
    }

    private func child(_ key: Key) throws -> CBORDecoderImpl {
        guard let value = lookup(key) else {
            throw CBORError.keyNotFound(key: key.stringValue, path: decoder.path)
        }
        return decoder.child(value, key)
    }

    func contains(_ key: Key) -> Bool { lookup(key) != nil }

    func decodeNil(forKey key: Key) throws -> Bool {
        let value = try child(key).value
        return value.isNull || value == .undefined
    }

    func decode(_ type: Bool.Type, forKey key: Key) throws -> Bool { try child(key).unboxBool() }
    func decode(_ type: String.Type, forKey key: Key) throws -> String { try child(key).unboxString() }
    func decode(_ type: Double.Type, forKey key: Key) throws -> Double { try child(key).unboxDouble() }
    func decode(_ type: Float.Type, forKey key: Key) throws -> Float { try child(key).unboxFloat() }
    func decode(_ type: Int.Type, forKey key: Key) throws -> Int { try child(key).unboxInteger(type) }
    func decode(_ type: Int8.Type, forKey key: Key) throws -> Int8 { try child(key).unboxInteger(type) }
    func decode(_ type: Int16.Type, forKey key: Key) throws -> Int16 { try child(key).unboxInteger(type) }
    func decode(_ type: Int32.Type, forKey key: Key) throws -> Int32 { try child(key).unboxInteger(type) }
    func decode(_ type: Int64.Type, forKey key: Key) throws -> Int64 { try child(key).unboxInteger(type) }
    func decode(_ type: UInt.Type, forKey key: Key) throws -> UInt { try child(key).unboxInteger(type) }
    func decode(_ type: UInt8.Type, forKey key: Key) throws -> UInt8 { try child(key).unboxInteger(type) }
    func decode(_ type: UInt16.Type, forKey key: Key) throws -> UInt16 { try child(key).unboxInteger(type) }
    func decode(_ type: UInt32.Type, forKey key: Key) throws -> UInt32 { try child(key).unboxInteger(type) }
    func decode(_ type: UInt64.Type, forKey key: Key) throws -> UInt64 { try child(key).unboxInteger(type) }
    func decode<T: Decodable>(_ type: T.Type, forKey key: Key) throws -> T { try child(key).unbox(type) }

    func nestedContainer<NestedKey: CodingKey>(keyedBy type: NestedKey.Type, forKey key: Key) throws -> KeyedDecodingContainer<NestedKey> {
        try child(key).container(keyedBy: type)
    }

    func nestedUnkeyedContainer(forKey key: Key) throws -> any UnkeyedDecodingContainer {
        try child(key).unkeyedContainer()
    }

    func superDecoder() throws -> any Decoder {
        let key = CBORCodingKey(stringValue: "super")
        guard let value = map[.textString("super")] else {
            throw CBORError.keyNotFound(key: "super", path: decoder.path)
        }
        return decoder.child(value, key)
    }

    func superDecoder(forKey key: Key) throws -> any Decoder {
        try child(key)
    }
}

struct UnkeyedDecoding: UnkeyedDecodingContainer {
    let decoder: CBORDecoderImpl
    let elements: [CBOR]
    var currentIndex = 0

    init(decoder: CBORDecoderImpl, elements: [CBOR]) {
        self.decoder = decoder
        self.elements = elements
    }

    var codingPath: [any CodingKey] { decoder.codingPath }
    var count: Int? { elements.count }
    var isAtEnd: Bool { currentIndex >= elements.count }

    private mutating func next() throws -> CBORDecoderImpl {
        guard currentIndex < elements.count else {
            throw CBORError.valueNotFound(expected: "another array element",
                                          path: codingPathString(codingPath + [CBORCodingKey(index: currentIndex)]))
        }
        let child = decoder.child(elements[currentIndex], CBORCodingKey(index: currentIndex))
        currentIndex += 1
        return child
    }

    mutating func decodeNil() throws -> Bool {
        guard currentIndex < elements.count else { return false }
        let value = elements[currentIndex]
        guard value.isNull || value == .undefined else { return false }
        currentIndex += 1
        return true
    }

    mutating func decode(_ type: Bool.Type) throws -> Bool { try next().unboxBool() }
    mutating func decode(_ type: String.Type) throws -> String { try next().unboxString() }
    mutating func decode(_ type: Double.Type) throws -> Double { try next().unboxDouble() }
    mutating func decode(_ type: Float.Type) throws -> Float { try next().unboxFloat() }
    mutating func decode(_ type: Int.Type) throws -> Int { try next().unboxInteger(type) }
    mutating func decode(_ type: Int8.Type) throws -> Int8 { try next().unboxInteger(type) }
    mutating func decode(_ type: Int16.Type) throws -> Int16 { try next().unboxInteger(type) }
    mutating func decode(_ type: Int32.Type) throws -> Int32 { try next().unboxInteger(type) }
    mutating func decode(_ type: Int64.Type) throws -> Int64 { try next().unboxInteger(type) }
    mutating func decode(_ type: UInt.Type) throws -> UInt { try next().unboxInteger(type) }
    mutating func decode(_ type: UInt8.Type) throws -> UInt8 { try next().unboxInteger(type) }
    mutating func decode(_ type: UInt16.Type) throws -> UInt16 { try next().unboxInteger(type) }
    mutating func decode(_ type: UInt32.Type) throws -> UInt32 { try next().unboxInteger(type) }
    mutating func decode(_ type: UInt64.Type) throws -> UInt64 { try next().unboxInteger(type) }
    mutating func decode<T: Decodable>(_ type: T.Type) throws -> T { try next().unbox(type) }

    mutating func nestedContainer<NestedKey: CodingKey>(keyedBy type: NestedKey.Type) throws -> KeyedDecodingContainer<NestedKey> {
        try next().container(keyedBy: type)
    }

    mutating func nestedUnkeyedContainer() throws -> any UnkeyedDecodingContainer {
        try next().unkeyedContainer()
    }

    mutating func superDecoder() throws -> any Decoder {
        try next()
    }
}

struct SingleValueDecoding: SingleValueDecodingContainer {
    let decoder: CBORDecoderImpl
    var codingPath: [any CodingKey] { decoder.codingPath }

    func decodeNil() -> Bool { decoder.value.isNull || decoder.value == .undefined }
    func decode(_ type: Bool.Type) throws -> Bool { try decoder.unboxBool() }
    func decode(_ type: String.Type) throws -> String { try decoder.unboxString() }
    func decode(_ type: Double.Type) throws -> Double { try decoder.unboxDouble() }
    func decode(_ type: Float.Type) throws -> Float { try decoder.unboxFloat() }
    func decode(_ type: Int.Type) throws -> Int { try decoder.unboxInteger(type) }
    func decode(_ type: Int8.Type) throws -> Int8 { try decoder.unboxInteger(type) }
    func decode(_ type: Int16.Type) throws -> Int16 { try decoder.unboxInteger(type) }
    func decode(_ type: Int32.Type) throws -> Int32 { try decoder.unboxInteger(type) }
    func decode(_ type: Int64.Type) throws -> Int64 { try decoder.unboxInteger(type) }
    func decode(_ type: UInt.Type) throws -> UInt { try decoder.unboxInteger(type) }
    func decode(_ type: UInt8.Type) throws -> UInt8 { try decoder.unboxInteger(type) }
    func decode(_ type: UInt16.Type) throws -> UInt16 { try decoder.unboxInteger(type) }
    func decode(_ type: UInt32.Type) throws -> UInt32 { try decoder.unboxInteger(type) }
    func decode(_ type: UInt64.Type) throws -> UInt64 { try decoder.unboxInteger(type) }
    func decode<T: Decodable>(_ type: T.Type) throws -> T { try decoder.unbox(type) }
}
