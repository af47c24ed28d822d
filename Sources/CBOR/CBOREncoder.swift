import Foundation

/// Encodes `Encodable` values as CBOR, in the manner of `JSONEncoder`.
///
/// Keyed containers become maps with text keys in the order the keys are encoded (the
/// declaration order for synthesized conformances); unkeyed containers become arrays.
/// `[UInt8]` and `Data` become byte strings, `Date` a tag 0 or tag 1 item, and a ``CBOR``
/// value is written as it is. `nil` encodes as null; `encodeIfPresent` omits the key.
public struct CBOREncoder: Sendable {
    /// How `Date` values are written.
    public enum DateEncodingStrategy: Sendable, Hashable {
        /// Tag 0 with an RFC 3339 string in UTC (ISO 18013-5 `tdate`).
        case rfc3339
        /// Tag 1 with seconds since the epoch (integer when whole).
        case epochSeconds
    }

    /// How `Date` values are written; `.rfc3339` by default.
    public var dateEncodingStrategy: DateEncodingStrategy = .rfc3339
    /// Byte-level choices (float width, key sorting).
    public var options: CBOREncodingOptions = .init()
    /// Use a coding key's `intValue`, when it has one, as an integer map key (COSE style).
    public var useIntegerKeys: Bool = false
    /// Contextual information for `encode(to:)` implementations.
    public var userInfo: [CodingUserInfoKey: any Sendable] = [:]

    /// Creates an encoder with default settings.
    public init() {}

    /// Encodes `value` to bytes.
    public func encode<T: Encodable>(_ value: T) throws(CBORError) -> [UInt8] {
        try encodeToCBOR(value).encoded(options: options)
    }

    /// Encodes `value` to a ``CBOR`` value.
    public func encodeToCBOR<T: Encodable>(_ value: T) throws(CBORError) -> CBOR {
        let settings = EncodingSettings(dates: dateEncodingStrategy, useIntegerKeys: useIntegerKeys,
                                        userInfo: userInfo)
        do {
            return try EncodingSlot.box(value, settings: settings, codingPath: []).build()
        } catch {
            throw CBORError.wrapping(error)
        }
    }
}

struct EncodingSettings {
    let dates: CBOREncoder.DateEncodingStrategy
    let useIntegerKeys: Bool
    let userInfo: [CodingUserInfoKey: any Sendable]
}

/// A place a value will be written to; containers fill it in as they are used.
final class EncodingSlot {
    enum Content {
        case unset
        case value(CBOR)
        case array([EncodingSlot])
        case map(Pairs)
    }

    /// A map's entries in the order first written, with an index of their keys once
    /// there are enough that searching per key would make encoding quadratic.
    struct Pairs {
        private(set) var entries: [(key: CBOR, slot: EncodingSlot)] = []
        private var index: [CBOR: Int] = [:]

        /// Sets `key`'s value: in place when the key was written before, else appended.
        mutating func set(_ key: CBOR, _ slot: EncodingSlot) {
            let existing: Int?
            if entries.count < 16 {
                existing = entries.firstIndex { $0.key == key }
            } else {
                if index.isEmpty { for (position, entry) in entries.enumerated() { index[entry.key] = position } }
                existing = index[key]
            }
            if let existing {
                entries[existing].slot = slot
            } else {
                if entries.count >= 16 { index[key] = entries.count }
                entries.append((key, slot))
            }
        }
    }

    var content: Content = .unset

    init(_ content: Content = .unset) {
        self.content = content
    }

    func build() -> CBOR {
        switch content {
        case .unset: return .map(CBORMap())
        case .value(let value): return value
        case .array(let slots): return .array(slots.map { $0.build() })
        case .map(let pairs): return .map(CBORMap(pairs.entries.map { CBORMap.Entry(key: $0.key, value: $0.slot.build()) }))
        }
    }

