/// The members of a JSON object, in the order they were received or added.
///
/// Names are unique. Reading a member is a dictionary lookup; iteration and
/// serialization follow member order, so a request the SDK builds is written the way
/// it was built, and a document it received can be re-emitted in its own order.
/// Equality and hashing ignore order (RFC 8259 §4: an object is an unordered
/// collection of members).
public struct JSONObject: Sendable, Hashable, Sequence, ExpressibleByDictionaryLiteral {
    /// One member: its name and value.
    public typealias Element = (key: String, value: JSONValue)

    /// The members in order.
    private var members: [Element] = []
    /// Position of each name in `members`, kept only past `indexThreshold` members: most
    /// objects (JOSE headers, disclosures, claims) are small, and comparing a few short
    /// names costs less than hashing each one into a dictionary (issue 16).
    private var positions: [String: Int]?

    /// Objects with more members than this keep `positions`; smaller ones are searched in order.
    static let indexThreshold = 12

    /// An empty object.
    public init() {}

    /// An object with `members` in the given order; a repeated name keeps its last value
    /// at the position of its first occurrence.
    public init(_ members: some Sequence<(String, JSONValue)>) {
        for (name, value) in members { self[name] = value }
    }

    /// An object from a dictionary, members sorted by name (UTF-16 code units, the order
    /// RFC 7638 and RFC 8785 use) so that the result does not depend on hashing.
    public init(_ dictionary: [String: JSONValue]) {
        members = dictionary.sorted { JSONObject.canonicalOrder($0.key, $1.key) }.map { (key: $0.key, value: $0.value) }
        if members.count > Self.indexThreshold { rebuildPositions() }
    }

    /// An object literal; members keep the order written.
    public init(dictionaryLiteral elements: (String, JSONValue)...) {
        self.init(elements)
    }

    /// Where member `name` is in `members`.
    private func position(of name: String) -> Int? {
        if let positions { return positions[name] }
        return members.firstIndex { $0.key == name }
    }

    private mutating func rebuildPositions() {
        var table = [String: Int](minimumCapacity: members.count)
        for (offset, member) in members.enumerated() { table[member.key] = offset }
        positions = table
    }

    private mutating func append(_ name: String, _ value: JSONValue) {
        members.append((key: name, value: value))
        if positions != nil {
            positions?[name] = members.count - 1
        } else if members.count > Self.indexThreshold {
            rebuildPositions()
        }
    }

    /// The value of member `name`; setting a new name appends it, setting an existing
    /// one replaces its value in place, setting `nil` removes it.
    public subscript(name: String) -> JSONValue? {
        get { position(of: name).map { members[$0].value } }
        set {
            let existing = position(of: name)
            switch (existing, newValue) {
            case (let offset?, let value?): members[offset].value = value
            case (nil, let value?): append(name, value)
            case (let offset?, nil):
                members.remove(at: offset)
                if members.count > Self.indexThreshold { rebuildPositions() } else { positions = nil }
            case (nil, nil): break
            }
        }
    }

    /// Adds member `name` when it is not present yet; returns false (and changes
    /// nothing) for a duplicate.
    @discardableResult
    public mutating func insertNew(_ name: String, _ value: JSONValue) -> Bool {
        guard position(of: name) == nil else { return false }
        append(name, value)
        return true
    }

    /// Removes member `name`; returns its value, or nil when it was absent.
    @discardableResult
    public mutating func removeValue(forKey name: String) -> JSONValue? {
        let removed = self[name]
        self[name] = nil
        return removed
    }

    /// The member names in order.
    public var keys: [String] { members.map(\.key) }
    /// The member values in order.
    public var values: [JSONValue] { members.map(\.value) }
    /// The number of members.
    public var count: Int { members.count }
    /// Whether the object has no members.
    public var isEmpty: Bool { members.isEmpty }
    /// The members as a dictionary (order dropped).
    public var dictionary: [String: JSONValue] { Dictionary(uniqueKeysWithValues: members.lazy.map { ($0.key, $0.value) }) }

    /// Iterates the members in order.
    public func makeIterator() -> IndexingIterator<[Element]> { members.makeIterator() }

    /// The members whose (name, value) satisfy `isIncluded`, in order.
    public func filter(_ isIncluded: (Element) throws -> Bool) rethrows -> JSONObject {
        var result = JSONObject()
        for member in members where try isIncluded(member) { result.append(member.key, member.value) }
        return result
    }

    /// The same names with transformed values, in order.
    public func mapValues(_ transform: (JSONValue) throws -> JSONValue) rethrows -> JSONObject {
        var result = self
        for offset in result.members.indices { result.members[offset].value = try transform(result.members[offset].value) }
        return result
    }

    /// Objects with the same members are equal, whatever their order.
    public static func == (lhs: JSONObject, rhs: JSONObject) -> Bool {
        guard lhs.members.count == rhs.members.count else { return false }
        for member in lhs.members {
            guard let other = rhs[member.key], other == member.value else { return false }
        }
        return true
    }

    /// Hashes the members independently of order: each member's hash is combined with an
    /// order-free sum, as a dictionary's hash is.
    public func hash(into hasher: inout Hasher) {
        var sum = 0
        for member in members {
            var memberHasher = Hasher()
            memberHasher.combine(member.key)
            memberHasher.combine(member.value)
            sum &+= memberHasher.finalize()
        }
        hasher.combine(members.count)
        hasher.combine(sum)
    }

    /// RFC 7638 §3.3 / RFC 8785 §3.2.3 order: by UTF-16 code units.
    static func canonicalOrder(_ lhs: String, _ rhs: String) -> Bool {
        lhs.utf16.lexicographicallyPrecedes(rhs.utf16)
    }
}
