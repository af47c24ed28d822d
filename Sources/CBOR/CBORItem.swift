/// A decoded data item that remembers the exact bytes it was decoded from, and those of
/// every item inside it.
///
/// Signatures and digests (COSE_Sign1, mdoc `IssuerSignedItemBytes`, MSO digests) are
/// computed over bytes as received, which a re-encoding need not reproduce. All items of
/// one decoding share a single copy of the input and a flat table of byte ranges, so
/// navigating costs no copies, and values are built only when ``value`` is asked for.
public struct CBORItem: Sendable {
    /// The input and the node table, two array references held inline: a value, not an
    /// object, so that an item costs no allocation beyond its node table (a class here
    /// was one more malloc and free for each of an mdoc's hundreds of embedded items).
    struct Storage: Sendable {
        let bytes: [UInt8]
        let nodes: [CBORNode]
        init(bytes: [UInt8], nodes: [CBORNode]) {
            self.bytes = bytes
            self.nodes = nodes
        }

        /// The value of node `index`, built from the node table and the bytes, which the
        /// parse validated (UTF-8, simple values, limits): building cannot fail.
        func value(at index: Int) -> CBOR {
            let node = nodes[index]
            switch node.major {
            case 0:
                return .unsigned(node.argument)
            case 1:
                return .negative(node.argument)
            case 2, 3:
                // A definite string is a view of the input; an indefinite one joins its chunks.
                var content = bytes[node.headEnd..<node.end]
                if node.indefinite {
                    var joined: [UInt8] = []
                    var chunk = index + 1
                    while chunk < node.subtreeEnd {
                        joined.append(contentsOf: bytes[nodes[chunk].headEnd..<nodes[chunk].end])
                        chunk = nodes[chunk].subtreeEnd
                    }
                    content = joined[...]
                }
                return node.major == 3 ? .textString(String(decoding: content, as: UTF8.self)) : .byteString(Array(content))
            case 4:
                var elements: [CBOR] = []
                elements.reserveCapacity(node.indefinite ? 0 : Int(node.argument))
                var child = index + 1
                while child < node.subtreeEnd {
                    elements.append(value(at: child))
                    child = nodes[child].subtreeEnd
                }
                return .array(elements)
            case 5:
                var entries: [CBORMap.Entry] = []
                entries.reserveCapacity(node.indefinite ? 0 : Int(node.argument))
                var child = index + 1
                while child < node.subtreeEnd {
                    let valueIndex = nodes[child].subtreeEnd
                    entries.append(CBORMap.Entry(key: value(at: child), value: value(at: valueIndex)))
                    child = nodes[valueIndex].subtreeEnd
                }
                return .map(CBORMap(entries))
            case 6:
                return .tagged(node.argument, value(at: index + 1))
            default:
                return CBORParser.simpleOrFloat(info: node.info, argument: node.argument)
            }
        }
    }

    let storage: Storage
    let index: Int

    private var node: CBORNode { storage.nodes[index] }

    /// Parses the nodes of one item: ``CBORNodeScanner`` for the common case, else
    /// ``CBORParser`` (which also gives every error).
    static func parse(_ bytes: [UInt8], start: Int, end: Int, options: CBORDecodingOptions) throws(CBORError) -> CBORItem {
        if let nodes = CBORNodeScanner.scan(bytes, start: start, end: end, options: options) {
            return CBORItem(storage: Storage(bytes: bytes, nodes: nodes), index: 0)
        }
        var work = CBORWork()
        return try parse(bytes, start: start, end: end, options: options, work: &work)
    }

    /// Parses the nodes of one item (no values are built until asked for), and adds what
    /// the parse cost to `work` (also when it fails).
    static func parse(_ bytes: [UInt8], start: Int, end: Int, options: CBORDecodingOptions,
                      work: inout CBORWork) throws(CBORError) -> CBORItem {
        var parser = CBORParser(bytes: bytes, start: start, end: end, options: options, recordNodes: true)
        defer { work.add(parsing: parser) }
        _ = try parser.parseItem(depth: 0)
        return CBORItem(storage: Storage(bytes: bytes, nodes: parser.nodes), index: 0)
    }

    /// The decoded value of this item. It is built from the bytes on each call, in time
    /// and memory linear in the item's size: keep the result rather than asking a large
    /// item again, and prefer ``majorType``, ``children`` and the subscripts for
    /// navigating.
    public var value: CBOR { storage.value(at: index) }

    /// The bytes this item was decoded from, exactly as received (a slice of the shared
    /// input buffer; indices are offsets into it).
    public var encodedBytes: ArraySlice<UInt8> { storage.bytes[node.start..<node.end] }

    /// Where this item lies in the input buffer.
    public var byteRange: Range<Int> { node.start..<node.end }

    /// The bytes of a definite-length byte or text string's content, as received; nil for
    /// other items and for indefinite-length strings (whose content is not contiguous).
    public var contentBytes: ArraySlice<UInt8>? {
        let node = self.node
        guard node.major == 2 || node.major == 3, !node.indefinite else { return nil }
        return storage.bytes[node.headEnd..<node.end]
    }

