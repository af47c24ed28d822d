import SDJWT
import WalletEncoding

/// A Digital Credentials Query Language query (OpenID4VP 1.0 §6): the credentials a
/// verifier asks for, and optionally which combinations of them satisfy it.
///
/// Parsing validates the whole query against §6 (identifiers, required members, claim
/// path pointers, references between `claim_sets`/`credential_sets` and the ids they
/// name), so a query that parses can be matched without further checks.
public struct DcqlQuery: Sendable, Hashable {
    /// The Credential Queries, in request order.
    public let credentials: [CredentialQuery]
    /// The Credential Set Queries, or nil when every Credential Query is requested.
    public let credentialSets: [CredentialSetQuery]?

    /// The most Credential Queries one query may carry.
    public static let maximumCredentialQueries = 64
    /// The most Claims Queries one Credential Query may carry.
    public static let maximumClaimsQueries = 256
    /// The most options (or claim sets) one set may list.
    public static let maximumOptions = 64
    /// The most entries one list of values may carry: `vct_values`, `type_values`,
    /// `trusted_authorities` and each one's `values`, a claim's `values`. The wallet
    /// looks each one up against its stored credentials.
    public static let maximumValues = 64

    /// A query from its parts (checked as parsing checks them).
    public init(credentials: [CredentialQuery], credentialSets: [CredentialSetQuery]? = nil) throws(DcqlError) {
        self.credentials = credentials
        self.credentialSets = credentialSets
        try validate()
    }

    /// Parses the `dcql_query` JSON object.
    public init(json members: JSONObject) throws(DcqlError) {
        let credentialObjects = try DcqlError.reading { () throws(JSONError) in try members.objectArray("credentials") }
        guard !credentialObjects.isEmpty else { throw .emptyArray("credentials") }
        guard credentialObjects.count <= Self.maximumCredentialQueries else {
            throw .tooMany("credentials", limit: Self.maximumCredentialQueries)
        }
        var credentials: [CredentialQuery] = []
        for object in credentialObjects { credentials.append(try CredentialQuery(json: object)) }
        var credentialSets: [CredentialSetQuery]?
        if let setObjects = try DcqlError.reading({ () throws(JSONError) in try members.optionalObjectArray("credential_sets") }) {
            guard !setObjects.isEmpty else { throw .emptyArray("credential_sets") }
            guard setObjects.count <= Self.maximumOptions else { throw .tooMany("credential_sets", limit: Self.maximumOptions) }
            var sets: [CredentialSetQuery] = []
            for object in setObjects { sets.append(try CredentialSetQuery(json: object)) }
            credentialSets = sets
        }
        try self.init(credentials: credentials, credentialSets: credentialSets)
    }

    /// Parses a `dcql_query` given as JSON text (as URL-encoded requests carry it).
    public init(json text: String) throws(DcqlError) {
        let members: JSONObject
        do { members = try JSONValue.parseObject(text) } catch { throw .invalidJSON(error) }
        try self.init(json: members)
    }

    /// The Credential Query with this id.
    public func credential(id: String) -> CredentialQuery? { credentials.first { $0.id == id } }

    /// The query as JSON, in the member names of §6.
    public var jsonValue: JSONValue {
        var members: JSONObject = ["credentials": .array(credentials.map(\.jsonValue))]
        if let credentialSets { members["credential_sets"] = .array(credentialSets.map(\.jsonValue)) }
        return .object(members)
    }

    private func validate() throws(DcqlError) {
        guard !credentials.isEmpty else { throw .emptyArray("credentials") }
        var ids = Set<String>()
        for credential in credentials {
            guard ids.insert(credential.id).inserted else { throw .duplicateCredentialId(credential.id) }
        }
        for set in credentialSets ?? [] {
            for option in set.options {
                for id in option where !ids.contains(id) { throw .unknownCredentialId(id) }
            }
        }
    }

