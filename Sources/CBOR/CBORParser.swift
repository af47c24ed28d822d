import WalletEncoding
/// One decoded item's place in the input, recorded when exact bytes are wanted.
struct CBORNode: Sendable, Equatable {
    /// Offset of the initial byte.
    var start: Int
    /// Offset just past the head (initial byte and argument).
    var headEnd: Int
    /// Offset just past the whole item (including a closing break).
    var end: Int
    /// Index just past this node's last descendant in preorder.
    var subtreeEnd: Int
    /// The head's argument: an integer's magnitude, a definite length or count, a tag
    /// number, a simple value or a float's bits.
    var argument: UInt64
    /// Major type 0...7.
    var major: UInt8
    /// The head's additional information (31: indefinite length).
    var info: UInt8

    /// True for indefinite-length strings, arrays and maps (a break is never a node).
    var indefinite: Bool { info == 31 }
}

/// The single recursive-descent reader behind every decoding entry point. It checks
/// well-formedness (RFC 8949 §5.3, Appendix F) and the limits in the options before it
/// reserves memory, and either builds the value or records a ``CBORNode`` per item.
///
/// Recording nodes (``CBORItem``'s mode) builds no values for strings and containers:
/// string content is validated, not copied, and ``CBORItem/value`` builds values from the
/// nodes when asked. A verifier that decodes hundreds of embedded items, or a printer that
/// expands nested tag-24 items, thus reads each input byte once and allocates one node
/// table per decoding. Map keys are compared in place when they are integers or definite
/// strings, and decoded with a digest otherwise.
struct CBORParser {
    private let bytes: [UInt8]
    private let end: Int
    private let options: CBORDecodingOptions
    private let maxDepth: Int
    private let recordNodes: Bool
    private var materialize: Bool
    private(set) var position: Int
    /// The head read last: after a key without nested items, the key's own head.
    private var lastHead = Head(offset: 0, major: 0, info: 0, argument: 0)
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

