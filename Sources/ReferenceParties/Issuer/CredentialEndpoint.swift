import Foundation
import JOSE
import WalletCrypto
import WalletEncoding
import WalletRuntime

/// The credential issuer's endpoints: nonce (OpenID4VCI 1.0 §7), credential (§8),
/// deferred credential (§9) and notification (§11), with access-token and DPoP checks
/// (RFC 6750, RFC 9449 §7) and encrypted requests and responses (§10).
extension ReferenceIssuer {
    // MARK: Nonce endpoint

    func nonce(_ request: HTTPRequest) throws(EndpointRefusal) -> HTTPResponse {
        // §7.1: an empty POST.
        guard (request.body ?? []).isEmpty else { throw .invalidRequest("a nonce request has no body") }
        let value = try randomValue(24)
        purge(&cNonces)
        cNonces[value] = clock.now.addingTimeInterval(configuration.lifetimes.cNonce)
        return IssuerHTTP.json(["c_nonce": .string(value)], headers: try dpopNonceHeaders())
    }

    /// The `c_nonce` values still valid now.
    private var validCNonces: Set<String> {
        let now = clock.now
        return Set(cNonces.filter { $0.value > now }.keys)
    }

    // MARK: Access tokens at protected endpoints

    /// RFC 6750 §2.1 and RFC 9449 §7.1: the access token in `Authorization`, with a DPoP
    /// proof for a DPoP-bound token. Returns the token's record.
    func authorizeResource(_ request: HTTPRequest, path: String) throws(EndpointRefusal) -> (token: String, record: AccessTokenRecord) {
        let dpopEnabled = configuration.dpop.mode != .disabled
        let algorithms = dpopEnabled ? configuration.dpop.algorithms : []
        func challenge(_ scheme: String, _ error: String, _ description: String?) -> EndpointRefusal {
            EndpointRefusal(status: 401, error: error, description: description,
                            form: .challenge(scheme: scheme, algs: scheme == "DPoP" ? algorithms : []))
        }
        guard let header = request.headers["Authorization"] else {
            var refusal = challenge(dpopEnabled ? "DPoP" : "Bearer", "invalid_token", "no access token")
            refusal.bareChallenge = true
            throw refusal
        }
        let parts = header.split(separator: " ", maxSplits: 1, omittingEmptySubsequences: true)
        guard parts.count == 2 else { throw challenge("Bearer", "invalid_request", "malformed Authorization header") }
        let scheme = parts[0].lowercased()
        let token = String(parts[1]).trimmingCharacters(in: .whitespaces)
        let presented = scheme == "dpop" ? "DPoP" : "Bearer"
        guard scheme == "dpop" || scheme == "bearer" else {
            throw challenge(dpopEnabled ? "DPoP" : "Bearer", "invalid_request", "unsupported authorization scheme")
        }
        guard let stored = accessTokens[token], !stored.revoked, stored.expiresAt > clock.now else {
            throw challenge(presented, "invalid_token", "the access token is unknown, revoked or expired")
        }
        if let bound = stored.dpopKeyThumbprint {
            guard scheme == "dpop" else {
                throw challenge("DPoP", "invalid_token", "a DPoP-bound access token was sent as a bearer token")
            }
            guard let proof = try checkDPoP(request, site: .resource, path: path, accessToken: token) else {
                throw challenge("DPoP", "invalid_dpop_proof", "a DPoP proof is required with this access token")
            }
            guard proof.keyThumbprint == bound else {
                throw challenge("DPoP", "invalid_dpop_proof", "the DPoP key is not the one the access token is bound to")
            }
        } else if scheme == "dpop" {
            throw challenge("Bearer", "invalid_token", "the access token is not DPoP-bound")
        }
        return (token, stored)
    }

    // MARK: Request bodies

