import SDJWT
import WalletEncoding
import WalletStorage

/// A stored credential that answers a Credential Query, with what it would disclose.
public struct PresentationCandidate: Sendable, Hashable {
    /// The wallet's id of the credential.
    public let credentialId: CredentialId
    /// Its Credential Format Identifier.
    public let format: String
    /// Its `vct` or docType.
    public let type: String
    /// The claims a presentation answering the query is made for: the paths of the
    /// Claims Queries selected (all of `claims`, or the first claim set it satisfies).
    /// Empty when the query names no claims (only what is always disclosed is sent).
    /// What the verifier will be able to read is ``revealedPaths``.
    public let disclosedPaths: [ClaimPath]
    /// What the verifier can read in a presentation of `disclosedPaths`, for a consent
    /// screen: the paths of the subject's claims it reveals, leaf by leaf, sorted.
    /// For SD-JWT VC this may be more than `disclosedPaths`: a disclosure that holds a
    /// whole object shows every member not disclosable on its own, and claims the issuer
    /// did not make selectively disclosable are in every presentation (see
    /// ``RevealedClaims``). For mdoc, and for an SD-JWT VC matched without its SD-JWT
    /// (``DcqlCredential/sdJwt``), it is `disclosedPaths`.
    public let revealedPaths: [ClaimPath]
    /// The index in `claim_sets` of the claim set chosen, nil without `claim_sets`.
    public let claimSetIndex: Int?

    /// A candidate. `revealedPaths` defaults to `disclosedPaths`.
    public init(credentialId: CredentialId, format: String, type: String, disclosedPaths: [ClaimPath],
                claimSetIndex: Int? = nil, revealedPaths: [ClaimPath]? = nil) {
        self.credentialId = credentialId
        self.format = format
        self.type = type
        self.disclosedPaths = disclosedPaths
        self.revealedPaths = revealedPaths ?? disclosedPaths
        self.claimSetIndex = claimSetIndex
    }

    /// The candidate `credential` makes with `disclosedPaths`, its revealed paths read
    /// from the SD-JWT when the credential carries one.
    init(_ credential: DcqlCredential, disclosedPaths: [ClaimPath], claimSetIndex: Int? = nil) {
        let revealed = (try? credential.sdJwt?.revealedClaims(disclosing: disclosedPaths))?.leafPaths
        self.init(credentialId: credential.id, format: credential.format, type: credential.type,
                  disclosedPaths: disclosedPaths, claimSetIndex: claimSetIndex, revealedPaths: revealed)
    }
}

/// Matches a DCQL query against credentials (OpenID4VP 1.0 §6.4): a pure function.
public enum DcqlMatcher {
    /// The candidates of every Credential Query among `credentials`, and what combinations
    /// of queries satisfy the request.
    public static func match(_ query: DcqlQuery, against credentials: [DcqlCredential]) -> DcqlMatch {
        var candidates: [String: [PresentationCandidate]] = [:]
        for credentialQuery in query.credentials {
            candidates[credentialQuery.id] = credentials.compactMap { candidate(for: credentialQuery, $0) }
        }
        return DcqlMatch(query: query, candidates: candidates)
    }

    /// The candidate `credential` makes for `query`, or nil when it does not answer it.
    public static func candidate(for query: CredentialQuery, _ credential: DcqlCredential) -> PresentationCandidate? {
        guard query.format == credential.format, metaMatches(query, credential) else { return nil }
        // §6.1: holder binding is required unless the verifier says otherwise.
        if query.requireCryptographicHolderBinding, !credential.isHolderBound { return nil }
        if let authorities = query.trustedAuthorities, !authorities.contains(where: { matches($0, credential) }) {
            return nil
        }
        guard let claims = query.claims else {
            return PresentationCandidate(credential, disclosedPaths: [])
        }
        let available = claims.map { isAvailable($0, in: credential) }
        if let claimSets = query.claimSets {
            // §6.4.1: the first claim set the credential satisfies, in the verifier's order.
            for (index, set) in claimSets.enumerated() {
                let chosen = set.compactMap { id in claims.firstIndex { $0.id == id } }
                guard chosen.count == set.count, chosen.allSatisfy({ available[$0] }) else { continue }
                return PresentationCandidate(credential, disclosedPaths: uniquePaths(chosen.map { claims[$0].path }),
                                             claimSetIndex: index)
            }
            return nil
        }
        guard available.allSatisfy({ $0 }) else { return nil }
        return PresentationCandidate(credential, disclosedPaths: uniquePaths(claims.map(\.path)))
    }

