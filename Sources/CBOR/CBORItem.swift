/// A decoded data item that remembers the exact bytes it was decoded from, and those of
/// every item inside it.
///
/// Signatures and digests (COSE_Sign1, mdoc `IssuerSignedItemBytes`, MSO digests) are
/// computed over bytes as received, which a re-encoding need not reproduce. All items of
/// one decoding share a single copy of the input and a flat table of byte ranges, so
/// navigating costs no copies.
public struct CBORItem: Sendable {
    final class Storage: Sendable {
        let bytes: [UInt8]
        let nodes: [CBORNode]
        init(bytes: [UInt8], nodes: [CBORNode]) {
            self.bytes = bytes
            self.nodes = nodes
        }
    }

    let storage: Storage
    let index: Int

    private var node: CBORNode { storage.nodes[index] }

    static func parse(_ bytes: [UInt8], start: Int, end: Int, options: CBORDecodingOptions) throws(CBORError) -> CBORItem {
        var work = CBORWork()
        return try parse(bytes, start: start, end: end, options: options, work: &work)
    }

    /// Parses one item with its values, and adds what the parse cost to `work` (also
    /// when it fails).
    static func parse(_ bytes: [UInt8], start: Int, end: Int, options: CBORDecodingOptions,
                      work: inout CBORWork) throws(CBORError) -> CBORItem {
        var parser = CBORParser(bytes: bytes, start: start, end: end, options: options, recordNodes: true)
        defer { work.add(parsing: parser) }
        _ = try parser.parseItem(depth: 0)
        return CBORItem(storage: Storage(bytes: bytes, nodes: parser.nodes), index: 0)
    }

    /// Parses the nodes of one item without building the values of its strings and
    /// containers (for the diagnostic printer, which reads those from the bytes), and
    /// adds what the parse cost to `work`.
    static func parseNodes(_ bytes: [UInt8], start: Int, end: Int, options: CBORDecodingOptions,
                           work: inout CBORWork) throws(CBORError) -> CBORItem {
        var parser = CBORParser(bytes: bytes, start: start, end: end, options: options, recordNodes: true,
                                materializeValues: false)
        defer { work.add(parsing: parser) }
        _ = try parser.parseItem(depth: 0)
        return CBORItem(storage: Storage(bytes: bytes, nodes: parser.nodes), index: 0)
    }

    /// The decoded value of this item.
    public var value: CBOR { node.value }

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
        switch node.value {
        case .array(let elements): return elements.count
        case .map(let map): return map.count
        default: return 0
        }
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
        mapEntries.first { $0.key.value == key }?.value
    }

    /// The value under the text key `key` of a map item.
    public subscript(key: String) -> CBORItem? {
        self[CBOR.textString(key)]
    }

    /// The tag number of a tagged item.
    public var tag: UInt64? {
        value.tag
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
        var target = self
        if node.major == 6 {
            guard tag == 24, let content else {
                throw .typeMismatch(expected: "tag 24 with a byte string", path: "")
            }
            target = content
        }
        let targetNode = target.node
        guard targetNode.major == 2 else {
            throw .typeMismatch(expected: "tag 24 with a byte string", path: "")
        }
        if targetNode.indefinite {
            guard case .byteString(let joined) = targetNode.value else {
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
