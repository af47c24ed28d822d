import Foundation
import JOSE
import Mdoc
import SDJWT
import WalletCrypto
import WalletEncoding
import WalletRuntime
import WalletStorage

/// The pure heart of a presentation session (DESIGN rule 2): inputs in, effects and the
/// next state out. No I/O, no clock, no randomness of its own: the driver supplies the
/// time with each input, the `wallet_nonce` at start, and performs every effect.
package struct PresentationFlow: Sendable {
    /// Where a session starts from.
    package enum Invocation: Sendable, Equatable {
        /// An `openid4vp://` or `https://` authorization request, or a request URI.
        case uri(String)
        /// A Digital Credentials API request object (`{"protocol", "data"}`) and the caller's origin.
        case dcApi(requestObject: String, origin: String)
    }

    /// What the driver must do.
    package enum Effect: Sendable, Equatable {
        /// Fetch the request object; answer with `.requestObjectFetched`.
        case fetchRequestObject(HTTPRequest)
        /// Read the credentials these filters select from the store; answer with `.credentialsLoaded`.
        case loadCredentials([CredentialFilter])
        /// Consume an instance of each job's credential and present it; answer with
        /// `.presentationsMade` (the entries in job order).
        case present([PresentationJob], PresentationContext)
        /// Encrypt the response payload; answer with `.encrypted`.
        case encrypt([UInt8], ResponseEncryption)
        /// Send the response (or error response) to the verifier; answer with `.delivered`.
        case send(HTTPRequest)
    }

    /// What happened.
    package enum Input: Sendable {
        /// The session starts.
        case start(now: Date)
        /// The request URI answered.
        case requestObjectFetched(HTTPResponse, now: Date)
        /// The store's credentials for the filters asked.
        case credentialsLoaded([StoredCredential])
        /// The user approved a selection.
        case respond(PresentationSelection, now: Date)
        /// The user declined.
        case decline
        /// The presentations, in the order of the jobs.
        case presentationsMade([String])
        /// The compact JWE of the response payload.
        case encrypted(String)
        /// The verifier answered the response.
        case delivered(HTTPResponse)
        /// An effect failed.
        case effectFailed(PresentationError)
    }

    private enum Phase: Sendable {
        case idle
        case fetching(clientId: String?, walletNonce: String?)
        case matching(ResolvedRequest)
        case awaitingConsent(PresentationRequest)
        case presenting(PresentationRequest, [PresentationJob])
        case encrypting(PresentationRequest)
        case delivering(PresentationRequest)
        case declining
        case finished
    }

    /// The session's state.
    package private(set) var state: PresentationState = .resolvingRequest
    private var phase: Phase = .idle
    private let invocation: Invocation
    private let config: PresentationConfig
    private let readerAnchors: [X509Certificate]
    private let walletNonce: String?

    /// A flow for `invocation`; `walletNonce` is the fresh value sent with
    /// `request_uri_method=post` (the driver draws it from its random source; without
    /// one, the request object is fetched with GET).
    package init(invocation: Invocation, config: PresentationConfig, walletNonce: String?) {
        self.invocation = invocation
        self.config = config
        self.walletNonce = walletNonce
        // An anchor that does not parse trusts nothing; it cannot make anything trusted, nor
        // (when none parses) turn the trust the app asked for into "untrusted" requests.
        self.readerAnchors = config.readerAnchorsDer.compactMap { try? X509Certificate(derEncoded: $0) }
    }

    /// Feeds one input; returns the effects to perform. A failure moves the flow to
    /// `.failed` and returns no effects.
    package mutating func handle(_ input: Input) -> [Effect] {
        guard !state.isTerminal else { return [] }
        do {
            return try step(input)
        } catch {
            finish(.failed(error))
            return []
        }
    }

    private mutating func finish(_ terminal: PresentationState) {
        state = terminal
        phase = .finished
    }

    private mutating func step(_ input: Input) throws(PresentationError) -> [Effect] {
        switch (input, phase) {
        case (.start(let now), .idle):
            return try start(now: now)
        case (.requestObjectFetched(let response, let now), .fetching(let clientId, let nonce)):
            let compact = try Self.requestObject(in: response)
            let object = try RequestObject(compact: compact, expecting: expectations(clientId: clientId, walletNonce: nonce, now: now))
            return try resolve(object.parameters, context: .remote(clientId: object.clientId, verifier: object.verifier))
        case (.credentialsLoaded(let stored), .matching(let resolved)):
            let request = try match(resolved, stored)
            phase = .awaitingConsent(request)
            state = .requestResolved(request)
            return []
        case (.respond(let selection, let now), .awaitingConsent(let request)):
            let jobs = try plan(request, selection)
            let context = PresentationContext(audience: request.resolved.audience, nonce: request.resolved.nonce,
                                              issuedAt: now, sessionTranscript: Self.sessionTranscript(request.resolved))
            phase = .presenting(request, jobs)
            state = .submitting
            return [.present(jobs, context)]
        case (.presentationsMade(let entries), .presenting(let request, let jobs)):
            return try respond(request, jobs: jobs, entries: entries)
        case (.encrypted(let jwe), .encrypting(let request)):
            return try deliver(request, payload: ["response": .string(jwe)], form: [("response", jwe)])
        case (.delivered(let response), .delivering):
            let redirect = try Self.outcome(of: response)
            finish(.completed(redirectUri: redirect, dcApiResponse: nil))
            return []
        case (.delivered(let response), .declining):
            // The user declined whatever the verifier answers; its redirect is surfaced when it gives one.
            finish(.declined(redirectUri: (try? Self.outcome(of: response)) ?? nil))
            return []
        case (.decline, .awaitingConsent(let request)):
            guard let post = Self.errorResponse(request.resolved, code: .accessDenied, description: "the user declined",
                                                timeout: config.requestTimeout) else {
                // §15.9.2 / App. A: nothing goes back over the Digital Credentials API.
                finish(.declined(redirectUri: nil))
                return []
            }
            phase = .declining
            state = .submitting
            return [.send(post)]
        case (.decline, .idle), (.decline, .fetching), (.decline, .matching):
            // Nothing verified yet to answer to: the session just ends.
            finish(.declined(redirectUri: nil))
            return []
        case (.effectFailed(let error), _):
            throw error
        default:
            // An input the current phase does not expect (a second respond, a late decline): ignored.
            return []
        }
    }

    // MARK: Resolve

    private func expectations(clientId: String?, walletNonce: String?, now: Date) -> RequestObject.Expectations {
        RequestObject.Expectations(clientId: clientId, walletNonce: walletNonce, readerAnchors: readerAnchors,
                                   anchorsConfigured: !config.readerAnchorsDer.isEmpty,
                                   audiences: config.walletAudiences, now: now, clockSkew: config.clockSkew)
    }

    private mutating func start(now: Date) throws(PresentationError) -> [Effect] {
        switch invocation {
        case .uri(let text):
            let parsed: RequestInvocation
            do { parsed = try RequestInvocation.parse(text, allowHTTP: config.allowHTTP) } catch { throw .invalidRequest(error) }
            switch parsed {
            case .byValue(let clientIdText, let parameters):
                let clientId: ClientIdentifier
                do { clientId = try ClientIdentifier(clientIdText) } catch { throw .invalidRequest(error) }
                // §5.9.3: only the redirect_uri prefix works without a signed request object.
                guard clientId.scheme == .redirectUri else { throw .invalidRequest(.unsignedRequestNotAllowed) }
                return try resolve(parameters, context: .remote(
                    clientId: clientId, verifier: VerifierIdentity(clientId: clientId.full, clientIdScheme: .redirectUri)))
            case .requestObject(let clientId, let compact):
                let object = try RequestObject(compact: compact, expecting: expectations(clientId: clientId, walletNonce: nil, now: now))
                return try resolve(object.parameters, context: .remote(clientId: object.clientId, verifier: object.verifier))
            case .requestUri(let clientId, let url, let method):
                var request = HTTPRequest(method: .get, url: url, headers: ["Accept": "application/oauth-authz-req+jwt"],
                                          timeout: config.requestTimeout)
                var nonce: String?
                if method == .post, let walletNonce {
                    // §5.10: the wallet's metadata and a fresh nonce the request object must echo.
                    nonce = walletNonce
                    request.method = .post
                    request.headers["Content-Type"] = "application/x-www-form-urlencoded"
                    request.body = Array(FormURLEncoding.encode([
                        ("wallet_metadata", JSONValue.object(PresentationConfig.walletMetadata).serialized),
                        ("wallet_nonce", walletNonce),
                    ]).utf8)
                }
                phase = .fetching(clientId: clientId, walletNonce: nonce)
                return [.fetchRequestObject(request)]
            }
        case .dcApi(let text, let origin):
            let request: DcApiRequest
            do { request = try DcApiRequest(json: text, origin: origin, allowHTTP: config.allowHTTP) } catch {
                throw .invalidRequest(error)
            }
            switch request.protocolIdentifier {
            case .unsigned:
                let clientId = ClientIdentifier(origin: origin)
                return try resolve(request.data, context: .dcApi(
                    origin: origin, clientId: clientId, verifier: VerifierIdentity(clientId: clientId.full, clientIdScheme: .origin)))
            case .signed:
                guard let compact = request.data["request"]?.stringValue else {
                    throw .invalidRequest(.missingParameter("request"))
                }
                let object = try RequestObject(compact: compact, expecting: expectations(clientId: nil, walletNonce: nil, now: now))
                // App. A.3.2: the signed protocol is for requests that authenticate their
                // verifier. An `alg` `none` object (which only `redirect_uri` may use) names a
                // client no key vouches for, and over the DC API no response_uri ties it to
                // the caller either, so it is refused rather than shown under that name.
                guard object.isSigned else { throw .invalidRequest(.unsignedRequestNotAllowed) }
                do { try DcApiRequest.checkExpectedOrigins(object.parameters, origin: origin) } catch { throw .invalidRequest(error) }
                return try resolve(object.parameters, context: .dcApi(origin: origin, clientId: object.clientId,
                                                                      verifier: object.verifier))
            }
        }
    }

    /// The request object in a request URI response (§5.10.1): a 2xx whose body is a JWT.
    /// Redirects are not followed (§14.5).
    static func requestObject(in response: HTTPResponse) throws(PresentationError) -> String {
        guard response.isSuccess else { throw .invalidRequest(.requestUriStatus(response.status)) }
        guard let text = UTF8Validation.string(response.body)?.trimmingWhitespace(),
              !text.isEmpty, !text.contains(where: { $0.isWhitespace }) else {
            throw .invalidRequest(.requestObjectMissing)
        }
        return text
    }

    private mutating func resolve(_ parameters: JSONObject, context: RequestContext) throws(PresentationError) -> [Effect] {
        let resolved: ResolvedRequest
        do { resolved = try ResolvedRequest(parameters: parameters, context: context, allowHTTP: config.allowHTTP) } catch {
            throw .invalidRequest(error)
        }
        phase = .matching(resolved)
        return [.loadCredentials(Self.filters(for: resolved.dcqlQuery))]
    }

    /// The store filters that select every credential the query could match: one per
    /// format and type it names.
    static func filters(for query: DcqlQuery) -> [CredentialFilter] {
        var filters: [CredentialFilter] = []
        var seen = Set<CredentialFilter>()
        for credential in query.credentials {
            let candidates: [CredentialFilter]
            switch credential.format {
            case DcqlFormat.sdJwtVc:
                candidates = (credential.meta.vctValues ?? []).map { CredentialFilter(format: .sdJwtVc, type: $0) }
            case DcqlFormat.msoMdoc:
                candidates = credential.meta.doctypeValue.map { [CredentialFilter(format: .msoMdoc, type: $0)] } ?? []
            default:
                candidates = []
            }
            for filter in candidates where seen.insert(filter).inserted { filters.append(filter) }
        }
        return filters
    }

    private func match(_ resolved: ResolvedRequest, _ stored: [StoredCredential]) throws(PresentationError) -> PresentationRequest {
        // A credential that does not parse is left out rather than failing the request.
        let credentials = stored.compactMap { try? DcqlCredential(stored: $0) }
        var match = DcqlMatcher.match(resolved.dcqlQuery, against: credentials)
        if !resolved.transactionData.isEmpty {
            match = try bindTransactions(resolved, match, credentials)
        }
        return PresentationRequest(resolved: resolved, match: match)
    }

    /// Checks that every transaction is of a type the app supports, when it says which,
    /// and can be bound (§8.4, App. B.2.1, B.3.3): an SD-JWT
    /// query can always hash it into its KB-JWT; an mdoc query needs the binder to name
    /// a device-signed element, which the MSO's keyAuthorizations must allow. Candidates
    /// that cannot authorise a transaction only mdoc queries can bind are dropped.
    private func bindTransactions(_ resolved: ResolvedRequest, _ match: DcqlMatch,
                                  _ credentials: [DcqlCredential]) throws(PresentationError) -> DcqlMatch {
        var candidates = match.candidates
        for transaction in resolved.transactionData {
            if let supported = config.transactionDataTypes, !supported.contains(transaction.type) {
                throw .invalidRequest(.invalidTransactionData(.unsupportedType(transaction.type)))
            }
            let queries = transaction.credentialIds.compactMap { resolved.dcqlQuery.credential(id: $0) }
            let element = config.mdocTransactionDataBinder?(transaction)
            let bindable = queries.contains { $0.format == DcqlFormat.sdJwtVc || ($0.format == DcqlFormat.msoMdoc && element != nil) }
            guard bindable else { throw .invalidRequest(.invalidTransactionData(.unsupportedType(transaction.type))) }
            guard let element, queries.allSatisfy({ $0.format == DcqlFormat.msoMdoc }) else { continue }
            for query in queries {
                let before = candidates[query.id] ?? []
                let after = before.filter { candidate in
                    let keyAuthorizations = credentials.first { $0.id == candidate.credentialId }?.keyAuthorizations
                    return keyAuthorizations?.authorizes(nameSpace: element.nameSpace,
                                                         elementIdentifier: element.elementIdentifier) == true
                }
                if !before.isEmpty, after.isEmpty {
                    throw .invalidRequest(.invalidTransactionData(.notAuthorizedByKeyAuthorizations(
                        nameSpace: element.nameSpace, elementIdentifier: element.elementIdentifier)))
                }
                candidates[query.id] = after
            }
        }
        return DcqlMatch(query: match.query, candidates: candidates)
    }

    // MARK: Respond

    /// The presentations a selection asks for, each transaction bound to the first of
    /// its queries the selection answers (exactly one credential authorises it, §5.1).
    private func plan(_ request: PresentationRequest, _ selection: PresentationSelection) throws(PresentationError) -> [PresentationJob] {
        let answered: [String]
        do { answered = try request.match.check(selection.chosen) } catch {
            switch error {
            case .notSatisfiable(let ids): throw .queryNotSatisfiable(queryIds: ids)
            case .incomplete(let missing): throw .selectionIncomplete(missing: missing)
            default: throw .unexpected(.invalidSelection(error))
            }
        }
        let resolved = request.resolved
        var transactionsByQuery: [String: [TransactionData]] = [:]
        for transaction in resolved.transactionData {
            guard let queryId = transaction.credentialIds.first(where: answered.contains) else {
                throw .selectionIncomplete(missing: transaction.credentialIds)
            }
            transactionsByQuery[queryId, default: []].append(transaction)
        }
        var jobs: [PresentationJob] = []
        for queryId in answered {
            guard let query = resolved.dcqlQuery.credential(id: queryId) else { continue }
            let transactions = transactionsByQuery[queryId] ?? []
            var elements: [MdocTransactionDataElement] = []
            if query.format == DcqlFormat.msoMdoc {
                for transaction in transactions {
                    guard let element = config.mdocTransactionDataBinder?(transaction) else {
                        throw .invalidRequest(.invalidTransactionData(.unsupportedType(transaction.type)))
                    }
                    elements.append(element)
                }
            }
            var retain: [ClaimPath: Bool] = [:]
            for claim in query.claims ?? [] { if let flag = claim.intentToRetain { retain[claim.path] = flag } }
            for (index, credentialId) in (selection.chosen[queryId] ?? []).enumerated() {
                let candidate = request.match.candidates[queryId]?.first { $0.credentialId == credentialId }
                // A transaction is authorised by one presentation: the query's first.
                let authorises = index == 0 ? transactions : []
                jobs.append(PresentationJob(
                    queryId: queryId, credentialId: credentialId, format: query.format,
                    disclosedPaths: candidate?.disclosedPaths ?? [], intentToRetain: retain,
                    holderBound: query.requireCryptographicHolderBinding || !authorises.isEmpty,
                    transactionData: authorises, deviceSignedElements: index == 0 ? elements : []))
            }
        }
        return jobs
    }

    /// The mdoc SessionTranscript (App. B.2.6): the redirect handover binds the client
    /// identifier, nonce, response URI and (for an encrypted response) the verifier
    /// key's thumbprint; the DC API handover binds the origin instead.
    static func sessionTranscript(_ resolved: ResolvedRequest) -> SessionTranscript {
        let thumbprint = resolved.encryption?.keyThumbprint
        if let origin = resolved.origin {
            return .openID4VP(.openID4VPDCAPI(origin: origin, nonce: resolved.nonce, jwkThumbprint: thumbprint))
        }
        return .openID4VP(.openID4VP(clientId: resolved.clientId.full, nonce: resolved.nonce, jwkThumbprint: thumbprint,
                                     responseUri: resolved.responseUri ?? ""))
    }

    /// The `vp_token` (§8.1): each answered query id with its presentations, in order.
    static func vpToken(jobs: [PresentationJob], entries: [String]) -> JSONObject {
        var token = JSONObject()
        for (job, entry) in zip(jobs, entries) {
            var list = token[job.queryId]?.arrayValue ?? []
            list.append(.string(entry))
            token[job.queryId] = .array(list)
        }
        return token
    }

    private mutating func respond(_ request: PresentationRequest, jobs: [PresentationJob],
                                  entries: [String]) throws(PresentationError) -> [Effect] {
        let resolved = request.resolved
        var payload: JSONObject = ["vp_token": .object(Self.vpToken(jobs: jobs, entries: entries))]
        // The DC API has no state (App. A.2); a remote response echoes it (§8.2).
        if let state = resolved.state, !resolved.responseMode.isDcApi { payload["state"] = .string(state) }
        if let encryption = resolved.encryption {
            // §8.3: the response parameters as top-level members of an encrypted JWT.
            phase = .encrypting(request)
            return [.encrypt(JSONValue.object(payload).serializedBytes, encryption)]
        }
        var form: [(String, String)] = [("vp_token", payload["vp_token"]?.serialized ?? "{}")]
        if let state = payload["state"]?.stringValue { form.append(("state", state)) }
        return try deliver(request, payload: payload, form: form)
    }

    /// Hands the response back: as the DC API's data object, or POSTed to the response URI.
    private mutating func deliver(_ request: PresentationRequest, payload: JSONObject,
                                  form: [(String, String)]) throws(PresentationError) -> [Effect] {
        let resolved = request.resolved
        if resolved.responseMode.isDcApi {
            finish(.completed(redirectUri: nil, dcApiResponse: JSONValue.object(payload).serialized))
            return []
        }
        guard let url = resolved.responseURL else { throw .invalidRequest(.missingResponseUri) }
        phase = .delivering(request)
        return [.send(Self.formPost(url, form, timeout: config.requestTimeout))]
    }

    static func formPost(_ url: URL, _ form: [(String, String)], timeout: Duration) -> HTTPRequest {
        HTTPRequest(method: .post, url: url,
                    headers: ["Content-Type": "application/x-www-form-urlencoded", "Accept": "application/json"],
                    body: Array(FormURLEncoding.encode(form).utf8), timeout: timeout)
    }

    /// An Authorization Error Response (§8.2, §8.5) to the response URI, or nil for a
    /// DC API request, which has none.
    static func errorResponse(_ resolved: ResolvedRequest, code: VpErrorCode, description: String?,
                              timeout: Duration = .seconds(30)) -> HTTPRequest? {
        guard !resolved.responseMode.isDcApi, let url = resolved.responseURL else { return nil }
        var form: [(String, String)] = [("error", code.rawValue)]
        if let description { form.append(("error_description", description)) }
        if let state = resolved.state { form.append(("state", state)) }
        return formPost(url, form, timeout: timeout)
    }

    /// What the response URI's answer means (§8.2): 200 with an optional `redirect_uri`
    /// to follow; a redirect is an error (§14.5); any other status is a rejection with
    /// the body's OAuth `error`, when it says.
    static func outcome(of response: HTTPResponse) throws(PresentationError) -> URL? {
        let body = try? JSONValue.parseObject(response.body)
        if (300..<400).contains(response.status) { throw .unexpected(.unexpectedRedirect(status: response.status)) }
        guard response.isSuccess else {
            throw .responseRejected(status: response.status, error: body?["error"]?.stringValue)
        }
        return body?["redirect_uri"]?.stringValue.flatMap(followableRedirect)
    }

    /// Schemes a browser runs or reads locally rather than navigates to.
    private static let unsafeRedirectSchemes: Set<String> = ["javascript", "data", "file", "vbscript", "blob", "about"]

    /// The verifier's `redirect_uri` when the app can send the user there: an absolute URL
    /// whose scheme a browser navigates to (`https`, or a verifier app's own scheme), and
    /// `http` only to a loopback host. Another is dropped (the response was accepted all
    /// the same): a verifier must not make the wallet open `javascript:` or a local file.
    static func followableRedirect(_ text: String) -> URL? {
        guard let url = URL(string: text), let scheme = url.scheme?.lowercased(),
              !unsafeRedirectSchemes.contains(scheme) else { return nil }
        if scheme == "http" { return ResolvedRequest.isLoopback(url) ? url : nil }
        return url
    }
}