    static func box<T: Encodable>(_ value: T, settings: EncodingSettings, codingPath: [any CodingKey]) throws -> EncodingSlot {
        switch value {
        case let cbor as CBOR: return EncodingSlot(.value(cbor))
        case let bytes as [UInt8]: return EncodingSlot(.value(.byteString(bytes)))
        case let data as Data: return EncodingSlot(.value(.byteString([UInt8](data))))
        case let date as Date:
            switch settings.dates {
            case .rfc3339: return EncodingSlot(.value(try CBOR.dateTime(date)))
            case .epochSeconds: return EncodingSlot(.value(CBOR.epochDateTime(date)))
            }
        default:
            let slot = EncodingSlot()
            try value.encode(to: CBOREncoderImpl(slot: slot, settings: settings, codingPath: codingPath))
            return slot
        }
    }
}

struct CBOREncoderImpl: Encoder {
    let slot: EncodingSlot
    let settings: EncodingSettings
    let codingPath: [any CodingKey]
    var userInfo: [CodingUserInfoKey: Any] { settings.userInfo }

    func container<Key: CodingKey>(keyedBy type: Key.Type) -> KeyedEncodingContainer<Key> {
        if case .map = slot.content {} else { slot.content = .map(EncodingSlot.Pairs()) }
        return KeyedEncodingContainer(KeyedEncoding<Key>(slot: slot, settings: settings, codingPath: codingPath))
    }

    func unkeyedContainer() -> any UnkeyedEncodingContainer {
        if case .array = slot.content {} else { slot.content = .array([]) }
        return UnkeyedEncoding(slot: slot, settings: settings, codingPath: codingPath)
    }

    func singleValueContainer() -> any SingleValueEncodingContainer {
        SingleValueEncoding(slot: slot, settings: settings, codingPath: codingPath)
    }
}

struct KeyedEncoding<Key: CodingKey>: KeyedEncodingContainerProtocol {
    let slot: EncodingSlot
    let settings: EncodingSettings
    let codingPath: [any CodingKey]

    private func mapKey(_ key: any CodingKey) -> CBOR {
        if settings.useIntegerKeys, let int = key.intValue { return CBOR(int) }
        return .textString(key.stringValue)
    }

    private func put(_ child: EncodingSlot, for key: any CodingKey) {
        guard case .map(var pairs) = slot.content else { return }
        slot.content = .unset    // keep `pairs` uniquely referenced while editing
        pairs.set(mapKey(key), child)
        slot.content = .map(pairs)
    }

    mutating func encodeNil(forKey key: Key) throws { put(EncodingSlot(.value(.null)), for: key) }
    mutating func encode(_ value: Bool, forKey key: Key) throws { put(EncodingSlot(.value(.boolean(value))), for: key) }
    mutating func encode(_ value: String, forKey key: Key) throws { put(EncodingSlot(.value(.textString(value))), for: key) }
    mutating func encode(_ value: Double, forKey key: Key) throws { put(EncodingSlot(.value(.double(value))), for: key) }
    mutating func encode(_ value: Float, forKey key: Key) throws { put(EncodingSlot(.value(.float(value))), for: key) }
    mutating func encode(_ value: Int, forKey key: Key) throws { put(EncodingSlot(.value(CBOR(value))), for: key) }
    mutating func encode(_ value: Int8, forKey key: Key) throws { put(EncodingSlot(.value(CBOR(Int(value)))), for: key) }
    mutating func encode(_ value: Int16, forKey key: Key) throws { put(EncodingSlot(.value(CBOR(Int(value)))), for: key) }
    mutating func encode(_ value: Int32, forKey key: Key) throws { put(EncodingSlot(.value(CBOR(Int(value)))), for: key) }
    mutating func encode(_ value: Int64, forKey key: Key) throws { put(EncodingSlot(.value(CBOR.integer(value))), for: key) }
    mutating func encode(_ value: UInt, forKey key: Key) throws { put(EncodingSlot(.value(.unsigned(UInt64(value)))), for: key) }
    mutating func encode(_ value: UInt8, forKey key: Key) throws { put(EncodingSlot(.value(.unsigned(UInt64(value)))), for: key) }
    mutating func encode(_ value: UInt16, forKey key: Key) throws { put(EncodingSlot(.value(.unsigned(UInt64(value)))), for: key) }
    mutating func encode(_ value: UInt32, forKey key: Key) throws { put(EncodingSlot(.value(.unsigned(UInt64(value)))), for: key) }
    mutating func encode(_ value: UInt64, forKey key: Key) throws { put(EncodingSlot(.value(.unsigned(value))), for: key) }