    /// The JSON body of a credential or deferred request: plain `application/json`, or
    /// a compact JWE (`application/jwt`) to one of `credential_request_encryption.jwks`.
    private func protectedRequestBody(_ request: HTTPRequest) throws(EndpointRefusal) -> (body: JSONObject, encrypted: Bool) {
        let bytes = request.body ?? []
        switch request.mediaType {
        case "application/json":
            if configuration.requestEncryption?.required == true {
                throw .badRequest("invalid_encryption_parameters", "credential requests must be encrypted")
            }
            do { return (try JSONValue.parseObject(bytes), false) } catch {
                throw .badRequest("invalid_credential_request", "the body is not a JSON object")
            }
        case "application/jwt":
            guard let support = configuration.requestEncryption else {
                throw .badRequest("invalid_encryption_parameters", "this issuer does not accept encrypted requests")
            }
            guard let compact = UTF8Validation.string(bytes) else { throw .badRequest("invalid_credential_request", "the JWE is not text") }
            let jwe: JWE
            do { jwe = try JWE(compact: compact) } catch {
                throw .badRequest("invalid_encryption_parameters", "the body is not a compact ECDH-ES JWE")
            }
            guard support.contentEncryption.contains(jwe.contentEncryption.rawValue) else {
                throw .badRequest("invalid_encryption_parameters", "enc \(jwe.contentEncryption.rawValue) is not supported")
            }
            if let zip = jwe.header.compression, !support.compression.contains(zip) {
                throw .badRequest("invalid_encryption_parameters", "zip \(zip) is not supported")
            }
            // §10: the kid of the chosen key is echoed in the JWE header.
            guard let kid = jwe.header.keyID else { throw .badRequest("invalid_encryption_parameters", "the JWE header has no kid") }
            guard let key = requestEncryptionKeys.first(where: { $0.keyID == kid }) else {
                throw .badRequest("invalid_encryption_parameters", "kid names no request-encryption key")
            }
            let plaintext: [UInt8]
            do { plaintext = try jwe.decrypt(with: key.key, recipientKeyID: kid) } catch {
                throw .badRequest("invalid_encryption_parameters", "the JWE does not decrypt")
            }
            do { return (try JSONValue.parseObject(plaintext), true) } catch {
                throw .badRequest("invalid_credential_request", "the decrypted request is not a JSON object")
            }
        default:
            throw .badRequest("invalid_credential_request", "expected Content-Type application/json or application/jwt")
        }
    }

    /// `credential_response_encryption` of a request, checked against the metadata.
    private func responseEncryption(_ body: JSONObject, encryptedRequest: Bool) throws(EndpointRefusal) -> ResponseEncryption? {
        guard let member = body["credential_response_encryption"], !member.isNull else {
            if configuration.responseEncryption?.required == true {
                throw .badRequest("invalid_encryption_parameters", "this issuer requires encrypted responses")
            }
            return nil
        }
        guard let support = configuration.responseEncryption else {
            throw .badRequest("invalid_encryption_parameters", "this issuer does not encrypt responses")
        }
        // §8.2: asking for response encryption needs an encrypted request, so the key
        // cannot be swapped on the way (unless the issuer advertised no request keys on purpose).
        if !encryptedRequest, configuration.requestEncryption != nil {
            throw .badRequest("invalid_encryption_parameters", "credential_response_encryption needs an encrypted request")
        }
        guard let object = member.objectValue, let jwkMembers = object["jwk"]?.objectValue,
              let enc = object["enc"]?.stringValue else {
            throw .badRequest("invalid_encryption_parameters", "credential_response_encryption needs jwk and enc")
        }
        let key: JWK
        do { key = try JWK(members: jwkMembers) } catch {
            throw .badRequest("invalid_encryption_parameters", "credential_response_encryption.jwk is not a JWK")
        }
        guard key.keyType == .ec, !key.isPrivate else {
            throw .badRequest("invalid_encryption_parameters", "the response encryption key is not a public EC key")
        }
        // §10: the alg of the chosen key must be present; ECDH-ES is the one advertised.
        guard key.algorithm == "ECDH-ES" else {
            throw .badRequest("invalid_encryption_parameters", "the response encryption key must have alg ECDH-ES")
        }
        guard support.contentEncryption.contains(enc), let algorithm = ContentEncryptionAlgorithm(rawValue: enc) else {
            throw .badRequest("invalid_encryption_parameters", "enc \(enc) is not supported")
        }
        var compress = false
        if let zip = object["zip"] {
            guard let value = zip.stringValue, support.compression.contains(value) else {
                throw .badRequest("invalid_encryption_parameters", "zip is not supported")
            }
            compress = true
        }
        return ResponseEncryption(key: key, contentEncryption: algorithm, compress: compress)
    }

    /// A credential or deferred response, encrypted when the wallet asked for it.
    private func protectedResponse(_ body: JSONObject, status: Int, encryption: ResponseEncryption?,
                                   bound: Bool) throws(EndpointRefusal) -> HTTPResponse {
        let headers = bound ? try dpopNonceHeaders() : HTTPHeaders()
        guard let encryption, !configuration.behaviour.answerPlaintextToEncryptedRequest else {
            return IssuerHTTP.json(.object(body), status: status, headers: headers)
        }
        do {
            let jwe = try JWE.encrypt(JSONValue.object(body).serializedBytes, to: encryption.key,
                                      contentEncryption: encryption.contentEncryption, compress: encryption.compress)
            return IssuerHTTP.jwt(jwe.compactSerialization, status: status, headers: headers)
        } catch {
            throw .badRequest("invalid_encryption_parameters", "the response cannot be encrypted to this key")
        }
    }

