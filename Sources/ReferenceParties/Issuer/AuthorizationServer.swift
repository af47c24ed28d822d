import Foundation
import JOSE
import WalletCrypto
import WalletEncoding
import WalletRuntime

/// The authorization server: PAR (RFC 9126), the authorization endpoint with PKCE
/// (RFC 7636) and the `iss` response parameter (RFC 9207), and the token endpoint with
/// the authorization code, pre-authorized code (OpenID4VCI 1.0 §6) and refresh token grants.
extension ReferenceIssuer {
    static let preAuthorizedGrantType = "urn:ietf:params:oauth:grant-type:pre-authorized_code"
    static let requestURIPrefix = "urn:ietf:params:oauth:request_uri:"

    // MARK: PAR

    func pushedAuthorizationRequest(_ request: HTTPRequest) throws(EndpointRefusal) -> HTTPResponse {
        let parameters = try IssuerHTTP.formParameters(of: request)
        // RFC 9126 §2.1: request_uri must not be pushed.
        guard try parameters.optional("request_uri") == nil else {
            throw .invalidRequest("request_uri is not allowed in a pushed authorization request")
        }
        // RFC 9449 §10: a DPoP proof at PAR (or dpop_jkt) binds the code to that key.
        let proof = try checkDPoP(request, site: .authorizationServer, path: endpoints.parPath, accessToken: nil)
        var bound = try parameters.optional("dpop_jkt")
        if let proof {
            if let bound, bound != proof.keyThumbprint {
                throw .badRequest("invalid_dpop_proof", "dpop_jkt does not match the DPoP proof key")
            }
            bound = proof.keyThumbprint
        }
        let authorization = try authorizationParameters(parameters, dpopKeyThumbprint: bound)
        let reference = try randomValue(24)
        purgePushedRequests()
        pushedRequests[reference] = PushedRequestRecord(
            parameters: authorization, expiresAt: clock.now.addingTimeInterval(configuration.lifetimes.pushedRequest))
        return IssuerHTTP.json(
            ["request_uri": .string(Self.requestURIPrefix + reference),
             "expires_in": .integer(Int64(configuration.lifetimes.pushedRequest))],
            status: 201)
    }

    private func purgePushedRequests() {
        guard pushedRequests.count >= 256, pushedRequests.count % 256 == 0 else { return }
        let now = clock.now
        pushedRequests = pushedRequests.filter { $0.value.expiresAt > now }
    }

    /// Validates the parameters of an authorization request (RFC 6749 §4.1.1, RFC 7636
    /// §4.3, OpenID4VCI 1.0 §5.1).
    func authorizationParameters(_ parameters: FormParameters, dpopKeyThumbprint: String?)
        throws(EndpointRefusal) -> AuthorizationParameters {
        let clientId = try parameters.required("client_id")
        let redirectURI = try parameters.required("redirect_uri")
        try checkClient(clientId, redirectURI: redirectURI)
        guard try parameters.required("response_type") == "code" else {
            throw .badRequest("unsupported_response_type", "only response_type code is supported")
        }
        let challenge = try parameters.required("code_challenge")
        guard let method = try parameters.optional("code_challenge_method") else {
            throw .invalidRequest("code_challenge_method is required (S256)")
        }
        guard method == "S256" else { throw .invalidRequest("only the S256 code challenge method is supported") }
        // A SHA-256 digest in base64url without padding is 43 characters.
        guard challenge.count == 43, Base64URL.decodeStrict(challenge)?.count == 32 else {
            throw .invalidRequest("code_challenge is not a base64url SHA-256 digest")
        }
        if let resource = try parameters.optional("resource"), resource != credentialIssuer {
            throw .badRequest("invalid_target", "resource is not this credential issuer")
        }
        var configurationIds: [String] = []
        var usedDetails = false
        if let details = try parameters.optional("authorization_details") {
            configurationIds = try authorizationDetailsConfigurations(details)
            usedDetails = true
        }
        if let scope = try parameters.optional("scope") {
            // §5.1.2: unknown scope values are ignored.
            for value in scope.split(separator: " ").map(String.init) {
                if let configuration = configuration.credentialConfigurations.first(where: { $0.scope == value }),
                   !configurationIds.contains(configuration.id) {
                    configurationIds.append(configuration.id)
                }
            }
        }
        guard !configurationIds.isEmpty else {
            throw .badRequest("invalid_scope", "neither scope nor authorization_details names a credential configuration")
        }
        let issuerState = try parameters.optional("issuer_state")
        if let issuerState, issuerStates[issuerState] == nil {
            throw .invalidRequest("issuer_state was not issued by this credential issuer")
        }
        return AuthorizationParameters(
            clientId: clientId, redirectURI: redirectURI, state: try parameters.optional("state"), codeChallenge: challenge,
            configurationIds: configurationIds, usedAuthorizationDetails: usedDetails, issuerState: issuerState,
            dpopKeyThumbprint: dpopKeyThumbprint)
    }