    /// The major type, 0...7 (RFC 8949 §3.1).
    public var majorType: UInt8 { node.major }

    /// True when the item was encoded with indefinite length.
    public var isIndefiniteLength: Bool { node.indefinite }

    /// The items directly inside this one, in order: array elements; map keys and values
    /// alternating; a tag's content; the chunks of an indefinite-length string.
    public var children: [CBORItem] {
        var result: [CBORItem] = []
        var child = index + 1
        let stop = node.subtreeEnd
        while child < stop {
            result.append(CBORItem(storage: storage, index: child))
            child = storage.nodes[child].subtreeEnd
        }
        return result
    }

    /// The number of elements of an array or entries of a map; 0 for other items.
    public var count: Int {
        let node = self.node
        guard node.major == 4 || node.major == 5 else { return 0 }
        if !node.indefinite { return Int(node.argument) }
        var children = 0
        var child = index + 1
        while child < node.subtreeEnd {
            children += 1
            child = storage.nodes[child].subtreeEnd
        }
        return node.major == 5 ? children / 2 : children
    }

    /// The entries of a map item, keys and values with their exact bytes; empty for
    /// other items.
    public var mapEntries: [(key: CBORItem, value: CBORItem)] {
        guard node.major == 5 else { return [] }
        let items = children
        return stride(from: 0, to: items.count - 1, by: 2).map { (items[$0], items[$0 + 1]) }
    }

    /// The element at `index` of an array item, or — for a map item — the value under
    /// the integer key `index`; nil when absent. Each call walks the children, so use
    /// ``children`` to visit every element of a large array.
    public subscript(index: Int) -> CBORItem? {
        switch node.major {
        case 4:
            guard index >= 0 else { return nil }
            let items = children
            return index < items.count ? items[index] : nil
        case 5:
            return self[CBOR(index)]
        default:
            return nil
        }
    }

    /// The value under `key` of a map item (first matching entry).
    public subscript(key: CBOR) -> CBORItem? {
        let node = self.node
        guard node.major == 5 else { return nil }
        var child = index + 1
        while child < node.subtreeEnd {
            let valueIndex = storage.nodes[child].subtreeEnd
            if CBORItem(storage: storage, index: child).hasValue(key) {
                return CBORItem(storage: storage, index: valueIndex)
            }
            child = storage.nodes[valueIndex].subtreeEnd
        }
        return nil
    }

    /// True when this item's value equals `key`; integer and definite-string items are
    /// compared without building their value.
    private func hasValue(_ key: CBOR) -> Bool {
        let node = self.node
        switch (node.major, key) {
        case (0, .unsigned(let n)), (1, .negative(let n)):
            return node.argument == n
        case (0, _), (1, _):
            return false
        case (3, .textString(let text)) where !node.indefinite:
            var text = text
            return text.withUTF8 { storage.bytes[node.headEnd..<node.end].elementsEqual($0) }
        case (2, .byteString(let bytes)) where !node.indefinite:
            return storage.bytes[node.headEnd..<node.end].elementsEqual(bytes)
        case (2, _), (3, _):
            return node.indefinite && value == key
        default:
            return value == key
        }
    }

    /// The value under the text key `key` of a map item.
    public subscript(key: String) -> CBORItem? {
        self[CBOR.textString(key)]
    }

    /// The tag number of a tagged item.
    public var tag: UInt64? {
        node.major == 6 ? node.argument : nil
    }

    /// The content of a tagged item, with its exact bytes.
    public var content: CBORItem? {
        guard node.major == 6 else { return nil }
        return CBORItem(storage: storage, index: index + 1)
    }

    /// Decodes the CBOR embedded in a tag-24 item (`#6.24(bstr .cbor X)`, RFC 8949
    /// §3.4.5.1) or in a plain byte string, keeping exact bytes. The embedded item shares
    /// this item's buffer; error offsets are offsets into that buffer.
    public func embeddedItem(options: CBORDecodingOptions = .default) throws(CBORError) -> CBORItem {
        // Node indices, not items: no reference to the storage is taken per call.
        let nodes = storage.nodes
        var target = index
        if nodes[index].major == 6 {
            guard nodes[index].argument == 24 else {
                throw .typeMismatch(expected: "tag 24 with a byte string", path: "")
            }
            target = index + 1   // a tag's content is the next node
        }
        let targetNode = nodes[target]
        guard targetNode.major == 2 else {
            throw .typeMismatch(expected: "tag 24 with a byte string", path: "")
        }
        if targetNode.indefinite {
            guard case .byteString(let joined) = storage.value(at: target) else {
                throw .typeMismatch(expected: "tag 24 with a byte string", path: "")
            }
            return try CBOR.decodeItem(joined, options: options)
        }
        let item = try CBORItem.parse(storage.bytes, start: targetNode.headEnd, end: targetNode.end, options: options)
        guard item.byteRange.upperBound == targetNode.end else {
            throw .trailingBytes(offset: item.byteRange.upperBound)
        }
        return item
    }
}

extension CBORItem: CustomStringConvertible {
    /// The item in diagnostic notation, showing indefinite lengths as received.
    public var description: String {
        diagnostic()
    }
}
