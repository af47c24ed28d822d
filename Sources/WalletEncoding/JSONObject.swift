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

    private var names: [String] = []
    private var storage: [String: JSONValue] = [:]

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
        for name in dictionary.keys.sorted(by: JSONObject.canonicalOrder) {
            names.append(name)
        }
        storage = dictionary
    }

    /// An object literal; members keep the order written.
    public init(dictionaryLiteral elements: (String, JSONValue)...) {
        self.init(elements)
    }

    /// The value of member `name`; setting a new name appends it, setting an existing
    /// one replaces its value in place, setting `nil` removes it.
    public subscript(name: String) -> JSONValue? {
        get { storage[name] }
        set {
            if let newValue {
                if storage.updateValue(newValue, forKey: name) == nil { names.append(name) }
            } else if storage.removeValue(forKey: name) != nil {
                names.removeAll { $0 == name }
            }
        }
    }

    /// Adds member `name` when it is not present yet; returns false (and changes
    /// nothing) for a duplicate.
    @discardableResult
    public mutating func insertNew(_ name: String, _ value: JSONValue) -> Bool {
        guard storage[name] == nil else { return false }
        storage[name] = value
        names.append(name)
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
    public var keys: [String] { names }
    /// The member values in order.
    public var values: [JSONValue] { names.compactMap { storage[$0] } }
    /// The number of members.
    public var count: Int { names.count }
    /// Whether the object has no members.
    public var isEmpty: Bool { names.isEmpty }
    /// The members as a dictionary (order dropped).
    public var dictionary: [String: JSONValue] { storage }

    /// Iterates the members in order.
    public func makeIterator() -> AnyIterator<Element> {
        var position = 0
        return AnyIterator {
            while position < names.count {
                let name = names[position]
                position += 1
                if let value = storage[name] { return (key: name, value: value) }
            }
            return nil
        }
    }

    /// The members whose (name, value) satisfy `isIncluded`, in order.
    public func filter(_ isIncluded: (Element) throws -> Bool) rethrows -> JSONObject {
        var result = JSONObject()
        for member in self where try isIncluded(member) { result[member.key] = member.value }
        return result
    }

    /// The same names with transformed values, in order.
    public func mapValues(_ transform: (JSONValue) throws -> JSONValue) rethrows -> JSONObject {
        var result = JSONObject()
        for member in self { result[member.key] = try transform(member.value) }
        return result
    }

    /// Objects with the same members are equal, whatever their order.
    public static func == (lhs: JSONObject, rhs: JSONObject) -> Bool { lhs.storage == rhs.storage }

    /// Hashes the members independently of order.
    public func hash(into hasher: inout Hasher) { hasher.combine(storage) }

    /// RFC 7638 §3.3 / RFC 8785 §3.2.3 order: by UTF-16 code units.
    static func canonicalOrder(_ lhs: String, _ rhs: String) -> Bool {
        lhs.utf16.lexicographicallyPrecedes(rhs.utf16)
    }
}