    /// §6.1 and §6.3: identifiers are non-empty and use only `A-Z a-z 0-9 _ -`.
    static func isValidIdentifier(_ text: String) -> Bool {
        !text.isEmpty && text.utf8.allSatisfy { byte in
            switch byte {
            case UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "a")...UInt8(ascii: "z"),
                 UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "_"), UInt8(ascii: "-"):
                true
            default:
                false
            }
        }
    }
}

/// The Credential Format Identifiers this SDK presents (OpenID4VP 1.0 App. B).
public enum DcqlFormat {
    /// IETF SD-JWT VC (App. B.3).
    public static let sdJwtVc = "dc+sd-jwt"
    /// ISO mdoc (App. B.2).
    public static let msoMdoc = "mso_mdoc"
}

/// One Credential Query (OpenID4VP 1.0 §6.1): a request for one (or, with `multiple`,
/// several) credentials of a format, type and issuer, with the claims wanted from it.
public struct CredentialQuery: Sendable, Hashable {
    /// The query's identifier; the key of its presentations in the `vp_token`.
    public let id: String
    /// The Credential Format Identifier (`dc+sd-jwt`, `mso_mdoc`, ...).
    public let format: String
    /// Whether several credentials may answer this query.
    public let multiple: Bool
    /// The format-specific constraints on the credential's type.
    public let meta: CredentialQueryMeta
    /// Authorities one of which should have certified the issuer (nil: any).
    public let trustedAuthorities: [TrustedAuthoritiesQuery]?
    /// Whether the verifier requires a holder-binding proof (default `true`).
    public let requireCryptographicHolderBinding: Bool
    /// The claims requested (nil: only what is always disclosed).
    public let claims: [ClaimsQuery]?
    /// Acceptable combinations of claim ids, most preferred first (nil: all of `claims`).
    public let claimSets: [[String]]?

    /// A Credential Query from its parts (checked as parsing checks them).
    public init(id: String, format: String, multiple: Bool = false, meta: CredentialQueryMeta,
                trustedAuthorities: [TrustedAuthoritiesQuery]? = nil, requireCryptographicHolderBinding: Bool = true,
                claims: [ClaimsQuery]? = nil, claimSets: [[String]]? = nil) throws(DcqlError) {
        self.id = id
        self.format = format
        self.multiple = multiple
        self.meta = meta
        self.trustedAuthorities = trustedAuthorities
        self.requireCryptographicHolderBinding = requireCryptographicHolderBinding
        self.claims = claims
        self.claimSets = claimSets
        try validate()
    }

    /// Parses one entry of `credentials`.
    public init(json members: JSONObject) throws(DcqlError) {
        let id = try DcqlError.reading { () throws(JSONError) in try members.string("id") }
        guard DcqlQuery.isValidIdentifier(id) else { throw .invalidIdentifier(id) }
        let parts = try DcqlError.reading { () throws(JSONError) in
            (format: try members.string("format"), multiple: try members.optionalBool("multiple"),
             meta: try members.optionalObject("meta"),
             authorities: try members.optionalObjectArray("trusted_authorities"),
             binding: try members.optionalBool("require_cryptographic_holder_binding"),
             claims: try members.optionalObjectArray("claims"), claimSets: try members.optionalArray("claim_sets"))
        }
        guard let metaMembers = parts.meta else { throw .missingMeta(queryId: id) }
        let meta = try CredentialQueryMeta(json: metaMembers, format: parts.format, queryId: id)
        var authorities: [TrustedAuthoritiesQuery]?
        if let objects = parts.authorities {
            guard !objects.isEmpty else { throw .emptyArray("trusted_authorities") }
            guard objects.count <= DcqlQuery.maximumValues else {
                throw .tooMany("trusted_authorities", limit: DcqlQuery.maximumValues)
            }
            var entries: [TrustedAuthoritiesQuery] = []
            for object in objects { entries.append(try TrustedAuthoritiesQuery(json: object)) }
            authorities = entries
        }
        var claims: [ClaimsQuery]?
        if let objects = parts.claims {
            guard !objects.isEmpty else { throw .emptyArray("claims") }
            guard objects.count <= DcqlQuery.maximumClaimsQueries else {
                throw .tooMany("claims", limit: DcqlQuery.maximumClaimsQueries)
            }
            var entries: [ClaimsQuery] = []
            for object in objects { entries.append(try ClaimsQuery(json: object, queryId: id)) }
            claims = entries
        }
        var claimSets: [[String]]?
        if let sets = parts.claimSets {
            guard sets.count <= DcqlQuery.maximumOptions else { throw .tooMany("claim_sets", limit: DcqlQuery.maximumOptions) }
            var options: [[String]] = []
            for set in sets {
                guard let ids = set.stringArrayValue else { throw .invalidClaimSets(queryId: id) }
                // A set names claims of this query, so one longer than the claims limit repeats
                // ids; matching looks each up, per stored credential, so its length is bounded.
                guard ids.count <= DcqlQuery.maximumClaimsQueries else {
                    throw .tooMany("claim_sets entries", limit: DcqlQuery.maximumClaimsQueries)
                }
                options.append(ids)
            }
            claimSets = options
        }
        try self.init(id: id, format: parts.format, multiple: parts.multiple ?? false, meta: meta,
                      trustedAuthorities: authorities, requireCryptographicHolderBinding: parts.binding ?? true,
                      claims: claims, claimSets: claimSets)
    }

