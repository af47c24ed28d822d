import SDJWT
import WalletEncoding

/// The DCQL query a reference verifier sends (OpenID4VP 1.0 §6), as the verifier's own
/// value: it writes the `dcql_query` JSON from it and checks the returned VP Token
/// against it. It is independent of the wallet's DCQL engine on purpose.
///
/// ```swift
/// let query = VerifierQuery(credentials: [
///     .sdJwt(id: "pid", vct: ["urn:eudi:pid:1"], claims: [.init(path: ["given_name"]), .init(path: ["family_name"])]),
///     .mdoc(id: "mdl", docType: "org.iso.18013.5.1.mDL",
///           claims: [.init(path: ["org.iso.18013.5.1", "age_over_18"], values: [true])]),
/// ], credentialSets: [.init(options: [["pid"], ["mdl"]])])
/// ```
public struct VerifierQuery: Sendable, Equatable {
    /// A credential format the verifier can request and verify.
    public enum Format: String, Sendable, Hashable, CaseIterable {
        /// IETF SD-JWT VC (`dc+sd-jwt`).
        case sdJwtVc = "dc+sd-jwt"
        /// ISO mdoc (`mso_mdoc`).
        case msoMdoc = "mso_mdoc"
    }

    /// One Claims Query (§6.3): a claims path pointer, an optional id for `claim_sets`,
    /// and optional accepted values.
    public struct Claim: Sendable, Equatable {
        /// `id`, required when the credential query has `claim_sets`.
        public var id: String?
        /// `path`: for SD-JWT VC a JSON claims path; for mdoc `[namespace, element]`.
        public var path: ClaimPath
        /// `values`: the claim must equal one of these (strings, integers or booleans).
        public var values: [JSONValue]?
        /// `intent_to_retain` (mdoc only).
        public var intentToRetain: Bool?

        /// A claims query for `path`.
        public init(id: String? = nil, path: ClaimPath, values: [JSONValue]? = nil, intentToRetain: Bool? = nil) {
            self.id = id
            self.path = path
            self.values = values
            self.intentToRetain = intentToRetain
        }
    }

    /// One Credential Query (§6.1).
    public struct Credential: Sendable, Equatable {
        /// `id`, the key of this query's presentations in the VP Token.
        public var id: String
        /// `format`.
        public var format: Format
        /// `meta.vct_values` (SD-JWT VC).
        public var vctValues: [String]
        /// `meta.doctype_value` (mdoc).
        public var docType: String?
        /// `claims`; `nil` asks for no selectively disclosable claim.
        public var claims: [Claim]?
        /// `claim_sets`: alternative combinations of claim ids, most preferred first.
        public var claimSets: [[String]]?
        /// `multiple`.
        public var multiple: Bool
        /// `require_cryptographic_holder_binding` (default true).
        public var requireCryptographicHolderBinding: Bool
        /// `trusted_authorities`, written as given (each `{"type", "values"}`).
        public var trustedAuthorities: [JSONObject]?

        /// A credential query with every member given.
        public init(id: String, format: Format, vctValues: [String] = [], docType: String? = nil, claims: [Claim]? = nil,
                    claimSets: [[String]]? = nil, multiple: Bool = false, requireCryptographicHolderBinding: Bool = true,
                    trustedAuthorities: [JSONObject]? = nil) {
            self.id = id
            self.format = format
            self.vctValues = vctValues
            self.docType = docType
            self.claims = claims
            self.claimSets = claimSets
            self.multiple = multiple
            self.requireCryptographicHolderBinding = requireCryptographicHolderBinding
            self.trustedAuthorities = trustedAuthorities
        }

        /// An SD-JWT VC query for one of the types `vct`.
        public static func sdJwt(id: String, vct: [String], claims: [Claim]? = nil, claimSets: [[String]]? = nil,
                                 multiple: Bool = false, requireCryptographicHolderBinding: Bool = true) -> Credential {
            Credential(id: id, format: .sdJwtVc, vctValues: vct, claims: claims, claimSets: claimSets, multiple: multiple,
                       requireCryptographicHolderBinding: requireCryptographicHolderBinding)
        }

        /// An mdoc query for `docType`.
        public static func mdoc(id: String, docType: String, claims: [Claim]? = nil, claimSets: [[String]]? = nil,
                                multiple: Bool = false) -> Credential {
            Credential(id: id, format: .msoMdoc, docType: docType, claims: claims, claimSets: claimSets, multiple: multiple)
        }
    }

