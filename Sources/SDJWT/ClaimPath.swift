import JOSE
import WalletEncoding

/// One component of a claims path pointer (OpenID4VP 1.0 §7.1): an object key, an
/// array index, or `null` for every element of an array.
public enum ClaimPathElement: Sendable, Hashable, ExpressibleByStringLiteral, ExpressibleByIntegerLiteral,
    ExpressibleByNilLiteral, CustomStringConvertible {
    /// Selects the member of that name of an object.
    case key(String)
    /// Selects the element at that (zero-based) index of an array.
    case index(Int)
    /// Selects every element of an array (`null` in DCQL).
    case allElements

    /// A key.
    public init(stringLiteral value: String) { self = .key(value) }
    /// An index.
    public init(integerLiteral value: Int) { self = .index(value) }
    /// Every element.
    public init(nilLiteral: ()) { self = .allElements }

    /// The DCQL JSON form: a string, an integer or `null`.
    public var jsonValue: JSONValue {
        switch self {
        case .key(let key): .string(key)
        case .index(let index): .integer(Int64(index))
        case .allElements: .null
        }
    }

    /// The DCQL JSON form as text.
    public var description: String { jsonValue.serialized }
}

/// A claims path pointer (OpenID4VP 1.0 §7.1): a non-empty list of components selecting
/// claims in a credential, such as `["address", "street_address"]` or `["nationalities", null]`.
public struct ClaimPath: Sendable, Hashable, ExpressibleByArrayLiteral, CustomStringConvertible {
    /// The components, outermost first.
    public let elements: [ClaimPathElement]

    /// A path of the given components.
    public init(_ elements: [ClaimPathElement]) { self.elements = elements }

    /// A path of the given components.
    public init(arrayLiteral elements: ClaimPathElement...) { self.elements = elements }

    /// Reads the DCQL JSON form: a non-empty array of strings, non-negative integers and `null`.
    public init(json: JSONValue) throws(SDJWTError) {
        guard case .array(let components) = json, !components.isEmpty else {
            throw .invalidClaimPath(.empty)
        }
        var elements: [ClaimPathElement] = []
        for component in components {
            switch component {
            case .string(let key): elements.append(.key(key))
            case .null: elements.append(.allElements)
            case .integer(let index):
                guard index >= 0, index <= Int64(Int32.max) else { throw .invalidClaimPath(.indexOutOfRange(index)) }
                elements.append(.index(Int(index)))
            default: throw .invalidClaimPath(.invalidComponent)
            }
        }
        self.elements = elements
    }

    /// The DCQL JSON form.
    public var jsonValue: JSONValue { .array(elements.map(\.jsonValue)) }

    /// The DCQL JSON form as text.
    public var description: String { jsonValue.serialized }

    /// The concrete locations (keys and indices only) this path selects in `claims`,
    /// following OpenID4VP 1.0 §7.3: a key on a non-object or an index or `null` on a
    /// non-array is an error; a missing key or index drops that branch. Throws
    /// `claimPathNotFound` when nothing is left.
    public func locations(in claims: JSONObject) throws(SDJWTError) -> [[ClaimPathElement]] {
        guard !elements.isEmpty else { throw .invalidClaimPath(.empty) }
        var selection: [([ClaimPathElement], JSONValue)] = [([], .object(claims))]
        for component in elements {
            var next: [([ClaimPathElement], JSONValue)] = []
            for (location, value) in selection {
                switch component {
                case .key(let key):
                    guard case .object(let members) = value else { throw .claimPathNotFound(self) }
                    if let member = members[key] { next.append((location + [.key(key)], member)) }
                case .index(let index):
                    guard case .array(let items) = value else { throw .claimPathNotFound(self) }
                    if index >= 0, index < items.count { next.append((location + [.index(index)], items[index])) }
                case .allElements:
                    guard case .array(let items) = value else { throw .claimPathNotFound(self) }
                    for (index, item) in items.enumerated() { next.append((location + [.index(index)], item)) }
                }
            }
            selection = next
        }
        guard !selection.isEmpty else { throw .claimPathNotFound(self) }
        return selection.map(\.0)
    }
}