    /// The query as JSON, in the member names of §6.1.
    public var jsonValue: JSONValue {
        var members: JSONObject = ["id": .string(id), "format": .string(format)]
        if multiple { members["multiple"] = true }
        members["meta"] = .object(meta.members)
        if let trustedAuthorities { members["trusted_authorities"] = .array(trustedAuthorities.map(\.jsonValue)) }
        if !requireCryptographicHolderBinding { members["require_cryptographic_holder_binding"] = false }
        if let claims { members["claims"] = .array(claims.map(\.jsonValue)) }
        if let claimSets { members["claim_sets"] = .array(claimSets.map { .array($0.map(JSONValue.string)) }) }
        return .object(members)
    }

    private func validate() throws(DcqlError) {
        guard DcqlQuery.isValidIdentifier(id) else { throw .invalidIdentifier(id) }
        if let claims {
            guard !claims.isEmpty else { throw .emptyArray("claims") }
            var claimIds = Set<String>()
            for claim in claims {
                if format == DcqlFormat.msoMdoc {
                    // §7.2: an mdoc pointer is exactly [namespace, data element identifier].
                    guard claim.path.elements.count == 2,
                          claim.path.elements.allSatisfy({ if case .key = $0 { true } else { false } }) else {
                        throw .invalidMdocClaimPath(queryId: id, path: claim.path)
                    }
                }
                guard let claimId = claim.id else {
                    if claimSets != nil { throw .missingClaimId(queryId: id) }
                    continue
                }
                guard claimIds.insert(claimId).inserted else { throw .duplicateClaimId(queryId: id, claimId: claimId) }
            }
            if let claimSets {
                guard !claimSets.isEmpty else { throw .emptyArray("claim_sets") }
                for set in claimSets {
                    guard !set.isEmpty else { throw .invalidClaimSets(queryId: id) }
                    for claimId in set where !claimIds.contains(claimId) {
                        throw .unknownClaimId(queryId: id, claimId: claimId)
                    }
                }
            }
        } else if claimSets != nil {
            throw .claimSetsWithoutClaims(queryId: id)
        }
    }
}

/// The `meta` of a Credential Query: constraints on the credential's type, by format
/// (OpenID4VP 1.0 App. B.2.3 `doctype_value`, B.3.5 `vct_values`, B.1.1 `type_values`).
public struct CredentialQueryMeta: Sendable, Hashable {
    /// The members as received (formats may define more).
    public let members: JSONObject
    /// SD-JWT VC: the acceptable `vct` values.
    public let vctValues: [String]?
    /// mdoc: the required docType.
    public let doctypeValue: String?
    /// W3C VC: acceptable sets of types.
    public let typeValues: [[String]]?