    private func checkClient(_ clientId: String, redirectURI: String) throws(EndpointRefusal) {
        guard let url = URLComponents(string: redirectURI), url.scheme != nil, url.fragment == nil else {
            throw .invalidRequest("redirect_uri is not an absolute URI without a fragment")
        }
        if let clients = configuration.clients {
            guard let allowed = clients[clientId] else { throw .badRequest("invalid_client", "unknown client_id") }
            guard allowed.contains(redirectURI) else { throw .invalidRequest("redirect_uri is not registered for this client") }
        }
    }

    /// The configuration ids of an `authorization_details` value (RFC 9396, OpenID4VCI 1.0 §5.1.1).
    func authorizationDetailsConfigurations(_ text: String) throws(EndpointRefusal) -> [String] {
        let value: JSONValue
        do { value = try JSONValue.parse(text) } catch {
            throw .badRequest("invalid_authorization_details", "authorization_details is not JSON")
        }
        guard let entries = value.arrayValue, !entries.isEmpty else {
            throw .badRequest("invalid_authorization_details", "authorization_details is not a non-empty array")
        }
        var ids: [String] = []
        for entry in entries {
            guard let object = entry.objectValue, let type = object["type"]?.stringValue else {
                throw .badRequest("invalid_authorization_details", "an authorization detail has no type")
            }
            guard type == "openid_credential" else {
                throw .badRequest("invalid_authorization_details", "unsupported authorization details type \(type)")
            }
            guard let id = object["credential_configuration_id"]?.stringValue else {
                throw .badRequest("invalid_authorization_details", "credential_configuration_id is missing")
            }
            guard configuration.credentialConfiguration(id) != nil else {
                throw .badRequest("invalid_authorization_details", "unknown credential_configuration_id \(id)")
            }
            if let claims = object["claims"] {
                guard let list = claims.arrayValue, !list.isEmpty, list.allSatisfy({ $0.objectValue?["path"]?.arrayValue != nil }) else {
                    throw .badRequest("invalid_authorization_details", "claims is not a non-empty array of claims descriptions")
                }
            }
            // §5.1.1: with authorization_servers in the metadata, locations must name the issuer.
            if endpoints.hasSeparateAuthorizationServer {
                guard object["locations"]?.stringArrayValue?.contains(credentialIssuer) == true else {
                    throw .badRequest("invalid_authorization_details", "locations must name the credential issuer")
                }
            }
            if !ids.contains(id) { ids.append(id) }
        }
        return ids
    }

    // MARK: Authorization endpoint

