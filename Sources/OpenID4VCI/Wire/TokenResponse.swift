import WalletEncoding

/// A successful Token Response (RFC 6749 §5.1, OpenID4VCI 1.0 §6.2).
struct TokenResponse: Sendable, Equatable {
    /// `access_token`. Never logged.
    let accessToken: String
    /// `token_type` (`DPoP` or `Bearer`).
    let tokenType: String
    /// `expires_in`, in seconds.
    let expiresIn: Int?
    /// `refresh_token`. Never logged.
    let refreshToken: String?
    /// `c_nonce` (drafts before 1.0 returned it here instead of at a nonce endpoint).
    let cNonce: String?
    /// `authorization_details[].credential_identifiers` by `credential_configuration_id` (§6.2).
    let credentialIdentifiers: [String: [String]]

    /// Whether the token is DPoP-bound (RFC 9449 §5: `token_type` `DPoP`, any case).
    var isDPoPBound: Bool { tokenType.caseInsensitiveCompare("DPoP") == .orderedSame }

    /// The most `credential_identifiers` one configuration may be given (each is a credential
    /// request with a batch of keys of its own).
    static let maximumCredentialIdentifiers = 64

    init(json object: JSONObject) throws(ResponseProblem) {
        guard let token = object["access_token"]?.stringValue, !token.isEmpty else { throw .invalidMember("access_token") }
        // RFC 6749 §7.1: a token of a type the client does not understand is not used; this
        // wallet knows Bearer (RFC 6750) and DPoP (RFC 9449), in any case.
        guard let type = object["token_type"]?.stringValue,
              ["bearer", "dpop"].contains(type.lowercased()) else { throw .invalidMember("token_type") }
        accessToken = token
        tokenType = type
        if let value = object["expires_in"] {
            guard let seconds = value.intValue else { throw .invalidMember("expires_in") }
            expiresIn = seconds
        } else {
            expiresIn = nil
        }
        if let value = object["refresh_token"] {
            guard let text = value.stringValue else { throw .invalidMember("refresh_token") }
            refreshToken = text
        } else {
            refreshToken = nil
        }
        cNonce = object["c_nonce"]?.stringValue
        var identifiers: [String: [String]] = [:]
        if let value = object["authorization_details"] {
            guard let details = value.arrayValue else { throw .invalidMember("authorization_details") }
            for detail in details {
                guard let members = detail.objectValue else { throw .invalidMember("authorization_details") }
                switch members["type"] {
                case .string("openid_credential"):
                    break
                case nil where members["credential_configuration_id"] != nil && members["credential_identifiers"] != nil:
                    // RFC 9396 §2 requires `type`, but an issuer that serialises it away
                    // (PyPI openid4vci 1.0.0a1 drops the default) still binds identifiers,
                    // and §8.2 then forbids asking by credential_configuration_id.
                    break
                default:
                    continue
                }
                guard let configuration = members["credential_configuration_id"]?.stringValue,
                      let list = members["credential_identifiers"]?.stringArrayValue, !list.isEmpty else {
                    throw .invalidMember("authorization_details.credential_identifiers")
                }
                identifiers[configuration, default: []].append(contentsOf: list)
            }
        }
        // Each identifier becomes its own credential request with its own keys (§6.2), so
        // an authorization server that lists thousands, or one twice, would have the wallet
        // make that many keys and records from one grant: refused instead.
        for list in identifiers.values where list.count > Self.maximumCredentialIdentifiers || Set(list).count != list.count {
            throw .invalidMember("authorization_details.credential_identifiers")
        }
        credentialIdentifiers = identifiers
    }
}

/// What the Credential or Deferred Credential endpoint answered (OpenID4VCI 1.0 §8.3, §9.2).
enum CredentialResponse: Sendable, Equatable {
    /// The credentials, and the id to send notifications with.
    case issued(credentials: [JSONValue], notificationId: String?)
    /// Not ready: ask the deferred endpoint with `transactionId` after `interval` seconds.
    case deferred(transactionId: String, interval: Int?)

    /// Reads a success body: `credentials` (or the pre-1.0 single `credential`) means issued,
    /// `transaction_id` means deferred.
    init(json object: JSONObject) throws(ResponseProblem) {
        if let value = object["credentials"] {
            guard let entries = value.arrayValue, !entries.isEmpty else { throw .invalidMember("credentials") }
            var credentials: [JSONValue] = []
            for entry in entries {
                guard let credential = entry.objectValue?["credential"] else { throw .invalidMember("credentials[].credential") }
                credentials.append(credential)
            }
            self = .issued(credentials: credentials, notificationId: try Self.notificationId(object))
        } else if let credential = object["credential"] {
            self = .issued(credentials: [credential], notificationId: try Self.notificationId(object))
        } else if let transaction = object["transaction_id"] {
            guard let id = transaction.stringValue, !id.isEmpty else { throw .invalidMember("transaction_id") }
            self = .deferred(transactionId: id, interval: try Self.interval(object))
        } else {
            throw .invalidMember("credentials")
        }
    }

    static func notificationId(_ object: JSONObject) throws(ResponseProblem) -> String? {
        guard let value = object["notification_id"] else { return nil }
        guard let id = value.stringValue, !id.isEmpty else { throw .invalidMember("notification_id") }
        return id
    }

    static func interval(_ object: JSONObject) throws(ResponseProblem) -> Int? {
        guard let value = object["interval"] else { return nil }
        guard let seconds = value.intValue, seconds >= 0 else { throw .invalidMember("interval") }
        return seconds
    }
}
