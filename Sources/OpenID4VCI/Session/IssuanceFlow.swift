import Foundation
import JOSE
import WalletCrypto
import WalletEncoding
import WalletRuntime
import WalletStorage

/// What a session was started for.
enum IssuanceMode: Sendable {
    /// A resolved offer, for one of its configurations, with the transaction code if known.
    case offer(CredentialOffer, configurationId: String, txCode: String?)
    /// A wallet-initiated request to an issuer (authorization code flow).
    case issuer(String, configurationId: String)
    /// Resuming a deferred credential.
    case deferred(StoredCredential, IssuanceContext)
    /// Renewing a credential with its refresh token.
    case reissue(StoredCredential, IssuanceContext)
}

/// The settings a flow runs under (from the client's configuration and the request).
struct FlowSettings: Sendable {
    var clientId: String
    var redirectUri: String
    var urlPolicy: URLPolicy
    var encryption: CredentialEncryption
    var trustAnchors: [X509Certificate]
    var hasKeyAttestationProvider: Bool
    var requestTimeout: Duration
    var policy: CredentialPolicy
}

/// The random values a flow needs, drawn by the driver from its random source.
struct FlowSeeds: Sendable {
    /// The authorization request's `state`.
    var state: String
    /// The PKCE verifier.
    var pkce: PKCE
    /// The alias of the DPoP key, if the session has to create one.
    var dpopKeyAlias: String
    /// The id of the first credential stored (further ones get `-2`, `-3` ...).
    var credentialId: String
}

/// The OpenID4VCI issuance protocol as a value (DESIGN rule 2): it takes inputs (HTTP
/// responses, the user's code or redirect, keys and signatures the driver produced) and
/// returns effects (requests to send, keys to create, JWTs to sign, credentials to save,
/// states to publish). It does no I/O, reads no clock (every input comes with `now`) and
/// draws no randomness (the driver hands it `FlowSeeds` and fresh response keys).
struct IssuanceFlow: Sendable {
    /// Which request a response answers.
    enum Step: Sendable, Equatable {
        case issuerMetadata
        case serverMetadata(candidate: Int)
        case pushedAuthorization
        case token
        case nonce
        case credential
        case deferredCredential
        case notification
        case issuerKeys(issuer: String)
        case issuerKeySet(issuer: String)
    }

    /// How the driver must DPoP-sign a request (RFC 9449).
    struct DPoPUse: Sendable, Equatable {
        /// The DPoP key's alias in the secure area.
        let keyAlias: String
        /// The algorithm to create it with, when this session creates it.
        let algorithm: KeyAlgorithm
        /// The access token the proof binds (`ath`), for resource requests.
        let accessToken: String?
        /// The server's latest `DPoP-Nonce`.
        let nonce: String?
    }

    /// A request for the driver to send.
    struct Outgoing: Sendable {
        var request: HTTPRequest
        var step: Step
        /// Sign a DPoP proof for it first.
        var dpop: DPoPUse?
        /// Encrypt the body as a compact JWE to this issuer key first (`Content-Type: application/jwt`).
        var encryptTo: JWK?
        var encryptWith: ContentEncryptionAlgorithm?
    }

    /// Key-proof JWTs to sign: one per key, each with that key's public JWK in its header.
    struct ProofJob: Sendable {
        let keys: [KeyInfo]
        let header: JSONObject
        let claims: JSONObject
    }

    /// What the driver reports back.
    enum Input: Sendable {
        case start
        case response(HTTPResponse, Step)
        case transportFailed(HTTPError, Step)
        case txCode(String)
        case redirect(String)
        case keysReady([KeyInfo])
        case keyAttestation(String)
        case proofsSigned([String])
        case responseKey(JweRecipientKey)
        case saved
        case failed(IssuanceError)
    }

    /// What the driver must do, in order.
    enum Effect: Sendable {
        case publish(IssuanceState)
        case send(Outgoing)
        case createKeys(count: Int, algorithm: KeyAlgorithm)
        case loadKeys([String])
        case attestKeys([KeyInfo], nonce: String?)
        case signProofs(ProofJob)
        case createResponseKey
        /// Stores `credentials`; the one whose id is `renewing` (the credential a reissue
        /// or a deferred resumption read at its start) only over its stored record, so
        /// that a credential deleted meanwhile stays deleted, and with the refresh token
        /// the record holds then unless `newRefreshToken` (the session obtained one): the
        /// session's copy may be one another session has since rotated.
        case save([StoredCredential], renewing: String?, newRefreshToken: Bool)
        /// Stores a refresh token the server rotated during the renewal of credential
        /// `id` at once, so that a renewal failing later does not leave the spent one.
        /// Best effort; nothing is reported back.
        case storeRefreshToken(id: String, token: String)
        /// The resumed deferred transaction of credential `id` was answered with a
        /// credential the wallet refused. A transaction id is spent once it has been used
        /// to obtain a credential (OpenID4VCI 1.0 §9.3, `invalid_transaction_id`), so the
        /// record can never complete: the driver deletes it with its keys (a first
        /// issuance), or clears its pending renewal and that renewal's keys (an issued
        /// credential stays issued). Nothing is reported back.
        case abandonDeferred(id: String)
        /// The session is over in `state`: the keys the driver created that are not in
        /// `keep` are deleted, and so are those in `discard` (pre-existing keys no longer needed).
        case finish(IssuanceState, keep: Set<String>, discard: [String])
    }

    private enum Phase: Equatable {
        case idle, issuerMetadata, serverMetadata, awaitingTxCode, pushingAuthorization, awaitingRedirect, token
        case nonce, keys, attestation, proofs, responseKey, credential, issuerKeys, deferredCredential
        case saving, notifying, notifyingFailure, done
    }

    /// One credential dataset to request (one per `credential_identifier`, or one by configuration).
    private struct Target {
        let identifier: String?
        var keys: [KeyInfo] = []
        var nonce: String?
        var keyAttestation: String?
        var proofs: [String] = []
        var responseKey: JweRecipientKey?
        var dpopRetried = false
        var nonceRetried = false
        var received: [ReceivedCredential] = []
        var notificationId: String?
    }

    /// What one target ended as.
    private struct Outcome {
        let id: String
        let state: CredentialState
        let instances: [CredentialInstance]
        let notificationId: String?
        let pendingKeyAliases: [String]
        /// A renewal the issuer deferred: the credential stays issued with its instances
        /// meanwhile, and the transaction waits in its context.
        var pendingRenewal: (transactionId: String, retryAfter: Date?)?

        var isDeferred: Bool { state != .issued || pendingRenewal != nil }
        var retryAfter: Date? {
            if case .deferred(_, let retryAfter) = state { return retryAfter }
            return pendingRenewal?.retryAfter
        }
    }

    let mode: IssuanceMode
    let settings: FlowSettings
    let seeds: FlowSeeds