    // MARK: Credential endpoint

    func credential(_ request: HTTPRequest) async throws(EndpointRefusal) -> HTTPResponse {
        let (_, token) = try authorizeResource(request, path: endpoints.credentialPath)
        if let error = configuration.behaviour.credentialError { throw .badRequest(error, "refused on purpose") }
        let (body, encrypted) = try protectedRequestBody(request)
        let credential = try requestedConfiguration(body, context: token.context)
        let encryption = try responseEncryption(body, encryptedRequest: encrypted)
        if body["proof"] != nil { throw .badRequest("invalid_credential_request", "use proofs, not the draft proof member") }
        var proofs = VerifiedKeyProofs()
        var failure: KeyProofProblem?
        if let member = body["proofs"] {
            let check = KeyProofCheck(
                credentialIssuer: credentialIssuer, configuration: credential, clientId: token.context.clientId,
                requireIssuer: configuration.requireProofIssuer, requireNonce: configuration.nonceEndpoint,
                validNonces: validCNonces, attestationAnchors: configuration.keyAttestationTrustAnchors,
                maxKeys: configuration.batchSize ?? 1, now: clock.now,
                maxAge: configuration.lifetimes.proofMaxAge, clockSkew: configuration.lifetimes.clockSkew)
            do { proofs = try check.verify(member) } catch { failure = error }
        } else {
            // §8.2: proofs are required when the configuration lists proof types (ours always do).
            failure = .invalidProof(.proofsMissing)
        }
        record.credentialRequests.append(IssuerInspection.CredentialRequestRecord(
            credentialIdentifier: body["credential_identifier"]?.stringValue,
            credentialConfigurationId: body["credential_configuration_id"]?.stringValue, encrypted: encrypted,
            responseEncryption: encryption?.contentEncryption.rawValue, proofs: proofs.records,
            dpopKeyThumbprint: token.dpopKeyThumbprint))
        if let failure { throw failure.refusal }
        // A c_nonce answers one request.
        for nonce in proofs.nonces { cNonces[nonce] = nil }
        var keys = proofs.keys
        if configuration.behaviour.issueFewerCredentials { keys = Array(keys.prefix(1)) }
        let bound = token.dpopKeyThumbprint != nil
        if let deferral = configuration.deferral {
            let transactionId = try randomValue(16)
            deferredTransactions[transactionId] = DeferredTransactionRecord(
                grantId: token.grantId, configurationId: credential.id, keys: keys, pollsLeft: deferral.pendingPolls)
            var answer: JSONObject = ["transaction_id": .string(transactionId)]
            if deferral.style == .accepted { answer["interval"] = .integer(Int64(deferral.interval)) }
            return try protectedResponse(answer, status: 202, encryption: encryption, bound: bound)
        }
        let issued = try await mint(credential, keys: keys)
        return try protectedResponse(try issuedBody(issued, configurationId: credential.id, grantId: token.grantId),
                                     status: 200, encryption: encryption, bound: bound)
    }

    /// `credential_identifier` or `credential_configuration_id` (§8.2), checked against
    /// what the access token authorizes.
    private func requestedConfiguration(_ body: JSONObject, context: AuthorizationContext)
        throws(EndpointRefusal) -> IssuerCredentialConfiguration {
        let identifier = body["credential_identifier"], configurationId = body["credential_configuration_id"]
        if let identifier, let configurationId, !identifier.isNull, !configurationId.isNull {
            throw .badRequest("invalid_credential_request", "credential_identifier and credential_configuration_id exclude each other")
        }
        let id: String
        if let value = identifier, !value.isNull {
            guard let text = value.stringValue else { throw .badRequest("invalid_credential_request", "credential_identifier is not a string") }
            guard !context.identifiers.isEmpty else {
                throw .badRequest("invalid_credential_request",
                                  "the token response bound no credential_identifiers: use credential_configuration_id")
            }
            guard let mapped = context.identifiers[text] else {
                throw .badRequest("unknown_credential_identifier", "unknown credential_identifier")
            }
            id = mapped
        } else if let value = configurationId, !value.isNull {
            guard let text = value.stringValue else {
                throw .badRequest("invalid_credential_request", "credential_configuration_id is not a string")
            }
            guard context.identifiers.isEmpty else {
                throw .badRequest("invalid_credential_request",
                                  "the token response bound credential_identifiers: use credential_identifier")
            }
            guard configuration.credentialConfiguration(text) != nil else {
                throw .badRequest("unknown_credential_configuration", "unknown credential_configuration_id")
            }
            guard context.configurationIds.contains(text) else {
                throw EndpointRefusal(status: 403, error: "insufficient_scope",
                                      description: "the access token does not authorize this credential configuration",
                                      form: .challenge(scheme: configuration.dpop.mode == .disabled ? "Bearer" : "DPoP"))
            }
            id = text
        } else {
            throw .badRequest("invalid_credential_request", "credential_identifier or credential_configuration_id is required")
        }
        guard let credential = configuration.credentialConfiguration(id) else {
            throw .badRequest("unknown_credential_configuration", "unknown credential configuration")
        }
        return credential
    }

