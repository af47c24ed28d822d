import Foundation
import Testing
import WalletEncoding

/// Locates and decodes the JSON test-vector files used by the crypto suites. Files are
/// parsed with WalletEncoding's strict parser (the SDK's one JSON home) and mapped onto
/// the suites' `Decodable` vector structs by ``JSONValueDecoder``.
enum TestVectors {
    /// `Tests/WalletCryptoTests/Vectors` of this repository.
    static let localDirectory = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
        .appendingPathComponent("Vectors")

    /// `../shared/vectors` next to the repository root (three levels above this file).
    static let sharedDirectory = URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent().appendingPathComponent("shared/vectors")

    /// Decodes a file of `Vectors/`.
    static func local<T: Decodable>(_ name: String, as type: T.Type) throws -> T {
        try decode(T.self, at: localDirectory.appendingPathComponent(name))
    }

    /// Decodes a file of the shared vector folder (path relative to `shared/vectors`).
    static func shared<T: Decodable>(_ path: String, as type: T.Type) throws -> T {
        try decode(T.self, at: sharedDirectory.appendingPathComponent(path))
    }

    private static func decode<T: Decodable>(_ type: T.Type, at url: URL) throws -> T {
        try T(from: JSONValueDecoder(value: JSONValue.parse([UInt8](Data(contentsOf: url)))))
    }
}

/// A `Decoder` over a parsed `JSONValue`: objects, arrays, strings, integers, booleans
/// and null, which is all the vector files hold.
struct JSONValueDecoder: Decoder {
    let value: JSONValue
    var codingPath: [any CodingKey] = []
    var userInfo: [CodingUserInfoKey: Any] { [:] }

    func container<Key: CodingKey>(keyedBy type: Key.Type) throws -> KeyedDecodingContainer<Key> {
        guard let object = value.objectValue else { throw mismatch(JSONObject.self, value, codingPath) }
        return KeyedDecodingContainer(Keyed<Key>(object: object, codingPath: codingPath))
    }

    func unkeyedContainer() throws -> any UnkeyedDecodingContainer {
        guard let array = value.arrayValue else { throw mismatch([JSONValue].self, value, codingPath) }
        return Unkeyed(array: array, codingPath: codingPath)
    }

    func singleValueContainer() throws -> any SingleValueDecodingContainer { Single(value: value, codingPath: codingPath) }

    struct Keyed<Key: CodingKey>: KeyedDecodingContainerProtocol {
        let object: JSONObject
        let codingPath: [any CodingKey]
        var allKeys: [Key] { object.keys.compactMap { Key(stringValue: $0) } }

        func contains(_ key: Key) -> Bool { object[key.stringValue] != nil }
        func decodeNil(forKey key: Key) throws -> Bool { object[key.stringValue]?.isNull ?? true }
        func decode<T: Decodable>(_ type: T.Type, forKey key: Key) throws -> T {
            guard let member = object[key.stringValue] else {
                throw DecodingError.keyNotFound(key, .init(codingPath: codingPath, debugDescription: "missing"))
            }
            return try T(from: JSONValueDecoder(value: member, codingPath: codingPath + [key]))
        }
        func nestedContainer<NestedKey: CodingKey>(keyedBy type: NestedKey.Type, forKey key: Key) throws
            -> KeyedDecodingContainer<NestedKey> {
            try JSONValueDecoder(value: object[key.stringValue] ?? .null, codingPath: codingPath + [key]).container(keyedBy: type)
        }
        func nestedUnkeyedContainer(forKey key: Key) throws -> any UnkeyedDecodingContainer {
            try JSONValueDecoder(value: object[key.stringValue] ?? .null, codingPath: codingPath + [key]).unkeyedContainer()
        }
        func superDecoder() throws -> any Decoder { JSONValueDecoder(value: .object(object), codingPath: codingPath) }
        func superDecoder(forKey key: Key) throws -> any Decoder {
            JSONValueDecoder(value: object[key.stringValue] ?? .null, codingPath: codingPath + [key])
        }
    }

