/// The entries of a CBOR map (major type 5), in the order they were decoded or added.
///
/// Order matters: it is part of equality, and the encoder writes entries in this order
/// unless deterministic encoding is requested. Lookup by key is a linear scan, which
/// suits the small maps of COSE and mdoc structures; the first matching entry wins.
public struct CBORMap: Sendable, Hashable, Sequence, ExpressibleByDictionaryLiteral {
    /// One key/value pair of a map.
    public struct Entry: Sendable, Hashable {
        /// The entry's key.
        public var key: CBOR
        /// The entry's value.
        public var value: CBOR

        /// Creates an entry.
        public init(key: CBOR, value: CBOR) {
            self.key = key
            self.value = value
        }
    }

    /// The entries in order.
    public private(set) var entries: [Entry]

    /// Creates an empty map.
    public init() {
        entries = []
    }

    /// Creates a map from entries, keeping their order (duplicates are kept too).
    public init(_ entries: [Entry]) {
        self.entries = entries
    }

    /// Creates a map from key/value pairs, keeping their order (duplicates are kept too).
    public init(_ pairs: [(CBOR, CBOR)]) {
        entries = pairs.map { Entry(key: $0.0, value: $0.1) }
    }

    /// Creates a map from a dictionary literal, keeping the literal's order.
    public init(dictionaryLiteral elements: (CBOR, CBOR)...) {
        self.init(elements)
    }

    /// The number of entries.
    public var count: Int { entries.count }

    /// True when the map has no entries.
    public var isEmpty: Bool { entries.isEmpty }

    /// The keys in order.
    public var keys: [CBOR] { entries.map(\.key) }

    /// The values in order.
    public var values: [CBOR] { entries.map(\.value) }

    /// The value of the first entry whose key equals `key`. Setting replaces that
    /// entry's value in place, appends a new entry, or (with nil) removes every entry
    /// with that key.
    public subscript(key: CBOR) -> CBOR? {
        get {
            for entry in entries where entry.key == key { return entry.value }
            return nil
        }
        set {
            if let newValue {
                if let index = entries.firstIndex(where: { $0.key == key }) {
                    entries[index].value = newValue
                } else {
                    entries.append(Entry(key: key, value: newValue))
                }
            } else {
                entries.removeAll { $0.key == key }
            }
        }
    }

    /// Appends an entry without looking for an existing key.
    public mutating func append(key: CBOR, value: CBOR) {
        entries.append(Entry(key: key, value: value))
    }

    /// Iterates over the entries in order.
    public func makeIterator() -> IndexingIterator<[Entry]> {
        entries.makeIterator()
    }
}
