import Foundation
import WalletEncoding
import WalletStorage

/// What the client keeps with a stored credential (`StoredCredential.issuanceContext`,
/// encrypted by the store) so that it can resume a deferred issuance, renew the
/// credential and send notifications later: the configuration it was issued under,
/// the access token and how it is bound, the DPoP key, the notification id, and for a
/// deferred credential the holder keys its proofs named.
struct IssuanceContext: Sendable, Equatable {
    /// The format version of the serialized context.
    static let version: Int64 = 1

    /// The configuration id in the issuer's metadata.
    var configurationId: String
    /// The credential issuer the context was written for. The record's `issuer` is stored
    /// in the clear and this context encrypted: a record whose issuer was altered on disk
    /// would otherwise send the access token to the issuer it now names.
    var credentialIssuer: String?
    /// The authorization server that issued the tokens.
    var authorizationServer: String?
    /// The access token (for the deferred and notification endpoints).
    var accessToken: String?
    /// Whether the access token is DPoP-bound (`token_type` DPoP).
    var isDPoPBound: Bool
    /// Whether the tokens were obtained without a `client_id` (anonymous pre-authorized
    /// access): a refresh then sends none either (RFC 6749 §6).
    var isAnonymous: Bool
    /// The secure-area alias of the DPoP key the tokens are bound to.
    var dpopKeyAlias: String?
    /// The `notification_id` of the latest issuance.
    var notificationId: String?
    /// For a deferred credential: the holder keys its proofs named, in proof order.
    var pendingKeyAliases: [String]
    /// A renewal the issuer deferred while the credential stays issued: its transaction.
    var pendingTransactionId: String?
    /// When to ask for that renewal again.
    var pendingRetryAfter: Date?

    init(configurationId: String, credentialIssuer: String? = nil, authorizationServer: String? = nil, accessToken: String? = nil, isDPoPBound: Bool = false,
         isAnonymous: Bool = false,
         dpopKeyAlias: String? = nil, notificationId: String? = nil, pendingKeyAliases: [String] = [],
         pendingTransactionId: String? = nil, pendingRetryAfter: Date? = nil) {
        self.configurationId = configurationId
        self.credentialIssuer = credentialIssuer
        self.authorizationServer = authorizationServer
        self.accessToken = accessToken
        self.isDPoPBound = isDPoPBound
        self.isAnonymous = isAnonymous
        self.dpopKeyAlias = dpopKeyAlias
        self.notificationId = notificationId
        self.pendingKeyAliases = pendingKeyAliases
        self.pendingTransactionId = pendingTransactionId
        self.pendingRetryAfter = pendingRetryAfter
    }

    /// The serialized form (JSON).
    var encoded: [UInt8] {
        var members: JSONObject = ["v": .integer(Self.version), "configuration_id": .string(configurationId),
                                   "dpop_bound": .bool(isDPoPBound), "anonymous": .bool(isAnonymous)]
        members["credential_issuer"] = credentialIssuer.map(JSONValue.string)
        members["authorization_server"] = authorizationServer.map(JSONValue.string)
        members["access_token"] = accessToken.map(JSONValue.string)
        members["dpop_key_alias"] = dpopKeyAlias.map(JSONValue.string)
        members["notification_id"] = notificationId.map(JSONValue.string)
        if !pendingKeyAliases.isEmpty { members["pending_key_aliases"] = .array(pendingKeyAliases.map(JSONValue.string)) }
        members["pending_transaction_id"] = pendingTransactionId.map(JSONValue.string)
        members["pending_retry_after"] = pendingRetryAfter.map { .number($0.timeIntervalSince1970) }
        return JSONValue.object(members).serializedBytes
    }

    /// Whether the context may be used for `stored`: it names no issuer (written before
    /// the issuer was kept in it) or the one the record names.
    func belongs(to stored: StoredCredential) -> Bool {
        credentialIssuer.map { $0 == stored.issuer.identifier } ?? true
    }

    /// Reads a serialized context; nil when it is not one this version wrote.
    init?(encoded bytes: [UInt8]) {
        guard let object = try? JSONValue.parseObject(bytes), object["v"]?.int64Value == Self.version,
              let configurationId = object["configuration_id"]?.stringValue else { return nil }
        self.configurationId = configurationId
        credentialIssuer = object["credential_issuer"]?.stringValue
        authorizationServer = object["authorization_server"]?.stringValue
        accessToken = object["access_token"]?.stringValue
        isDPoPBound = object["dpop_bound"]?.boolValue ?? false
        isAnonymous = object["anonymous"]?.boolValue ?? false
        dpopKeyAlias = object["dpop_key_alias"]?.stringValue
        notificationId = object["notification_id"]?.stringValue
        pendingKeyAliases = object["pending_key_aliases"]?.stringArrayValue ?? []
        pendingTransactionId = object["pending_transaction_id"]?.stringValue
        pendingRetryAfter = object["pending_retry_after"]?.doubleValue.map(Date.init(timeIntervalSince1970:))
    }
}