    private var phase = Phase.idle
    private(set) var state = IssuanceState.preparing
    private var metadata: CredentialIssuerMetadata?
    private var configuration: CredentialConfiguration?
    private var format = CredentialFormat.sdJwtVc
    private var credentialType = ""
    private var proofAlgorithm = KeyAlgorithm.p256
    private var requiresKeyAttestation = false
    private var encryption = EncryptionPlan.none
    private var batchCount = 1
    private var serverIdentifier = ""
    private var serverCandidates: [URL] = []
    private var server: AuthorizationServerMetadata?
    private var authorizationRequest: AuthorizationRequest?
    private var tokenForm: [(String, String)] = []
    private var tokenDPoPRetried = false
    private var dpopAlias: String?
    private var dpopAlgorithm = KeyAlgorithm.p256
    private var dpopNonces: [String: String] = [:]
    private var token: TokenResponse?
    private var accessToken: String?
    private var tokenIsDPoPBound = false
    private var refreshToken: String?
    /// Whether this session's token response carried a refresh token.
    private var receivedRefreshToken = false
    private var targets: [Target] = []
    private var current = 0
    private var outcomes: [Outcome] = []
    private var issuerKeys: [String: Result<[JWK], MetadataProblem>] = [:]
    private var validatedChains: [String: JWK] = [:]
    private var notifications: [String] = []
    private var failure: IssuanceError?
    private var keptKeys: Set<String> = []
    private var discardedKeys: [String] = []

    init(mode: IssuanceMode, settings: FlowSettings, seeds: FlowSeeds) {
        self.mode = mode
        self.settings = settings
        self.seeds = seeds
    }

    // MARK: Driving

    /// Feeds one input at `now`; returns what to do next.
    mutating func handle(_ input: Input, at now: Date) -> [Effect] {
        guard phase != .done else { return [] }
        do {
            return try step(input, now: now)
        } catch {
            return fail(error)
        }
    }

    private mutating func step(_ input: Input, now: Date) throws(IssuanceError) -> [Effect] {
        switch (input, phase) {
        case (.start, .idle):
            return try start(now: now)
        case (.failed, .notifying), (.failed, .notifyingFailure):
            // §11: a notification only informs the issuer. One that cannot be sent (its
            // DPoP proof not signed, say) is skipped like one that went unanswered: the
            // credentials are stored by now and keep their keys.
            return try nextNotification()
        case (.failed(let error), _):
            return fail(error)
        case (.transportFailed(_, .notification), .notifying), (.transportFailed(_, .notification), .notifyingFailure):
            return try nextNotification()
        case (.response(_, .notification), .notifying), (.response(_, .notification), .notifyingFailure):
            return try nextNotification()
        case (.transportFailed(_, .issuerKeys(let issuer)), .issuerKeys),
             (.transportFailed(_, .issuerKeySet(let issuer)), .issuerKeys):
            issuerKeys[issuer] = .failure(.unavailable(status: 0))
            return try fetchIssuerKeysOrVerify(now: now)
        case (.transportFailed(let error, _), _):
            throw .unexpected(.transport(error))
        case (.response(let response, .issuerMetadata), .issuerMetadata):
            return try receivedIssuerMetadata(response, now: now)
        case (.response(let response, .serverMetadata(let candidate)), .serverMetadata):
            return try receivedServerMetadata(response, candidate: candidate, now: now)
        case (.txCode(let code), .awaitingTxCode):
            return requestToken(form: preAuthorizedForm(txCode: code))
        case (.response(let response, .pushedAuthorization), .pushingAuthorization):
            return try receivedPushedAuthorization(response)
        case (.redirect(let redirect), .awaitingRedirect):
            return try receivedRedirect(redirect)
        case (.response(let response, .token), .token):
            return try receivedToken(response, now: now)
        case (.response(let response, .nonce), .nonce):
            return try receivedNonce(response)
        case (.keysReady(let keys), .keys):
            targets[current].keys = keys
            return try attestOrSign(now: now)
        case (.keyAttestation(let attestation), .attestation):
            targets[current].keyAttestation = attestation
            return signProofs(now: now)
        case (.proofsSigned(let proofs), .proofs):
            guard proofs.count == targets[current].keys.count else {
                throw .unexpected(.proofCountMismatch(expected: targets[current].keys.count, actual: proofs.count))
            }
            targets[current].proofs = proofs
            return try requestCredentialOrKey()
        case (.responseKey(let key), .responseKey):
            targets[current].responseKey = key
            if case .deferred = mode { return try requestDeferred() }
            return try requestCredential()
        case (.response(let response, .credential), .credential):
            return try receivedCredential(response, now: now)
        case (.response(let response, .deferredCredential), .deferredCredential):
            return try receivedDeferred(response, now: now)
        case (.response(let response, .issuerKeys(let issuer)), .issuerKeys):
            return try receivedIssuerKeys(response, issuer: issuer, now: now)
        case (.response(let response, .issuerKeySet(let issuer)), .issuerKeys):
            return try receivedIssuerKeySet(response, issuer: issuer, now: now)
        case (.saved, .saving):
            return try savedCredentials()
        default:
            // An input the current step does not wait for (a late tx code, a second
            // redirect): ignored, the flow stays where it is.
            return []
        }
    }

    private mutating func fail(_ error: IssuanceError) -> [Effect] {
        phase = .done
        state = .failed(error)
        let finish = Effect.finish(state, keep: [], discard: [])
        // In a resumption, only the deferred response delivers credentials to refuse.
        if case .deferred(let stored, _) = mode, case .credentialRequestFailed(_, .invalidCredential) = error {
            return [.abandonDeferred(id: stored.id), finish]
        }
        return [finish]
    }

    private mutating func publish(_ newState: IssuanceState) -> Effect {
        state = newState
        return .publish(newState)
    }

    // MARK: Metadata

    private var issuerIdentifier: String {
        switch mode {
        case .offer(let offer, _, _): offer.credentialIssuer
        case .issuer(let issuer, _): issuer
        case .deferred(let stored, _), .reissue(let stored, _): stored.issuer.identifier
        }
    }

    private mutating func start(now: Date) throws(IssuanceError) -> [Effect] {
        var effects = [publish(.preparing)]
        switch mode {
        case .offer(let offer, _, _):
            effects += try useIssuerMetadata(offer.issuerMetadata, now: now)
        case .issuer, .deferred, .reissue:
            if case .deferred(let stored, let context) = mode, stored.state == .issued, context.pendingTransactionId == nil {
                throw .unexpected(.notDeferred(stored.id))
            }
            switch mode {
            case .deferred(let stored, let context), .reissue(let stored, let context):
                guard context.belongs(to: stored) else { throw .unexpected(.issuerChanged(stored.id)) }
            default:
                break
            }
            guard settings.urlPolicy.url(issuerIdentifier) != nil,
                  let url = URLPolicy.wellKnown(CredentialIssuerMetadata.wellKnownSuffix, insertedInto: issuerIdentifier) else {
                throw .invalidOffer(.insecureURL(issuerIdentifier))
            }
            phase = .issuerMetadata
            effects.append(.send(Outgoing(request: get(url), step: .issuerMetadata)))
        }
        return effects
    }