    /// A parser that builds values (`recordNodes: false`) or records nodes without values.
    init(bytes: [UInt8], start: Int, end: Int, options: CBORDecodingOptions, recordNodes: Bool) {
        self.bytes = bytes
        self.position = start
        self.end = end
        self.options = options
        self.maxDepth = options.effectiveMaxDepth
        self.recordNodes = recordNodes
        self.materialize = !recordNodes
        if recordNodes {
            // Most items are a few bytes each; grow from there rather than from empty.
            nodes.reserveCapacity(min(end - start, 16))
        }
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
        lastHead = head
        try countItem(at: head.offset)
        let nodeIndex = nodes.count
        if recordNodes {
            nodes.append(CBORNode(start: head.offset, headEnd: position, end: position,
                                  subtreeEnd: nodeIndex + 1, argument: head.argument,
                                  major: head.major, info: head.info))
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
            try skipString(isText: isText, start: start, end: position)
            if materialize {
                buffer.append(contentsOf: bytes[start..<position])
                bytesCopied += length
            }
            if recordNodes {
                nodes.append(CBORNode(start: chunk.offset, headEnd: start, end: position,
                                      subtreeEnd: nodes.count + 1, argument: chunk.argument,
                                      major: chunk.major, info: chunk.info))
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

    /// Up to this many keys, duplicates are found by comparing keys in order.
    private static let linearKeyLimit = 16

    /// A key that is an integer or a definite-length string, kept as a view of the input
    /// for the map's duplicate check; compared by ``PlainMapKey``'s rules.
    private struct PlainKey: Hashable {
        let major: UInt8
        let argument: UInt64
        /// The string content (a view of the input); empty for integers.
        let content: ArraySlice<UInt8>

        func hash(into hasher: inout Hasher) {
            hasher.combine(major)
            hasher.combine(argument)
            content.withUnsafeBytes { hasher.combine(bytes: $0) }
        }

        /// Runs `body` with this key as a ``PlainMapKey``.
        private func withView<T>(_ body: (PlainMapKey) -> T) -> T {
            content.withUnsafeBufferPointer { body(PlainMapKey(major: major, argument: argument, content: $0)) }
        }

        static func == (a: PlainKey, b: PlainKey) -> Bool {
            a.withView { x in b.withView { y in PlainMapKey.equal(x, y) } }
        }

        static func < (a: PlainKey, b: PlainKey) -> Bool {
            a.withView { x in b.withView { y in PlainMapKey.precedes(x, y) } }
        }
    }

    /// True when the byte at `offset` starts an integer or a definite-length string.
    private func startsPlainKey(at offset: Int) -> Bool {
        guard offset < end else { return false }
        let initial = bytes[offset]
        return initial >> 5 <= 3 && initial & 0x1F < 28
    }

    /// A plain key as the digest path sees it: its value and its structural digest.
    private func digested(_ key: PlainKey) -> DigestedKey {
        switch key.major {
        case 0: return DigestedKey(digest: Self.digest(0, key.argument), key: .unsigned(key.argument))
        case 1: return DigestedKey(digest: Self.digest(1, key.argument), key: .negative(key.argument))
        default:
            var content = StringDigest(major: key.major)
            content.add(key.content)
            let value: CBOR = key.major == 3
                ? .textString(String(decoding: key.content, as: UTF8.self))
                : .byteString(Array(key.content))
            return DigestedKey(digest: content.finalize(), key: value)
        }
    }

    private mutating func parseMap(_ head: Head, depth: Int) throws(CBORError) -> CBORMap {
        var entries: [CBORMap.Entry] = []
        // Keys that are integers or definite strings (every mdoc IssuerSignedItem, COSE
        // header and MSO) are compared in place: none while they arrive in increasing
        // order, then in a short array, past `linearKeyLimit` keys in a Set. At the first
        // other key every key goes to digests (a short array, then a Set). Either way
        // hostile maps stay O(n) however many or deep their keys.
        var plain: [PlainKey] = []
        var plainSet = Set<PlainKey>()
        var plainMode = true
        // True while every plain key so far was greater than the one before.
        var increasing = true
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
            let key: CBOR
            let keyDigest: Int
            if options.rejectDuplicateMapKeys, plainMode, keyDepth == 0, startsPlainKey(at: position) {
                key = try parseItem(depth: depth + 1)
                let keyHead = lastHead
                let length = keyHead.major >= 2 ? Int(keyHead.argument) : 0
                let plainKey = PlainKey(major: keyHead.major, argument: keyHead.argument,
                                        content: bytes[(position - length)..<position])
                if plain.isEmpty { plain.reserveCapacity(head.indefinite ? 4 : min(count, 1024)) }
                if increasing, let last = plain.last, !(last < plainKey) { increasing = false }
                if increasing {
                    // Greater than every key before it: new.
                } else if parsed < Self.linearKeyLimit {
                    guard !plain.contains(plainKey) else { throw .duplicateMapKey(offset: keyStart) }
                } else {
                    if plainSet.isEmpty {
                        plainSet.reserveCapacity(head.indefinite ? 2 * plain.count : min(count, 1024))
                        plainSet.formUnion(plain)
                        bytesStructure += 2 * plain.count * MemoryLayout<PlainKey>.stride
                    }
                    guard plainSet.insert(plainKey).inserted else { throw .duplicateMapKey(offset: keyStart) }
                    bytesStructure += 2 * MemoryLayout<PlainKey>.stride
                }
                plain.append(plainKey)
                bytesStructure += MemoryLayout<PlainKey>.stride
                keyDigest = 0
            } else {
                if plainMode {
                    // From here on keys are compared by digest: the plain ones join them.
                    plainMode = false
                    if parsed <= Self.linearKeyLimit {
                        recent = plain.map(digested)
                    } else {
                        seen = Set(plain.map(digested))
                    }
                    plain = []
                    plainSet = []
                }
                // Duplicate detection compares keys by value, so these keys are decoded in
                // every mode, with their digests.
                let materializeValues = materialize
                if options.rejectDuplicateMapKeys {
                    materialize = true
                    keyDepth += 1
                }
                key = try parseItem(depth: depth + 1)
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
                keyDigest = digest
                materialize = materializeValues
            }
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

    /// Checks a major-type-7 head (RFC 8949 §3.3) and returns its value.
    private func parseSimpleOrFloat(_ head: Head) throws(CBORError) -> CBOR {
        switch head.info {
        case 24:
            // RFC 8949 §3.3: values below 32 must use the one-byte form.
            guard head.argument >= 32 || (options.allowReservedSimpleValues && head.argument >= 24) else {
                throw .invalidSimpleValue(offset: head.offset)
            }
        case 26:
            if options.requirePreferredSerialization,
               FloatBits.exactHalfBits(Float(bitPattern: UInt32(truncatingIfNeeded: head.argument))) != nil {
                throw .nonPreferredEncoding(offset: head.offset)
            }
        case 27:
            if options.requirePreferredSerialization, FloatBits.exactFloat(Double(bitPattern: head.argument)) != nil {
                throw .nonPreferredEncoding(offset: head.offset)
            }
        case 31:
            throw .unexpectedBreak(offset: head.offset)
        default:
            break
        }
        return Self.simpleOrFloat(info: head.info, argument: head.argument)
    }

    /// The value of a major-type-7 head that ``parseSimpleOrFloat(_:)`` accepted.
    static func simpleOrFloat(info: UInt8, argument: UInt64) -> CBOR {
        switch info {
        case 0..<20: return .simple(info)
        case 20: return .boolean(false)
        case 21: return .boolean(true)
        case 22: return .null
        case 23: return .undefined
        case 24: return .simple(UInt8(truncatingIfNeeded: argument))
        case 25: return .half(UInt16(truncatingIfNeeded: argument))
        case 26: return .float(Float(bitPattern: UInt32(truncatingIfNeeded: argument)))
        default: return .double(Double(bitPattern: argument))
        }
    }
}
