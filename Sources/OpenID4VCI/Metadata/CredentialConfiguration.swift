import WalletEncoding
import WalletStorage

/// One entry of `credential_configurations_supported` (OpenID4VCI 1.0 §12.2.4, Appendix A).
public struct CredentialConfiguration: Sendable, Equatable {
    /// The configuration id (its key in the issuer's metadata).
    public let id: String
    /// `format` (`dc+sd-jwt`, `mso_mdoc`, `jwt_vc_json` ...).
    public let format: String
    /// `scope`, for authorization requests by scope.
    public let scope: String?
    /// `vct` (SD-JWT VC).
    public let vct: String?
    /// `doctype` (mdoc).
    public let docType: String?
    /// `cryptographic_binding_methods_supported` (`jwk`, `cose_key` ...).
    public let cryptographicBindingMethods: [String]
    /// `proof_types_supported`, by proof type (`jwt`, `attestation` ...).
    public let proofTypes: [String: ProofTypeMetadata]
    /// `credential_metadata.display` (or the pre-1.0 top-level `display`).
    public let display: [DisplayMetadata]
    /// `credential_metadata.claims` (or the pre-1.0 top-level `claims` array).
    public let claims: [ClaimMetadata]

    /// The wallet's storage format for this configuration, if it stores it
    /// (`vc+sd-jwt`, the name before `dc+sd-jwt`, counts as SD-JWT VC).
    public var storedFormat: CredentialFormat? {
        switch format {
        case "dc+sd-jwt", "vc+sd-jwt": .sdJwtVc
        case "mso_mdoc": .msoMdoc
        default: nil
        }
    }

    /// The `vct` or `doctype`, whichever the format uses.
    public var credentialType: String? { storedFormat == .msoMdoc ? docType : vct }

    init(id: String, json members: JSONObject) throws(MetadataProblem) {
        let prefix = "credential_configurations_supported.\(id)"
        func invalid(_ name: String) -> MetadataProblem { .invalidMember("\(prefix).\(name)") }
        func optionalString(_ name: String) throws(MetadataProblem) -> String? {
            guard let value = members[name] else { return nil }
            guard let text = value.stringValue else { throw invalid(name) }
            return text
        }
        self.id = id
        guard let format = members["format"]?.stringValue else { throw invalid("format") }
        self.format = format
        scope = try optionalString("scope")
        vct = try optionalString("vct")
        docType = try optionalString("doctype")
        if let value = members["cryptographic_binding_methods_supported"] {
            guard let methods = value.stringArrayValue else { throw invalid("cryptographic_binding_methods_supported") }
            cryptographicBindingMethods = methods
        } else {
            cryptographicBindingMethods = []
        }
        var proofTypes: [String: ProofTypeMetadata] = [:]
        if let value = members["proof_types_supported"] {
            guard let object = value.objectValue else { throw invalid("proof_types_supported") }
            for (type, entry) in object {
                guard let entryMembers = entry.objectValue else { throw invalid("proof_types_supported.\(type)") }
                proofTypes[type] = try ProofTypeMetadata(json: entryMembers, name: "\(prefix).proof_types_supported.\(type)")
            }
        }
        self.proofTypes = proofTypes
        let credentialMetadata: JSONObject?
        if let value = members["credential_metadata"] {
            guard let object = value.objectValue else { throw invalid("credential_metadata") }
            credentialMetadata = object
        } else {
            credentialMetadata = nil
        }
        display = try CredentialIssuerMetadata.display(credentialMetadata?["display"] ?? members["display"],
                                                       member: "\(prefix).credential_metadata.display")
        var claims: [ClaimMetadata] = []
        if let value = credentialMetadata?["claims"] ?? members["claims"], let entries = value.arrayValue {
            for entry in entries {
                guard let object = entry.objectValue, let claim = ClaimMetadata(json: object) else {
                    throw invalid("credential_metadata.claims")
                }
                claims.append(claim)
            }
        }
        self.claims = claims
    }
}

/// One entry of `proof_types_supported`.
public struct ProofTypeMetadata: Sendable, Equatable {
    /// `proof_signing_alg_values_supported`.
    public let signingAlgorithms: [String]
    /// `key_attestations_required`: present when proofs must carry a key attestation.
    public let keyAttestationsRequired: KeyAttestationRequirement?

    init(json members: JSONObject, name: String) throws(MetadataProblem) {
        guard let algorithms = members["proof_signing_alg_values_supported"]?.stringArrayValue else {
            throw .invalidMember("\(name).proof_signing_alg_values_supported")
        }
        signingAlgorithms = algorithms
        if let value = members["key_attestations_required"] {
            guard let object = value.objectValue else { throw .invalidMember("\(name).key_attestations_required") }
            keyAttestationsRequired = KeyAttestationRequirement(
                keyStorage: (object["key_storage"]?.stringArrayValue ?? []).map(AttackPotentialResistance.init(rawValue:)),
                userAuthentication: (object["user_authentication"]?.stringArrayValue ?? [])
                    .map(AttackPotentialResistance.init(rawValue:)))
        } else {
            keyAttestationsRequired = nil
        }
    }
}

/// `key_attestations_required`: the levels the issuer accepts (empty: any).
public struct KeyAttestationRequirement: Sendable, Equatable {
    /// Accepted `key_storage` levels.
    public let keyStorage: [AttackPotentialResistance]
    /// Accepted `user_authentication` levels.
    public let userAuthentication: [AttackPotentialResistance]

    /// A requirement.
    public init(keyStorage: [AttackPotentialResistance] = [], userAuthentication: [AttackPotentialResistance] = []) {
        self.keyStorage = keyStorage
        self.userAuthentication = userAuthentication
    }
}

/// One entry of `credential_metadata.claims` (§12.2.4, Appendix B.2): a claim's path and
/// how to label it.
public struct ClaimMetadata: Sendable, Hashable {
    /// The claims path pointer: strings name members, integers index arrays, null selects all.
    public let path: [JSONValue]
    /// `mandatory`.
    public let mandatory: Bool
    /// Localised labels.
    public let display: [ClaimDisplay]

    init?(json members: JSONObject) {
        guard let path = members["path"]?.arrayValue, !path.isEmpty,
              path.allSatisfy({ $0.stringValue != nil || $0.int64Value != nil || $0.isNull }) else { return nil }
        self.path = path
        mandatory = members["mandatory"]?.boolValue ?? false
        display = (members["display"]?.arrayValue ?? []).compactMap(\.objectValue).map {
            ClaimDisplay(name: $0["name"]?.stringValue, locale: $0["locale"]?.stringValue)
        }
    }
}

/// One localised label of a claim (an entry of a claim's `display`, Appendix B.2).
public struct ClaimDisplay: Sendable, Hashable {
    /// The label (`name`).
    public let name: String?
    /// Its BCP 47 language tag (`locale`).
    public let locale: String?

    /// A label `name` in `locale`.
    public init(name: String?, locale: String?) {
        self.name = name
        self.locale = locale
    }
}
