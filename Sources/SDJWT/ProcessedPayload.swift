import JOSE
import WalletEncoding

/// The claims of an SD-JWT after its disclosures were put in place (RFC 9901 §7.1):
/// digests replaced by the disclosed claims and array elements, undisclosed digests
/// and decoys removed, `_sd` and `_sd_alg` gone.
///
/// Processing enforces every check of §7.1: a digest is used at most once, each
/// disclosure is referenced exactly once and of the right kind (property or element),
/// no disclosed claim replaces another, and nesting stays within `maximumDepth`.
public struct ProcessedPayload: Sendable, Equatable {
    /// The processed claims.
    public let claims: JSONObject
    /// Where each disclosure's value sits in `claims`, by index into the disclosure list.
    public let locations: [[ClaimPathElement]]
    /// The disclosures, as given.
    public let disclosures: [Disclosure]

    /// Payload plus disclosures nest at most this deep.
    public static let maximumDepth = 96

    /// Processes `payload` (the issuer-signed JWT's claims) with `disclosures`.
    public init(payload: JSONObject, disclosures: [Disclosure], hashAlgorithm: SDJWTHashAlgorithm) throws(SDJWTError) {
        var state = State(disclosures: disclosures)
        state.indexByDigest.reserveCapacity(disclosures.count)
        for (index, disclosure) in disclosures.enumerated() {
            let digest = disclosure.digest(using: hashAlgorithm)
            guard state.indexByDigest.updateValue(index, forKey: digest) == nil else {
                throw .disclosure(.duplicate(digest: digest))
            }
        }
        var top = payload
        top.removeValue(forKey: "_sd_alg")
        guard case .object(let claims) = try state.process(.object(top), at: [], depth: 0) else {
            throw .malformed(.payloadNotObject)
        }
        var locations: [[ClaimPathElement]] = []
        for (index, disclosure) in disclosures.enumerated() {
            guard let location = state.locations[index] else {
                throw .disclosure(.unreferenced(digest: disclosure.digest(using: hashAlgorithm)))
            }
            locations.append(location)
        }
        self.claims = claims
        self.locations = locations
        self.disclosures = disclosures
    }

    /// The indices of the disclosures a presentation of `paths` needs: for every location
    /// a path selects, the disclosures on the way to it (its parents) and those inside it.
    public func disclosureIndices(for paths: [ClaimPath]) throws(SDJWTError) -> [Int] {
        var selected: [[ClaimPathElement]] = []
        for path in paths { selected += try path.locations(in: claims) }
        return locations.indices.filter { index in
            let location = locations[index]
            return selected.contains { target in location.starts(with: target) || target.starts(with: location) }
        }
    }

    private struct State {
        let disclosures: [Disclosure]
        /// Every digest met so far: a disclosure's index until the payload uses it, then
        /// `State.used`; digests the payload uses that no disclosure has (decoys, undisclosed
        /// claims) are added as `used` too. One table answers both "which disclosure" and
        /// "seen before", with one hash of the digest per use.
        var indexByDigest: [String: Int] = [:]
        /// Where each disclosure was placed, by index.
        var locations: [[ClaimPathElement]?]

        static let used = -1

        init(disclosures: [Disclosure]) {
            self.disclosures = disclosures
            self.locations = Array(repeating: nil, count: disclosures.count)
        }

        /// The disclosure a digest refers to, after checking the digest was not used before.
        mutating func claim(_ digest: JSONValue, arrayElement: Bool) throws(SDJWTError) -> (Int, Disclosure)? {
            guard let text = digest.stringValue else {
                throw .malformed(.digestNotString(arrayElement: arrayElement))
            }
            let previous = indexByDigest.updateValue(Self.used, forKey: text)
            guard previous != Self.used else { throw .disclosure(.duplicateDigest(text)) }
            guard let index = previous else { return nil }   // a decoy or an undisclosed claim
            let disclosure = disclosures[index]
            guard disclosure.isArrayElement == arrayElement else { throw .disclosure(.kindMismatch(digest: text)) }
            return (index, disclosure)
        }

        mutating func process(_ value: JSONValue, at location: [ClaimPathElement], depth: Int) throws(SDJWTError) -> JSONValue {
            guard depth <= ProcessedPayload.maximumDepth else {
                throw .limitExceeded(.nestingDepth(maximum: ProcessedPayload.maximumDepth))
            }
            switch value {
            case .object(let members):
                var output: JSONObject = [:]
                for (name, member) in members where name != "_sd" {
                    output[name] = try processMember(member, at: location, .key(name), depth: depth + 1)
                }
                if let digests = members["_sd"] {
                    guard case .array(let entries) = digests else { throw .malformed(.digestsNotArray) }
                    for entry in entries {
                        guard let (index, disclosure) = try claim(entry, arrayElement: false),
                              let name = disclosure.claimName else { continue }
                        guard output[name] == nil else { throw .disclosure(.claimOverwritten(name)) }
                        let claimLocation = location + [.key(name)]
                        locations[index] = claimLocation
                        output[name] = try process(disclosure.value, at: claimLocation, depth: depth + 1)
                    }
                }
                return .object(output)
            case .array(let elements):
                var output: [JSONValue] = []
                for element in elements {
                    // RFC 9901 §4.2.4.2: `{"...": digest}` stands for a selectively disclosable element.
                    if case .object(let members) = element, members.count == 1, let digest = members["..."] {
                        guard let (index, disclosure) = try claim(digest, arrayElement: true) else { continue }
                        let elementLocation = location + [.index(output.count)]
                        locations[index] = elementLocation
                        output.append(try process(disclosure.value, at: elementLocation, depth: depth + 1))
                    } else {
                        output.append(try processMember(element, at: location, .index(output.count), depth: depth + 1))
                    }
                }
                return .array(output)
            default:
                return value
            }
        }

        /// `process` for a member of an object or array: a scalar is returned as it is (after
        /// the same depth check), without building its location.
        mutating func processMember(_ value: JSONValue, at parent: [ClaimPathElement], _ element: ClaimPathElement,
                                    depth: Int) throws(SDJWTError) -> JSONValue {
            switch value {
            case .object, .array:
                return try process(value, at: parent + [element], depth: depth)
            default:
                guard depth <= ProcessedPayload.maximumDepth else {
                    throw .limitExceeded(.nestingDepth(maximum: ProcessedPayload.maximumDepth))
                }
                return value
            }
        }
    }
}