    private func get(_ url: URL) -> HTTPRequest {
        HTTPRequest(method: .get, url: url, headers: ["Accept": "application/json"], timeout: settings.requestTimeout)
    }

    private mutating func receivedIssuerMetadata(_ response: HTTPResponse, now: Date) throws(IssuanceError) -> [Effect] {
        guard response.status == 200 else { throw .invalidOffer(.issuerMetadata(.unavailable(status: response.status))) }
        let object: JSONObject
        do { object = try response.jsonObject() } catch { throw .invalidOffer(.issuerMetadata(.notJSON(error))) }
        let parsed: CredentialIssuerMetadata
        do {
            parsed = try CredentialIssuerMetadata(json: object, expectedIssuer: issuerIdentifier, policy: settings.urlPolicy,
                                                  trustAnchors: settings.trustAnchors, now: now)
        } catch {
            throw .invalidOffer(.issuerMetadata(error))
        }
        return try useIssuerMetadata(parsed, now: now)
    }

    private mutating func useIssuerMetadata(_ metadata: CredentialIssuerMetadata, now: Date) throws(IssuanceError) -> [Effect] {
        self.metadata = metadata
        let configurationId: String
        var preferredServer: String?
        switch mode {
        case .offer(let offer, let id, _):
            guard offer.credentialConfigurationIds.contains(id) else { throw .invalidOffer(.unknownConfiguration(id)) }
            configurationId = id
            preferredServer = offer.preAuthorizedCode?.authorizationServer ?? offer.authorizationCode?.authorizationServer
        case .issuer(_, let id):
            configurationId = id
        case .deferred(_, let context), .reissue(_, let context):
            configurationId = context.configurationId
            preferredServer = context.authorizationServer
        }
        guard let configuration = metadata.configuration(configurationId) else {
            throw .invalidOffer(.unknownConfiguration(configurationId))
        }
        guard let format = configuration.storedFormat else { throw .invalidOffer(.unsupportedFormat(configuration.format)) }
        guard let type = configuration.credentialType else {
            throw .invalidOffer(.issuerMetadata(.invalidMember(
                "credential_configurations_supported.\(configurationId).\(format == .msoMdoc ? "doctype" : "vct")")))
        }
        self.configuration = configuration
        self.format = format
        credentialType = type
        try chooseProof(configuration)
        do { encryption = try EncryptionPlan.negotiate(settings.encryption, metadata: metadata) } catch {
            throw .credentialRequestFailed(oauthError: nil, reason: .encryption(error))
        }
        if requiresKeyAttestation && !settings.hasKeyAttestationProvider {
            throw .credentialRequestFailed(oauthError: nil, reason: .keyAttestationUnavailable)
        }
        try chooseBatchCount(limit: metadata.batchSize ?? 1)
        serverIdentifier = metadata.authorizationServer(preferred: preferredServer)
        // A deferred retrieval talks to the credential issuer alone, and what it saves keeps
        // the server the tokens came from: re-homing them to a server the issuer lists now
        // would hand the refresh token to that server at the next reissue.
        if case .deferred(_, let context) = mode, let issuedBy = context.authorizationServer { serverIdentifier = issuedBy }
        // RFC 6749 §10.4: a refresh token goes only to the server that issued it. When
        // the issuer no longer lists that server, the token is not offered to another.
        if case .reissue(_, let context) = mode, let issuedBy = context.authorizationServer, issuedBy != serverIdentifier {
            throw .authorizationFailed(oauthError: nil, reason: .refreshTokenUnavailable)
        }

        if case .deferred(_, let context) = mode {
            guard let token = context.accessToken else {
                throw .authorizationFailed(oauthError: nil, reason: .refreshTokenUnavailable)
            }
            accessToken = token
            tokenIsDPoPBound = context.isDPoPBound
            dpopAlias = context.dpopKeyAlias
            if case .deferred(let stored, _) = mode { refreshToken = stored.refreshToken }
            targets = [Target(identifier: nil)]
            phase = .keys
            return [publish(.processing), .loadKeys(context.pendingKeyAliases)]
        }
        guard settings.urlPolicy.url(serverIdentifier) != nil else {
            throw .invalidOffer(.authorizationServerMetadata(.insecureURL(serverIdentifier)))
        }
        serverCandidates = AuthorizationServerMetadata.candidateURLs(for: serverIdentifier)
        guard let first = serverCandidates.first else {
            throw .invalidOffer(.authorizationServerMetadata(.insecureURL(serverIdentifier)))
        }
        phase = .serverMetadata
        return [.send(Outgoing(request: get(first), step: .serverMetadata(candidate: 0)))]
    }

    /// Picks the `jwt` proof type and the first algorithm both sides support (ES256 first).
    private mutating func chooseProof(_ configuration: CredentialConfiguration) throws(IssuanceError) {
        let supported: [(String, KeyAlgorithm)] = [("ES256", .p256), ("ES384", .p384), ("ES512", .p521), ("EdDSA", .ed25519)]
        if configuration.proofTypes.isEmpty {
            // Before 1.0 some issuers listed only binding methods; a jwt proof with ES256 is what they take.
            guard !configuration.cryptographicBindingMethods.isEmpty else {
                throw .credentialRequestFailed(oauthError: nil, reason: .unsupportedProof([]))
            }
            proofAlgorithm = .p256
            return
        }
        guard let jwt = configuration.proofTypes["jwt"],
              let choice = supported.first(where: { jwt.signingAlgorithms.contains($0.0) }) else {
            let offered = configuration.proofTypes.flatMap { type, metadata in metadata.signingAlgorithms.map { "\(type):\($0)" } }
            throw .credentialRequestFailed(oauthError: nil, reason: .unsupportedProof(offered.sorted()))
        }
        proofAlgorithm = choice.1
        requiresKeyAttestation = jwt.keyAttestationsRequired != nil
    }

    private mutating func chooseBatchCount(limit: Int) throws(IssuanceError) {
        let policy: CredentialPolicy
        switch mode {
        case .reissue(let stored, _): policy = stored.policy
        default: policy = settings.policy
        }
        guard policy.batchSize >= 1 else { throw .unexpected(.invalidPolicy) }
        var wanted = policy.batchSize
        if case .reissue(let stored, _) = mode, policy.use == .oneTime {
            // Top up: ask for as many as presentations spent; renew all when none was.
            let unused = stored.instances.filter { $0.useCount == 0 }.count
            wanted = unused < policy.batchSize ? policy.batchSize - unused : policy.batchSize
        }
        batchCount = max(1, min(wanted, limit))
    }

