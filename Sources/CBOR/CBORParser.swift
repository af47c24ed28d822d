import WalletEncoding
/// One decoded item's place in the input, recorded when exact bytes are wanted.
struct CBORNode: Sendable {
    /// Offset of the initial byte.
    var start: Int
    /// Offset just past the head (initial byte and argument).
    var headEnd: Int
    /// Offset just past the whole item (including a closing break).
    var end: Int
    /// Index just past this node's last descendant in preorder.
    var subtreeEnd: Int
    /// Major type 0...7.
    var major: UInt8
    /// True for indefinite-length strings, arrays and maps.
    var indefinite: Bool
    /// The decoded value of the item.
    var value: CBOR
}

/// The single recursive-descent reader behind every decoding entry point. It checks
/// well-formedness (RFC 8949 §5.3, Appendix F) and the limits in the options before it
/// reserves memory, and optionally records a ``CBORNode`` per item.
struct CBORParser {
    private let bytes: [UInt8]
    private let end: Int
    private let options: CBORDecodingOptions
    private let maxDepth: Int
    private let recordNodes: Bool
    private(set) var position: Int
    private var itemCount = 0
    private(set) var nodes: [CBORNode] = []

    init(bytes: [UInt8], start: Int, end: Int, options: CBORDecodingOptions, recordNodes: Bool) {
        self.bytes = bytes
        self.position = start
        self.end = end
        self.options = options
        self.maxDepth = options.effectiveMaxDepth
        self.recordNodes = recordNodes
    }

    private var remaining: Int { end - position }

    private struct Head {
        var offset: Int
        var major: UInt8
        var info: UInt8
        var argument: UInt64
        var indefinite: Bool { info == 31 }
    }

    private mutating func readByte() throws(CBORError) -> UInt8 {
        guard position < end else { throw .unexpectedEnd(offset: position) }
        let byte = bytes[position]
        position += 1
        return byte
    }

    private mutating func readArgument(byteCount: Int) throws(CBORError) -> UInt64 {
        guard remaining >= byteCount else { throw .unexpectedEnd(offset: end) }
        var value: UInt64 = 0
        for k in 0..<byteCount {
            value = value << 8 | UInt64(bytes[position + k])
        }
        position += byteCount
        return value
    }

    // RFC 8949 §3: initial byte, then 0, 1, 2, 4 or 8 argument bytes.
    private mutating func readHead() throws(CBORError) -> Head {
        let offset = position
        let initial = try readByte()
        let major = initial >> 5
        let info = initial & 0x1F
        let argument: UInt64
        switch info {
        case 0..<24: argument = UInt64(info)
        case 24: argument = try readArgument(byteCount: 1)
        case 25: argument = try readArgument(byteCount: 2)
        case 26: argument = try readArgument(byteCount: 4)
        case 27: argument = try readArgument(byteCount: 8)
        case 28, 29, 30: throw .reservedAdditionalInfo(offset: offset, value: info)
        default: argument = 0
        }
        if options.requirePreferredSerialization && major != 7 {
            // RFC 8949 §4.1: the argument must use the shortest head that holds it.
            let shortest: Bool
            switch info {
            case 24: shortest = argument >= 24
            case 25: shortest = argument > 0xFF
            case 26: shortest = argument > 0xFFFF
            case 27: shortest = argument > 0xFFFF_FFFF
            default: shortest = true
            }
            guard shortest else { throw .nonPreferredEncoding(offset: offset) }
        }
        return Head(offset: offset, major: major, info: info, argument: argument)
    }

    private mutating func countItem(at offset: Int) throws(CBORError) {
        itemCount += 1
        guard itemCount <= options.maxItems else { throw .itemLimitExceeded(offset: offset) }
    }

    /// Consumes a break stop code if one is next.
    private mutating func consumeBreak() throws(CBORError) -> Bool {
        guard position < end else { throw .unexpectedEnd(offset: position) }
        if bytes[position] == 0xFF {
            position += 1
            return true
        }
        return false
    }

