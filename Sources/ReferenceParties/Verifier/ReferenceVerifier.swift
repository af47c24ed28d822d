import Foundation
import JOSE
import Mdoc
import WalletCrypto
import WalletEncoding
import WalletRuntime

/// A strict OpenID4VP 1.0 verifier for tests, demos and developers: it creates
/// presentation requests (signed `x509_san_dns` / `x509_hash` request objects or unsigned
/// `redirect_uri` ones, by reference with GET or POST, or by value; DC API requests), serves
/// them, verifies what the wallet sends back with its own checks on top of the SDJWT and
/// Mdoc modules, and records a ``PresentationVerdict`` per transaction.
///
/// Its HTTP endpoints answer through ``respond(to:)`` (in-process, or behind a loopback
/// server), relative to ``VerifierConfiguration/baseURL``:
/// - `GET|POST request/<id>`: the request object (`application/oauth-authz-req+jwt`);
///   POST takes `wallet_nonce` and `wallet_metadata` (§5.10).
/// - `POST response/<id>`: the Authorization Response (`direct_post` / `direct_post.jwt`)
///   or Authorization Error Response; answers `{"redirect_uri": ...}` or a 400 error.
/// - `POST transactions`: creates a transaction from JSON options (``PresentationRequestOptions/init(json:)``)
///   and answers 201 with it (``VerifierTransaction/jsonValue``).
/// - `GET transactions/<id>`: the verdict as JSON.
/// - `GET done`: where the redirect lands.
///
/// ```swift
/// let verifier = try ReferenceVerifier(configuration: VerifierConfiguration(
///     baseURL: URL(string: "http://localhost:8080")!, sdJwtIssuerTrust: .keys([issuerKey])))
/// let transaction = try await verifier.createTransaction(PresentationRequestOptions(query: query))
/// // hand transaction.authorizationRequestURI to the wallet, then:
/// let verdict = await verifier.verdict(for: transaction.id)
/// ```
public actor ReferenceVerifier {
    /// The configuration.
    public nonisolated let configuration: VerifierConfiguration
    /// The reader PKI (its ``VerifierReaderPKI/anchors`` are what wallets trust).
    public nonisolated let pki: VerifierReaderPKI
    /// Every verdict change, latest first on subscription (nil before the first transaction).
    public nonisolated let verdictUpdates: StateStream<PresentationVerdict?>

    private let clock: any WalletClock
    private let random: any RandomSource
    private let signer: RequestObjectSigner
    private var records: [String: Record] = [:]
    private var order: [String] = []

    /// A verifier; its reader PKI is generated for the base URL's host.
    public init(configuration: VerifierConfiguration, clock: any WalletClock = SystemClock(),
                random: any RandomSource = SystemRandom()) throws(VerifierError) {
        self.configuration = configuration
        self.clock = clock
        self.random = random
        let pki = try VerifierReaderPKI(dnsName: configuration.baseURL.host ?? "localhost",
                                        commonName: configuration.readerCommonName, now: clock.now)
        self.pki = pki
        self.signer = RequestObjectSigner(pki: pki)
        self.verdictUpdates = StateStream(initial: nil)
    }

    // MARK: Transactions

    /// Creates a remote presentation request.
    public func createTransaction(_ options: PresentationRequestOptions) async throws(VerifierError) -> VerifierTransaction {
        try options.query.validate()
        for entry in options.transactionData { try entry.validate(against: options.query) }
        try Self.checkFaults(options)
        if options.responseMode.isEncrypted, options.encryptionAlgorithms.isEmpty {
            throw .unsupportedCombination(.noEncryptionAlgorithm)
        }
        let id = try randomToken()
        let nonce = try randomToken()
        let state = options.includesState ? try randomToken() : nil
        let responseURI = Self.responseURI(base: configuration.baseURL, id: id,
                                           swappingHost: options.faults.contains(.responseUriHostMismatch))
        let requestURI = endpoint("request/\(id)")
        let encryption = options.responseMode.isEncrypted ? try makeEncryptionKey(id: id) : nil
        let clientId = signer.clientId(for: options.clientIdPrefix, faults: options.faults, responseURI: responseURI)
        let linkClientId = options.faults.contains(.clientIdMismatch)
            ? signer.mismatchedClientId(for: options.clientIdPrefix) : clientId
        let transactionData = options.transactionData.map { ($0, $0.encoded) }

        var record = Record(
            id: id, channel: .remote(options), clientId: clientId, nonce: nonce, state: state,
            responseURI: responseURI.absoluteString, encryption: encryption,
            encryptionAlgorithms: options.encryptionAlgorithms, transactionData: transactionData,
            verdict: PresentationVerdict(transactionId: id))
        var link: [(String, String)] = [("client_id", linkClientId)]
        switch (options.clientIdPrefix, options.delivery) {
        case (.redirectUri, .byValue):
            for (name, value) in remoteParameters(record, walletNonce: nil) where name != "client_id" {
                link.append((name, value.stringValue ?? value.serialized))
            }
        case (_, .byValue):
            let jwt = try await signer.sign(remoteParameters(record, walletNonce: nil), faults: options.faults,
                                            now: clock.now, lifetime: configuration.requestLifetime)
            link.append(("request", jwt))
            record.requestObject = jwt
        case (_, .byReference(let method, let writesMethod)):
            link.append(("request_uri", requestURI.absoluteString))
            if writesMethod { link.append(("request_uri_method", method.rawValue)) }
        }
        let transaction = VerifierTransaction(
            id: id, clientId: clientId, nonce: nonce, state: state, responseURI: responseURI,
            requestURI: options.delivery == .byValue ? nil : requestURI,
            authorizationRequestURI: "openid4vp://?" + FormURLEncoding.encode(link),
            responseMode: options.responseMode, encryptionKey: encryption?.publicJWK,
            transactionData: transactionData.map(\.1))
        record.transaction = transaction
        store(record)
        return transaction
    }

    /// Creates a DC API request (OpenID4VP 1.0 App. A).
    public func createDcApiRequest(_ options: DcApiRequestOptions) async throws(VerifierError) -> DcApiTransaction {
        try options.query.validate()
        for entry in options.transactionData { try entry.validate(against: options.query) }
        for fault in options.faults {
            let applicable: Bool
            switch fault {
            case .wrongType, .expired, .badSignature, .untrustedChain, .unexpectedOrigin: applicable = options.signed
            case .sanMismatch: applicable = options.signed && options.clientIdPrefix == .x509SanDns
            case .x509HashMismatch: applicable = options.signed && options.clientIdPrefix == .x509Hash
            default: applicable = false
            }
            guard applicable else { throw .unsupportedCombination(.faultNotApplicable(fault)) }
        }
        if options.signed {
            guard !options.expectedOrigins.isEmpty else { throw .unsupportedCombination(.noExpectedOrigins) }
            guard options.clientIdPrefix != .redirectUri else { throw .unsupportedCombination(.unsignedRequestByReference) }
        }
        if options.encrypted, options.encryptionAlgorithms.isEmpty { throw .unsupportedCombination(.noEncryptionAlgorithm) }
        let id = try randomToken()
        let nonce = try randomToken()
        let encryption = options.encrypted ? try makeEncryptionKey(id: id) : nil
        let clientId = options.signed
            ? signer.clientId(for: options.clientIdPrefix, faults: options.faults, responseURI: configuration.baseURL) : nil
        let transactionData = options.transactionData.map { ($0, $0.encoded) }
        var record = Record(
            id: id, channel: .dcApi(options), clientId: clientId ?? "", nonce: nonce, state: nil, responseURI: "",
            encryption: encryption, encryptionAlgorithms: options.encryptionAlgorithms,
            transactionData: transactionData, verdict: PresentationVerdict(transactionId: id))
        var parameters: JSONObject = [
            "response_type": "vp_token",
            "response_mode": .string(options.encrypted ? "dc_api.jwt" : "dc_api"),
            "nonce": .string(nonce),
            "dcql_query": options.query.jsonValue,
            "client_metadata": .object(clientMetadata(encryption: encryption, algorithms: options.encryptionAlgorithms,
                                                      additional: [:])),
        ]
        if !transactionData.isEmpty { parameters["transaction_data"] = .array(transactionData.map { .string($0.1) }) }
        let data: JSONObject
        if options.signed, let clientId {
            parameters["client_id"] = .string(clientId)
            parameters["expected_origins"] = .array(
                (options.faults.contains(.unexpectedOrigin) ? ["https://unexpected.invalid"] : options.expectedOrigins)
                    .map(JSONValue.string))
            parameters["aud"] = .string(RequestObjectSigner.staticAudience)
            let jwt = try await signer.sign(parameters, faults: options.faults, now: clock.now,
                                            lifetime: configuration.requestLifetime)
            record.requestObject = jwt
            data = ["request": .string(jwt)]
        } else {
            data = parameters
        }
        let transaction = DcApiTransaction(
            id: id, protocolIdentifier: options.signed ? DcApiTransaction.signedProtocol : DcApiTransaction.unsignedProtocol,
            data: data, nonce: nonce, clientId: clientId, encryptionKey: encryption?.publicJWK,
            transactionData: transactionData.map(\.1))
        store(record)
        return transaction
    }

    /// Verifies the `data` object a DC API call returned for `transactionId`, received
    /// from a page at `origin` (`https://verifier.example`), and records the verdict.
    public func verifyDcApiResponse(_ data: JSONValue, transactionId: String, origin: String) async throws(VerifierError)
        -> PresentationVerdict {
        guard var record = records[transactionId], case .dcApi(let options) = record.channel else {
            throw .unknownTransaction(transactionId)
        }
        record.verdict.responsesReceived += 1
        guard !record.verdict.isDecided, !record.processing else {
            records[transactionId] = record
            return record.verdict
        }
        record.processing = true
        records[transactionId] = record
        let outcome: Outcome
        if let object = data.objectValue {
            let fields = object.dictionary.compactMapValues { $0.stringValue }
            outcome = await process(
                fields: fields, vpTokenValue: object["vp_token"], record: record, encrypted: options.encrypted,
                audience: "origin:" + origin,
                transcript: { thumbprint in .openID4VP(.openID4VPDCAPI(origin: origin, nonce: record.nonce,
                                                                           jwkThumbprint: thumbprint)) })
        } else {
            outcome = .failure(.malformedResponse(.payloadNotAnObject))
        }
        return decide(transactionId, outcome)
    }

    /// The verdict of a transaction (nil for an unknown id).
    public func verdict(for transactionId: String) -> PresentationVerdict? { records[transactionId]?.verdict }

    /// Every transaction's verdict, oldest first.
    public var verdicts: [PresentationVerdict] { order.compactMap { records[$0]?.verdict } }

    /// The remote transaction with `id`.
    public func transaction(_ id: String) -> VerifierTransaction? { records[id]?.transaction }

    // MARK: HTTP

    /// Answers one HTTP request to the verifier's endpoints (unknown paths 404, known
    /// paths with another method 405).
    public func respond(to request: HTTPRequest) async -> HTTPResponse {
        do {
            return try await router.respond(to: request)
        } catch {
            switch error {
            case .response(let response): return response
            case .dropConnection: return VerifierHTTP.error("server_error", "no answer", status: 500)
            }
        }
    }

    /// The routes, below the base URL's path.
    private nonisolated var router: HTTPRouter {
        var base = configuration.baseURL.path
        while base.hasSuffix("/") { base.removeLast() }
        var router = HTTPRouter()
        router.add(.get, base + "/request/{id}") { request, parameters in
            await self.serveRequestObject(id: parameters["id"] ?? "", request: request)
        }
        router.add(.post, base + "/request/{id}") { request, parameters in
            await self.serveRequestObject(id: parameters["id"] ?? "", request: request)
        }
        router.add(.post, base + "/response/{id}") { request, parameters in
            await self.receiveResponse(id: parameters["id"] ?? "", request: request)
        }
        router.add(.post, base + "/transactions") { request, _ in await self.createTransaction(from: request) }
        router.add(.get, base + "/transactions/{id}") { _, parameters in
            guard let verdict = await self.verdict(for: parameters["id"] ?? "") else { return .notFound() }
            return VerifierHTTP.json(verdict.jsonValue)
        }
        router.add(.get, base + "/done") { _, _ in .text("Presentation received.\n") }
        return router
    }

    /// `POST transactions` with a JSON body (``PresentationRequestOptions/init(json:)``).
    private func createTransaction(from request: HTTPRequest) async -> HTTPResponse {
        guard request.headers["Content-Type"]?.lowercased().hasPrefix("application/json") == true,
              let body = try? JSONValue.parseObject(request.body ?? []) else {
            return VerifierHTTP.error("invalid_request", "the body is not a JSON object")
        }
        do {
            let transaction = try await createTransaction(try PresentationRequestOptions(json: body))
            return VerifierHTTP.json(transaction.jsonValue, status: 201)
        } catch {
            return VerifierHTTP.error("invalid_request", "the options do not make a valid request")
        }
    }

    private func serveRequestObject(id: String, request: HTTPRequest) async -> HTTPResponse {
        guard var record = records[id], case .remote(let options) = record.channel,
              case .byReference(let method, _) = options.delivery, options.clientIdPrefix != .redirectUri else {
            return .notFound()
        }
        var walletNonce: String?
        if request.method == .post {
            guard method == .post else { return VerifierHTTP.error("invalid_request", "this request_uri takes GET") }
            guard let fields = VerifierHTTP.formFields(request) else {
                return VerifierHTTP.error("invalid_request", "the body is not a form")
            }
            walletNonce = fields["wallet_nonce"]
            record.verdict.walletNonce = walletNonce
            if let metadata = fields["wallet_metadata"] {
                guard let object = try? JSONValue.parseObject(Array(metadata.utf8)) else {
                    return VerifierHTTP.error("invalid_request", "wallet_metadata is not a JSON object")
                }
                record.verdict.walletMetadata = object
            }
        }
        record.verdict.requestFetches += 1
        records[id] = record
        publish(record.verdict)
        if options.faults.contains(.missingWalletNonce) {
            walletNonce = nil
        } else if options.faults.contains(.wrongWalletNonce) {
            walletNonce = (try? randomToken()) ?? "not-the-wallet-nonce"
        }
        do {
            let jwt = try await signer.sign(remoteParameters(record, walletNonce: walletNonce), faults: options.faults,
                                            now: clock.now, lifetime: configuration.requestLifetime)
            return HTTPResponse(status: 200, headers: ["Content-Type": "application/oauth-authz-req+jwt",
                                                       "Cache-Control": "no-store"],
                                body: Array(jwt.utf8))
        } catch {
            return VerifierHTTP.error("server_error", "the request object could not be signed", status: 500)
        }
    }

    private func receiveResponse(id: String, request: HTTPRequest) async -> HTTPResponse {
        guard var record = records[id], case .remote(let options) = record.channel else { return .notFound() }
        record.verdict.responsesReceived += 1
        guard !record.verdict.isDecided, !record.processing else {
            records[id] = record
            publish(record.verdict)
            return VerifierHTTP.error("invalid_request", VerificationFailure.transactionClosed.summary,
                                      status: configuration.rejectionStatus)
        }
        record.processing = true
        records[id] = record
        let outcome: Outcome
        if let fields = VerifierHTTP.formFields(request) {
            let vpToken = fields["vp_token"].map { text in (try? JSONValue.parse(text)) ?? .string(text) }
            outcome = await process(
                fields: fields, vpTokenValue: vpToken, record: record, encrypted: options.responseMode.isEncrypted,
                audience: record.clientId,
                transcript: { thumbprint in .openID4VP(.openID4VP(clientId: record.clientId, nonce: record.nonce,
                                                                  jwkThumbprint: thumbprint,
                                                                  responseUri: record.responseURI)) })
        } else {
            outcome = .failure(.malformedResponse(.notAForm))
        }
        let verdict = decide(id, outcome)
        switch verdict.outcome {
        case .rejected(let failure):
            return VerifierHTTP.error("invalid_request", failure.summary, status: configuration.rejectionStatus)
        default:
            var body: JSONObject = [:]
            if let redirect = verdict.redirectUri { body["redirect_uri"] = .string(redirect.absoluteString) }
            return VerifierHTTP.json(.object(body))
        }
    }

    // MARK: Verification

    enum Outcome: Sendable {
        case accepted([VerifiedPresentation])
        case declined(error: String, description: String?)
        case failure(VerificationFailure)
    }

    /// The common part of both channels: error responses, decryption, `state`, then the VP Token.
    private func process(fields: [String: String], vpTokenValue: JSONValue?, record: Record, encrypted: Bool,
                         audience: String, transcript: ([UInt8]?) -> SessionTranscript) async -> Outcome {
        if let error = fields["error"] {
            guard !error.isEmpty else { return .failure(.malformedResponse(.emptyErrorCode)) }
            // An error response closes the transaction, so it must carry the request's
            // `state` like any response: otherwise whoever read the response URI could
            // decline for the wallet before it answers.
            if let expected = record.state, fields["state"] != expected {
                return .failure(.stateMismatch(expected: expected, actual: fields["state"]))
            }
            return .declined(error: error, description: fields["error_description"])
        }
        var vpToken = vpTokenValue
        var state = fields["state"]
        if encrypted {
            guard vpToken == nil else { return .failure(.responseNotEncrypted) }
            guard let compact = fields["response"] else { return .failure(.malformedResponse(.missingVPToken)) }
            let payload: JSONObject
            switch decrypt(compact, record: record) {
            case .success(let object): payload = object
            case .failure(let failure): return .failure(failure)
            }
            if let error = payload["error"]?.stringValue {
                let errorState = payload["state"]?.stringValue ?? state
                if let expected = record.state, errorState != expected {
                    return .failure(.stateMismatch(expected: expected, actual: errorState))
                }
                return .declined(error: error, description: payload["error_description"]?.stringValue)
            }
            vpToken = payload["vp_token"]
            state = payload["state"]?.stringValue ?? state
        }
        guard let vpToken else { return .failure(.malformedResponse(.missingVPToken)) }
        if let expected = record.state, state != expected {
            return .failure(.stateMismatch(expected: expected, actual: state))
        }
        let thumbprint = encrypted ? record.encryption?.publicJWK.thumbprintBytes : nil
        let verifier = VpTokenVerifier(
            context: ResponseContext(query: record.query, transactionData: record.transactionData, nonce: record.nonce,
                                     audience: audience, sessionTranscript: transcript(thumbprint)),
            policy: PresentationPolicy(
                sdJwtIssuerTrust: configuration.sdJwtIssuerTrust, mdocIssuerAnchors: configuration.mdocIssuerAnchors,
                clockSkew: configuration.clockSkew, keyBindingMaximumAge: configuration.keyBindingMaximumAge,
                mdocTransactionDataBinding: configuration.mdocTransactionDataBinding),
            now: clock.now)
        do {
            return .accepted(try await verifier.verify(vpToken))
        } catch {
            return .failure(error)
        }
    }

    private func decrypt(_ compact: String, record: Record) -> Result<JSONObject, VerificationFailure> {
        guard let encryption = record.encryption else { return .failure(.responseNotEncrypted) }
        do {
            let jwe = try JWE(compact: compact)
            guard record.encryptionAlgorithms.contains(jwe.contentEncryption) else {
                return .failure(.encryptionAlgorithmNotOffered(jwe.contentEncryption.rawValue))
            }
            let plaintext = try jwe.decrypt(with: encryption.privateKey, recipientKeyID: encryption.publicJWK.keyID)
            guard let object = try? JSONValue.parseObject(plaintext) else {
                return .failure(.malformedResponse(.payloadNotAnObject))
            }
            return .success(object)
        } catch .unsupportedAlgorithm(_, let name) {
            return .failure(.encryptionAlgorithmNotOffered(name))
        } catch {
            return .failure(.decryptionFailed(error))
        }
    }

    private func decide(_ id: String, _ outcome: Outcome) -> PresentationVerdict {
        guard var record = records[id] else { return PresentationVerdict(transactionId: id) }
        record.processing = false
        switch outcome {
        case .accepted(let presentations):
            record.verdict.outcome = .accepted
            record.verdict.presentations = presentations
        case .declined(let error, let description):
            record.verdict.outcome = .declined(error: error, description: description)
        case .failure(let failure):
            record.verdict.outcome = .rejected(failure)
        }
        record.verdict.decidedAt = clock.now
        if configuration.answersWithRedirect, case .remote = record.channel, record.verdict.failure == nil {
            let code = (try? randomToken()) ?? id
            record.verdict.redirectUri = URL(string: endpoint("done").absoluteString + "#response_code=" + code)
        }
        records[id] = record
        publish(record.verdict)
        return record.verdict
    }

    // MARK: Building requests

    /// The Authorization Request parameters of a remote transaction.
    private func remoteParameters(_ record: Record, walletNonce: String?) -> JSONObject {
        guard case .remote(let options) = record.channel else { return [:] }
        var parameters: JSONObject = [
            "client_id": .string(record.clientId),
            "response_type": "vp_token",
            "response_mode": .string(options.responseMode.rawValue),
            "response_uri": .string(record.responseURI),
            "nonce": .string(record.nonce),
            "dcql_query": options.query.jsonValue,
            "client_metadata": .object(clientMetadata(encryption: record.encryption,
                                                      algorithms: options.encryptionAlgorithms,
                                                      additional: options.additionalClientMetadata)),
        ]
        if options.clientIdPrefix != .redirectUri { parameters["aud"] = .string(RequestObjectSigner.staticAudience) }
        if let state = record.state { parameters["state"] = .string(state) }
        if !record.transactionData.isEmpty {
            parameters["transaction_data"] = .array(record.transactionData.map { .string($0.1) })
        }
        if let walletNonce { parameters["wallet_nonce"] = .string(walletNonce) }
        return parameters
    }

    /// `client_metadata`: the formats and algorithms verified here, and the response key.
    private func clientMetadata(encryption: EncryptionKey?, algorithms: [ContentEncryptionAlgorithm],
                                additional: JSONObject) -> JSONObject {
        var metadata: JSONObject = [
            "vp_formats_supported": [
                "dc+sd-jwt": ["sd-jwt_alg_values": ["ES256", "ES384", "ES512", "EdDSA"],
                              "kb-jwt_alg_values": ["ES256", "ES384", "ES512", "EdDSA"]],
                // COSE: -7 ES256, -35 ES384, -36 ES512, -8 EdDSA; -9 fully specified ES256 (P-256).
                "mso_mdoc": ["issuerauth_alg_values": [-7, -9, -35, -36, -8],
                             "deviceauth_alg_values": [-7, -9, -35, -36, -8]],
            ],
        ]
        if let encryption {
            metadata["jwks"] = ["keys": [encryption.publicJWK.jsonValue]]
            metadata["encrypted_response_enc_values_supported"] = .array(algorithms.map { .string($0.rawValue) })
        }
        for (name, value) in additional { metadata[name] = value }
        return metadata
    }

    private static func checkFaults(_ options: PresentationRequestOptions) throws(VerifierError) {
        let signed = options.clientIdPrefix != .redirectUri
        if !signed, options.delivery != .byValue { throw .unsupportedCombination(.unsignedRequestByReference) }
        for fault in options.faults {
            let applicable: Bool
            switch fault {
            case .wrongType, .clientIdMismatch, .expired, .badSignature, .untrustedChain: applicable = signed
            case .sanMismatch, .responseUriHostMismatch: applicable = options.clientIdPrefix == .x509SanDns
            case .x509HashMismatch: applicable = options.clientIdPrefix == .x509Hash
            case .missingWalletNonce, .wrongWalletNonce:
                applicable = options.delivery == .byReference(method: .post, writesMethod: true)
                    || options.delivery == .byReference(method: .post, writesMethod: false)
            case .unexpectedOrigin: applicable = false
            }
            guard applicable else { throw .unsupportedCombination(.faultNotApplicable(fault)) }
        }
    }

    private func makeEncryptionKey(id: String) throws(VerifierError) -> EncryptionKey {
        let key: ECPrivateKey
        do { key = try ECPrivateKey.generate(curve: .p256) } catch { throw .crypto(error) }
        do {
            let jwk = try JWK(publicKey: key.publicKey).adding([
                "kid": .string("enc-" + id.prefix(8)), "use": "enc", "alg": .string(JWE.keyAgreementAlgorithm),
            ])
            return EncryptionKey(privateKey: key, publicJWK: jwk)
        } catch {
            throw .signingFailed(error)
        }
    }

    private func randomToken() throws(VerifierError) -> String {
        do { return Base64URL.encode(try random.bytes(count: 24)) } catch { throw .randomSourceFailed }
    }

    private func endpoint(_ relative: String) -> URL {
        configuration.baseURL.appendingPathComponent(relative)
    }

    /// `response/<id>`, optionally on another host than the base URL (the
    /// `responseUriHostMismatch` fault): `127.0.0.1` for `localhost`, else `localhost`.
    private static func responseURI(base: URL, id: String, swappingHost: Bool) -> URL {
        let uri = base.appendingPathComponent("response/\(id)")
        guard swappingHost, var components = URLComponents(url: uri, resolvingAgainstBaseURL: false) else { return uri }
        components.host = components.host == "localhost" ? "127.0.0.1" : "localhost"
        return components.url ?? uri
    }

    private func store(_ record: Record) {
        records[record.id] = record
        order.append(record.id)
        publish(record.verdict)
    }

    private func publish(_ verdict: PresentationVerdict) {
        verdictUpdates.send(verdict)
    }
}

/// A response encryption key: the private half stays with the verifier.
struct EncryptionKey: Sendable {
    let privateKey: ECPrivateKey
    let publicJWK: JWK
}

/// What the verifier keeps about one transaction.
struct Record: Sendable {
    enum Channel: Sendable {
        case remote(PresentationRequestOptions)
        case dcApi(DcApiRequestOptions)
    }

    let id: String
    let channel: Channel
    let clientId: String
    let nonce: String
    let state: String?
    /// The `response_uri` exactly as sent (it goes into the mdoc handover).
    let responseURI: String
    let encryption: EncryptionKey?
    let encryptionAlgorithms: [ContentEncryptionAlgorithm]
    let transactionData: [(entry: VerifierTransactionData, encoded: String)]
    var verdict: PresentationVerdict
    var requestObject: String?
    var transaction: VerifierTransaction?
    /// Set while a response is being verified, so a concurrent second one is refused.
    var processing = false

    var query: VerifierQuery {
        switch channel {
        case .remote(let options): options.query
        case .dcApi(let options): options.query
        }
    }
}