    mutating func encode<T: Encodable>(_ value: T, forKey key: Key) throws {
        put(try EncodingSlot.box(value, settings: settings, codingPath: codingPath + [key]), for: key)
    }

    mutating func nestedContainer<NestedKey: CodingKey>(keyedBy keyType: NestedKey.Type, forKey key: Key) -> KeyedEncodingContainer<NestedKey> {
        let child = EncodingSlot(.map(EncodingSlot.Pairs()))
        put(child, for: key)
        return KeyedEncodingContainer(KeyedEncoding<NestedKey>(slot: child, settings: settings, codingPath: codingPath + [key]))
    }

    mutating func nestedUnkeyedContainer(forKey key: Key) -> any UnkeyedEncodingContainer {
        let child = EncodingSlot(.array([]))
        put(child, for: key)
        return UnkeyedEncoding(slot: child, settings: settings, codingPath: codingPath + [key])
    }

    mutating func superEncoder() -> any Encoder {
        superEncoder(forKey: CBORCodingKey(stringValue: "super"))
    }

    mutating func superEncoder(forKey key: Key) -> any Encoder {
        superEncoder(forKey: key as any CodingKey)
    }

    private func superEncoder(forKey key: any CodingKey) -> any Encoder {
        let child = EncodingSlot()
        put(child, for: key)
        return CBOREncoderImpl(slot: child, settings: settings, codingPath: codingPath + [key])
    }
}

struct UnkeyedEncoding: UnkeyedEncodingContainer {
    let slot: EncodingSlot
    let settings: EncodingSettings
    let codingPath: [any CodingKey]

    var count: Int {
        if case .array(let slots) = slot.content { return slots.count }
        return 0
    }

    private func append(_ child: EncodingSlot) {
        guard case .array(var slots) = slot.content else { return }
        slot.content = .unset
        slots.append(child)
        slot.content = .array(slots)
    }

    private var nextPath: [any CodingKey] { codingPath + [CBORCodingKey(index: count)] }

    mutating func encodeNil() throws { append(EncodingSlot(.value(.null))) }
    mutating func encode(_ value: Bool) throws { append(EncodingSlot(.value(.boolean(value)))) }
    mutating func encode(_ value: String) throws { append(EncodingSlot(.value(.textString(value)))) }
    mutating func encode(_ value: Double) throws { append(EncodingSlot(.value(.double(value)))) }
    mutating func encode(_ value: Float) throws { append(EncodingSlot(.value(.float(value)))) }
    mutating func encode(_ value: Int) throws { append(EncodingSlot(.value(CBOR(value)))) }
    mutating func encode(_ value: Int64) throws { append(EncodingSlot(.value(CBOR.integer(value)))) }
    mutating func encode(_ value: UInt64) throws { append(EncodingSlot(.value(.unsigned(value)))) }

    mutating func encode<T: Encodable>(_ value: T) throws {
        append(try EncodingSlot.box(value, settings: settings, codingPath: nextPath))
    }

    mutating func nestedContainer<NestedKey: CodingKey>(keyedBy keyType: NestedKey.Type) -> KeyedEncodingContainer<NestedKey> {
        let path = nextPath
        let child = EncodingSlot(.map(EncodingSlot.Pairs()))
        append(child)
        return KeyedEncodingContainer(KeyedEncoding<NestedKey>(slot: child, settings: settings, codingPath: path))
    }

    mutating func nestedUnkeyedContainer() -> any UnkeyedEncodingContainer {
        let path = nextPath
        let child = EncodingSlot(.array([]))
        append(child)
        return UnkeyedEncoding(slot: child, settings: settings, codingPath: path)
    }

    mutating func superEncoder() -> any Encoder {
        let path = nextPath
        let child = EncodingSlot()
        append(child)
        return CBOREncoderImpl(slot: child, settings: settings, codingPath: path)
    }
}