    private func issuedBody(_ issued: [String], configurationId: String, grantId: String) throws(EndpointRefusal) -> JSONObject {
        var body: JSONObject = ["credentials": .array(issued.map { ["credential": .string($0)] })]
        if configuration.notificationEndpoint {
            let id = try randomValue(12)
            notificationIds[id] = NotificationRecord(grantId: grantId, configurationId: configurationId)
            body["notification_id"] = .string(id)
        }
        return body
    }

    // MARK: Deferred credential endpoint

    func deferredCredential(_ request: HTTPRequest) async throws(EndpointRefusal) -> HTTPResponse {
        let (_, token) = try authorizeResource(request, path: endpoints.deferredPath)
        let (body, encrypted) = try protectedRequestBody(request)
        // §9.1: the response is encrypted to what this request says, not the first one.
        let encryption = try responseEncryption(body, encryptedRequest: encrypted)
        guard let transactionId = body["transaction_id"]?.stringValue else {
            throw .badRequest("invalid_credential_request", "transaction_id is missing")
        }
        record.deferredRequests.append(transactionId)
        guard var transaction = deferredTransactions[transactionId], transaction.grantId == token.grantId,
              let deferral = configuration.deferral else {
            throw .badRequest("invalid_transaction_id", "unknown transaction_id")
        }
        let bound = token.dpopKeyThumbprint != nil
        if transaction.pollsLeft > 0 {
            transaction.pollsLeft -= 1
            deferredTransactions[transactionId] = transaction
            switch deferral.style {
            case .accepted:
                return try protectedResponse(["transaction_id": .string(transactionId),
                                              "interval": .integer(Int64(deferral.interval))],
                                             status: 202, encryption: encryption, bound: bound)
            case .legacyIssuancePending:
                var refusal = EndpointRefusal.badRequest("issuance_pending", "the credential is not ready yet")
                refusal.extraMembers = ["interval": .integer(Int64(deferral.interval))]
                throw refusal
            }
        }
        guard let credential = configuration.credentialConfiguration(transaction.configurationId) else {
            throw .badRequest("invalid_transaction_id", "the transaction's configuration is gone")
        }
        // §9.1: the transaction id is invalidated once its credentials are obtained.
        deferredTransactions[transactionId] = nil
        let issued = try await mint(credential, keys: transaction.keys)
        return try protectedResponse(try issuedBody(issued, configurationId: credential.id, grantId: token.grantId),
                                     status: 200, encryption: encryption, bound: bound)
    }

    // MARK: Notification endpoint

    func notification(_ request: HTTPRequest) throws(EndpointRefusal) -> HTTPResponse {
        let (_, token) = try authorizeResource(request, path: endpoints.notificationPath)
        guard request.mediaType == "application/json" else {
            throw .badRequest("invalid_notification_request", "expected Content-Type application/json")
        }
        let body: JSONObject
        do { body = try JSONValue.parseObject(request.body ?? []) } catch {
            throw .badRequest("invalid_notification_request", "the body is not a JSON object")
        }
        guard let id = body["notification_id"]?.stringValue, let event = body["event"]?.stringValue else {
            throw .badRequest("invalid_notification_request", "notification_id and event are required strings")
        }
        let description = body["event_description"]
        if let description {
            guard let text = description.stringValue, text.unicodeScalars.allSatisfy({
                (0x20...0x7E).contains($0.value) && $0.value != 0x22 && $0.value != 0x5C
            }) else {
                throw .badRequest("invalid_notification_request", "event_description is not restricted ASCII text")
            }
        }
        let events = ["credential_accepted", "credential_failure", "credential_deleted"]
        let known = notificationIds[id].map { $0.grantId == token.grantId } ?? false
        let accepted = events.contains(event) && known
        record.notifications.append(IssuerInspection.NotificationRecordEntry(
            notificationId: id, event: event, eventDescription: description?.stringValue, accepted: accepted))
        guard events.contains(event) else { throw .badRequest("invalid_notification_request", "unknown event \(event)") }
        guard known else { throw .badRequest("invalid_notification_id", "unknown notification_id") }
        // §11: notifications are idempotent; the id stays valid.
        return HTTPResponse(status: 204, headers: ["Cache-Control": "no-store"])
    }
}