    private mutating func receivedServerMetadata(_ response: HTTPResponse, candidate: Int, now: Date) throws(IssuanceError) -> [Effect] {
        guard response.status == 200 else {
            let next = candidate + 1
            guard next < serverCandidates.count else {
                throw .invalidOffer(.authorizationServerMetadata(.unavailable(status: response.status)))
            }
            return [.send(Outgoing(request: get(serverCandidates[next]), step: .serverMetadata(candidate: next)))]
        }
        let object: JSONObject
        do { object = try response.jsonObject() } catch { throw .invalidOffer(.authorizationServerMetadata(.notJSON(error))) }
        let server: AuthorizationServerMetadata
        do {
            server = try AuthorizationServerMetadata(json: object, expectedIssuer: serverIdentifier, policy: settings.urlPolicy)
        } catch {
            throw .invalidOffer(.authorizationServerMetadata(error))
        }
        self.server = server
        let supported: [(String, KeyAlgorithm)] = [("ES256", .p256), ("ES384", .p384), ("ES512", .p521), ("EdDSA", .ed25519)]
        if let choice = supported.first(where: { server.dpopSigningAlgorithms.contains($0.0) }) {
            dpopAlgorithm = choice.1
            if case .reissue(_, let context) = mode, let alias = context.dpopKeyAlias {
                dpopAlias = alias
            } else {
                dpopAlias = seeds.dpopKeyAlias
            }
        } else if case .reissue(_, let context) = mode, let alias = context.dpopKeyAlias {
            // The refresh token is bound to the key it was issued with, advertised or not.
            dpopAlias = alias
        }
        return try chooseGrant()
    }

    // MARK: Authorization

    private mutating func chooseGrant() throws(IssuanceError) -> [Effect] {
        switch mode {
        case .offer(let offer, _, let txCode) where offer.preAuthorizedCode != nil:
            if let grant = offer.preAuthorizedCode, grant.txCode != nil, txCode == nil {
                phase = .awaitingTxCode
                return [publish(.txCodeRequired(grant.txCode))]
            }
            return requestToken(form: preAuthorizedForm(txCode: txCode))
        case .reissue(let stored, let context):
            guard let refresh = stored.refreshToken else {
                throw .authorizationFailed(oauthError: nil, reason: .refreshTokenUnavailable)
            }
            // The refresh identifies the client as the original grant did (RFC 6749 §6).
            var form = [("grant_type", "refresh_token"), ("refresh_token", refresh)]
            if !context.isAnonymous { form.append(("client_id", settings.clientId)) }
            return requestToken(form: form)
        case .offer, .issuer:
            return try startAuthorization()
        case .deferred:
            return []
        }
    }

    private func preAuthorizedForm(txCode: String?) -> [(String, String)] {
        guard case .offer(let offer, _, _) = mode, let grant = offer.preAuthorizedCode else { return [] }
        // Anonymous access (§6.1): no client_id, so the proofs carry no iss either.
        var form = [("grant_type", CredentialOffer.preAuthorizedGrantType), ("pre-authorized_code", grant.preAuthorizedCode)]
        if let txCode { form.append(("tx_code", txCode)) }
        return form
    }

    /// Whether the tokens come from anonymous access: a pre-authorized code redeemed
    /// without `client_id` (then the proofs carry no `iss`), or a renewal of such a grant.
    private var isAnonymousPreAuthorized: Bool {
        switch mode {
        case .offer(let offer, _, _): offer.preAuthorizedCode != nil
        case .reissue(_, let context), .deferred(_, let context): context.isAnonymous
        case .issuer: false
        }
    }

    private mutating func startAuthorization() throws(IssuanceError) -> [Effect] {
        guard let server, let metadata, let configuration else { return [] }
        guard let endpoint = server.authorizationEndpoint else {
            throw .authorizationFailed(oauthError: nil, reason: .noUsableGrant)
        }
        if let methods = server.codeChallengeMethods, !methods.contains(PKCE.method) {
            throw .authorizationFailed(oauthError: nil, reason: .pkceUnsupported)
        }
        var issuerState: String?
        if case .offer(let offer, _, _) = mode { issuerState = offer.authorizationCode?.issuerState }
        let request = AuthorizationRequest(
            clientId: settings.clientId, redirectUri: settings.redirectUri, pkce: seeds.pkce, state: seeds.state,
            issuerState: issuerState, configuration: configuration, metadata: metadata, server: server)
        authorizationRequest = request
        if let par = server.pushedAuthorizationRequestEndpoint {
            phase = .pushingAuthorization
            let body = Array(FormURLEncoding.encode(request.parameters).utf8)
            let http = HTTPRequest(method: .post, url: par,
                                   headers: ["Content-Type": "application/x-www-form-urlencoded", "Accept": "application/json"],
                                   body: body, timeout: settings.requestTimeout)
            return [.send(Outgoing(request: http, step: .pushedAuthorization))]
        }
        guard !server.requiresPushedAuthorizationRequests else {
            throw .invalidOffer(.authorizationServerMetadata(.missingEndpoint("pushed_authorization_request_endpoint")))
        }
        phase = .awaitingRedirect
        return [publish(.authorizationRequired(request.authorizationURL(endpoint: endpoint, requestURI: nil)))]
    }

    private mutating func receivedPushedAuthorization(_ response: HTTPResponse) throws(IssuanceError) -> [Effect] {
        guard let server, let endpoint = server.authorizationEndpoint, let request = authorizationRequest else { return [] }
        guard response.status == 201 || response.status == 200 else {
            let error = response.oauthError
            throw .authorizationFailed(oauthError: error?.code,
                                       reason: error == nil ? .malformedResponse(.unexpectedStatus(response.status))
                                           : .rejected(status: response.status, description: error?.description))
        }
        let object: JSONObject
        do { object = try response.jsonObject() } catch {
            throw .authorizationFailed(oauthError: nil, reason: .malformedResponse(.notJSON(error)))
        }
        guard let requestURI = object["request_uri"]?.stringValue, !requestURI.isEmpty else {
            throw .authorizationFailed(oauthError: nil, reason: .malformedResponse(.invalidMember("request_uri")))
        }
        phase = .awaitingRedirect
        return [publish(.authorizationRequired(request.authorizationURL(endpoint: endpoint, requestURI: requestURI)))]
    }

    private mutating func receivedRedirect(_ redirect: String) throws(IssuanceError) -> [Effect] {
        guard let server, let request = authorizationRequest else { return [] }
        let response = try AuthorizationResponse.parse(
            redirect, redirectUri: settings.redirectUri, state: request.state, expectedIssuer: server.issuer,
            issuerRequired: server.issuesResponseIssuer)
        guard case .code(let code) = response else { return [] }
        return requestToken(form: [("grant_type", "authorization_code"), ("code", code),
                                   ("code_verifier", request.pkce.verifier), ("redirect_uri", settings.redirectUri),
                                   ("client_id", settings.clientId)])
    }

