import Foundation
import JOSE
import WalletCrypto
import WalletEncoding
import WalletRuntime

/// A reference OpenID4VCI 1.0 credential issuer and OAuth 2.0 authorization server, for
/// testing wallets against: metadata, offers, PAR, authorization with an approval hook,
/// the token endpoint with all three grants, DPoP with nonces, the nonce, credential,
/// deferred and notification endpoints, key proofs and key attestations, batches,
/// credential identifiers, encryption both ways, and SD-JWT VC and mdoc minting with
/// its own test PKI.
///
/// It is strict: every request is checked the way the specifications say a server
/// checks it, and anything off is refused with the specified error (and recorded in
/// ``inspection``), so a client bug shows up as a refusal. ``IssuerBehaviour`` makes it
/// misbehave on purpose.
///
/// The issuer is a request handler: ``respond(to:)`` turns one `HTTPRequest` value into
/// one `HTTPResponse` value. Tests call it in-process; a loopback server puts it on a
/// port. Time comes from the injected clock, randomness from the injected source.
///
/// ```swift
/// let issuer = try ReferenceIssuer(configuration: ReferenceIssuerConfiguration(dpop: .requiredWithNonce))
/// let offer = try await issuer.createOffer(.preAuthorized([IssuerCredentialConfiguration.pidId],
///                                                          txCode: .init(value: "493536")))
/// // hand offer.byValue to the wallet, answer its requests with issuer.respond(to:)
/// ```
public actor ReferenceIssuer {
    let clock: any WalletClock
    let random: any RandomSource
    let logger: any Logger
    var configuration: ReferenceIssuerConfiguration
    var endpoints: IssuerEndpoints
    let pki: IssuerTestPKI
    var issuerCertificate: X509Certificate
    var impostor: ImpostorKeys?
    /// The keys wallets encrypt credential requests to (`credential_request_encryption.jwks`).
    let requestEncryptionKeys: [(keyID: String, key: ECPrivateKey)]

    var pushedRequests: [String: PushedRequestRecord] = [:]
    var authorizationCodes: [String: AuthorizationCodeRecord] = [:]
    var preAuthorizedCodes: [String: PreAuthorizedCodeRecord] = [:]
    var issuerStates: [String: [String]] = [:]
    var accessTokens: [String: AccessTokenRecord] = [:]
    var refreshTokens: [String: RefreshTokenRecord] = [:]
    var cNonces: [String: Date] = [:]
    var dpopNonces: [String: Date] = [:]
    var seenDPoPProofs: [String: Date] = [:]
    var deferredTransactions: [String: DeferredTransactionRecord] = [:]
    var notificationIds: [String: NotificationRecord] = [:]
    var offers: [String: OfferRecord] = [:]
    var record = IssuerInspection()

    /// An issuer with `configuration`, its own fresh PKI, reading time from `clock`,
    /// drawing codes, tokens, nonces and salts from `random`, and logging each exchange
    /// (method, path, status, and the error of a refusal; never tokens, codes or bodies)
    /// to `logger`.
    public init(configuration: ReferenceIssuerConfiguration = ReferenceIssuerConfiguration(),
                clock: any WalletClock = SystemClock(), random: any RandomSource = SystemRandom(),
                logger: any Logger = SilentLogger()) throws(ReferenceIssuerError) {
        try configuration.validate()
        self.configuration = configuration
        self.clock = clock
        self.random = random
        self.logger = logger
        self.endpoints = IssuerEndpoints(origin: configuration.origin, issuerPath: configuration.issuerPath,
                                         authorizationServerPath: configuration.authorizationServerPath)
        let pki = try IssuerTestPKI.generate(now: clock.now, name: "Reference Issuer")
        self.pki = pki
        self.issuerCertificate = try pki.issuerCertificate(for: endpoints.credentialIssuer)
        do {
            let key = try ECPrivateKey.generate(curve: .p256)
            self.requestEncryptionKeys = [(keyID: "request-encryption-1", key: key)]
        } catch {
            throw .crypto(error)
        }
    }

    // MARK: Identity

    /// The Credential Issuer Identifier.
    public var credentialIssuer: String { endpoints.credentialIssuer }

    /// The authorization server's issuer identifier (the credential issuer's unless a
    /// separate authorization server path is configured).
    public var authorizationServer: String { endpoints.authorizationServer }

    /// The URL of the credential issuer metadata (well-known path inserted).
    public var metadataURL: String { endpoints.url(endpoints.issuerMetadataPath) }

    /// Moves the issuer to another origin (a loopback server's `http://127.0.0.1:port`):
    /// identifiers, endpoints and the SD-JWT VC issuer certificate follow. Offers made
    /// before name the old origin.
    public func setOrigin(_ origin: URL) throws(ReferenceIssuerError) {
        var updated = configuration
        updated.origin = origin
        try updated.validate()
        let newEndpoints = IssuerEndpoints(origin: origin, issuerPath: updated.issuerPath,
                                           authorizationServerPath: updated.authorizationServerPath)
        issuerCertificate = try pki.issuerCertificate(for: newEndpoints.credentialIssuer)
        configuration = updated
        endpoints = newEndpoints
    }

    /// What the issuer currently does wrong on purpose.
    public var behaviour: IssuerBehaviour { configuration.behaviour }

    /// Changes the deliberate faults from the next request on.
    public func setBehaviour(_ behaviour: IssuerBehaviour) throws(ReferenceIssuerError) {
        var updated = configuration
        updated.behaviour = behaviour
        try updated.validate()
        configuration = updated
    }

    /// The roots and key a wallet must trust for this issuer's credentials and metadata.
    public nonisolated var trustAnchors: IssuerTrustAnchors {
        IssuerTrustAnchors(iaca: pki.iaca, issuerRoot: pki.issuerRoot, signingKey: JWK(publicKey: pki.signingKey.publicKey))
    }

    // MARK: Inspection

    /// Everything received and issued so far.
    public var inspection: IssuerInspection { record }

    /// Forgets what was received (state such as codes and tokens stays).
    public func clearInspection() { record = IssuerInspection() }

    // MARK: Offers

    /// Makes an offer: registers its pre-authorized code (with the transaction code) and
    /// issuer state, serves the offer object for `credential_offer_uri`, and returns it
    /// with every way of handing it over.
    public func createOffer(_ request: CredentialOfferRequest) throws(ReferenceIssuerError) -> IssuedCredentialOffer {
        guard !request.configurationIds.isEmpty, request.preAuthorized != nil || request.authorizationCode != nil else {
            throw .emptyOffer
        }
        for id in request.configurationIds where configuration.credentialConfiguration(id) == nil {
            throw .unknownCredentialConfiguration(id)
        }
        let grantId = try offerRandom(16)
        var grants: JSONObject = [:]
        var preAuthorizedCode: String?, txCodeValue: String?, issuerState: String?
        if let authorization = request.authorizationCode {
            var grant: JSONObject = [:]
            if authorization.includesIssuerState {
                let state = try offerRandom(24)
                issuerStates[state] = request.configurationIds
                grant["issuer_state"] = .string(state)
                issuerState = state
            }
            if authorization.namesAuthorizationServer { grant["authorization_server"] = .string(authorizationServer) }
            grants["authorization_code"] = .object(grant)
        }
        if let preAuthorized = request.preAuthorized {
            let code = try offerRandom(32)
            var grant: JSONObject = ["pre-authorized_code": .string(code)]
            if let txCode = preAuthorized.txCode {
                let value: String
                if let given = txCode.value { value = given } else { value = try generateTxCode(txCode) }
                var description: JSONObject = [:]
                if let mode = txCode.inputMode { description["input_mode"] = .string(mode) }
                if txCode.advertisesLength { description["length"] = .integer(Int64(value.count)) }
                if let text = txCode.description { description["description"] = .string(text) }
                grant["tx_code"] = .object(description)
                txCodeValue = value
            }
            if preAuthorized.namesAuthorizationServer { grant["authorization_server"] = .string(authorizationServer) }
            grants["urn:ietf:params:oauth:grant-type:pre-authorized_code"] = .object(grant)
            preAuthorizedCodes[code] = PreAuthorizedCodeRecord(
                configurationIds: request.configurationIds, txCode: txCodeValue, attemptsLeft: configuration.maxTxCodeAttempts,
                expiresAt: clock.now.addingTimeInterval(configuration.lifetimes.preAuthorizedCode), grantId: grantId)
            preAuthorizedCode = code
        }
        let offer: JSONObject = [
            "credential_issuer": .string(credentialIssuer),
            "credential_configuration_ids": .array(request.configurationIds.map { .string($0) }),
            "grants": .object(grants),
        ]
        let offerId = try offerRandom(16)
        offers[offerId] = OfferRecord(offer: .object(offer))
        return IssuedCredentialOffer(offer: offer, preAuthorizedCode: preAuthorizedCode, txCode: txCodeValue,
                                     issuerState: issuerState, offerURL: endpoints.url(endpoints.offerPathPrefix + offerId))
    }

    private func offerRandom(_ count: Int) throws(ReferenceIssuerError) -> String {
        do {
            return Base64URL.encode(try random.bytes(count: count))
        } catch {
            throw .randomSourceFailed
        }
    }

    private func generateTxCode(_ spec: CredentialOfferRequest.TxCode) throws(ReferenceIssuerError) -> String {
        let alphabet = Array(spec.inputMode == "text" ? "ABCDEFGHJKLMNPQRSTUVWXYZ23456789" : "0123456789")
        let bytes: [UInt8]
        do { bytes = try random.bytes(count: max(1, spec.length)) } catch { throw .randomSourceFailed }
        // Modulo bias is irrelevant for a test code.
        return String(bytes.map { alphabet[Int($0) % alphabet.count] })
    }

    // MARK: Requests

    /// Answers one request: the issuer's whole HTTP surface. Never throws; a refused
    /// request gets its error answer and a ``IssuerInspection/Refusal`` record.
    public func respond(to request: HTTPRequest) async -> HTTPResponse {
        let path = request.path
        let response: HTTPResponse
        do {
            response = try await route(request, path: path)
            logger.info("\(request.method.rawValue) \(path) \(response.status)", module: "ReferenceIssuer")
        } catch {
            record.refusals.append(IssuerInspection.Refusal(path: path, status: error.status, error: error.error,
                                                            description: error.description))
            logger.warning("\(request.method.rawValue) \(path) \(error.status) \(error.error): \(error.description ?? "")",
                           module: "ReferenceIssuer")
            response = error.response
        }
        record.exchanges.append(IssuerInspection.Exchange(method: request.method.rawValue, path: path, status: response.status))
        return response
    }

    private func route(_ request: HTTPRequest, path: String) async throws(EndpointRefusal) -> HTTPResponse {
        let method = request.method
        func expect(_ allowed: HTTPMethod) throws(EndpointRefusal) {
            guard method == allowed else {
                var refusal = EndpointRefusal(status: 405, error: "invalid_request", description: "method not allowed")
                refusal.headers["Allow"] = allowed.rawValue
                throw refusal
            }
        }
        switch path {
        case endpoints.issuerMetadataPath:
            try expect(.get)
            return try await credentialIssuerMetadataResponse(request)
        case endpoints.oauthMetadataPath where configuration.authorizationServerMetadata != .openIDConfiguration,
             endpoints.openIDConfigurationPath where configuration.authorizationServerMetadata != .oauth:
            try expect(.get)
            return IssuerHTTP.json(.object(authorizationServerMetadata()))
        case endpoints.jwtVCIssuerMetadataPath:
            try expect(.get)
            return IssuerHTTP.json(.object(jwtVCIssuerMetadata()))
        case endpoints.parPath where configuration.par != .disabled:
            try expect(.post)
            return try pushedAuthorizationRequest(request)
        case endpoints.authorizePath:
            try expect(.get)
            return try await authorize(request)
        case endpoints.tokenPath:
            try expect(.post)
            return try token(request)
        case endpoints.noncePath where configuration.nonceEndpoint:
            try expect(.post)
            return try nonce(request)
        case endpoints.credentialPath:
            try expect(.post)
            return try await credential(request)
        case endpoints.deferredPath where configuration.deferral != nil:
            try expect(.post)
            return try await deferredCredential(request)
        case endpoints.notificationPath where configuration.notificationEndpoint:
            try expect(.post)
            return try notification(request)
        case endpoints.offerFactoryPath where configuration.offerFactory:
            try expect(.post)
            return try offerFactory(request)
        default:
            if path.hasPrefix(endpoints.offerPathPrefix), let offer = offers[String(path.dropFirst(endpoints.offerPathPrefix.count))] {
                try expect(.get)
                return IssuerHTTP.json(offer.offer)
            }
            throw EndpointRefusal(status: 404, error: "not_found", description: "no endpoint at this path")
        }
    }

    /// `POST <issuer>/offers` with `{"credential_configuration_ids": [...], "grant":
    /// "pre-authorized_code" | "authorization_code", "tx_code": "..."}` (grant defaults to
    /// pre-authorized; a `tx_code` requires one): a new offer and every way to hand it over.
    private func offerFactory(_ request: HTTPRequest) throws(EndpointRefusal) -> HTTPResponse {
        guard request.mediaType == "application/json",
              let body = try? JSONValue.parseObject(request.body ?? []),
              let ids = body["credential_configuration_ids"]?.stringArrayValue else {
            throw .invalidRequest("expected a JSON object with credential_configuration_ids")
        }
        let grant = body["grant"]?.stringValue ?? "pre-authorized_code"
        let txCode = body["tx_code"]?.stringValue
        let offerRequest: CredentialOfferRequest
        switch grant {
        case "pre-authorized_code":
            offerRequest = .preAuthorized(ids, txCode: txCode.map { CredentialOfferRequest.TxCode(value: $0) })
        case "authorization_code":
            offerRequest = .authorizationCode(ids)
        default:
            throw .invalidRequest("grant is pre-authorized_code or authorization_code")
        }
        let offer: IssuedCredentialOffer
        do { offer = try createOffer(offerRequest) } catch {
            throw .invalidRequest("no offer for these configurations")
        }
        var answer: JSONObject = [
            "credential_offer": .object(offer.offer), "credential_offer_uri": .string(offer.offerURL),
            "offer_by_value": .string(offer.byValue), "offer_by_reference": .string(offer.byReference),
        ]
        if let code = offer.preAuthorizedCode { answer["pre-authorized_code"] = .string(code) }
        if let code = offer.txCode { answer["tx_code"] = .string(code) }
        if let state = offer.issuerState { answer["issuer_state"] = .string(state) }
        return IssuerHTTP.json(.object(answer), status: 201)
    }

    // MARK: Helpers shared by the endpoints

    /// A fresh unguessable value (codes, tokens, nonces), or a 500 when the random source fails.
    func randomValue(_ count: Int = 32) throws(EndpointRefusal) -> String {
        do {
            return Base64URL.encode(try random.bytes(count: count))
        } catch {
            throw EndpointRefusal(status: 500, error: "server_error", description: "random source failed")
        }
    }

    /// Drops expired entries from a map of expiry times at every 256th entry, so the
    /// sweep costs O(1) per insertion on average.
    func purge(_ map: inout [String: Date]) {
        guard map.count >= 256, map.count % 256 == 0 else { return }
        let now = clock.now
        map = map.filter { $0.value > now }
    }
}

/// The issuer is a handler: serve it with `LoopbackHTTPServer`, call it through
/// `InProcessHTTPClient`, or wrap it in a `FaultInjector`. It never drops a connection;
/// every request gets an answer.
extension ReferenceIssuer: HTTPHandler {}
