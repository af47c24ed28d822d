import CBOR
import Mdoc
import SDJWT
import WalletEncoding

/// One entry of `credential_configurations_supported`: what is issued (format, type,
/// claims), how it is asked for (scope, proof algorithms, key attestation) and how it is
/// displayed. The claims are the data set every credential of this configuration carries.
public struct IssuerCredentialConfiguration: Sendable {
    /// The credential format and its data.
    public enum Format: Sendable {
        /// IETF SD-JWT VC (`dc+sd-jwt`): the `vct`, the subject claims and which of them
        /// are selectively disclosable.
        case sdJwtVc(vct: String, claims: JSONObject, disclosures: DisclosurePlan)
        /// ISO mdoc (`mso_mdoc`): the doctype and the elements by namespace, in order
        /// (the mdoc model's own shape, so the minter signs them as given).
        case msoMdoc(docType: String, nameSpaces: [NameSpaced<DataElement>])

        /// The `format` identifier.
        public var identifier: String {
            switch self {
            case .sdJwtVc: "dc+sd-jwt"
            case .msoMdoc: "mso_mdoc"
            }
        }
    }

    /// Key attestations the configuration requires (`key_attestations_required`).
    public struct KeyAttestationRequirement: Sendable, Hashable {
        /// Accepted `key_storage` levels; empty accepts any.
        public var keyStorage: [String]
        /// Accepted `user_authentication` levels; empty accepts any.
        public var userAuthentication: [String]

        /// A requirement; empty lists ask for an attestation without constraints.
        public init(keyStorage: [String] = [], userAuthentication: [String] = []) {
            self.keyStorage = keyStorage
            self.userAuthentication = userAuthentication
        }
    }

    /// One claim described in `credential_metadata.claims`.
    public struct ClaimDescription: Sendable, Hashable {
        /// The claims path (`["address", "locality"]`, `["org.iso.18013.5.1", "family_name"]`).
        public var path: [String]
        /// The display name (en-US).
        public var name: String
        /// `mandatory`.
        public var mandatory: Bool

        /// A claim description.
        public init(path: [String], name: String, mandatory: Bool = false) {
            self.path = path
            self.name = name
            self.mandatory = mandatory
        }
    }

    /// The configuration id (the key in `credential_configurations_supported`).
    public var id: String
    /// `scope`, or `nil` when the configuration can only be asked for with
    /// `authorization_details`.
    public var scope: String?
    /// The format and data.
    public var format: Format
    /// `proof_signing_alg_values_supported` of the `jwt` (and `attestation`) proof types.
    public var proofAlgorithms: [String]
    /// Whether the `attestation` proof type is offered too.
    public var offersAttestationProofType: Bool
    /// `key_attestations_required`, or `nil` when no attestation is required.
    public var keyAttestation: KeyAttestationRequirement?
    /// The credential's display name (en-US).
    public var displayName: String
    /// `background_color` of the display entry.
    public var backgroundColor: String?
    /// `text_color` of the display entry.
    public var textColor: String?
    /// The claims described in the metadata.
    public var claimDescriptions: [ClaimDescription]
    /// The `credential_identifiers` a token response binds for this configuration.
    public var credentialIdentifiers: [String]
    /// For an mdoc, the MSO's `keyAuthorizations`: what the holder's device key may sign in
    /// DeviceSigned (ISO/IEC 18013-5 9.1.2.4). `nil` (the default) issues an MSO without
    /// them, so the device may sign no element; an SD-JWT VC configuration ignores it.
    public var keyAuthorizations: KeyAuthorizations?

    /// A configuration with every part given.
    public init(id: String, scope: String?, format: Format, proofAlgorithms: [String] = ["ES256"],
                offersAttestationProofType: Bool = false, keyAttestation: KeyAttestationRequirement? = nil,
                displayName: String, backgroundColor: String? = nil, textColor: String? = nil,
                claimDescriptions: [ClaimDescription] = [], credentialIdentifiers: [String]? = nil,
                keyAuthorizations: KeyAuthorizations? = nil) {
        self.id = id
        self.scope = scope
        self.format = format
        self.proofAlgorithms = proofAlgorithms
        self.offersAttestationProofType = offersAttestationProofType
        self.keyAttestation = keyAttestation
        self.displayName = displayName
        self.backgroundColor = backgroundColor
        self.textColor = textColor
        self.claimDescriptions = claimDescriptions
        self.credentialIdentifiers = credentialIdentifiers ?? [id + "-dataset-1"]
        self.keyAuthorizations = keyAuthorizations
    }

    /// `vct` or `doctype`.
    public var credentialType: String {
        switch format {
        case .sdJwtVc(let vct, _, _): vct
        case .msoMdoc(let docType, _): docType
        }
    }

