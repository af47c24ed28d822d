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
///
/// Without `materializeValues` (the diagnostic printer's mode) it records the nodes but
/// builds no values for strings and containers: byte string content is skipped, not
/// copied, so a printer that expands nested tag-24 items reads each input byte once
/// instead of copying the rest of the input at every level. Map keys are still decoded
/// when duplicate keys are rejected.
struct CBORParser {
    private let bytes: [UInt8]
    private let end: Int
    private let options: CBORDecodingOptions
    private let maxDepth: Int
    private let recordNodes: Bool
    private var materialize: Bool
    private(set) var position: Int
    private var itemCount = 0
    private(set) var nodes: [CBORNode] = []
    /// Input bytes examined: heads, and string content copied or validated.
    private(set) var bytesRead = 0
    /// Bytes copied out of the input into decoded strings.
    private(set) var bytesCopied = 0
    /// Bytes of storage made for decoded containers: array elements, map entries, and the
    /// set that finds duplicate keys (an estimate from the element sizes, for work limits).
    private(set) var bytesStructure = 0
    /// Above 0 while a map key is parsed (with duplicate keys rejected): then every item
    /// leaves its structural digest in `digest`, computed bottom-up from its children's,
    /// so that comparing keys costs O(1) however deeply keys nest inside keys.
    private var keyDepth = 0
    /// The digest of the item parsed last (meaningful while `keyDepth > 0`): equal values
    /// have equal digests, as `CBOR`'s `==` and `hash(into:)` define equality.
    private var digest = 0
    /// String bytes fed to key digests (each at most once, however deep keys nest).
    private(set) var bytesHashed = 0