    /// One Credential Set Query (§6.2).
    public struct CredentialSet: Sendable, Equatable {
        /// `options`: each a list of credential query ids that together satisfy the set.
        public var options: [[String]]
        /// `required` (default true).
        public var required: Bool

        /// A credential set.
        public init(options: [[String]], required: Bool = true) {
            self.options = options
            self.required = required
        }
    }

    /// `credentials`.
    public var credentials: [Credential]
    /// `credential_sets`.
    public var credentialSets: [CredentialSet]?

    /// A query; ``validate()`` checks it the way the verifier does before sending it.
    public init(credentials: [Credential], credentialSets: [CredentialSet]? = nil) {
        self.credentials = credentials
        self.credentialSets = credentialSets
    }

    /// The credential query with `id`.
    public func credential(_ id: String) -> Credential? { credentials.first { $0.id == id } }

    // MARK: JSON

    /// The `dcql_query` JSON object.
    public var jsonValue: JSONValue {
        var top: JSONObject = ["credentials": .array(credentials.map(\.jsonValue))]
        if let credentialSets {
            top["credential_sets"] = .array(credentialSets.map { set in
                var members: JSONObject = ["options": .array(set.options.map { .array($0.map(JSONValue.string)) })]
                if !set.required { members["required"] = false }
                return .object(members)
            })
        }
        return .object(top)
    }

    /// Reads a `dcql_query` JSON object (the formats this verifier handles only) and validates it.
    public init(json: JSONValue) throws(VerifierError) {
        guard let top = json.objectValue else { throw .invalidQuery(.notAnObject("dcql_query")) }
        do {
            credentials = try top.objectArray("credentials").map { object throws(VerifierError) in try Credential(json: object) }
            credentialSets = try top.optionalObjectArray("credential_sets")?.map { object throws(JSONError) in
                let options = try object.array("options").map { option throws(JSONError) -> [String] in
                    guard let ids = option.stringArrayValue else { throw JSONError(.invalidValue(member: "options")) }
                    return ids
                }
                return CredentialSet(options: options, required: try object.optionalBool("required") ?? true)
            }
        } catch let error as VerifierError {
            throw error
        } catch let error as JSONError {
            throw .invalidQuery(.json(error))
        } catch {
            throw .invalidQuery(.notAnObject("dcql_query"))
        }
        try validate()
    }

    /// Checks the structural rules of §6: non-empty credentials with unique, well-formed
    /// ids; the format's `meta`; claim ids unique and present with `claim_sets`; mdoc
    /// paths of two strings; credential sets naming existing queries.
    public func validate() throws(VerifierError) {
        guard !credentials.isEmpty else { throw .invalidQuery(.noCredentials) }
        var ids = Set<String>()
        for credential in credentials {
            guard Self.isIdentifier(credential.id) else { throw .invalidQuery(.invalidIdentifier(credential.id)) }
            guard ids.insert(credential.id).inserted else { throw .invalidQuery(.duplicateCredentialId(credential.id)) }
            switch credential.format {
            case .sdJwtVc:
                guard !credential.vctValues.isEmpty else { throw .invalidQuery(.missingMeta(queryId: credential.id)) }
            case .msoMdoc:
                guard credential.docType?.isEmpty == false else { throw .invalidQuery(.missingMeta(queryId: credential.id)) }
            }
            if let claims = credential.claims {
                guard !claims.isEmpty else { throw .invalidQuery(.emptyClaims(queryId: credential.id)) }
                var claimIds = Set<String>()
                for claim in claims {
                    if let id = claim.id {
                        guard Self.isIdentifier(id) else { throw .invalidQuery(.invalidIdentifier(id)) }
                        guard claimIds.insert(id).inserted else {
                            throw .invalidQuery(.duplicateClaimId(queryId: credential.id, claimId: id))
                        }
                    }
                    guard !claim.path.elements.isEmpty else { throw .invalidQuery(.invalidPath(queryId: credential.id)) }
                    if credential.format == .msoMdoc {
                        guard claim.path.elements.count == 2,
                              claim.path.elements.allSatisfy({ if case .key = $0 { true } else { false } }) else {
                            throw .invalidQuery(.invalidPath(queryId: credential.id))
                        }
                    }
                    if let values = claim.values {
                        guard !values.isEmpty, values.allSatisfy({ $0.stringValue != nil || $0.int64Value != nil || $0.boolValue != nil }) else {
                            throw .invalidQuery(.invalidValues(queryId: credential.id))
                        }
                    }
                }
                if let sets = credential.claimSets {
                    guard !sets.isEmpty, sets.allSatisfy({ !$0.isEmpty }) else {
                        throw .invalidQuery(.emptyClaimSet(queryId: credential.id))
                    }
                    for id in sets.joined() where !claimIds.contains(id) {
                        throw .invalidQuery(.unknownClaimId(queryId: credential.id, claimId: id))
                    }
                }
            } else if credential.claimSets != nil {
                throw .invalidQuery(.claimSetsWithoutClaims(queryId: credential.id))
            }
        }
        if let sets = credentialSets {
            guard !sets.isEmpty else { throw .invalidQuery(.emptyCredentialSet) }
            for set in sets {
                guard !set.options.isEmpty, set.options.allSatisfy({ !$0.isEmpty }) else {
                    throw .invalidQuery(.emptyCredentialSet)
                }
                for id in set.options.joined() where !ids.contains(id) {
                    throw .invalidQuery(.unknownCredentialId(id))
                }
            }
        }
    }