    struct Unkeyed: UnkeyedDecodingContainer {
        let array: [JSONValue]
        let codingPath: [any CodingKey]
        var currentIndex = 0
        var count: Int? { array.count }
        var isAtEnd: Bool { currentIndex >= array.count }

        init(array: [JSONValue], codingPath: [any CodingKey]) {
            self.array = array
            self.codingPath = codingPath
        }

        mutating func next() throws -> JSONValue {
            guard !isAtEnd else { throw DecodingError.valueNotFound(JSONValue.self, .init(codingPath: codingPath, debugDescription: "end of array")) }
            defer { currentIndex += 1 }
            return array[currentIndex]
        }
        mutating func decodeNil() throws -> Bool {
            guard !isAtEnd, array[currentIndex].isNull else { return false }
            currentIndex += 1
            return true
        }
        mutating func decode<T: Decodable>(_ type: T.Type) throws -> T {
            try T(from: JSONValueDecoder(value: try next(), codingPath: codingPath))
        }
        mutating func nestedContainer<NestedKey: CodingKey>(keyedBy type: NestedKey.Type) throws -> KeyedDecodingContainer<NestedKey> {
            try JSONValueDecoder(value: try next(), codingPath: codingPath).container(keyedBy: type)
        }
        mutating func nestedUnkeyedContainer() throws -> any UnkeyedDecodingContainer {
            try JSONValueDecoder(value: try next(), codingPath: codingPath).unkeyedContainer()
        }
        mutating func superDecoder() throws -> any Decoder { JSONValueDecoder(value: try next(), codingPath: codingPath) }
    }

    struct Single: SingleValueDecodingContainer {
        let value: JSONValue
        let codingPath: [any CodingKey]

        func decodeNil() -> Bool { value.isNull }
        func decode(_ type: Bool.Type) throws -> Bool {
            guard let result = value.boolValue else { throw mismatch(type, value, codingPath) }
            return result
        }
        func decode(_ type: String.Type) throws -> String {
            guard let result = value.stringValue else { throw mismatch(type, value, codingPath) }
            return result
        }
        func decode(_ type: Double.Type) throws -> Double {
            guard let result = value.doubleValue else { throw mismatch(type, value, codingPath) }
            return result
        }
        func decode(_ type: Int.Type) throws -> Int {
            guard let result = value.intValue else { throw mismatch(type, value, codingPath) }
            return result
        }
        func decode<T: Decodable>(_ type: T.Type) throws -> T {
            switch type {
            case is Bool.Type: return try decode(Bool.self) as! T
            case is String.Type: return try decode(String.self) as! T
            case is Double.Type: return try decode(Double.self) as! T
            case is Int.Type: return try decode(Int.self) as! T
            default: return try T(from: JSONValueDecoder(value: value, codingPath: codingPath))
            }
        }
    }
}

private func mismatch(_ type: Any.Type, _ value: JSONValue, _ path: [any CodingKey]) -> DecodingError {
    .typeMismatch(type, .init(codingPath: path, debugDescription: "found \(value.kind)"))
}

/// The bytes of a hex string from a test vector; a malformed string (an odd length, a
/// character that is not a hex digit) fails the test instead of yielding other bytes.
func hex(_ text: String, sourceLocation: SourceLocation = #_sourceLocation) throws -> [UInt8] {
    try #require(Hex.decode(text), "test data is not hex: \(text.prefix(40))", sourceLocation: sourceLocation)
}

/// Lowercase hex of `bytes`.
func hexString(_ bytes: [UInt8]) -> String { Hex.encode(bytes) }

/// A big-endian integer re-encoded at a fixed width (drops leading zero bytes, or left-pads).
func fixedWidth(_ bytes: [UInt8], _ width: Int) -> [UInt8] {
    let trimmed = Array(bytes.drop(while: { $0 == 0 }))
    return [UInt8](repeating: 0, count: max(0, width - trimmed.count)) + trimmed
}