    /// §6.4: a claim pointed to twice is asked for once.
    private static func uniquePaths(_ paths: [ClaimPath]) -> [ClaimPath] {
        var seen = Set<ClaimPath>()
        return paths.filter { seen.insert($0).inserted }
    }

    private static func metaMatches(_ query: CredentialQuery, _ credential: DcqlCredential) -> Bool {
        switch query.format {
        case DcqlFormat.sdJwtVc:
            return query.meta.vctValues?.contains(credential.type) == true
        case DcqlFormat.msoMdoc:
            return query.meta.doctypeValue == credential.type
        default:
            // Formats this SDK does not hold (W3C VCs) never match.
            return false
        }
    }

    /// §6.1.1: `aki` compares the decoded values with the AuthorityKeyIdentifiers of the
    /// issuer's chain. Other types need trust lists or federations this SDK does not
    /// consult; a credential is not offered for them, so nothing the verifier would
    /// likely reject is disclosed.
    static func matches(_ authorities: TrustedAuthoritiesQuery, _ credential: DcqlCredential) -> Bool {
        guard authorities.type == TrustedAuthoritiesQuery.authorityKeyIdentifier else { return false }
        return authorities.values.contains { value in
            guard let identifier = Base64URL.decode(value) else { return false }
            return credential.authorityKeyIdentifiers.contains(identifier)
        }
    }

    /// Whether the credential has the claim, with one of the requested values if any
    /// (§6.4.1: a claim whose value does not match is treated as absent).
    static func isAvailable(_ claim: ClaimsQuery, in credential: DcqlCredential) -> Bool {
        let selected: [JSONValue]
        switch credential.claims {
        case .json(let claims):
            guard let values = select(claim.path, in: claims) else { return false }
            selected = values
        case .mdoc(let nameSpaces):
            // §7.2: exactly [namespace, element]; a missing one is an error, i.e. no match.
            guard claim.path.elements.count == 2, case .key(let nameSpace) = claim.path.elements[0],
                  case .key(let element) = claim.path.elements[1],
                  let value = nameSpaces[nameSpace]?[element] else { return false }
            selected = [value]
        }
        guard let wanted = claim.values else { return true }
        return selected.contains { value in wanted.contains { sameTypeAndValue($0, value) } }
    }

    /// §6.3: type and value both match exactly.
    private static func sameTypeAndValue(_ lhs: JSONValue, _ rhs: JSONValue) -> Bool {
        switch (lhs, rhs) {
        case (.string(let a), .string(let b)): a == b
        case (.integer(let a), .integer(let b)): a == b
        case (.bool(let a), .bool(let b)): a == b
        default: false
        }
    }

    /// Processes a claims path pointer over a JSON credential (OpenID4VP 1.0 §7.1.1):
    /// the selected values, or nil where processing aborts with an error (a key applied
    /// to a non-object, an index or null to a non-array, or an empty selection).
    public static func select(_ path: ClaimPath, in claims: JSONObject) -> [JSONValue]? {
        guard !path.elements.isEmpty else { return nil }
        var selection: [JSONValue] = [.object(claims)]
        for component in path.elements {
            var next: [JSONValue] = []
            for value in selection {
                switch component {
                case .key(let key):
                    guard case .object(let members) = value else { return nil }
                    if let member = members[key] { next.append(member) }
                case .index(let index):
                    guard case .array(let elements) = value else { return nil }
                    if index >= 0, index < elements.count { next.append(elements[index]) }
                case .allElements:
                    guard case .array(let elements) = value else { return nil }
                    next.append(contentsOf: elements)
                }
            }
            selection = next
        }
        return selection.isEmpty ? nil : selection
    }
}

/// The outcome of matching a DCQL query: the candidates of each Credential Query and
/// the rules of §6.4.2 for which combinations of queries answer the request.
public struct DcqlMatch: Sendable, Hashable {
    /// The query matched.
    public let query: DcqlQuery
    /// The candidates of each Credential Query, by query id, in store order.
    public let candidates: [String: [PresentationCandidate]]

    /// A match result.
    public init(query: DcqlQuery, candidates: [String: [PresentationCandidate]]) {
        self.query = query
        self.candidates = candidates
    }

    /// The Credential Set Queries in force: those of the query, or (without
    /// `credential_sets`) one required set per Credential Query, since all are requested.
    public var effectiveCredentialSets: [CredentialSetQuery] {
        query.credentialSets ?? query.credentials.map { CredentialSetQuery(options: [[$0.id]], required: true) }
    }

