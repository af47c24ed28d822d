import WalletEncoding

/// The fast path behind ``CBORItem``'s node table: one loop with an explicit stack over
/// the common case of exact-bytes decoding, definite lengths with integer or
/// definite-string map keys (every mdoc and COSE structure).
///
/// It records exactly the nodes ``CBORParser`` records and makes the same checks, but it
/// does not report errors: on anything outside its case (an indefinite length, another
/// kind of map key, a map past 16 keys not in increasing order, a strict option) and on
/// anything not well-formed it returns nil, and the caller runs ``CBORParser``, which
/// then decides, with its error and offset. Each input is thus read at most twice, and
/// both paths accept and refuse the same inputs by construction.
enum CBORNodeScanner {
    /// A map being read: its node, the children still to come (keys and values), where
    /// its keys start in the key list, and whether they have increased so far.
    private struct Frame {
        var node: Int
        var remaining: Int
        var isMap: Bool
        var keysBase: Int
        var increasing: Bool
    }

    /// A map key as received: an integer (empty content) or a definite string.
    private struct Key {
        var major: UInt8
        var argument: UInt64
        var content: Range<Int>
    }

    /// Up to this many keys out of order are compared one by one; past it, the general
    /// parser (with its set) takes over.
    private static let linearKeyLimit = 16

    /// The node table of the item starting at `start`, or nil when ``CBORParser`` must
    /// decide.
    static func scan(_ bytes: [UInt8], start: Int, end: Int, options: CBORDecodingOptions) -> [CBORNode]? {
        guard !options.requirePreferredSerialization, !options.requireSortedMapKeys,
              start >= 0, start <= end, end <= bytes.count else { return nil }
        return bytes.withUnsafeBufferPointer { scan($0, start: start, end: end, options: options) }
    }

    private static func scan(_ input: UnsafeBufferPointer<UInt8>, start: Int, end: Int,
                             options: CBORDecodingOptions) -> [CBORNode]? {
        let maxDepth = options.effectiveMaxDepth
        let maxItems = options.maxItems
        let maxString = options.maxStringLength ?? Int.max
        let checkKeys = options.rejectDuplicateMapKeys
        let reservedSimple: UInt64 = options.allowReservedSimpleValues ? 24 : 32
        // Reserved up front, so that small items (the usual embedded ones) never grow them.
        var nodes: [CBORNode] = []
        nodes.reserveCapacity(min(end - start, 32))
        // The innermost open container is `top`; the ones around it are on `outer`.
        var top = Frame(node: 0, remaining: 0, isMap: false, keysBase: 0, increasing: true)
        var hasTop = false
        var outer: [Frame] = []
        var keys: [Key] = []
        var position = start
        var items = 0

        while true {
            guard outer.count + (hasTop ? 1 : 0) <= maxDepth, position < end else { return nil }
            let offset = position
            let initial = input[position]
            position += 1
            let major = initial >> 5
            let info = initial & 0x1F
            var argument = UInt64(info)
            if info >= 24 {
                guard info <= 27 else { return nil }           // reserved, or indefinite/break
                let count = 1 << Int(info - 24)
                guard end - position >= count else { return nil }
                argument = 0
                for k in 0..<count { argument = argument << 8 | UInt64(input[position + k]) }
                position += count
            }
            items += 1
            guard items <= maxItems else { return nil }
            let headEnd = position
            let isKey = hasTop && top.isMap && top.remaining % 2 == 0
            var opens = false
            switch major {
            case 0, 1:
                break
            case 2, 3:
                guard argument <= UInt64(end - position), Int(argument) <= maxString else { return nil }
                let contentEnd = position + Int(argument)
                if major == 3, UTF8Validation.firstInvalidOffset(in: input, from: position, to: contentEnd) != nil {
                    return nil
                }
                position = contentEnd
            case 4:
                guard argument <= UInt64(end - position) else { return nil }
                opens = argument > 0
            case 5:
                guard argument <= UInt64((end - position) / 2) else { return nil }
                opens = argument > 0
            case 6:
                opens = true
            default:
                if info == 24, argument < reservedSimple { return nil }
            }
            let index = nodes.count
            nodes.append(CBORNode(start: offset, headEnd: headEnd, end: position, subtreeEnd: index + 1,
                                  argument: argument, major: major, info: info))
            if isKey, checkKeys {
                guard major <= 3 else { return nil }
                let length = major >= 2 ? Int(argument) : 0
                let key = Key(major: major, argument: argument, content: (position - length)..<position)
                if top.increasing, keys.count > top.keysBase,
                   !PlainMapKey.precedes(view(keys[keys.count - 1], input), view(key, input)) {
                    top.increasing = false
                }
                if !top.increasing {
                    guard keys.count - top.keysBase < linearKeyLimit else { return nil }
                    let fresh = view(key, input)
                    for other in keys[top.keysBase...] where PlainMapKey.equal(view(other, input), fresh) { return nil }
                }
                keys.append(key)
            }
            if opens {
                if hasTop {
                    if outer.capacity == 0 { outer.reserveCapacity(8) }
                    outer.append(top)
                }
                if major == 5, keys.capacity == 0 { keys.reserveCapacity(16) }
                switch major {
                case 4: top = Frame(node: index, remaining: Int(argument), isMap: false, keysBase: 0, increasing: true)
                case 5: top = Frame(node: index, remaining: 2 * Int(argument), isMap: true, keysBase: keys.count,
                                    increasing: true)
                default: top = Frame(node: index, remaining: 1, isMap: false, keysBase: 0, increasing: true)
                }
                hasTop = true
                continue
            }
            // The item is complete: so is every container it was the last child of.
            while true {
                guard hasTop else { return nodes }
                top.remaining -= 1
                guard top.remaining == 0 else { break }
                nodes[top.node].end = position
                nodes[top.node].subtreeEnd = nodes.count
                if top.isMap { keys.removeSubrange(top.keysBase...) }
                if let next = outer.popLast() { top = next } else { hasTop = false }
            }
        }
    }

    /// `key` as ``PlainMapKey`` compares it.
    private static func view(_ key: Key, _ input: UnsafeBufferPointer<UInt8>) -> PlainMapKey {
        PlainMapKey(major: key.major, argument: key.argument, content: UnsafeBufferPointer(rebasing: input[key.content]))
    }
}