    // MARK: Token

    private static func origin(_ url: URL) -> String {
        "\(url.scheme?.lowercased() ?? "")://\(url.host?.lowercased() ?? "")\(url.port.map { ":\($0)" } ?? "")"
    }

    private mutating func requestToken(form: [(String, String)]) -> [Effect] {
        tokenForm = form
        phase = .token
        var effects: [Effect] = []
        if state != .processing { effects.append(publish(.processing)) }
        if let server { effects.append(.send(tokenRequest(server))) }
        return effects
    }

    private func tokenRequest(_ server: AuthorizationServerMetadata) -> Outgoing {
        let http = HTTPRequest(method: .post, url: server.tokenEndpoint,
                               headers: ["Content-Type": "application/x-www-form-urlencoded", "Accept": "application/json"],
                               body: Array(FormURLEncoding.encode(tokenForm).utf8), timeout: settings.requestTimeout)
        let dpop = dpopAlias.map {
            DPoPUse(keyAlias: $0, algorithm: dpopAlgorithm, accessToken: nil, nonce: dpopNonces[Self.origin(server.tokenEndpoint)])
        }
        return Outgoing(request: http, step: .token, dpop: dpop)
    }

    private mutating func receivedToken(_ response: HTTPResponse, now: Date) throws(IssuanceError) -> [Effect] {
        guard let server else { return [] }
        let nonceUpdated = remember(response, for: server.tokenEndpoint)
        guard response.status == 200 else {
            let error = response.oauthError
            // RFC 9449 §8: a 400 use_dpop_nonce with a DPoP-Nonce is retried once with it.
            if error?.code == "use_dpop_nonce", dpopAlias != nil, nonceUpdated, !tokenDPoPRetried {
                tokenDPoPRetried = true
                return [.send(tokenRequest(server))]
            }
            throw .authorizationFailed(oauthError: error?.code,
                                       reason: error == nil ? .malformedResponse(.unexpectedStatus(response.status))
                                           : .rejected(status: response.status, description: error?.description))
        }
        let token: TokenResponse
        do { token = try TokenResponse(json: try response.jsonObject()) } catch let error as JSONError {
            throw .authorizationFailed(oauthError: nil, reason: .malformedResponse(.notJSON(error)))
        } catch let problem as ResponseProblem {
            throw .authorizationFailed(oauthError: nil, reason: .malformedResponse(problem))
        } catch {
            throw .authorizationFailed(oauthError: nil, reason: .malformedResponse(.invalidMember("access_token")))
        }
        // A DPoP-bound token needs the key the proof was made with (RFC 9449 §5). And once a
        // proof was sent (the server advertised DPoP, or the refresh token is bound to the
        // key), a Bearer answer is a downgrade: tokens anyone who sees them can use, stored
        // as such for every renewal after. RFC 9449 §5 leaves the choice to the client.
        guard token.isDPoPBound == (dpopAlias != nil) else {
            throw .authorizationFailed(oauthError: nil, reason: .malformedResponse(.invalidMember("token_type")))
        }
        self.token = token
        accessToken = token.accessToken
        tokenIsDPoPBound = token.isDPoPBound
        var rotated: [Effect] = []
        receivedRefreshToken = token.refreshToken != nil
        if case .reissue(let stored, _) = mode {
            refreshToken = token.refreshToken ?? stored.refreshToken
            if let fresh = token.refreshToken, fresh != stored.refreshToken {
                rotated = [.storeRefreshToken(id: stored.id, token: fresh)]
            }
        } else {
            refreshToken = token.refreshToken
        }
        let identifiers = configuration.flatMap { token.credentialIdentifiers[$0.id] } ?? []
        if case .reissue = mode {
            targets = [Target(identifier: identifiers.first)]
        } else {
            targets = identifiers.isEmpty ? [Target(identifier: nil)] : identifiers.map { Target(identifier: $0) }
        }
        current = 0
        return rotated + (try beginTarget())
    }

    /// Records a `DPoP-Nonce` the server sent; returns whether one came.
    private mutating func remember(_ response: HTTPResponse, for url: URL) -> Bool {
        guard let nonce = response.dpopNonce, !nonce.isEmpty else { return false }
        dpopNonces[Self.origin(url)] = nonce
        return true
    }

    // MARK: Credential request

    private mutating func beginTarget() throws(IssuanceError) -> [Effect] {
        if let nonceEndpoint = metadata?.nonceEndpoint {
            phase = .nonce
            let http = HTTPRequest(method: .post, url: nonceEndpoint, headers: ["Accept": "application/json"],
                                   body: [], timeout: settings.requestTimeout)
            return [.send(Outgoing(request: http, step: .nonce))]
        }
        targets[current].nonce = token?.cNonce
        return createKeysIfNeeded()
    }

    private mutating func receivedNonce(_ response: HTTPResponse) throws(IssuanceError) -> [Effect] {
        if let endpoint = metadata?.credentialEndpoint { _ = remember(response, for: endpoint) }
        guard response.status == 200 else {
            let error = response.oauthError
            throw .credentialRequestFailed(oauthError: error?.code,
                                           reason: error == nil ? .malformedResponse(.unexpectedStatus(response.status))
                                               : .rejected(status: response.status, description: error?.description))
        }
        let object: JSONObject
        do { object = try response.jsonObject() } catch {
            throw .credentialRequestFailed(oauthError: nil, reason: .malformedResponse(.notJSON(error)))
        }
        guard let nonce = object["c_nonce"]?.stringValue, !nonce.isEmpty else {
            throw .credentialRequestFailed(oauthError: nil, reason: .malformedResponse(.invalidMember("c_nonce")))
        }
        targets[current].nonce = nonce
        return createKeysIfNeeded()
    }

    private mutating func createKeysIfNeeded() -> [Effect] {
        phase = .keys
        // A retry after invalid_nonce: the same keys prove again with the new nonce.
        if !targets[current].keys.isEmpty { return [.loadKeys(targets[current].keys.map(\.alias))] }
        return [.createKeys(count: batchCount, algorithm: proofAlgorithm)]
    }

    private mutating func attestOrSign(now: Date) throws(IssuanceError) -> [Effect] {
        if case .deferred = mode { return try requestDeferred() }
        if requiresKeyAttestation {
            phase = .attestation
            return [.attestKeys(targets[current].keys, nonce: targets[current].nonce)]
        }
        return signProofs(now: now)
    }

