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
    /// A container being read: its node, the children still to come (keys and values),
    /// and for a map its last key's node, how many keys it has had and whether they have
    /// increased so far. The keys themselves are nodes already recorded: a map's keys
    /// are found from its node by walking its children, so no key list is kept.
    private struct Frame {
        var node: Int
        var remaining: Int
        var isMap: Bool
        var lastKey = -1
        var keyCount = 0
        var increasing = true
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
        // Reserved up front, so that small items (an IssuerSignedItem is about ten nodes)
        // never grow the table. Sixteen nodes stay within malloc's per-thread cache; 32
        // (1.5 KB) did not, and freeing them cost consolidation and page faults.
        var nodes: [CBORNode] = []
        nodes.reserveCapacity(min(end - start, 16))
        // The innermost open container is `top`; the ones around it are on `outer`.
        var top = Frame(node: 0, remaining: 0, isMap: false)
        var hasTop = false
        var outer: [Frame] = []
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
                let key = view(nodes[index], input)
                if top.increasing, top.lastKey >= 0, !PlainMapKey.precedes(view(nodes[top.lastKey], input), key) {
                    top.increasing = false
                }
                if !top.increasing {
                    guard top.keyCount < linearKeyLimit else { return nil }
                    // The earlier keys and their values are complete: each value follows
                    // its key, and the next key follows the value's subtree.
                    var other = top.node + 1
                    while other < index {
                        if PlainMapKey.equal(view(nodes[other], input), key) { return nil }
                        other = nodes[nodes[other].subtreeEnd].subtreeEnd
                    }
                }
                top.lastKey = index
                top.keyCount += 1
            }
            if opens {
                if hasTop {
                    if outer.capacity == 0 { outer.reserveCapacity(8) }
                    outer.append(top)
                }
                switch major {
                case 4: top = Frame(node: index, remaining: Int(argument), isMap: false)
                case 5: top = Frame(node: index, remaining: 2 * Int(argument), isMap: true)
                default: top = Frame(node: index, remaining: 1, isMap: false)
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
                if let next = outer.popLast() { top = next } else { hasTop = false }
            }
        }
    }

    /// A key's node (an integer or a definite string) as ``PlainMapKey`` compares it.
    private static func view(_ key: CBORNode, _ input: UnsafeBufferPointer<UInt8>) -> PlainMapKey {
        PlainMapKey(major: key.major, argument: key.argument,
                    content: UnsafeBufferPointer(rebasing: input[key.major >= 2 ? key.headEnd..<key.end : key.end..<key.end]))
    }
}