    /// SD-JWT VC meta: `vct_values`.
    public static func sdJwtVc(vctValues: [String]) -> CredentialQueryMeta {
        CredentialQueryMeta(members: ["vct_values": .array(vctValues.map(JSONValue.string))], vctValues: vctValues,
                            doctypeValue: nil, typeValues: nil)
    }

    /// mdoc meta: `doctype_value`.
    public static func msoMdoc(doctypeValue: String) -> CredentialQueryMeta {
        CredentialQueryMeta(members: ["doctype_value": .string(doctypeValue)], vctValues: nil, doctypeValue: doctypeValue,
                            typeValues: nil)
    }

    private init(members: JSONObject, vctValues: [String]?, doctypeValue: String?, typeValues: [[String]]?) {
        self.members = members
        self.vctValues = vctValues
        self.doctypeValue = doctypeValue
        self.typeValues = typeValues
    }

    /// Reads `meta` for a query of `format`; the member a format requires must be there.
    init(json members: JSONObject, format: String, queryId: String) throws(DcqlError) {
        let parts = try DcqlError.reading { () throws(JSONError) in
            (vct: try members.optionalStringArray("vct_values"), doctype: try members.optionalString("doctype_value"),
             types: try members.optionalArray("type_values"))
        }
        if let vct = parts.vct, vct.count > DcqlQuery.maximumValues {
            throw .tooMany("vct_values", limit: DcqlQuery.maximumValues)
        }
        var typeValues: [[String]]?
        if let types = parts.types {
            guard types.count <= DcqlQuery.maximumValues else { throw .tooMany("type_values", limit: DcqlQuery.maximumValues) }
            var sets: [[String]] = []
            for entry in types {
                guard let strings = entry.stringArrayValue, !strings.isEmpty else { throw .invalidMeta(queryId: queryId) }
                guard strings.count <= DcqlQuery.maximumValues else {
                    throw .tooMany("type_values entries", limit: DcqlQuery.maximumValues)
                }
                sets.append(strings)
            }
            guard !sets.isEmpty else { throw .invalidMeta(queryId: queryId) }
            typeValues = sets
        }
        switch format {
        case DcqlFormat.sdJwtVc:
            guard let vct = parts.vct, !vct.isEmpty else { throw .invalidMeta(queryId: queryId) }
        case DcqlFormat.msoMdoc:
            guard parts.doctype != nil else { throw .invalidMeta(queryId: queryId) }
        default:
            break
        }
        if let vct = parts.vct, vct.isEmpty { throw .invalidMeta(queryId: queryId) }
        self.init(members: members, vctValues: parts.vct, doctypeValue: parts.doctype, typeValues: typeValues)
    }
}

/// One Claims Query (OpenID4VP 1.0 §6.3): a claim by its path, optionally with the
/// values it must have.
public struct ClaimsQuery: Sendable, Hashable {
    /// The id `claim_sets` refer to it by.
    public let id: String?
    /// Where the claim is (§7).
    public let path: ClaimPath
    /// The acceptable values (strings, integers, booleans); nil: any value.
    public let values: [JSONValue]?
    /// mdoc: the `IntentToRetain` the verifier declares (App. B.2.4); nil: no statement.
    public let intentToRetain: Bool?

    /// A Claims Query.
    public init(id: String? = nil, path: ClaimPath, values: [JSONValue]? = nil, intentToRetain: Bool? = nil) {
        self.id = id
        self.path = path
        self.values = values
        self.intentToRetain = intentToRetain
    }