    /// Whether every response must include this query: it is in every option of a
    /// required set.
    public func isRequired(_ queryId: String) -> Bool {
        effectiveCredentialSets.contains { set in set.required && set.options.allSatisfy { $0.contains(queryId) } }
    }

    private func hasCandidates(_ queryId: String) -> Bool { !(candidates[queryId] ?? []).isEmpty }

    /// The first option of `set` whose every query has a candidate.
    public func firstSatisfiableOption(of set: CredentialSetQuery) -> [String]? {
        set.options.first { option in option.allSatisfy(hasCandidates) }
    }

    /// Whether the wallet can answer: every required set has an option whose queries
    /// all have candidates.
    public var satisfiable: Bool { unsatisfiedQueryIds.isEmpty }

    /// The queries without candidates that leave a required set unsatisfiable, in request
    /// order; empty when the request is satisfiable.
    public var unsatisfiedQueryIds: [String] {
        var missing: [String] = []
        for set in effectiveCredentialSets where set.required && firstSatisfiableOption(of: set) == nil {
            for option in set.options {
                for id in option where !hasCandidates(id) && !missing.contains(id) { missing.append(id) }
            }
        }
        return query.credentials.map(\.id).filter(missing.contains)
    }

    /// The selection `PresentationSelection.auto` makes: for each required set, its first
    /// option that can be answered; for each of its queries, every candidate when the
    /// query allows `multiple`, the first one otherwise. Optional sets are left out:
    /// nothing beyond what is required leaves the wallet without a user's choice.
    public var automaticSelection: [String: [CredentialId]] {
        var chosen: [String: [CredentialId]] = [:]
        for set in effectiveCredentialSets where set.required {
            guard let option = firstSatisfiableOption(of: set) else { continue }
            for queryId in option where chosen[queryId] == nil {
                let ids = (candidates[queryId] ?? []).map(\.credentialId)
                let multiple = query.credential(id: queryId)?.multiple ?? false
                chosen[queryId] = multiple ? ids : Array(ids.prefix(1))
            }
        }
        return chosen
    }

    /// Checks a selection (query id to chosen credential ids) against the candidates and
    /// the credential sets (§6.4.2).
    /// - Returns: the query ids answered, in request order.
    public func check(_ selection: [String: [CredentialId]]) throws(DcqlSelectionError) -> [String] {
        let answered = query.credentials.map(\.id).filter { !(selection[$0] ?? []).isEmpty }
        for (queryId, ids) in selection where !ids.isEmpty {
            guard let credentialQuery = query.credential(id: queryId) else { throw .unknownQuery(queryId) }
            guard credentialQuery.multiple || ids.count == 1 else { throw .tooManyCredentials(queryId: queryId) }
            var seen = Set<CredentialId>()
            for id in ids {
                guard seen.insert(id).inserted else { throw .duplicateCredential(queryId: queryId, credentialId: id) }
                guard (candidates[queryId] ?? []).contains(where: { $0.credentialId == id }) else {
                    throw .notACandidate(queryId: queryId, credentialId: id)
                }
            }
        }
        let sets = effectiveCredentialSets
        // §6.4.2: only queries some set asks for may be answered.
        for queryId in answered where !sets.contains(where: { $0.options.contains { $0.contains(queryId) } }) {
            throw .notRequested(queryId: queryId)
        }
        for set in sets where set.required {
            guard !set.options.contains(where: { $0.allSatisfy(answered.contains) }) else { continue }
            guard let option = firstSatisfiableOption(of: set) else { throw .notSatisfiable(queryIds: unsatisfiedQueryIds) }
            throw .incomplete(missing: option.filter { !answered.contains($0) })
        }
        return answered
    }
}

/// Why a selection does not answer a request.
public enum DcqlSelectionError: Error, Hashable, Sendable {
    /// A required set has no option the wallet can answer; these queries lack candidates.
    case notSatisfiable(queryIds: [String])
    /// A required set is answerable but the selection leaves out these queries of its
    /// first answerable option.
    case incomplete(missing: [String])
    /// The selection names a query the request does not have.
    case unknownQuery(String)
    /// The selection names a query no credential set asks for.
    case notRequested(queryId: String)
    /// More than one credential for a query without `multiple`.
    case tooManyCredentials(queryId: String)
    /// The same credential twice for one query.
    case duplicateCredential(queryId: String, credentialId: CredentialId)
    /// A credential that is not a candidate of the query.
    case notACandidate(queryId: String, credentialId: CredentialId)
}