    func authorize(_ request: HTTPRequest) async throws(EndpointRefusal) -> HTTPResponse {
        let query = try IssuerHTTP.queryParameters(of: request)
        let authorization: AuthorizationParameters
        let pushed: Bool
        if let requestURI = try query.optional("request_uri") {
            // RFC 9126 §4: only the pushed parameters count; client_id must match.
            let clientId = try query.required("client_id")
            guard requestURI.hasPrefix(Self.requestURIPrefix),
                  let stored = pushedRequests.removeValue(forKey: String(requestURI.dropFirst(Self.requestURIPrefix.count))) else {
                throw .invalidRequest("request_uri is unknown or was used already")
            }
            guard stored.expiresAt > clock.now else { throw .invalidRequest("request_uri expired") }
            guard stored.parameters.clientId == clientId else { throw .invalidRequest("client_id does not match the pushed request") }
            authorization = stored.parameters
            pushed = true
        } else {
            guard configuration.par != .required else {
                throw .invalidRequest("this authorization server requires pushed authorization requests")
            }
            authorization = try authorizationParameters(query, dpopKeyThumbprint: try query.optional("dpop_jkt"))
            pushed = false
        }
        record.authorizationRequests.append(IssuerInspection.AuthorizationRequestRecord(
            clientId: authorization.clientId, redirectURI: authorization.redirectURI, state: authorization.state,
            credentialConfigurationIds: authorization.configurationIds,
            usedAuthorizationDetails: authorization.usedAuthorizationDetails, issuerState: authorization.issuerState,
            pushed: pushed, dpopKeyThumbprint: authorization.dpopKeyThumbprint))
        let summary = AuthorizationRequestSummary(
            clientId: authorization.clientId, redirectURI: authorization.redirectURI,
            credentialConfigurationIds: authorization.configurationIds, issuerState: authorization.issuerState, pushed: pushed)
        let decision = await configuration.approval.decide(summary)
        var response: [(String, String)] = []
        switch decision {
        case .approve:
            let code = try randomValue(32)
            authorizationCodes[code] = AuthorizationCodeRecord(
                parameters: authorization, expiresAt: clock.now.addingTimeInterval(configuration.lifetimes.authorizationCode),
                grantId: try randomValue(16))
            response.append(("code", code))
        case .deny(let error):
            response.append(("error", error))
        }
        let behaviour = configuration.behaviour
        if let state = behaviour.redirectState ?? authorization.state { response.append(("state", state)) }
        if !behaviour.omitRedirectIssuer { response.append(("iss", behaviour.redirectIssuer ?? authorizationServer)) }
        let separator = authorization.redirectURI.contains("?") ? "&" : "?"
        return try IssuerHTTP.redirect(authorization.redirectURI + separator + FormURLEncoding.encode(response))
    }

    // MARK: Token endpoint

    func token(_ request: HTTPRequest) throws(EndpointRefusal) -> HTTPResponse {
        let parameters = try IssuerHTTP.formParameters(of: request)
        // The DPoP proof is checked first, so that a nonce challenge does not spend the code.
        let proof = try checkDPoP(request, site: .authorizationServer, path: endpoints.tokenPath, accessToken: nil)
        if configuration.dpop.mode == .required, proof == nil {
            throw .badRequest("invalid_dpop_proof", "a DPoP proof is required at the token endpoint")
        }
        let grantType = try parameters.required("grant_type")
        let details = try parameters.optional("authorization_details")
        record.tokenRequests.append(IssuerInspection.TokenRequestRecord(
            grantType: grantType, clientId: try parameters.optional("client_id"), txCode: try parameters.optional("tx_code"),
            dpopKeyThumbprint: proof?.keyThumbprint, sentAuthorizationDetails: details != nil))
        if let error = configuration.behaviour.tokenError { throw .badRequest(error, "refused on purpose") }
        switch grantType {
        case "authorization_code":
            return try authorizationCodeGrant(parameters, details: details, proof: proof)
        case Self.preAuthorizedGrantType:
            return try preAuthorizedCodeGrant(parameters, details: details, proof: proof)
        case "refresh_token" where configuration.refreshTokens:
            return try refreshTokenGrant(parameters, proof: proof)
        default:
            throw .badRequest("unsupported_grant_type", "grant_type \(grantType) is not supported")
        }
    }

