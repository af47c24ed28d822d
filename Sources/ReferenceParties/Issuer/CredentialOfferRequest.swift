import Foundation
import WalletEncoding

/// What offer to make (OpenID4VCI 1.0 §4.1): which configurations, and which grants.
public struct CredentialOfferRequest: Sendable, Hashable {
    /// `credential_configuration_ids`.
    public var configurationIds: [String]
    /// The pre-authorized code grant, if offered.
    public var preAuthorized: PreAuthorizedGrant?
    /// The authorization code grant, if offered.
    public var authorizationCode: AuthorizationCodeGrant?

    /// The pre-authorized code grant of an offer.
    public struct PreAuthorizedGrant: Sendable, Hashable {
        /// The transaction code the token request must carry, or `nil` for none.
        public var txCode: TxCode?
        /// Whether to name the authorization server (`authorization_server`); only
        /// meaningful with a separate authorization server.
        public var namesAuthorizationServer: Bool

        /// A pre-authorized grant.
        public init(txCode: TxCode? = nil, namesAuthorizationServer: Bool = false) {
            self.txCode = txCode
            self.namesAuthorizationServer = namesAuthorizationServer
        }
    }

    /// The authorization code grant of an offer.
    public struct AuthorizationCodeGrant: Sendable, Hashable {
        /// Whether to include an `issuer_state`.
        public var includesIssuerState: Bool
        /// Whether to name the authorization server (`authorization_server`).
        public var namesAuthorizationServer: Bool

        /// An authorization code grant.
        public init(includesIssuerState: Bool = true, namesAuthorizationServer: Bool = false) {
            self.includesIssuerState = includesIssuerState
            self.namesAuthorizationServer = namesAuthorizationServer
        }
    }

    /// A transaction code (§4.1.1 `tx_code`).
    public struct TxCode: Sendable, Hashable {
        /// The code the wallet must send; `nil` draws one (digits for numeric, letters and
        /// digits for text) of ``length`` characters.
        public var value: String?
        /// `input_mode` as advertised (`numeric`, `text`), or `nil` to leave it out (the
        /// default, numeric, applies).
        public var inputMode: String?
        /// The code's length; advertised as `length` when ``advertisesLength``.
        public var length: Int
        /// Whether `length` is in the offer.
        public var advertisesLength: Bool
        /// `description`.
        public var description: String?

        /// A transaction code description.
        public init(value: String? = nil, inputMode: String? = "numeric", length: Int = 6, advertisesLength: Bool = true,
                    description: String? = "The code sent to you by e-mail") {
            self.value = value
            self.inputMode = inputMode
            self.length = value?.count ?? length
            self.advertisesLength = advertisesLength
            self.description = description
        }

        /// An empty `tx_code` object: a code is required, nothing is said about it.
        public static func unannounced(value: String) -> TxCode {
            TxCode(value: value, inputMode: nil, advertisesLength: false, description: nil)
        }
    }

    /// An offer with every part given.
    public init(configurationIds: [String], preAuthorized: PreAuthorizedGrant? = nil,
                authorizationCode: AuthorizationCodeGrant? = nil) {
        self.configurationIds = configurationIds
        self.preAuthorized = preAuthorized
        self.authorizationCode = authorizationCode
    }

    /// A pre-authorized offer, with a transaction code when `txCode` is given.
    public static func preAuthorized(_ configurationIds: [String], txCode: TxCode? = nil) -> CredentialOfferRequest {
        CredentialOfferRequest(configurationIds: configurationIds, preAuthorized: PreAuthorizedGrant(txCode: txCode))
    }

    /// An authorization-code offer, with an `issuer_state` by default.
    public static func authorizationCode(_ configurationIds: [String], issuerState: Bool = true) -> CredentialOfferRequest {
        CredentialOfferRequest(configurationIds: configurationIds,
                               authorizationCode: AuthorizationCodeGrant(includesIssuerState: issuerState))
    }
}

/// An offer the issuer made: the offer object and every way of handing it to a wallet,
/// with the secrets the test (or the person at the terminal) needs.
public struct IssuedCredentialOffer: Sendable, Hashable {
    /// The Credential Offer object.
    public let offer: JSONObject
    /// The pre-authorized code, if the offer has that grant.
    public let preAuthorizedCode: String?
    /// The transaction code the wallet must send, if one is required.
    public let txCode: String?
    /// The `issuer_state`, if the offer has one.
    public let issuerState: String?
    /// The URL the offer object is served at (for `credential_offer_uri`).
    public let offerURL: String

    /// The offer's JSON text.
    public var json: String { JSONValue.object(offer).serialized }

    /// `openid-credential-offer://?credential_offer=<JSON>` (by value, §4.1.2).
    public var byValue: String { byValue(endpoint: "openid-credential-offer://") }

    /// `openid-credential-offer://?credential_offer_uri=<URL>` (by reference, §4.1.3).
    public var byReference: String { byReference(endpoint: "openid-credential-offer://") }

    /// The offer by value at another Credential Offer Endpoint (`https://wallet.example/offer`).
    public func byValue(endpoint: String) -> String {
        endpoint + (endpoint.contains("?") ? "&" : "?") + "credential_offer=" + FormURLEncoding.percentEncode(json)
    }

    /// The offer by reference at another Credential Offer Endpoint.
    public func byReference(endpoint: String) -> String {
        endpoint + (endpoint.contains("?") ? "&" : "?") + "credential_offer_uri=" + FormURLEncoding.percentEncode(offerURL)
    }
}