    private mutating func signProofs(now: Date) -> [Effect] {
        guard let metadata else { return [] }
        phase = .proofs
        var header: JSONObject = [:]
        if let attestation = targets[current].keyAttestation { header["key_attestation"] = .string(attestation) }
        // Appendix F.1: aud is the issuer; iss the client, omitted for anonymous pre-authorized access.
        var claims: JSONObject = ["aud": .string(metadata.credentialIssuer),
                                  "iat": .integer(now.wholeSecondsSince1970)]
        if let nonce = targets[current].nonce { claims["nonce"] = .string(nonce) }
        if !isAnonymousPreAuthorized { claims["iss"] = .string(settings.clientId) }
        return [.signProofs(ProofJob(keys: targets[current].keys, header: header, claims: claims))]
    }

    private mutating func requestCredentialOrKey() throws(IssuanceError) -> [Effect] {
        if encryption.encryptsResponse {
            phase = .responseKey
            return [.createResponseKey]
        }
        return try requestCredential()
    }

    private mutating func requestCredential() throws(IssuanceError) -> [Effect] {
        guard let metadata, let configuration else { return [] }
        var body: JSONObject = [:]
        if let identifier = targets[current].identifier {
            body["credential_identifier"] = .string(identifier)
        } else {
            body["credential_configuration_id"] = .string(configuration.id)
        }
        body["proofs"] = ["jwt": .array(targets[current].proofs.map(JSONValue.string))]
        addResponseEncryption(to: &body)
        phase = .credential
        return [.send(resourceRequest(url: metadata.credentialEndpoint, body: body, step: .credential))]
    }

    private func addResponseEncryption(to body: inout JSONObject) {
        if let enc = encryption.responseEnc, let key = targets[current].responseKey {
            body["credential_response_encryption"] = ["jwk": key.publicJWK.jsonValue, "enc": .string(enc.rawValue)]
        }
    }

    /// A POST with the access token (and a DPoP proof for a DPoP-bound token), its JSON
    /// body encrypted to the issuer when the plan says so.
    private func resourceRequest(url: URL, body: JSONObject, step: Step) -> Outgoing {
        var headers: HTTPHeaders = ["Content-Type": "application/json",
                                    "Accept": encryption.encryptsResponse && step != .notification ? "application/jwt" : "application/json"]
        var dpop: DPoPUse?
        if let accessToken {
            if tokenIsDPoPBound, let dpopAlias {
                headers["Authorization"] = "DPoP \(accessToken)"
                dpop = DPoPUse(keyAlias: dpopAlias, algorithm: dpopAlgorithm, accessToken: accessToken,
                               nonce: dpopNonces[Self.origin(url)])
            } else {
                headers["Authorization"] = "Bearer \(accessToken)"
            }
        }
        let http = HTTPRequest(method: .post, url: url, headers: headers, body: JSONValue.object(body).serializedBytes,
                               timeout: settings.requestTimeout)
        let encrypt = step != .notification && encryption.requestKey != nil
        return Outgoing(request: http, step: step, dpop: dpop, encryptTo: encrypt ? encryption.requestKey : nil,
                        encryptWith: encrypt ? encryption.requestEnc : nil)
    }

    /// The success body of a credential or deferred response, decrypted when the request
    /// asked for encryption (a plaintext answer is then refused, §10).
    private func successBody(_ response: HTTPResponse) throws(IssuanceError) -> JSONObject {
        if let key = targets[current].responseKey {
            guard response.mediaType == "application/jwt" else {
                throw .credentialRequestFailed(oauthError: nil, reason: .encryption(.plaintextResponse))
            }
            let compact = String(decoding: response.body, as: UTF8.self).trimmingWhitespace()
            let plaintext: [UInt8]
            do throws(JOSEError) {
                let jwe = try JWE(compact: compact)
                // §8.2: the response is encrypted with the `enc` the request named.
                if let requested = encryption.responseEnc, jwe.contentEncryption != requested {
                    throw .unsupportedAlgorithm(.enc, value: jwe.contentEncryption.rawValue)
                }
                plaintext = try jwe.decrypt(with: key.privateKey)
            } catch {
                throw .credentialRequestFailed(oauthError: nil, reason: .encryption(.undecryptable(error)))
            }
            do { return try JSONValue.parseObject(plaintext) } catch {
                throw .credentialRequestFailed(oauthError: nil, reason: .malformedResponse(.notJSON(error)))
            }
        }
        do { return try response.jsonObject() } catch {
            throw .credentialRequestFailed(oauthError: nil, reason: .malformedResponse(.notJSON(error)))
        }
    }

    private mutating func receivedCredential(_ response: HTTPResponse, now: Date) throws(IssuanceError) -> [Effect] {
        guard let metadata else { return [] }
        let nonceUpdated = remember(response, for: metadata.credentialEndpoint)
        switch response.status {
        case 200, 202:
            let body = try successBody(response)
            let parsed: CredentialResponse
            do { parsed = try CredentialResponse(json: body) } catch {
                throw .credentialRequestFailed(oauthError: nil, reason: .malformedResponse(error))
            }
            return try handleCredentialResponse(parsed, now: now)
        default:
            let error = response.oauthError
            let code = error?.code ?? (response.status == 401 ? response.authenticateError : nil)
            // RFC 9449 §9: a 401 use_dpop_nonce with a DPoP-Nonce is retried once with it.
            if code == "use_dpop_nonce", tokenIsDPoPBound, nonceUpdated, !targets[current].dpopRetried {
                targets[current].dpopRetried = true
                return try requestCredential()
            }
            // §8.3.1.2: invalid_nonce asks for a fresh c_nonce; the keys prove again once.
            if code == "invalid_nonce", metadata.nonceEndpoint != nil, !targets[current].nonceRetried {
                targets[current].nonceRetried = true
                return try beginTarget()
            }
            throw .credentialRequestFailed(oauthError: code,
                                           reason: code == nil ? .malformedResponse(.unexpectedStatus(response.status))
                                               : .rejected(status: response.status, description: error?.description))
        }
    }

    private mutating func handleCredentialResponse(_ response: CredentialResponse, now: Date) throws(IssuanceError) -> [Effect] {
        switch response {
        case .deferred(let transactionId, let interval):
            guard metadata?.deferredCredentialEndpoint != nil else {
                throw .credentialRequestFailed(oauthError: nil, reason: .malformedResponse(.invalidMember("transaction_id")))
            }
            outcomes.append(deferredOutcome(id: credentialId(for: current), transactionId: transactionId, interval: interval, now: now))
            return try nextTarget()
        case .issued(let credentials, let notificationId):
            targets[current].notificationId = notificationId
            guard credentials.count <= targets[current].keys.count else {
                throw .credentialRequestFailed(oauthError: nil, reason: .unexpectedCredentialCount(
                    expected: targets[current].keys.count, received: credentials.count))
            }
            var received: [ReceivedCredential] = []
            for credential in credentials {
                do { received.append(try ReceivedCredential.parse(credential, format: format)) } catch {
                    return try refuse(error)
                }
            }
            targets[current].received = received
            phase = .issuerKeys
            return try fetchIssuerKeysOrVerify(now: now)
        }
    }