    private func authorizationCodeGrant(_ parameters: FormParameters, details: String?, proof: VerifiedDPoPProof?)
        throws(EndpointRefusal) -> HTTPResponse {
        let code = try parameters.required("code")
        let clientId = try parameters.required("client_id")
        let redirectURI = try parameters.required("redirect_uri")
        let verifier = try parameters.required("code_verifier")
        // RFC 7636 §4.1: 43 to 128 unreserved characters.
        guard (43...128).contains(verifier.count), verifier.utf8.allSatisfy(Self.isUnreserved) else {
            throw .invalidRequest("code_verifier is not 43 to 128 unreserved characters")
        }
        guard var stored = authorizationCodes[code] else { throw .badRequest("invalid_grant", "unknown authorization code") }
        guard !stored.used else {
            // RFC 6749 §4.1.2: a code used twice revokes what it produced.
            revokeGrant(stored.grantId)
            throw .badRequest("invalid_grant", "the authorization code was used already")
        }
        guard stored.expiresAt > clock.now else { throw .badRequest("invalid_grant", "the authorization code expired") }
        guard stored.parameters.clientId == clientId else { throw .badRequest("invalid_grant", "client_id does not match the code") }
        guard stored.parameters.redirectURI == redirectURI else {
            throw .badRequest("invalid_grant", "redirect_uri does not match the authorization request")
        }
        // RFC 7636 §4.6: BASE64URL(SHA256(ASCII(code_verifier))) == code_challenge.
        guard Base64URL.encode(SHA256.digest(Array(verifier.utf8))) == stored.parameters.codeChallenge else {
            throw .badRequest("invalid_grant", "code_verifier does not match the code_challenge")
        }
        if let bound = stored.parameters.dpopKeyThumbprint, bound != proof?.keyThumbprint {
            throw .badRequest("invalid_dpop_proof", "the DPoP key is not the one the authorization request was bound to")
        }
        var context = AuthorizationContext(clientId: clientId, configurationIds: stored.parameters.configurationIds,
                                           usedAuthorizationDetails: stored.parameters.usedAuthorizationDetails)
        if let details { try narrow(&context, to: details) }
        stored.used = true
        authorizationCodes[code] = stored
        return try issueTokens(context: context, grantId: stored.grantId, proof: proof)
    }

    private func preAuthorizedCodeGrant(_ parameters: FormParameters, details: String?, proof: VerifiedDPoPProof?)
        throws(EndpointRefusal) -> HTTPResponse {
        let code = try parameters.required("pre-authorized_code")
        let clientId = try parameters.optional("client_id")
        let txCode = try parameters.optional("tx_code")
        guard var stored = preAuthorizedCodes[code] else { throw .badRequest("invalid_grant", "unknown pre-authorized code") }
        guard !stored.used else { throw .badRequest("invalid_grant", "the pre-authorized code was used already") }
        guard stored.expiresAt > clock.now else { throw .badRequest("invalid_grant", "the pre-authorized code expired") }
        if clientId == nil, !configuration.anonymousPreAuthorizedAccess {
            throw .badRequest("invalid_client", "anonymous access is not supported: send client_id")
        }
        // OpenID4VCI 1.0 §6.3: a missing or unexpected code is invalid_request, a wrong one invalid_grant.
        switch (stored.txCode, txCode) {
        case (nil, nil):
            break
        case (nil, .some):
            throw .invalidRequest("this pre-authorized code takes no tx_code")
        case (.some, nil):
            throw .invalidRequest("tx_code is required")
        case (.some(let expected), .some(let given)):
            if configuration.behaviour.rejectEveryTxCode || !ConstantTime.equals(Array(expected.utf8), Array(given.utf8)) {
                stored.attemptsLeft -= 1
                if stored.attemptsLeft <= 0 { stored.used = true }
                preAuthorizedCodes[code] = stored
                throw .badRequest("invalid_grant", "wrong tx_code")
            }
        }
        var context = AuthorizationContext(clientId: clientId, configurationIds: stored.configurationIds,
                                           usedAuthorizationDetails: false)
        if let details { try narrow(&context, to: details) }
        stored.used = true
        preAuthorizedCodes[code] = stored
        return try issueTokens(context: context, grantId: stored.grantId, proof: proof)
    }

