// CBOR is Codable so it can sit inside Codable structs. With CBOREncoder/CBORDecoder
// the item passes through unchanged; other coders get a JSON-like mapping (tags are
// dropped, byte strings become arrays of numbers), and items they cannot represent
// (non-text map keys, simple values, integers beyond Int64/UInt64) throw.
extension CBOR: Codable {
    /// Reads an item: unchanged from ``CBORDecoder``, or mapped from another decoder's
    /// null, bool, integer, float, string, array or keyed container.
    public init(from decoder: any Decoder) throws {
        if let cborDecoder = decoder as? CBORDecoderImpl {
            self = cborDecoder.value
            return
        }
        if let keyed = try? decoder.container(keyedBy: CBORCodingKey.self) {
            var map = CBORMap()
            for key in keyed.allKeys {
                map.append(key: .textString(key.stringValue), value: try keyed.decode(CBOR.self, forKey: key))
            }
            self = .map(map)
            return
        }
        if var unkeyed = try? decoder.unkeyedContainer() {
            var elements: [CBOR] = []
            while !unkeyed.isAtEnd { elements.append(try unkeyed.decode(CBOR.self)) }
            self = .array(elements)
            return
        }
        let single = try decoder.singleValueContainer()
        if single.decodeNil() { self = .null }
        else if let bool = try? single.decode(Bool.self) { self = .boolean(bool) }
        else if let int = try? single.decode(Int64.self) { self = CBOR.integer(int) }
        else if let uint = try? single.decode(UInt64.self) { self = .unsigned(uint) }
        else if let double = try? single.decode(Double.self) { self = .double(double) }
        else { self = .textString(try single.decode(String.self)) }
    }

    /// Writes the item: unchanged into ``CBOREncoder``, or mapped for another encoder.
    public func encode(to encoder: any Encoder) throws {
        if let cborEncoder = encoder as? CBOREncoderImpl {
            cborEncoder.slot.content = .value(self)
            return
        }
        func unsupported(_ what: String) -> EncodingError {
            EncodingError.invalidValue(self, .init(codingPath: encoder.codingPath,
                                                   debugDescription: "\(what) has no equivalent outside CBOR"))
        }
        switch self {
        case .array(let elements):
            var container = encoder.unkeyedContainer()
            for element in elements { try container.encode(element) }
        case .map(let map):
            var container = encoder.container(keyedBy: CBORCodingKey.self)
            for entry in map.entries {
                guard case .textString(let key) = entry.key else { throw unsupported("a non-text map key") }
                try container.encode(entry.value, forKey: CBORCodingKey(stringValue: key))
            }
        case .tagged(_, let content):
            try content.encode(to: encoder)
        default:
            var container = encoder.singleValueContainer()
            switch self {
            case .unsigned(let n): try container.encode(n)
            case .negative(let n):
                guard let magnitude = Int64(exactly: n) else { throw unsupported("an integer below Int64.min") }
                try container.encode(-1 - magnitude)
            case .byteString(let bytes): try container.encode(bytes)
            case .textString(let text): try container.encode(text)
            case .boolean(let bool): try container.encode(bool)
            case .null, .undefined: try container.encodeNil()
            case .half, .float, .double: try container.encode(doubleValue ?? .nan)
            default: throw unsupported("a simple value")
            }
        }
    }
}