    /// §6.1: a non-empty string of alphanumerics, `_` and `-`.
    static func isIdentifier(_ text: String) -> Bool {
        !text.isEmpty && text.utf8.allSatisfy { byte in
            (byte >= 0x30 && byte <= 0x39) || (byte >= 0x41 && byte <= 0x5A) || (byte >= 0x61 && byte <= 0x7A)
                || byte == UInt8(ascii: "_") || byte == UInt8(ascii: "-")
        }
    }
}

extension VerifierQuery.Credential {
    /// The Credential Query JSON object.
    public var jsonValue: JSONValue {
        var members: JSONObject = ["id": .string(id), "format": .string(format.rawValue)]
        switch format {
        case .sdJwtVc: members["meta"] = ["vct_values": .array(vctValues.map(JSONValue.string))]
        case .msoMdoc: members["meta"] = ["doctype_value": .string(docType ?? "")]
        }
        if let claims {
            members["claims"] = .array(claims.map { claim in
                var object: JSONObject = [:]
                if let id = claim.id { object["id"] = .string(id) }
                object["path"] = claim.path.jsonValue
                if let values = claim.values { object["values"] = .array(values) }
                if let retain = claim.intentToRetain { object["intent_to_retain"] = .bool(retain) }
                return .object(object)
            })
        }
        if let claimSets { members["claim_sets"] = .array(claimSets.map { .array($0.map(JSONValue.string)) }) }
        if multiple { members["multiple"] = true }
        if !requireCryptographicHolderBinding { members["require_cryptographic_holder_binding"] = false }
        if let trustedAuthorities { members["trusted_authorities"] = .array(trustedAuthorities.map(JSONValue.object)) }
        return .object(members)
    }

    init(json object: JSONObject) throws(VerifierError) {
        do {
            let id = try object.string("id")
            let formatName = try object.string("format")
            guard let format = VerifierQuery.Format(rawValue: formatName) else {
                throw VerifierError.invalidQuery(.unsupportedFormat(formatName))
            }
            let meta = try object.object("meta")
            var claims: [VerifierQuery.Claim]?
            if let entries = try object.optionalObjectArray("claims") {
                claims = []
                for entry in entries {
                    let path: ClaimPath
                    do { path = try ClaimPath(json: try entry.value("path")) } catch is SDJWTError {
                        throw VerifierError.invalidQuery(.invalidPath(queryId: id))
                    }
                    claims?.append(VerifierQuery.Claim(id: try entry.optionalString("id"), path: path,
                                                       values: try entry.optionalArray("values"),
                                                       intentToRetain: try entry.optionalBool("intent_to_retain")))
                }
            }
            let claimSets = try object.optionalArray("claim_sets")?.map { set throws(VerifierError) -> [String] in
                guard let ids = set.stringArrayValue else { throw .invalidQuery(.emptyClaimSet(queryId: id)) }
                return ids
            }
            self.init(id: id, format: format, vctValues: try meta.optionalStringArray("vct_values") ?? [],
                      docType: try meta.optionalString("doctype_value"), claims: claims, claimSets: claimSets,
                      multiple: try object.optionalBool("multiple") ?? false,
                      requireCryptographicHolderBinding: try object.optionalBool("require_cryptographic_holder_binding") ?? true,
                      trustedAuthorities: try object.optionalObjectArray("trusted_authorities"))
        } catch let error as VerifierError {
            throw error
        } catch let error as JSONError {
            throw .invalidQuery(.json(error))
        } catch {
            throw .invalidQuery(.notAnObject("credential query"))
        }
    }
}