    private func refreshTokenGrant(_ parameters: FormParameters, proof: VerifiedDPoPProof?) throws(EndpointRefusal) -> HTTPResponse {
        let token = try parameters.required("refresh_token")
        let clientId = try parameters.optional("client_id")
        guard var stored = refreshTokens[token] else { throw .badRequest("invalid_grant", "unknown refresh token") }
        guard !stored.used else {
            revokeGrant(stored.grantId)
            throw .badRequest("invalid_grant", "the refresh token was used already")
        }
        guard stored.context.clientId == clientId else { throw .badRequest("invalid_grant", "client_id does not match the refresh token") }
        // RFC 9449 §5: a refresh token issued with DPoP is bound to that key.
        if let bound = stored.dpopKeyThumbprint, bound != proof?.keyThumbprint {
            throw .badRequest("invalid_grant", "the refresh token is bound to another DPoP key")
        }
        stored.used = true
        refreshTokens[token] = stored
        return try issueTokens(context: stored.context, grantId: stored.grantId, proof: proof,
                               refreshBinding: stored.dpopKeyThumbprint)
    }

    /// Applies a token request's `authorization_details`: a subset of what was authorized
    /// (§6.1.1), and from then on identifiers are bound.
    private func narrow(_ context: inout AuthorizationContext, to details: String) throws(EndpointRefusal) {
        let ids = try authorizationDetailsConfigurations(details)
        for id in ids where !context.configurationIds.contains(id) {
            throw .badRequest("invalid_authorization_details", "\(id) was not authorized")
        }
        context.configurationIds = ids
        context.usedAuthorizationDetails = true
    }

    private func issueTokens(context original: AuthorizationContext, grantId: String, proof: VerifiedDPoPProof?,
                             refreshBinding: String? = nil) throws(EndpointRefusal) -> HTTPResponse {
        var context = original
        let bindsIdentifiers = context.usedAuthorizationDetails || configuration.credentialIdentifiers == .always
        context.identifiers = [:]
        var details: [JSONValue] = []
        if bindsIdentifiers {
            for id in context.configurationIds {
                guard let credential = configuration.credentialConfiguration(id) else { continue }
                for identifier in credential.credentialIdentifiers { context.identifiers[identifier] = id }
                details.append([
                    "type": "openid_credential", "credential_configuration_id": .string(id),
                    "credential_identifiers": .array(credential.credentialIdentifiers.map { .string($0) }),
                ])
            }
        }
        let jkt = proof?.keyThumbprint ?? refreshBinding
        let accessToken = try randomValue(32)
        accessTokens[accessToken] = AccessTokenRecord(
            grantId: grantId, context: context, dpopKeyThumbprint: jkt,
            expiresAt: clock.now.addingTimeInterval(configuration.lifetimes.accessToken))
        var body: JSONObject = [
            "access_token": .string(accessToken),
            "token_type": .string(jkt == nil ? "Bearer" : "DPoP"),
            "expires_in": .integer(Int64(configuration.lifetimes.accessToken)),
        ]
        if configuration.refreshTokens {
            let refreshToken = try randomValue(32)
            refreshTokens[refreshToken] = RefreshTokenRecord(grantId: grantId, context: original, dpopKeyThumbprint: jkt)
            body["refresh_token"] = .string(refreshToken)
        }
        if bindsIdentifiers { body["authorization_details"] = .array(details) }
        return IssuerHTTP.json(.object(body), headers: try dpopNonceHeaders())
    }

    /// Revokes every access and refresh token of a grant.
    func revokeGrant(_ grantId: String) {
        for (token, var stored) in accessTokens where stored.grantId == grantId {
            stored.revoked = true
            accessTokens[token] = stored
        }
        for (token, var stored) in refreshTokens where stored.grantId == grantId {
            stored.used = true
            refreshTokens[token] = stored
        }
    }

    static func isUnreserved(_ byte: UInt8) -> Bool {
        switch byte {
        case UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "0")...UInt8(ascii: "9"),
             UInt8(ascii: "-"), UInt8(ascii: "."), UInt8(ascii: "_"), UInt8(ascii: "~"):
            true
        default:
            false
        }
    }
}
