import Foundation
import JOSE
import WalletEncoding

// The issuer's bookkeeping: what it handed out and must recognize again. Internal to
// the reference issuer; tests read what it received through `IssuerInspection`.

/// What an access token (and the grant behind it) authorizes.
struct AuthorizationContext: Sendable {
    /// The client, or `nil` for anonymous pre-authorized access.
    var clientId: String?
    /// The credential configurations authorized.
    var configurationIds: [String]
    /// Whether the wallet used `authorization_details` (so the token response must bind identifiers).
    var usedAuthorizationDetails: Bool
    /// `credential_identifier` to configuration id, when identifiers were bound.
    var identifiers: [String: String] = [:]
}

/// A validated authorization request (pushed or direct).
struct AuthorizationParameters: Sendable {
    var clientId: String
    var redirectURI: String
    var state: String?
    var codeChallenge: String
    var configurationIds: [String]
    var usedAuthorizationDetails: Bool
    var issuerState: String?
    /// The DPoP key the code is bound to (`dpop_jkt` or a DPoP proof at PAR, RFC 9449 §10).
    var dpopKeyThumbprint: String?
}

struct PushedRequestRecord: Sendable {
    var parameters: AuthorizationParameters
    var expiresAt: Date
}

struct AuthorizationCodeRecord: Sendable {
    var parameters: AuthorizationParameters
    var expiresAt: Date
    var used = false
    var grantId: String
}

struct PreAuthorizedCodeRecord: Sendable {
    var configurationIds: [String]
    var txCode: String?
    var attemptsLeft: Int
    var expiresAt: Date
    var used = false
    var grantId: String
}

struct AccessTokenRecord: Sendable {
    var grantId: String
    var context: AuthorizationContext
    var dpopKeyThumbprint: String?
    var expiresAt: Date
    var revoked = false
}

struct RefreshTokenRecord: Sendable {
    var grantId: String
    var context: AuthorizationContext
    var dpopKeyThumbprint: String?
    var used = false
}

struct DeferredTransactionRecord: Sendable {
    var grantId: String
    var configurationId: String
    var keys: [JWK]
    var pollsLeft: Int
}

struct NotificationRecord: Sendable {
    var grantId: String
    var configurationId: String
}

struct OfferRecord: Sendable {
    var offer: JSONValue
}

/// How a credential response is to be encrypted (from `credential_response_encryption`).
struct ResponseEncryption: Sendable {
    var key: JWK
    var contentEncryption: ContentEncryptionAlgorithm
    var compress: Bool
}