    /// The default PID configuration id.
    public static let pidId = "eu.europa.ec.eudi.pid_vc_sd_jwt"
    /// The default mDL configuration id.
    public static let mDLId = "org.iso.18013.5.1.mDL"
    /// The mDL namespace.
    public static let mDLNameSpace = "org.iso.18013.5.1"

    /// An SD-JWT VC PID (`urn:eudi:pid:1`) for a fictitious person, every claim
    /// selectively disclosable (the address and age claims member by member).
    public static func pid(id: String = pidId, vct: String = "urn:eudi:pid:1",
                           keyAttestation: KeyAttestationRequirement? = nil) -> IssuerCredentialConfiguration {
        let claims: JSONObject = [
            "given_name": "Erika",
            "family_name": "Mustermann",
            "birthdate": "1964-08-12",
            "place_of_birth": ["locality": "Berlin", "country": "DE"],
            "nationalities": ["DE"],
            "address": [
                "street_address": "Heidestrasse 17", "locality": "Koeln", "postal_code": "51147", "country": "DE",
            ],
            "age_equals_or_over": ["18": true, "21": true, "65": false],
            "issuing_authority": "DE",
            "issuing_country": "DE",
        ]
        var plan = DisclosurePlan(decoyCount: 2)
        for name in ["given_name", "family_name", "birthdate", "place_of_birth", "nationalities", "issuing_authority",
                     "issuing_country"] {
            plan.members[name] = .disclosable
        }
        plan.members["address"] = DisclosurePlan(
            isSelectivelyDisclosable: true,
            members: ["street_address": .disclosable, "locality": .disclosable, "postal_code": .disclosable,
                      "country": .disclosable])
        plan.members["age_equals_or_over"] = .object(["18": .disclosable, "21": .disclosable, "65": .disclosable])
        return IssuerCredentialConfiguration(
            id: id, scope: id, format: .sdJwtVc(vct: vct, claims: claims, disclosures: plan),
            keyAttestation: keyAttestation, displayName: "Personal ID", backgroundColor: "#12107c", textColor: "#ffffff",
            claimDescriptions: [
                ClaimDescription(path: ["given_name"], name: "Given name", mandatory: true),
                ClaimDescription(path: ["family_name"], name: "Family name", mandatory: true),
                ClaimDescription(path: ["birthdate"], name: "Date of birth", mandatory: true),
                ClaimDescription(path: ["address", "locality"], name: "City"),
                ClaimDescription(path: ["age_equals_or_over", "18"], name: "Adult"),
            ])
    }

    /// An ISO 18013-5 mDL for the same person; `keyAuthorizations` go into each MSO (none by
    /// default).
    public static func mDL(id: String = mDLId, keyAttestation: KeyAttestationRequirement? = nil,
                           keyAuthorizations: KeyAuthorizations? = nil) -> IssuerCredentialConfiguration {
        func date(_ text: String) -> CBOR { .tagged(1004, .textString(text)) }
        let privileges: CBOR = .array([
            .map(CBORMap([
                (.textString("vehicle_category_code"), .textString("B")),
                (.textString("issue_date"), date("2020-01-01")),
                (.textString("expiry_date"), date("2035-01-01")),
            ])),
        ])
        let elements: [DataElement] = [
            DataElement("family_name", .textString("Mustermann")),
            DataElement("given_name", .textString("Erika")),
            DataElement("birth_date", date("1964-08-12")),
            DataElement("issue_date", date("2025-01-01")),
            DataElement("expiry_date", date("2035-01-01")),
            DataElement("issuing_country", .textString("DE")),
            DataElement("issuing_authority", .textString("Reference Issuer")),
            DataElement("document_number", .textString("RI-000001")),
            DataElement("portrait", .byteString([0xFF, 0xD8, 0xFF, 0xE0, 0x00, 0x10, 0x4A, 0x46, 0x49, 0x46, 0xFF, 0xD9])),
            DataElement("driving_privileges", privileges),
            DataElement("un_distinguishing_sign", .textString("D")),
            DataElement("age_over_18", .boolean(true)),
            DataElement("age_over_21", .boolean(true)),
        ]
        return IssuerCredentialConfiguration(
            id: id, scope: id,
            format: .msoMdoc(docType: "org.iso.18013.5.1.mDL", nameSpaces: [NameSpaced(nameSpace: mDLNameSpace, elements: elements)]),
            keyAttestation: keyAttestation, displayName: "Mobile Driving Licence", backgroundColor: "#0b5f3a",
            textColor: "#ffffff",
            claimDescriptions: [
                ClaimDescription(path: [mDLNameSpace, "given_name"], name: "Given name", mandatory: true),
                ClaimDescription(path: [mDLNameSpace, "family_name"], name: "Family name", mandatory: true),
                ClaimDescription(path: [mDLNameSpace, "birth_date"], name: "Date of birth"),
                ClaimDescription(path: [mDLNameSpace, "age_over_18"], name: "Adult"),
            ],
            keyAuthorizations: keyAuthorizations)
    }
}
