/// Which parts of a claims object an issuer makes selectively disclosable, as a tree
/// that mirrors the claims: a node is hidden behind its own disclosure when
/// `isSelectivelyDisclosable`; `members` and `elements` plan the inside of an object or
/// an array (so a disclosable node with a plan inside is a recursive disclosure);
/// `decoyCount` and `elementDecoyCount` add decoy digests to an object's `_sd` or among
/// an array's elements (RFC 9901 §4.2.5).
public struct DisclosurePlan: Sendable, Equatable {
    /// Whether this claim or element gets its own disclosure.
    public var isSelectivelyDisclosable: Bool
    /// Plans for members of an object value, by name.
    public var members: [String: DisclosurePlan]
    /// Plans for elements of an array value, by index.
    public var elements: [Int: DisclosurePlan]
    /// A plan for every element of an array value not named in `elements`.
    public var everyElement: DisclosurePlan? {
        get { everyElementStorage.first }
        set { everyElementStorage = newValue.map { [$0] } ?? [] }
    }
    /// Boxed in an array, since a struct cannot hold an optional of itself.
    private var everyElementStorage: [DisclosurePlan] = []
    /// Decoy digests to add to this object's `_sd`.
    public var decoyCount: Int
    /// Decoy elements (`{"...": digest}`) to add at random places among this array's elements.
    public var elementDecoyCount: Int

    /// A plan node with every part given.
    public init(isSelectivelyDisclosable: Bool = false, members: [String: DisclosurePlan] = [:],
                elements: [Int: DisclosurePlan] = [:], everyElement: DisclosurePlan? = nil, decoyCount: Int = 0,
                elementDecoyCount: Int = 0) {
        self.isSelectivelyDisclosable = isSelectivelyDisclosable
        self.members = members
        self.elements = elements
        self.everyElementStorage = everyElement.map { [$0] } ?? []
        self.decoyCount = decoyCount
        self.elementDecoyCount = elementDecoyCount
    }

    /// A claim or element disclosed as a whole.
    public static let disclosable = DisclosurePlan(isSelectivelyDisclosable: true)

    /// An always-visible object whose members follow `members` (structured disclosure).
    public static func object(_ members: [String: DisclosurePlan], decoys: Int = 0) -> DisclosurePlan {
        DisclosurePlan(members: members, decoyCount: decoys)
    }

    /// An always-visible array whose elements follow `elements`.
    public static func array(_ elements: [Int: DisclosurePlan], every: DisclosurePlan? = nil, decoys: Int = 0) -> DisclosurePlan {
        DisclosurePlan(elements: elements, everyElement: every, elementDecoyCount: decoys)
    }

    /// This plan, with the node itself disclosable too (recursive disclosure).
    public var disclosable: DisclosurePlan {
        var copy = self
        copy.isSelectivelyDisclosable = true
        return copy
    }

    /// A plan making each location in `paths` disclosable; a path under another listed
    /// path gives a recursive disclosure; `null` applies to every element. Every object on
    /// the way gets `decoysPerObject` decoy digests (arrays get none).
    public init(selectivelyDisclosable paths: [ClaimPath], decoysPerObject: Int = 0) throws(SDJWTError) {
        self.init(decoyCount: decoysPerObject)
        for path in paths {
            guard !path.elements.isEmpty else { throw .invalidClaimPath(.empty) }
            try insert(path.elements[...], decoys: decoysPerObject)
        }
    }

    private mutating func insert(_ path: ArraySlice<ClaimPathElement>, decoys: Int) throws(SDJWTError) {
        guard let first = path.first else {
            isSelectivelyDisclosable = true
            return
        }
        let rest = path.dropFirst()
        switch first {
        case .key(let name):
            var child = members[name] ?? DisclosurePlan(decoyCount: decoys)
            try child.insert(rest, decoys: decoys)
            members[name] = child
        case .index(let index):
            var child = elements[index] ?? DisclosurePlan(decoyCount: decoys)
            try child.insert(rest, decoys: decoys)
            elements[index] = child
        case .allElements:
            var child = everyElement ?? DisclosurePlan(decoyCount: decoys)
            try child.insert(rest, decoys: decoys)
            everyElement = child
        }
    }
}
