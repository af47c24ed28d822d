import Foundation
import WalletEncoding

/// A resolved Credential Offer (OpenID4VCI 1.0 §4.1): what the issuer offers, the grants
/// it allows, and the issuer's metadata fetched while resolving it.
public struct CredentialOffer: Sendable, Equatable {
    /// The grant type identifier of the pre-authorized code flow.
    public static let preAuthorizedGrantType = "urn:ietf:params:oauth:grant-type:pre-authorized_code"

    /// The Credential Issuer Identifier (`credential_issuer`).
    public let credentialIssuer: String
    /// The offered configurations (`credential_configuration_ids`), in the offer's order.
    public let credentialConfigurationIds: [String]
    /// The pre-authorized code grant, if offered.
    public let preAuthorizedCode: PreAuthorizedCodeGrant?
    /// The authorization code grant, if offered.
    public let authorizationCode: AuthorizationCodeGrant?
    /// The issuer's metadata (display, configurations, endpoints).
    public let issuerMetadata: CredentialIssuerMetadata

    /// Whether the issuer will ask for a transaction code (`tx_code` present, even empty).
    public var requiresTxCode: Bool { preAuthorizedCode?.txCode != nil }

    /// How the transaction code should be asked for, if one is required.
    public var txCode: TxCodeSpec? { preAuthorizedCode?.txCode }

    /// The metadata of an offered configuration.
    public func configuration(_ id: String) -> CredentialConfiguration? {
        credentialConfigurationIds.contains(id) ? issuerMetadata.configuration(id) : nil
    }

    /// Creates an offer from its parts (`resolveOffer(_:)` makes them from the wire).
    public init(offer: CredentialOfferObject, issuerMetadata: CredentialIssuerMetadata) {
        self.credentialIssuer = offer.credentialIssuer
        self.credentialConfigurationIds = offer.credentialConfigurationIds
        self.preAuthorizedCode = offer.preAuthorizedCode
        self.authorizationCode = offer.authorizationCode
        self.issuerMetadata = issuerMetadata
    }
}

/// The pre-authorized code grant of an offer.
public struct PreAuthorizedCodeGrant: Sendable, Equatable {
    /// `pre-authorized_code`. Redeemable once; never logged.
    public let preAuthorizedCode: String
    /// `tx_code`: present when the issuer will ask for a transaction code.
    public let txCode: TxCodeSpec?
    /// `authorization_server`: which of the issuer's servers to use.
    public let authorizationServer: String?

    /// A grant.
    public init(preAuthorizedCode: String, txCode: TxCodeSpec? = nil, authorizationServer: String? = nil) {
        self.preAuthorizedCode = preAuthorizedCode
        self.txCode = txCode
        self.authorizationServer = authorizationServer
    }
}

/// The authorization code grant of an offer.
public struct AuthorizationCodeGrant: Sendable, Equatable {
    /// `issuer_state`, passed back in the authorization request.
    public let issuerState: String?
    /// `authorization_server`: which of the issuer's servers to use.
    public let authorizationServer: String?

    /// A grant.
    public init(issuerState: String? = nil, authorizationServer: String? = nil) {
        self.issuerState = issuerState
        self.authorizationServer = authorizationServer
    }
}

/// The Credential Offer object itself (§4.1.1), before the issuer's metadata is fetched.
public struct CredentialOfferObject: Sendable, Equatable {
    /// `credential_issuer`.
    public let credentialIssuer: String
    /// `credential_configuration_ids`.
    public let credentialConfigurationIds: [String]
    /// The pre-authorized code grant, if offered.
    public let preAuthorizedCode: PreAuthorizedCodeGrant?
    /// The authorization code grant, if offered.
    public let authorizationCode: AuthorizationCodeGrant?

    /// The longest `tx_code.description` §4.1.1 allows.
    static let maximumTxCodeDescriptionLength = 300

    /// Reads an offer object. Unknown members and grant types are ignored; known members
    /// of the wrong type or value are an error naming the member.
    public init(json object: JSONObject) throws(IssuanceError) {
        func invalid(_ member: String) -> IssuanceError { .invalidOffer(.invalidMember(member)) }
        guard let issuer = object["credential_issuer"]?.stringValue, !issuer.isEmpty else {
            throw invalid("credential_issuer")
        }
        guard let ids = object["credential_configuration_ids"]?.stringArrayValue, !ids.isEmpty,
              ids.allSatisfy({ !$0.isEmpty }), Set(ids).count == ids.count else {
            throw invalid("credential_configuration_ids")
        }
        credentialIssuer = issuer
        credentialConfigurationIds = ids
        var preAuthorized: PreAuthorizedCodeGrant?
        var authorization: AuthorizationCodeGrant?
        if let grantsValue = object["grants"] {
            guard let grants = grantsValue.objectValue else { throw invalid("grants") }
            if let value = grants[CredentialOffer.preAuthorizedGrantType] {
                let name = "grants.\(CredentialOffer.preAuthorizedGrantType)"
                guard let grant = value.objectValue else { throw invalid(name) }
                guard let code = grant["pre-authorized_code"]?.stringValue, !code.isEmpty else {
                    throw invalid("\(name).pre-authorized_code")
                }
                var txCode: TxCodeSpec?
                if let txValue = grant["tx_code"] {
                    guard let tx = txValue.objectValue else { throw invalid("\(name).tx_code") }
                    txCode = try Self.txCode(tx, name: "\(name).tx_code")
                }
                let server = try Self.optionalString(grant, "authorization_server", in: name)
                preAuthorized = PreAuthorizedCodeGrant(preAuthorizedCode: code, txCode: txCode, authorizationServer: server)
            }
            if let value = grants["authorization_code"] {
                guard let grant = value.objectValue else { throw invalid("grants.authorization_code") }
                authorization = AuthorizationCodeGrant(
                    issuerState: try Self.optionalString(grant, "issuer_state", in: "grants.authorization_code"),
                    authorizationServer: try Self.optionalString(grant, "authorization_server", in: "grants.authorization_code"))
            }
        }
        preAuthorizedCode = preAuthorized
        authorizationCode = authorization
    }