    /// The credential being renewed, if this session renews one (a reissue, or the
    /// resumption of a deferred reissue).
    private var renewedCredential: StoredCredential? {
        switch mode {
        case .reissue(let stored, _): stored
        case .deferred(let stored, _): stored.state == .issued ? stored : nil
        case .offer, .issuer: nil
        }
    }

    private func deferredOutcome(id: String, transactionId: String, interval: Int?, now: Date) -> Outcome {
        let retryAfter = interval.map { now.addingTimeInterval(TimeInterval($0)) }
        let aliases = targets[current].keys.map(\.alias)
        if let renewed = renewedCredential {
            return Outcome(id: id, state: .issued, instances: renewed.instances, notificationId: nil, pendingKeyAliases: aliases,
                           pendingRenewal: (transactionId, retryAfter))
        }
        return Outcome(id: id, state: .deferred(transactionId: transactionId, retryAfter: retryAfter), instances: [],
                       notificationId: nil, pendingKeyAliases: aliases)
    }

    private func credentialId(for index: Int) -> String {
        switch mode {
        case .deferred(let stored, _), .reissue(let stored, _): stored.id
        case .offer, .issuer: index == 0 ? seeds.credentialId : "\(seeds.credentialId)-\(index + 1)"
        }
    }

    // MARK: Verification

    private mutating func fetchIssuerKeysOrVerify(now: Date) throws(IssuanceError) -> [Effect] {
        for credential in targets[current].received {
            guard let issuer = credential.issuerNeedingMetadata(anchors: settings.trustAnchors), issuerKeys[issuer] == nil else {
                continue
            }
            guard let url = JWTVCIssuerMetadata.url(for: issuer, policy: settings.urlPolicy) else {
                issuerKeys[issuer] = .failure(.insecureURL(issuer))
                continue
            }
            return [.send(Outgoing(request: get(url), step: .issuerKeys(issuer: issuer)))]
        }
        return try verifyReceived(now: now)
    }

    private mutating func receivedIssuerKeys(_ response: HTTPResponse, issuer: String, now: Date) throws(IssuanceError) -> [Effect] {
        do throws(MetadataProblem) {
            guard response.status == 200 else { throw .unavailable(status: response.status) }
            let object: JSONObject
            do { object = try response.jsonObject() } catch { throw .notJSON(error) }
            switch try JWTVCIssuerMetadata.keys(object, issuer: issuer, policy: settings.urlPolicy) {
            case .inline(let keys):
                issuerKeys[issuer] = .success(keys)
            case .reference(let url):
                return [.send(Outgoing(request: get(url), step: .issuerKeySet(issuer: issuer)))]
            }
        } catch {
            issuerKeys[issuer] = .failure(error)
        }
        return try fetchIssuerKeysOrVerify(now: now)
    }

    private mutating func receivedIssuerKeySet(_ response: HTTPResponse, issuer: String, now: Date) throws(IssuanceError) -> [Effect] {
        do throws(MetadataProblem) {
            guard response.status == 200 else { throw .unavailable(status: response.status) }
            let value: JSONValue
            do { value = try JSONValue.parse(response.body) } catch { throw .notJSON(error) }
            issuerKeys[issuer] = .success(try JWTVCIssuerMetadata.keySet(value))
        } catch {
            issuerKeys[issuer] = .failure(error)
        }
        return try fetchIssuerKeysOrVerify(now: now)
    }

    private mutating func verifyReceived(now: Date) throws(IssuanceError) -> [Effect] {
        // §8.3: `credentials` holds one or more. `CredentialResponse` refuses an empty array;
        // this is the one place issued outcomes are made, so an empty one can never be stored
        // as issued, whatever path led here.
        guard !targets[current].received.isEmpty else {
            throw .credentialRequestFailed(oauthError: nil, reason: .malformedResponse(.invalidMember("credentials")))
        }
        let verifier = IssuedCredentialVerifier(trustAnchors: settings.trustAnchors, expectedType: credentialType, now: now)
        var unusedKeys = targets[current].keys
        var instances: [CredentialInstance] = []
        var nextIndex = 0
        if let renewed = renewedCredential, renewed.policy.use == .oneTime {
            // A top-up keeps the unused instances; a full renewal replaces them all.
            let unused = renewed.instances.filter { $0.useCount == 0 }
            if unused.count + targets[current].received.count <= renewed.policy.batchSize {
                instances = unused
                nextIndex = (renewed.instances.map(\.index).max() ?? -1) + 1
            }
        }
        for credential in targets[current].received {
            let lookup = credential.issuerNeedingMetadata(anchors: settings.trustAnchors).flatMap { issuerKeys[$0] }
            let holderKey: PublicKey
            do { holderKey = try verifier.verify(credential, issuerKeys: lookup, validatedChains: &validatedChains) } catch {
                return try refuse(error)
            }
            // The credential must be bound to a key this session proved, each key once.
            guard let position = unusedKeys.firstIndex(where: { $0.publicKey == holderKey }) else {
                return try refuse(.holderKeyMismatch)
            }
            let key = unusedKeys.remove(at: position)
            instances.append(CredentialInstance(index: nextIndex, keyAlias: key.alias, raw: credential.raw))
            nextIndex += 1
        }
        outcomes.append(Outcome(id: credentialId(for: current), state: .issued, instances: instances,
                                notificationId: targets[current].notificationId, pendingKeyAliases: []))
        return try nextTarget()
    }

    /// A credential failed a check: tell the issuer (§11, `credential_failure`) and fail.
    private mutating func refuse(_ failure: CredentialCheckFailure) throws(IssuanceError) -> [Effect] {
        let error = IssuanceError.credentialRequestFailed(oauthError: nil, reason: .invalidCredential(failure))
        guard let id = targets[current].notificationId, metadata?.notificationEndpoint != nil else { throw error }
        self.failure = error
        notifications = [id]
        phase = .notifyingFailure
        return try nextNotification()
    }

    // MARK: Deferred

    private mutating func requestDeferred() throws(IssuanceError) -> [Effect] {
        guard case .deferred(let stored, let context) = mode, let transactionId = Self.transactionId(stored, context),
              let endpoint = metadata?.deferredCredentialEndpoint else {
            throw .credentialRequestFailed(oauthError: nil, reason: .malformedResponse(.invalidMember("deferred_credential_endpoint")))
        }
        if encryption.encryptsResponse && targets[current].responseKey == nil {
            phase = .responseKey
            return [.createResponseKey]
        }
        var body: JSONObject = ["transaction_id": .string(transactionId)]
        addResponseEncryption(to: &body)
        phase = .deferredCredential
        return [.send(resourceRequest(url: endpoint, body: body, step: .deferredCredential))]
    }

