/// Appends encoded items to one growing buffer; no allocation per item except the
/// per-map scratch buffers needed to sort keys in deterministic mode.
struct CBORWriter {
    var bytes: [UInt8] = []
    let options: CBOREncodingOptions

    init(options: CBOREncodingOptions, capacity: Int = 256) {
        self.options = options
        bytes.reserveCapacity(capacity)
    }

    // RFC 8949 §4.1: the shortest head that holds the argument.
    mutating func writeHead(major: UInt8, argument: UInt64) {
        let high = major << 5
        switch argument {
        case 0..<24:
            bytes.append(high | UInt8(argument))
        case 24...0xFF:
            bytes.append(high | 24)
            bytes.append(UInt8(argument))
        case 0x100...0xFFFF:
            bytes.append(high | 25)
            appendBigEndian(argument, byteCount: 2)
        case 0x1_0000...0xFFFF_FFFF:
            bytes.append(high | 26)
            appendBigEndian(argument, byteCount: 4)
        default:
            bytes.append(high | 27)
            appendBigEndian(argument, byteCount: 8)
        }
    }

    private mutating func appendBigEndian(_ value: UInt64, byteCount: Int) {
        var shift = (byteCount - 1) * 8
        while shift >= 0 {
            bytes.append(UInt8(truncatingIfNeeded: value >> UInt64(shift)))
            shift -= 8
        }
    }

    mutating func write(_ value: CBOR) {
        switch value {
        case .unsigned(let n):
            writeHead(major: 0, argument: n)
        case .negative(let n):
            writeHead(major: 1, argument: n)
        case .byteString(let data):
            writeHead(major: 2, argument: UInt64(data.count))
            bytes.append(contentsOf: data)
        case .textString(let string):
            let utf8 = string.utf8
            writeHead(major: 3, argument: UInt64(utf8.count))
            bytes.append(contentsOf: utf8)
        case .array(let elements):
            writeHead(major: 4, argument: UInt64(elements.count))
            for element in elements { write(element) }
        case .map(let map):
            writeHead(major: 5, argument: UInt64(map.count))
            if options.sortMapKeys && map.count > 1 {
                writeSorted(map)
            } else {
                for entry in map.entries {
                    write(entry.key)
                    write(entry.value)
                }
            }
        case .tagged(let tag, let content):
            writeHead(major: 6, argument: tag)
            write(content)
        case .simple(let simple):
            if simple < 24 {
                bytes.append(0xE0 | simple)
            } else {
                // 24...31 are reserved and not well-formed in either form (RFC 8949 §3.3).
                bytes.append(0xF8)
                bytes.append(simple)
            }
        case .boolean(let bool):
            bytes.append(bool ? 0xF5 : 0xF4)
        case .null:
            bytes.append(0xF6)
        case .undefined:
            bytes.append(0xF7)
        case .half(let bits):
            writeHalf(bits)
        case .float(let single):
            if options.shortestFloats, let half = FloatBits.exactHalfBits(single) {
                writeHalf(half)
            } else {
                writeFloat(single)
            }
        case .double(let double):
            if options.shortestFloats, let single = FloatBits.exactFloat(double) {
                if let half = FloatBits.exactHalfBits(single) {
                    writeHalf(half)
                } else {
                    writeFloat(single)
                }
            } else {
                bytes.append(0xFB)
                appendBigEndian(double.bitPattern, byteCount: 8)
            }
        }
    }

    private mutating func writeHalf(_ bits: UInt16) {
        bytes.append(0xF9)
        appendBigEndian(UInt64(bits), byteCount: 2)
    }

    private mutating func writeFloat(_ single: Float) {
        bytes.append(0xFA)
        appendBigEndian(UInt64(single.bitPattern), byteCount: 4)
    }

    // RFC 8949 §4.2.1: entries ordered by the bytewise lexicographic order of the
    // deterministic encodings of their keys.
    private mutating func writeSorted(_ map: CBORMap) {
        var encoded: [(key: [UInt8], entry: CBORMap.Entry)] = []
        encoded.reserveCapacity(map.count)
        for entry in map.entries {
            var keyWriter = CBORWriter(options: options, capacity: 16)
            keyWriter.write(entry.key)
            encoded.append((keyWriter.bytes, entry))
        }
        // Indices break ties so duplicate keys keep their relative order.
        let order = encoded.indices.sorted { a, b in
            if encoded[a].key == encoded[b].key { return a < b }
            return encoded[a].key.lexicographicallyPrecedes(encoded[b].key)
        }
        for position in order {
            bytes.append(contentsOf: encoded[position].key)
            write(encoded[position].entry.value)
        }
    }
}

extension CBOR {
    /// Encodes this item. Heads are always shortest; see ``CBOREncodingOptions`` for
    /// floats and map order. Indefinite lengths are never produced.
    public func encoded(options: CBOREncodingOptions = .init()) -> [UInt8] {
        var writer = CBORWriter(options: options)
        writer.write(self)
        return writer.bytes
    }

    /// Encodes `value`; the same as `value.encoded(options:)`.
    public static func encode(_ value: CBOR, options: CBOREncodingOptions = .init()) -> [UInt8] {
        value.encoded(options: options)
    }
}