    init(bytes: [UInt8], start: Int, end: Int, options: CBORDecodingOptions, recordNodes: Bool,
         materializeValues: Bool = true) {
        self.bytes = bytes
        self.position = start
        self.end = end
        self.options = options
        self.maxDepth = options.effectiveMaxDepth
        self.recordNodes = recordNodes
        self.materialize = materializeValues
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
        bytesRead += position - offset
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
            if keyDepth > 0 { digest = Self.digest(head.major, head.argument) }
        case 1:
            guard !head.indefinite else { throw .invalidIndefiniteLength(offset: head.offset) }
            value = .negative(head.argument)
            if keyDepth > 0 { digest = Self.digest(head.major, head.argument) }
        case 2, 3:
            value = try parseString(head, depth: depth)
        case 4:
            value = try parseArray(head, depth: depth)
        case 5:
            let map = try parseMap(head, depth: depth)
            value = materialize ? .map(map) : .null
        case 6:
            guard !head.indefinite else { throw .invalidIndefiniteLength(offset: head.offset) }
            let content = try parseItem(depth: depth + 1)
            // Without values a tag keeps its number (the printer shows it), not its content.
            value = .tagged(head.argument, materialize ? content : .null)
            if keyDepth > 0 { digest = Self.digest(head.major, head.argument, digest) }
        default:
            value = try parseSimpleOrFloat(head)
            // Each simple value and float width has one encoding: (info, argument) identifies it.
            if keyDepth > 0 { digest = Self.digest(head.major, UInt64(head.info), Int(truncatingIfNeeded: head.argument)) }
        }
        if recordNodes {
            nodes[nodeIndex].end = position
            nodes[nodeIndex].subtreeEnd = nodes.count
            nodes[nodeIndex].value = value
        }
        return value
    }

    private static func digest(_ major: UInt8, _ argument: UInt64, _ content: Int = 0) -> Int {
        var hasher = Hasher()
        hasher.combine(major)
        hasher.combine(argument)
        hasher.combine(content)
        return hasher.finalize()
    }

    /// A digest of string content: the major type, the bytes in order, then the length, so
    /// that chunked and one-piece strings with the same content agree.
    private struct StringDigest {
        var hasher = Hasher()
        var length = 0
        init(major: UInt8) { hasher.combine(major) }
        mutating func add(_ bytes: ArraySlice<UInt8>) {
            bytes.withUnsafeBytes { hasher.combine(bytes: $0) }
            length += bytes.count
        }
        func finalize() -> Int {
            var hasher = hasher
            hasher.combine(length)
            return hasher.finalize()
        }
    }

    private mutating func parseString(_ head: Head, depth: Int) throws(CBORError) -> CBOR {
        let isText = head.major == 3
        if !head.indefinite {
            let length = try stringLength(head)
            let start = position
            position += length
            if keyDepth > 0 {
                var content = StringDigest(major: head.major)
                content.add(bytes[start..<position])
                bytesHashed += length
                digest = content.finalize()
            }
            guard materialize else {
                try skipString(isText: isText, start: start, end: position)
                return .null
            }
            return try makeString(isText: isText, start: start, end: position)
        }
        // RFC 8949 §3.2.3: a sequence of definite-length chunks of the same major type.
        try checkIndefiniteAllowed(head)
        guard depth + 1 <= maxDepth else { throw .depthLimitExceeded(offset: position) }
        var buffer: [UInt8] = []
        var total = 0
        var content = StringDigest(major: head.major)
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
            if keyDepth > 0 {
                content.add(bytes[start..<position])
                bytesHashed += length
            }
            // Each chunk of a text string must itself be valid UTF-8.
            let chunkValue: CBOR
            if materialize {
                chunkValue = try makeString(isText: isText, start: start, end: position)
                buffer.append(contentsOf: bytes[start..<position])
                bytesCopied += length
            } else {
                try skipString(isText: isText, start: start, end: position)
                chunkValue = .null
            }
            if recordNodes {
                nodes.append(CBORNode(start: chunk.offset, headEnd: start, end: position,
                                      subtreeEnd: nodes.count + 1, major: chunk.major,
                                      indefinite: false, value: chunkValue))
            }
        }
        if keyDepth > 0 { digest = content.finalize() }
        guard materialize else { return .null }
        return isText ? .textString(String(decoding: buffer, as: UTF8.self)) : .byteString(buffer)
    }

    /// Checks a string's content without copying it: text must be valid UTF-8.
    private mutating func skipString(isText: Bool, start: Int, end: Int) throws(CBORError) {
        guard isText else { return }
        bytesRead += end - start
        if let bad = UTF8Validation.firstInvalidOffset(in: bytes, from: start, to: end) {
            throw .invalidUTF8(offset: bad)
        }
    }

    private mutating func makeString(isText: Bool, start: Int, end: Int) throws(CBORError) -> CBOR {
        bytesRead += end - start
        bytesCopied += end - start
        if isText {
            if let bad = UTF8Validation.firstInvalidOffset(in: bytes, from: start, to: end) {
                throw .invalidUTF8(offset: bad)
            }
            return .textString(String(decoding: bytes[start..<end], as: UTF8.self))
        }
        return .byteString(Array(bytes[start..<end]))
    }

    /// The digest of a container from its children's digests, in order.
    private struct ContainerDigest {
        var hasher = Hasher()
        var count = 0
        mutating func add(_ child: Int) {
            hasher.combine(child)
            count += 1
        }
        func finalize(major: UInt8) -> Int {
            var hasher = hasher
            hasher.combine(count)
            return CBORParser.digest(major, 0, hasher.finalize())
        }
    }

    private mutating func parseArray(_ head: Head, depth: Int) throws(CBORError) -> CBOR {
        var elements: [CBOR] = []
        var content = ContainerDigest()
        defer { if keyDepth > 0 { digest = content.finalize(major: head.major) } }
        if head.indefinite {
            try checkIndefiniteAllowed(head)
            while try !consumeBreak() {
                let element = try parseItem(depth: depth + 1)
                if keyDepth > 0 { content.add(digest) }
                if materialize {
                    elements.append(element)
                    bytesStructure += MemoryLayout<CBOR>.stride
                }
            }
            return materialize ? .array(elements) : .null
        }
        // Each element needs at least one byte: refuse counts the input cannot hold.
        guard head.argument <= UInt64(remaining) else {
            throw .lengthTooLarge(offset: head.offset, length: head.argument)
        }
        let declared = Int(head.argument)
        if materialize { elements.reserveCapacity(min(declared, 1024)) }
        for _ in 0..<declared {
            let element = try parseItem(depth: depth + 1)
            if keyDepth > 0 { content.add(digest) }
            if materialize {
                elements.append(element)
                bytesStructure += MemoryLayout<CBOR>.stride
            }
        }
        return materialize ? .array(elements) : .null
    }

    /// A map key with its structural digest: hashing costs O(1), and full equality runs
    /// only for keys whose digests agree (a real duplicate, or a 2^-64 accident).
    private struct DigestedKey: Hashable {
        let digest: Int
        let key: CBOR
        func hash(into hasher: inout Hasher) { hasher.combine(digest) }
        static func == (lhs: DigestedKey, rhs: DigestedKey) -> Bool { lhs.digest == rhs.digest && lhs.key == rhs.key }
    }

    /// Up to this many keys, duplicates are found by comparing digests in order.
    private static let linearKeyLimit = 16

    private mutating func parseMap(_ head: Head, depth: Int) throws(CBORError) -> CBORMap {
        var entries: [CBORMap.Entry] = []
        // Small maps (every mdoc IssuerSignedItem, most COSE headers) compare digests in a
        // short array; a Set is built only past `linearKeyLimit` keys, so hostile maps stay O(n).
        var recent: [DigestedKey] = []
        var seen = Set<DigestedKey>()
        var previousKey: Range<Int>? = nil
        var count = Int.max
        var parsed = 0
        var content = ContainerDigest()
        defer { if keyDepth > 0 { digest = content.finalize(major: head.major) } }
        if head.indefinite {
            try checkIndefiniteAllowed(head)
        } else {
            // Each entry needs at least two bytes.
            guard head.argument <= UInt64(remaining / 2) else {
                throw .lengthTooLarge(offset: head.offset, length: head.argument)
            }
            count = Int(head.argument)
            if materialize { entries.reserveCapacity(min(count, 1024)) }
        }
        while parsed < count {
            if head.indefinite, try consumeBreak() { break }
            let keyStart = position
            // Duplicate detection compares keys by value, so keys are decoded in every mode,
            // with their digests.
            let materializeValues = materialize
            if options.rejectDuplicateMapKeys {
                materialize = true
                keyDepth += 1
            }
            let key = try parseItem(depth: depth + 1)
            if options.rejectDuplicateMapKeys {
                keyDepth -= 1
                // Hashed, so hostile maps stay O(n) however many or deep their keys.
                let digested = DigestedKey(digest: digest, key: key)
                if parsed < Self.linearKeyLimit {
                    guard !recent.contains(digested) else { throw .duplicateMapKey(offset: keyStart) }
                    recent.append(digested)
                } else {
                    if parsed == Self.linearKeyLimit { seen = Set(recent); recent = [] }
                    guard seen.insert(digested).inserted else { throw .duplicateMapKey(offset: keyStart) }
                }
                // A hash table keeps some slack: count each key's slot twice.
                bytesStructure += 2 * MemoryLayout<DigestedKey>.stride
            }
            let keyDigest = digest
            materialize = materializeValues
            let keyRange = keyStart..<position
            if options.requireSortedMapKeys {
                if let previous = previousKey,
                   !bytes[previous].lexicographicallyPrecedes(bytes[keyRange]) {
                    throw .unsortedMapKeys(offset: keyStart)
                }
                previousKey = keyRange
            }
            let value = try parseItem(depth: depth + 1)
            if keyDepth > 0 {
                content.add(keyDigest)
                content.add(digest)
            }
            if materialize {
                entries.append(CBORMap.Entry(key: key, value: value))
                bytesStructure += MemoryLayout<CBORMap.Entry>.stride
            }
            parsed += 1
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
