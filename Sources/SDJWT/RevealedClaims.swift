import WalletEncoding

/// What a presentation of an SD-JWT lets its verifier read: the payload processed with
/// the disclosures it carries, and the paths of that payload's leaves about the subject.
///
/// This is more than the paths asked for whenever the issuer's structure says so: a
/// disclosure that holds a whole object shows every member inside it that is not
/// disclosable on its own, and claims the issuer did not make selectively disclosable
/// are in every presentation. A consent screen and a transaction log list these.
public struct RevealedClaims: Sendable, Hashable {
    /// The claims the verifier can read (technical claims included).
    public let claims: JSONObject
    /// The paths of the leaves of `claims`, sorted by their JSON text, without the
    /// technical claims (``SDJWT/technicalClaimNames``). An array is one leaf; an empty
    /// object or array (a container whose members all stayed undisclosed) is none.
    public let leafPaths: [ClaimPath]

    /// The revealed view of `claims`.
    public init(claims: JSONObject) {
        var leaves: [ClaimPath] = []
        for (name, value) in claims where !SDJWT.technicalClaimNames.contains(name) {
            Self.collectLeaves(of: value, at: [.key(name)], into: &leaves)
        }
        self.claims = claims
        // Keys are compared as their JSON text, so that the order is stable across runs.
        self.leafPaths = leaves.map { ($0.description, $0) }.sorted { $0.0 < $1.0 }.map(\.1)
    }

    /// An object's members, recursively (processing bounds the depth, ``ProcessedPayload/maximumDepth``).
    private static func collectLeaves(of value: JSONValue, at path: [ClaimPathElement], into leaves: inout [ClaimPath]) {
        if let members = value.objectValue {
            for (name, member) in members { collectLeaves(of: member, at: path + [.key(name)], into: &leaves) }
        } else if value.arrayValue?.isEmpty != true {
            leaves.append(ClaimPath(path))
        }
    }
}

extension SDJWT {
    /// Claims that describe the credential rather than its subject (RFC 7519 §4.1, SD-JWT
    /// VC §3.2.2, RFC 9901 §4.1): not listed among what a presentation reveals.
    public static let technicalClaimNames: Set<String> = [
        "iss", "iat", "nbf", "exp", "cnf", "vct", "vct#integrity", "status", "_sd_alg", "jti",
    ]

    /// What a presentation disclosing `paths` (``presentation(disclosing:)``) shows its
    /// verifier.
    /// - Throws: what ``presentation(disclosing:)`` and ``processed()`` throw.
    public func revealedClaims(disclosing paths: [ClaimPath]) throws(SDJWTError) -> RevealedClaims {
        RevealedClaims(claims: try presentation(disclosing: paths).processed().claims)
    }
}
