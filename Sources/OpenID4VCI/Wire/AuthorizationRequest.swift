import Foundation
import WalletCrypto
import WalletEncoding

/// The parameters of an authorization request (RFC 6749 §4.1.1 with PKCE, RFC 9126 PAR,
/// OpenID4VCI 1.0 §5.1): sent in a PAR body, or in the authorization URL itself.
struct AuthorizationRequest: Sendable, Equatable {
    let clientId: String
    let redirectUri: String
    let pkce: PKCE
    let state: String
    let issuerState: String?
    /// `authorization_details` entries (§5.1.1), or empty when the request goes by scope.
    let authorizationDetails: [JSONValue]
    /// `scope` (§5.1.2), when the request goes by scope.
    let scope: String?
    /// `resource` (RFC 8707), the Credential Issuer, when the request goes by scope to
    /// an authorization server that is not the issuer itself (§5.1.2).
    let resource: String?

    /// Builds a request for `configuration` of `metadata` at `server`: by
    /// `authorization_details`, unless the server lists the detail types it takes, does
    /// not take `openid_credential`, and the configuration has a scope.
    init(clientId: String, redirectUri: String, pkce: PKCE, state: String, issuerState: String?,
         configuration: CredentialConfiguration, metadata: CredentialIssuerMetadata, server: AuthorizationServerMetadata) {
        self.clientId = clientId
        self.redirectUri = redirectUri
        self.pkce = pkce
        self.state = state
        self.issuerState = issuerState
        let byScope = configuration.scope != nil
            && server.authorizationDetailsTypes.map { !$0.contains("openid_credential") } == true
        if byScope {
            authorizationDetails = []
            scope = configuration.scope
            resource = server.issuer == metadata.credentialIssuer ? nil : metadata.credentialIssuer
        } else {
            var detail: JSONObject = ["type": "openid_credential", "credential_configuration_id": .string(configuration.id)]
            // §5.1.1: locations names the issuer when the authorization server serves others too.
            if server.issuer != metadata.credentialIssuer { detail["locations"] = [.string(metadata.credentialIssuer)] }
            authorizationDetails = [.object(detail)]
            scope = nil
            resource = nil
        }
    }

    /// The parameters in the order they are sent.
    var parameters: [(String, String)] {
        var pairs: [(String, String)] = [
            ("response_type", "code"), ("client_id", clientId), ("redirect_uri", redirectUri),
            ("code_challenge", pkce.challenge), ("code_challenge_method", PKCE.method), ("state", state),
        ]
        if !authorizationDetails.isEmpty { pairs.append(("authorization_details", JSONValue.array(authorizationDetails).serialized)) }
        if let scope { pairs.append(("scope", scope)) }
        if let resource { pairs.append(("resource", resource)) }
        if let issuerState { pairs.append(("issuer_state", issuerState)) }
        return pairs
    }

    /// The URL to open in a browser: the endpoint with every parameter, or with only
    /// `client_id` and the PAR `request_uri` (RFC 9126 §4).
    func authorizationURL(endpoint: URL, requestURI: String?) -> String {
        let query: [(String, String)] = requestURI.map { [("client_id", clientId), ("request_uri", $0)] } ?? parameters
        var text = endpoint.absoluteString
        text += text.contains("?") ? "&" : "?"
        return text + FormURLEncoding.encode(query)
    }
}

/// What the browser redirect carried back (RFC 6749 §4.1.2, RFC 9207).
enum AuthorizationResponse: Equatable {
    /// The code to redeem.
    case code(String)

    /// Reads `redirect` against what this session sent: it must go to `redirectUri`
    /// (same scheme, host and path), carry `state`, and when the server names itself
    /// (`iss`, required when it promised to) name `expectedIssuer`.
    static func parse(_ redirect: String, redirectUri: String, state: String, expectedIssuer: String,
                      issuerRequired: Bool) throws(IssuanceError) -> AuthorizationResponse {
        guard let received = URLComponents(string: redirect), let expected = URLComponents(string: redirectUri),
              received.scheme?.lowercased() == expected.scheme?.lowercased(),
              received.host?.lowercased() == expected.host?.lowercased(),
              received.port == expected.port,
              received.percentEncodedPath == expected.percentEncodedPath else {
            throw .authorizationFailed(oauthError: nil, reason: .invalidRedirect)
        }
        let query = received.percentEncodedQuery ?? received.percentEncodedFragment ?? ""
        let parameters: FormParameters
        do { parameters = try FormURLEncoding.decode(Array(query.utf8)) } catch {
            throw .authorizationFailed(oauthError: nil, reason: .invalidRedirect)
        }
        func value(_ name: String) -> String? {
            let values = parameters.values(for: name)
            return values.count == 1 ? values[0] : nil
        }
        // The state check comes first: an error answer with the wrong state is not ours to report.
        guard let returnedState = value("state"),
              ConstantTime.equals(Array(returnedState.utf8), Array(state.utf8)) else {
            throw .authorizationFailed(oauthError: nil, reason: .stateMismatch)
        }
        let issuer = value("iss")
        if issuer != nil || issuerRequired {
            guard issuer == expectedIssuer else {
                throw .authorizationFailed(oauthError: nil, reason: .issuerMismatch(expected: expectedIssuer, actual: issuer))
            }
        }
        if let error = value("error") {
            throw .authorizationFailed(oauthError: error, reason: .rejected(status: 302, description: value("error_description")))
        }
        guard let code = value("code"), !code.isEmpty else {
            throw .authorizationFailed(oauthError: nil, reason: .invalidRedirect)
        }
        return .code(code)
    }
}