    init(json members: JSONObject, queryId: String) throws(DcqlError) {
        let parts = try DcqlError.reading { () throws(JSONError) in
            (id: try members.optionalString("id"), path: try members.value("path"), values: try members.optionalArray("values"),
             retain: try members.optionalBool("intent_to_retain"))
        }
        if let id = parts.id, !DcqlQuery.isValidIdentifier(id) { throw .invalidIdentifier(id) }
        let path: ClaimPath
        do { path = try ClaimPath(json: parts.path) } catch { throw .invalidClaimPath(queryId: queryId) }
        if let values = parts.values {
            guard values.count <= DcqlQuery.maximumValues else { throw .tooMany("values", limit: DcqlQuery.maximumValues) }
            // §6.3: a non-empty array of strings, integers or booleans.
            guard !values.isEmpty, values.allSatisfy({ value in
                switch value {
                case .string, .integer, .bool: true
                default: false
                }
            }) else { throw .invalidClaimValues(queryId: queryId) }
        }
        self.init(id: parts.id, path: path, values: parts.values, intentToRetain: parts.retain)
    }

    /// The Claims Query as JSON.
    public var jsonValue: JSONValue {
        var members = JSONObject()
        if let id { members["id"] = .string(id) }
        members["path"] = path.jsonValue
        if let values { members["values"] = .array(values) }
        if let intentToRetain { members["intent_to_retain"] = .bool(intentToRetain) }
        return .object(members)
    }
}

/// One Credential Set Query (OpenID4VP 1.0 §6.2): alternative sets of Credential Query
/// ids, any one of which satisfies a use case.
public struct CredentialSetQuery: Sendable, Hashable {
    /// The alternatives, each a list of Credential Query ids, most preferred first.
    public let options: [[String]]
    /// Whether the use case needs this set (default `true`).
    public let required: Bool

    /// A Credential Set Query.
    public init(options: [[String]], required: Bool = true) {
        self.options = options
        self.required = required
    }

    init(json members: JSONObject) throws(DcqlError) {
        let parts = try DcqlError.reading { () throws(JSONError) in
            (options: try members.array("options"), required: try members.optionalBool("required"))
        }
        guard !parts.options.isEmpty else { throw .emptyArray("options") }
        guard parts.options.count <= DcqlQuery.maximumOptions else { throw .tooMany("options", limit: DcqlQuery.maximumOptions) }
        var options: [[String]] = []
        for option in parts.options {
            guard let ids = option.stringArrayValue, !ids.isEmpty else { throw .invalidCredentialSet }
            // An option names credential queries: more than the query limit repeats ids.
            guard ids.count <= DcqlQuery.maximumCredentialQueries else {
                throw .tooMany("options entries", limit: DcqlQuery.maximumCredentialQueries)
            }
            options.append(ids)
        }
        self.init(options: options, required: parts.required ?? true)
    }

    /// The Credential Set Query as JSON.
    public var jsonValue: JSONValue {
        var members: JSONObject = ["options": .array(options.map { .array($0.map(JSONValue.string)) })]
        if !required { members["required"] = false }
        return .object(members)
    }
}

/// One Trusted Authorities Query (OpenID4VP 1.0 §6.1.1): authorities of a type, one of
/// which should have certified the credential's issuer.
public struct TrustedAuthoritiesQuery: Sendable, Hashable {
    /// `aki`: base64url Authority Key Identifiers of a certificate in the issuer's chain (§6.1.1.1).
    public static let authorityKeyIdentifier = "aki"

    /// The type (`aki`, `etsi_tl`, `openid_federation`, ...).
    public let type: String
    /// The type-specific values.
    public let values: [String]

    /// A Trusted Authorities Query.
    public init(type: String, values: [String]) {
        self.type = type
        self.values = values
    }

    init(json members: JSONObject) throws(DcqlError) {
        let parts = try DcqlError.reading { () throws(JSONError) in
            (type: try members.string("type"), values: try members.stringArray("values"))
        }
        guard !parts.values.isEmpty else { throw .emptyArray("values") }
        guard parts.values.count <= DcqlQuery.maximumValues else {
            throw .tooMany("trusted_authorities values", limit: DcqlQuery.maximumValues)
        }
        self.init(type: parts.type, values: parts.values)
    }

    /// The Trusted Authorities Query as JSON.
    public var jsonValue: JSONValue {
        ["type": .string(type), "values": .array(values.map(JSONValue.string))]
    }
}