    /// The deferred transaction of a stored credential: its state's, or a pending renewal's.
    private static func transactionId(_ stored: StoredCredential, _ context: IssuanceContext) -> String? {
        if case .deferred(let transactionId, _) = stored.state { return transactionId }
        return context.pendingTransactionId
    }

    private mutating func receivedDeferred(_ response: HTTPResponse, now: Date) throws(IssuanceError) -> [Effect] {
        guard let endpoint = metadata?.deferredCredentialEndpoint, case .deferred(let stored, _) = mode else { return [] }
        let nonceUpdated = remember(response, for: endpoint)
        switch response.status {
        case 200, 202:
            let body = try successBody(response)
            let parsed: CredentialResponse
            do { parsed = try CredentialResponse(json: body) } catch {
                throw .credentialRequestFailed(oauthError: nil, reason: .malformedResponse(error))
            }
            if case .deferred(let transactionId, let interval) = parsed {
                return try stillPending(stored, transactionId: transactionId, interval: interval, now: now)
            }
            return try handleCredentialResponse(parsed, now: now)
        default:
            let error = response.oauthError
            let code = error?.code ?? (response.status == 401 ? response.authenticateError : nil)
            if code == "use_dpop_nonce", tokenIsDPoPBound, nonceUpdated, !targets[current].dpopRetried {
                targets[current].dpopRetried = true
                return try requestDeferred()
            }
            // The pre-1.0 form of "not yet": 400 issuance_pending, with an optional interval.
            if code == "issuance_pending", case .deferred(_, let context) = mode, let transactionId = Self.transactionId(stored, context) {
                // Read as the 1.0 form's: a negative one is the server's error, not a time.
                let interval = (try? response.jsonObject()).flatMap { try? CredentialResponse.interval($0) }
                return try stillPending(stored, transactionId: transactionId, interval: interval, now: now)
            }
            throw .credentialRequestFailed(oauthError: code,
                                           reason: code == nil ? .malformedResponse(.unexpectedStatus(response.status))
                                               : .rejected(status: response.status, description: error?.description))
        }
    }

    private mutating func stillPending(_ stored: StoredCredential, transactionId: String, interval: Int?,
                                       now: Date) throws(IssuanceError) -> [Effect] {
        outcomes.append(deferredOutcome(id: stored.id, transactionId: transactionId, interval: interval, now: now))
        return try nextTarget()
    }

    // MARK: Saving and notifying

    private mutating func nextTarget() throws(IssuanceError) -> [Effect] {
        current += 1
        if current < targets.count { return try beginTarget() }
        return save()
    }

    private mutating func save() -> [Effect] {
        guard let metadata, let configuration else { return [] }
        // The DPoP key stays with the credential while a token bound to it may still be
        // used (refresh, deferred retrieval, notifications); a reused one always stays.
        let needsTokenLater = refreshToken != nil || outcomes.contains { $0.notificationId != nil || $0.isDeferred }
        let keepDPoP = dpopAlias != nil && (!isFreshDPoPKey || (tokenIsDPoPBound && needsTokenLater))
        let storedDPoPAlias = keepDPoP ? dpopAlias : nil
        var policy = settings.policy
        if case .reissue(let stored, _) = mode { policy = stored.policy }
        if case .deferred(let stored, _) = mode { policy = stored.policy }
        var credentials: [StoredCredential] = []
        var keep: Set<String> = []
        for outcome in outcomes {
            let context = IssuanceContext(
                configurationId: configuration.id, credentialIssuer: metadata.credentialIssuer,
                authorizationServer: serverIdentifier.isEmpty ? nil : serverIdentifier,
                accessToken: accessToken, isDPoPBound: tokenIsDPoPBound, isAnonymous: isAnonymousPreAuthorized,
                dpopKeyAlias: storedDPoPAlias,
                notificationId: outcome.notificationId, pendingKeyAliases: outcome.pendingKeyAliases,
                pendingTransactionId: outcome.pendingRenewal?.transactionId, pendingRetryAfter: outcome.pendingRenewal?.retryAfter)
            credentials.append(StoredCredential(
                id: outcome.id, format: format, type: credentialType,
                issuer: IssuerInfo(identifier: metadata.credentialIssuer, display: metadata.display),
                display: configuration.display, instances: outcome.instances, policy: policy, state: outcome.state,
                refreshToken: refreshToken, issuanceContext: context.encoded))
            keep.formUnion(outcome.instances.map(\.keyAlias))
            keep.formUnion(outcome.pendingKeyAliases)
        }
        if let storedDPoPAlias { keep.insert(storedDPoPAlias) }
        if case .deferred(_, let context) = mode {
            // Keys the deferred proofs named that no credential ended up bound to.
            discardedKeys = context.pendingKeyAliases.filter { !keep.contains($0) }
        }
        keptKeys = keep
        notifications = outcomes.compactMap { $0.isDeferred ? nil : $0.notificationId }
        phase = .saving
        let renewing: String? = switch mode {
        case .deferred(let stored, _), .reissue(let stored, _): stored.id
        case .offer, .issuer: nil
        }
        return [.save(credentials, renewing: renewing, newRefreshToken: receivedRefreshToken)]
    }

    /// Whether this session created the DPoP key (rather than reusing a stored credential's).
    private var isFreshDPoPKey: Bool { dpopAlias == seeds.dpopKeyAlias }

    private mutating func savedCredentials() throws(IssuanceError) -> [Effect] {
        phase = .notifying
        return try nextNotification()
    }

    private mutating func nextNotification() throws(IssuanceError) -> [Effect] {
        if !notifications.isEmpty, let endpoint = metadata?.notificationEndpoint {
            let id = notifications.removeFirst()
            let event = phase == .notifyingFailure ? "credential_failure" : "credential_accepted"
            var body: JSONObject = ["notification_id": .string(id), "event": .string(event)]
            if phase == .notifyingFailure { body["event_description"] = "The credential failed the wallet's checks." }
            return [.send(resourceRequest(url: endpoint, body: body, step: .notification))]
        }
        if phase == .notifyingFailure, let failure { throw failure }
        return finishSuccessfully()
    }

    private mutating func finishSuccessfully() -> [Effect] {
        phase = .done
        let issued = outcomes.filter { !$0.isDeferred }.map(\.id)
        let deferred = outcomes.filter(\.isDeferred)
        if issued.isEmpty, let first = deferred.first {
            state = .deferred(credentialId: first.id, retryAfter: first.retryAfter)
        } else {
            state = .completed(IssuanceResult(issued: issued, deferred: deferred.map(\.id)))
        }
        return [.finish(state, keep: keptKeys, discard: discardedKeys)]
    }
}