    private static func optionalString(_ object: JSONObject, _ member: String, in parent: String) throws(IssuanceError) -> String? {
        guard let value = object[member] else { return nil }
        guard let text = value.stringValue else { throw .invalidOffer(.invalidMember("\(parent).\(member)")) }
        return text
    }

    private static func txCode(_ object: JSONObject, name: String) throws(IssuanceError) -> TxCodeSpec {
        var mode = TxCodeSpec.InputMode.numeric
        if let value = object["input_mode"] {
            guard let text = value.stringValue, let parsed = TxCodeSpec.InputMode(rawValue: text) else {
                throw .invalidOffer(.invalidMember("\(name).input_mode"))
            }
            mode = parsed
        }
        var length: Int?
        if let value = object["length"] {
            guard let number = value.intValue, number > 0 else { throw .invalidOffer(.invalidMember("\(name).length")) }
            length = number
        }
        var description: String?
        if let value = object["description"] {
            guard let text = value.stringValue, text.count <= maximumTxCodeDescriptionLength else {
                throw .invalidOffer(.invalidMember("\(name).description"))
            }
            description = text
        }
        return TxCodeSpec(inputMode: mode, length: length, description: description)
    }
}

/// How an offer reached the wallet, before anything is fetched.
enum OfferInput: Equatable, Sendable {
    /// The offer object itself (by value, or raw JSON).
    case value(CredentialOfferObject)
    /// `credential_offer_uri`: the offer must be fetched from this URL.
    case reference(URL)

    /// Reads `text`: a JSON object, or any URI (`openid-credential-offer://`, `https://`,
    /// an app's own scheme) whose query carries exactly one of `credential_offer` and
    /// `credential_offer_uri` (§4.1.2, §4.1.3).
    static func parse(_ text: String, policy: URLPolicy) throws(IssuanceError) -> OfferInput {
        let trimmed = text.trimmingWhitespace()
        if trimmed.hasPrefix("{") { return .value(try object(fromJSON: trimmed)) }
        guard let schemeEnd = trimmed.firstIndex(of: ":"), trimmed[..<schemeEnd].allSatisfy({ $0.isLetter || $0.isNumber || "+-.".contains($0) }),
              !trimmed[..<schemeEnd].isEmpty else {
            throw .invalidOffer(.unrecognizedInput)
        }
        guard let query = FormURLEncoding.query(of: trimmed) else { throw .invalidOffer(.unrecognizedInput) }
        let parameters: FormParameters
        do { parameters = try FormURLEncoding.decode(query.utf8Bytes) } catch { throw .invalidOffer(.ambiguousOrMalformedURI) }
        let byValue = parameters.values(for: "credential_offer")
        let byReference = parameters.values(for: "credential_offer_uri")
        switch (byValue.count, byReference.count) {
        case (1, 0):
            return .value(try object(fromJSON: byValue[0]))
        case (0, 1):
            guard let url = policy.url(byReference[0]) else { throw .invalidOffer(.insecureURL(byReference[0])) }
            return .reference(url)
        case (0, 0):
            throw .invalidOffer(.unrecognizedInput)
        default:
            throw .invalidOffer(.ambiguousOrMalformedURI)
        }
    }

    /// Parses an offer object from JSON text or bytes.
    static func object(fromJSON text: some StringProtocol) throws(IssuanceError) -> CredentialOfferObject {
        try object(fromJSON: Array(text.utf8))
    }

    /// Parses an offer object from JSON bytes.
    static func object(fromJSON bytes: [UInt8]) throws(IssuanceError) -> CredentialOfferObject {
        let object: JSONObject
        do { object = try JSONValue.parseObject(bytes, limits: JSONLimits(maxDepth: 16, maxBytes: 64 * 1024)) } catch {
            throw .invalidOffer(.notJSON(error))
        }
        return try CredentialOfferObject(json: object)
    }
}
