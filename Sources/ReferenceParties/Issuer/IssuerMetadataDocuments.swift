import Foundation
import JOSE
import WalletCrypto
import WalletEncoding
import WalletRuntime

/// The metadata documents: credential issuer metadata (OpenID4VCI 1.0 §12.2),
/// authorization server metadata (RFC 8414 with the OpenID4VCI, PAR and DPoP
/// parameters) and SD-JWT VC issuer metadata (`/.well-known/jwt-vc-issuer`).
extension ReferenceIssuer {
    /// The media type of signed metadata, and its `typ` (OpenID4VCI 1.0 §12.2.3).
    static let signedMetadataType = "openidvci-issuer-metadata+jwt"

    func credentialIssuerMetadata() -> JSONObject {
        var metadata: JSONObject = ["credential_issuer": .string(credentialIssuer)]
        if endpoints.hasSeparateAuthorizationServer {
            metadata["authorization_servers"] = [.string(authorizationServer)]
        }
        metadata["credential_endpoint"] = .string(endpoints.url(endpoints.credentialPath))
        if configuration.nonceEndpoint { metadata["nonce_endpoint"] = .string(endpoints.url(endpoints.noncePath)) }
        if configuration.deferral != nil {
            metadata["deferred_credential_endpoint"] = .string(endpoints.url(endpoints.deferredPath))
        }
        if configuration.notificationEndpoint {
            metadata["notification_endpoint"] = .string(endpoints.url(endpoints.notificationPath))
        }
        if let support = configuration.requestEncryption {
            var member: JSONObject = [
                "jwks": .object(["keys": .array(requestEncryptionKeys.map { Self.encryptionJWK($0.key, keyID: $0.keyID) })]),
                "enc_values_supported": .array(support.contentEncryption.map { .string($0) }),
            ]
            if !support.compression.isEmpty { member["zip_values_supported"] = .array(support.compression.map { .string($0) }) }
            member["encryption_required"] = .bool(support.required)
            metadata["credential_request_encryption"] = .object(member)
        }
        if let support = configuration.responseEncryption {
            var member: JSONObject = [
                "alg_values_supported": ["ECDH-ES"],
                "enc_values_supported": .array(support.contentEncryption.map { .string($0) }),
            ]
            if !support.compression.isEmpty { member["zip_values_supported"] = .array(support.compression.map { .string($0) }) }
            member["encryption_required"] = .bool(support.required)
            metadata["credential_response_encryption"] = .object(member)
        }
        if let batchSize = configuration.batchSize {
            metadata["batch_credential_issuance"] = ["batch_size": .integer(Int64(batchSize))]
        }
        if !configuration.display.isEmpty {
            metadata["display"] = .array(configuration.display.map { display in
                var entry: JSONObject = ["name": .string(display.name)]
                if let locale = display.locale { entry["locale"] = .string(locale) }
                if let logo = display.logoURI { entry["logo"] = ["uri": .string(logo)] }
                return .object(entry)
            })
        }
        var supported: JSONObject = [:]
        for credential in configuration.credentialConfigurations {
            supported[credential.id] = .object(Self.configurationMetadata(credential))
        }
        metadata["credential_configurations_supported"] = .object(supported)
        return metadata
    }

    static func encryptionJWK(_ key: ECPrivateKey, keyID: String) -> JSONValue {
        var members = JWK(publicKey: key.publicKey).members
        members["kid"] = .string(keyID)
        members["use"] = "enc"
        members["alg"] = "ECDH-ES"
        return .object(members)
    }

    static func configurationMetadata(_ credential: IssuerCredentialConfiguration) -> JSONObject {
        var entry: JSONObject = ["format": .string(credential.format.identifier)]
        if let scope = credential.scope { entry["scope"] = .string(scope) }
        switch credential.format {
        case .sdJwtVc(let vct, _, _):
            entry["vct"] = .string(vct)
            entry["cryptographic_binding_methods_supported"] = ["jwk"]
            entry["credential_signing_alg_values_supported"] = ["ES256"]
        case .msoMdoc(let docType, _):
            entry["doctype"] = .string(docType)
            entry["cryptographic_binding_methods_supported"] = ["cose_key"]
            // OpenID4VCI 1.0 App. A.2.2: COSE algorithm identifiers (-7 is ES256).
            entry["credential_signing_alg_values_supported"] = [.integer(-7)]
        }
        var proofType: JSONObject = ["proof_signing_alg_values_supported": .array(credential.proofAlgorithms.map { .string($0) })]
        if let requirement = credential.keyAttestation {
            var required: JSONObject = [:]
            if !requirement.keyStorage.isEmpty { required["key_storage"] = .array(requirement.keyStorage.map { .string($0) }) }
            if !requirement.userAuthentication.isEmpty {
                required["user_authentication"] = .array(requirement.userAuthentication.map { .string($0) })
            }
            proofType["key_attestations_required"] = .object(required)
        }
        var proofTypes: JSONObject = ["jwt": .object(proofType)]
        if credential.offersAttestationProofType { proofTypes["attestation"] = .object(proofType) }
        entry["proof_types_supported"] = .object(proofTypes)
        var display: JSONObject = ["name": .string(credential.displayName), "locale": "en-US"]
        if let color = credential.backgroundColor { display["background_color"] = .string(color) }
        if let color = credential.textColor { display["text_color"] = .string(color) }
        var credentialMetadata: JSONObject = ["display": [.object(display)]]
        if !credential.claimDescriptions.isEmpty {
            credentialMetadata["claims"] = .array(credential.claimDescriptions.map { claim in
                var description: JSONObject = ["path": .array(claim.path.map { .string($0) })]
                if claim.mandatory { description["mandatory"] = true }
                description["display"] = [["name": .string(claim.name), "locale": "en-US"]]
                return .object(description)
            })
        }
        entry["credential_metadata"] = .object(credentialMetadata)
        return entry
    }