struct SingleValueEncoding: SingleValueEncodingContainer {
    let slot: EncodingSlot
    let settings: EncodingSettings
    let codingPath: [any CodingKey]

    private func set(_ value: CBOR) { slot.content = .value(value) }

    mutating func encodeNil() throws { set(.null) }
    mutating func encode(_ value: Bool) throws { set(.boolean(value)) }
    mutating func encode(_ value: String) throws { set(.textString(value)) }
    mutating func encode(_ value: Double) throws { set(.double(value)) }
    mutating func encode(_ value: Float) throws { set(.float(value)) }
    mutating func encode(_ value: Int) throws { set(CBOR(value)) }
    mutating func encode(_ value: Int8) throws { set(CBOR(Int(value))) }
    mutating func encode(_ value: Int16) throws { set(CBOR(Int(value))) }
    mutating func encode(_ value: Int32) throws { set(CBOR(Int(value))) }
    mutating func encode(_ value: Int64) throws { set(CBOR.integer(value)) }
    mutating func encode(_ value: UInt) throws { set(.unsigned(UInt64(value))) }
    mutating func encode(_ value: UInt8) throws { set(.unsigned(UInt64(value))) }
    mutating func encode(_ value: UInt16) throws { set(.unsigned(UInt64(value))) }
    mutating func encode(_ value: UInt32) throws { set(.unsigned(UInt64(value))) }
    mutating func encode(_ value: UInt64) throws { set(.unsigned(value)) }

    mutating func encode<T: Encodable>(_ value: T) throws {
        slot.content = try EncodingSlot.box(value, settings: settings, codingPath: codingPath).content
    }
}

/// A coding key for array positions and ad-hoc keys.
struct CBORCodingKey: CodingKey {
    let stringValue: String
    let intValue: Int?

    init(stringValue: String) {
        self.stringValue = stringValue
        self.intValue = nil
    }

    init(intValue: Int) {
        self.stringValue = String(intValue)
        self.intValue = intValue
    }

    init(index: Int) {
        self.stringValue = "[\(index)]"
        self.intValue = index
    }
}

extension CBOR {
    static func integer(_ value: Int64) -> CBOR {
        value >= 0 ? .unsigned(UInt64(value)) : .negative(UInt64(-1 - value))
    }
}

extension CBORError {
    /// Converts whatever a `Codable` implementation threw into a ``CBORError``.
    static func wrapping(_ error: any Error) -> CBORError {
        switch error {
        case let error as CBORError:
            return error
        case let error as DecodingError:
            switch error {
            case .typeMismatch(let type, let context):
                return .typeMismatch(expected: "\(type)", path: codingPathString(context.codingPath))
            case .valueNotFound(let type, let context):
                return .valueNotFound(expected: "\(type)", path: codingPathString(context.codingPath))
            case .keyNotFound(let key, let context):
                return .keyNotFound(key: key.stringValue, path: codingPathString(context.codingPath))
            case .dataCorrupted(let context):
                return .dataCorrupted(description: context.debugDescription, path: codingPathString(context.codingPath))
            @unknown default:
                return .dataCorrupted(description: "an unknown DecodingError", path: "")
            }
        case let error as EncodingError:
            switch error {
            case .invalidValue(_, let context):
                return .unsupportedValue("\(context.debugDescription) at \(codingPathString(context.codingPath))")
            @unknown default:
                return .unsupportedValue("an unknown EncodingError")
            }
        default:
            // A Codable implementation's own error: its type names it; the value is not
            // turned into text (it may carry anything).
            return .dataCorrupted(description: "\(type(of: error)) thrown by a Codable implementation", path: "")
        }
    }
}

/// Renders a coding path as `a.b[2].c`.
func codingPathString(_ path: [any CodingKey]) -> String {
    var text = ""
    for key in path {
        if let key = key as? CBORCodingKey, key.stringValue.hasPrefix("[") {
            text += key.stringValue
        } else {
            if !text.isEmpty { text += "." }
            text += key.stringValue
        }
    }
    return text
}