    private func checkIndefiniteAllowed(_ head: Head) throws(CBORError) {
        guard options.allowIndefiniteLength else { throw .indefiniteLengthNotAllowed(offset: head.offset) }
    }

    /// Checks a declared string length against the input and the options; returns it.
    private func stringLength(_ head: Head) throws(CBORError) -> Int {
        guard head.argument <= UInt64(remaining) else {
            throw .lengthTooLarge(offset: head.offset, length: head.argument)
        }
        let length = Int(head.argument)
        if let limit = options.maxStringLength, length > limit {
            throw .lengthTooLarge(offset: head.offset, length: head.argument)
        }
        return length
    }

    /// Parses one complete data item starting at `position`.
    mutating func parseItem(depth: Int) throws(CBORError) -> CBOR {
        guard depth <= maxDepth else { throw .depthLimitExceeded(offset: position) }
        let head = try readHead()
        try countItem(at: head.offset)
        let nodeIndex = nodes.count
        if recordNodes {
            nodes.append(CBORNode(start: head.offset, headEnd: position, end: position,
                                  subtreeEnd: nodeIndex + 1, major: head.major,
                                  indefinite: head.indefinite, value: .null))
        }
        let value: CBOR
        switch head.major {
        case 0:
            guard !head.indefinite else { throw .invalidIndefiniteLength(offset: head.offset) }
            value = .unsigned(head.argument)
        case 1:
            guard !head.indefinite else { throw .invalidIndefiniteLength(offset: head.offset) }
            value = .negative(head.argument)
        case 2, 3:
            value = try parseString(head, depth: depth)
        case 4:
            value = try parseArray(head, depth: depth)
        case 5:
            value = .map(try parseMap(head, depth: depth))
        case 6:
            guard !head.indefinite else { throw .invalidIndefiniteLength(offset: head.offset) }
            value = .tagged(head.argument, try parseItem(depth: depth + 1))
        default:
            value = try parseSimpleOrFloat(head)
        }
        if recordNodes {
            nodes[nodeIndex].end = position
            nodes[nodeIndex].subtreeEnd = nodes.count
            nodes[nodeIndex].value = value
        }
        return value
    }

    private mutating func parseString(_ head: Head, depth: Int) throws(CBORError) -> CBOR {
        let isText = head.major == 3
        if !head.indefinite {
            let length = try stringLength(head)
            let start = position
            position += length
            return try makeString(isText: isText, start: start, end: position)
        }
        // RFC 8949 §3.2.3: a sequence of definite-length chunks of the same major type.
        try checkIndefiniteAllowed(head)
        guard depth + 1 <= maxDepth else { throw .depthLimitExceeded(offset: position) }
        var buffer: [UInt8] = []
        var total = 0
        while try !consumeBreak() {
            let chunk = try readHead()
            guard chunk.major == head.major, !chunk.indefinite else {
                throw .invalidIndefiniteChunk(offset: chunk.offset)
            }
            try countItem(at: chunk.offset)
            let length = try stringLength(chunk)
            total += length
            if let limit = options.maxStringLength, total > limit {
                throw .lengthTooLarge(offset: chunk.offset, length: UInt64(total))
            }
            let start = position
            position += length
            // Each chunk of a text string must itself be valid UTF-8.
            let chunkValue = try makeString(isText: isText, start: start, end: position)
            buffer.append(contentsOf: bytes[start..<position])
            if recordNodes {
                nodes.append(CBORNode(start: chunk.offset, headEnd: start, end: position,
                                      subtreeEnd: nodes.count + 1, major: chunk.major,
                                      indefinite: false, value: chunkValue))
            }
        }
        return isText ? .textString(String(decoding: buffer, as: UTF8.self)) : .byteString(buffer)
    }

    private func makeString(isText: Bool, start: Int, end: Int) throws(CBORError) -> CBOR {
        if isText {
            if let bad = UTF8Validation.firstInvalidOffset(in: bytes, from: start, to: end) {
                throw .invalidUTF8(offset: bad)
            }
            return .textString(String(decoding: bytes[start..<end], as: UTF8.self))
        }
        return .byteString(Array(bytes[start..<end]))
    }