    func authorizationServerMetadata() -> JSONObject {
        var metadata: JSONObject = [
            "issuer": .string(authorizationServer),
            "authorization_endpoint": .string(endpoints.url(endpoints.authorizePath)),
            "token_endpoint": .string(endpoints.url(endpoints.tokenPath)),
        ]
        if configuration.par != .disabled {
            metadata["pushed_authorization_request_endpoint"] = .string(endpoints.url(endpoints.parPath))
            metadata["require_pushed_authorization_requests"] = .bool(configuration.par == .required)
        }
        metadata["response_types_supported"] = ["code"]
        metadata["grant_types_supported"] = .array(
            ["authorization_code", "urn:ietf:params:oauth:grant-type:pre-authorized_code"].map { .string($0) }
                + (configuration.refreshTokens ? ["refresh_token"] : []))
        metadata["code_challenge_methods_supported"] = ["S256"]
        metadata["token_endpoint_auth_methods_supported"] = ["none"]
        metadata["authorization_response_iss_parameter_supported"] = true
        metadata["authorization_details_types_supported"] = ["openid_credential"]
        metadata["scopes_supported"] = .array(configuration.credentialConfigurations.compactMap { $0.scope.map { .string($0) } })
        metadata["pre-authorized_grant_anonymous_access_supported"] = .bool(configuration.anonymousPreAuthorizedAccess)
        if configuration.dpop.mode != .disabled {
            metadata["dpop_signing_alg_values_supported"] = .array(configuration.dpop.algorithms.map { .string($0) })
        }
        return metadata
    }

    func jwtVCIssuerMetadata() -> JSONObject {
        var key = JWK(publicKey: pki.signingKey.publicKey).members
        key["kid"] = .string(pki.signingKeyID)
        key["use"] = "sig"
        key["alg"] = "ES256"
        return ["issuer": .string(credentialIssuer), "jwks": ["keys": [.object(key)]]]
    }

    /// The metadata as JSON, or as a signed JWT when asked through `Accept` and enabled.
    func credentialIssuerMetadataResponse(_ request: HTTPRequest) async throws(EndpointRefusal) -> HTTPResponse {
        var metadata = credentialIssuerMetadata()
        let mode = configuration.signedMetadata
        let accept = request.headers["Accept"]?.lowercased() ?? ""
        let wantsJWT = accept.contains("application/jwt")
        if (mode == .onRequest || mode == .both), wantsJWT {
            return IssuerHTTP.jwt(try await signedMetadata(metadata), headers: ["Content-Language": "en-US"])
        }
        if mode == .embedded || mode == .both {
            metadata["signed_metadata"] = .string(try await signedMetadata(metadata))
        }
        return IssuerHTTP.json(.object(metadata), headers: ["Content-Language": "en-US"])
    }

    /// OpenID4VCI 1.0 §12.2.3: typ `openidvci-issuer-metadata+jwt`, `sub` the issuer,
    /// `iat`, every metadata parameter as a claim, `x5c` chaining to the issuer root.
    private func signedMetadata(_ metadata: JSONObject) async throws(EndpointRefusal) -> String {
        var claims: JSONObject = [
            "sub": .string(credentialIssuer),
            "iat": .integer(Int64(clock.now.timeIntervalSince1970.rounded(.down))),
        ]
        for (name, value) in metadata where name != "signed_metadata" { claims[name] = value }
        do {
            let jwt = try await JWT.sign(claims: try JWTClaims(claims), signer: SoftwareSigner(pki.signingKey),
                                         type: Self.signedMetadataType, x5c: [issuerCertificate])
            return jwt.compactSerialization
        } catch {
            throw EndpointRefusal(status: 500, error: "server_error", description: "signing the metadata failed")
        }
    }
}