    private mutating func parseArray(_ head: Head, depth: Int) throws(CBORError) -> CBOR {
        var elements: [CBOR] = []
        if head.indefinite {
            try checkIndefiniteAllowed(head)
            while try !consumeBreak() {
                elements.append(try parseItem(depth: depth + 1))
            }
            return .array(elements)
        }
        // Each element needs at least one byte: refuse counts the input cannot hold.
        guard head.argument <= UInt64(remaining) else {
            throw .lengthTooLarge(offset: head.offset, length: head.argument)
        }
        let count = Int(head.argument)
        elements.reserveCapacity(min(count, 1024))
        for _ in 0..<count {
            elements.append(try parseItem(depth: depth + 1))
        }
        return .array(elements)
    }

    private mutating func parseMap(_ head: Head, depth: Int) throws(CBORError) -> CBORMap {
        var entries: [CBORMap.Entry] = []
        var seen = Set<CBOR>()
        var previousKey: Range<Int>? = nil
        var count = Int.max
        if head.indefinite {
            try checkIndefiniteAllowed(head)
        } else {
            // Each entry needs at least two bytes.
            guard head.argument <= UInt64(remaining / 2) else {
                throw .lengthTooLarge(offset: head.offset, length: head.argument)
            }
            count = Int(head.argument)
            entries.reserveCapacity(min(count, 1024))
        }
        var index = 0
        while index < count {
            if head.indefinite, try consumeBreak() { break }
            let keyStart = position
            let key = try parseItem(depth: depth + 1)
            let keyRange = keyStart..<position
            if options.requireSortedMapKeys {
                if let previous = previousKey,
                   !bytes[previous].lexicographicallyPrecedes(bytes[keyRange]) {
                    throw .unsortedMapKeys(offset: keyStart)
                }
                previousKey = keyRange
            }
            if options.rejectDuplicateMapKeys {
                // Linear for small maps, hashed beyond, so hostile maps stay O(n).
                if entries.count < 16 {
                    if entries.contains(where: { $0.key == key }) { throw .duplicateMapKey(offset: keyStart) }
                    if entries.count == 15 { seen = Set(entries.map(\.key)); seen.insert(key) }
                } else if !seen.insert(key).inserted {
                    throw .duplicateMapKey(offset: keyStart)
                }
            }
            let value = try parseItem(depth: depth + 1)
            entries.append(CBORMap.Entry(key: key, value: value))
            index += 1
        }
        return CBORMap(entries)
    }

    private func parseSimpleOrFloat(_ head: Head) throws(CBORError) -> CBOR {
        switch head.info {
        case 0..<20: return .simple(head.info)
        case 20: return .boolean(false)
        case 21: return .boolean(true)
        case 22: return .null
        case 23: return .undefined
        case 24:
            // RFC 8949 §3.3: values below 32 must use the one-byte form.
            guard head.argument >= 32 || (options.allowReservedSimpleValues && head.argument >= 24) else {
                throw .invalidSimpleValue(offset: head.offset)
            }
            return .simple(UInt8(truncatingIfNeeded: head.argument))
        case 25:
            return .half(UInt16(truncatingIfNeeded: head.argument))
        case 26:
            let value = Float(bitPattern: UInt32(truncatingIfNeeded: head.argument))
            if options.requirePreferredSerialization, FloatBits.exactHalfBits(value) != nil {
                throw .nonPreferredEncoding(offset: head.offset)
            }
            return .float(value)
        case 27:
            let value = Double(bitPattern: head.argument)
            if options.requirePreferredSerialization, FloatBits.exactFloat(value) != nil {
                throw .nonPreferredEncoding(offset: head.offset)
            }
            return .double(value)
        default:
            throw .unexpectedBreak(offset: head.offset)
        }
    }
}
