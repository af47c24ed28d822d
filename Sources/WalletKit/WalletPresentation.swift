import Foundation
import OpenID4VP
import SDJWT
import WalletEncoding
import WalletRuntime
import WalletStorage

/// Presentation through the wallet (`wallet.presentation`): OpenID4VP sessions for
/// remote requests and the Digital Credentials API, answered from the wallet's store
/// and logged in its transaction log.
///
/// ```swift
/// let session = wallet.presentation.start(requestUri)
/// for await state in session.states {
///     if case let .requestResolved(request) = state { session.respond(.auto(request)) }
///     if state.isTerminal { break }
/// }
/// ```
public final class WalletPresentation: Sendable {
    /// The OpenID4VP client the wallet drives (for what the facade does not wrap).
    public let client: Openid4VpClient
    private let store: CredentialStore
    private let recorder: TransactionRecorder
    private let monitor: CredentialMonitor

    init(client: Openid4VpClient, store: CredentialStore, recorder: TransactionRecorder, monitor: CredentialMonitor) {
        self.client = client
        self.store = store
        self.recorder = recorder
        self.monitor = monitor
    }

    /// Starts a session for an `openid4vp://` or `https://` authorization request, or a
    /// request URI captured from a QR code.
    public func start(_ requestUri: String) -> WalletPresentationSession {
        WalletPresentationSession(client.start(requestUri), kind: .remotePresentation,
                                  fallbackVerifier: Self.clientId(in: requestUri), log: log)
    }

    /// Starts a session for a Digital Credentials API request (the request object the
    /// platform hands over, as JSON text, and the caller's origin it asserts). No HTTP is
    /// performed: the response is `.completed(_, dcApiResponse)`.
    public func startDcApi(_ requestObject: String, origin: String) -> WalletPresentationSession {
        WalletPresentationSession(client.startDcApi(requestObject, origin: origin), kind: .dcApiPresentation,
                                  fallbackVerifier: "origin:" + origin, log: log)
    }

    /// Tells the verifier of a resolved request that the wallet will not answer, with an
    /// OpenID4VP 1.0 §8.5 error code (``WalletPresentationSession/decline()`` sends
    /// `access_denied` itself).
    public func reportError(_ request: PresentationRequest, _ code: VpErrorCode,
                            description: String? = nil) async throws(PresentationError) -> ErrorReport {
        try await client.reportError(request, code, description: description)
    }

    private var log: WalletPresentationSession.Log {
        let store = self.store, recorder = self.recorder, monitor = self.monitor
        return { kind, fallbackVerifier, request, selection, state in
            await Self.record(kind: kind, fallbackVerifier: fallbackVerifier, request: request, selection: selection,
                              state: state, store: store, recorder: recorder)
            await monitor.refresh()
        }
    }

    /// The `client_id` parameter of an authorization request URI, if it has one.
    static func clientId(in uri: String) -> String {
        URLComponents(string: uri)?.queryItems?.first { $0.name == "client_id" }?.value ?? "unresolved verifier"
    }

    /// One log entry for a session that ended in `state`.
    static func record(kind: TransactionKind, fallbackVerifier: String, request: PresentationRequest?,
                       selection: PresentationSelection?, state: PresentationState, store: CredentialStore,
                       recorder: TransactionRecorder) async {
        let outcome: TransactionOutcome
        var disclosed = false
        switch state {
        case .completed:
            outcome = .completed
            disclosed = true
        case .declined:
            outcome = .declined
        case .failed(let error):
            outcome = .failed(reason: failureReason(error))
            disclosed = mayHaveReachedVerifier(error, responded: request != nil && selection != nil)
        case .resolvingRequest, .requestResolved, .submitting:
            return
        }
        var trusted = request?.verifier.trusted
        if case .failed(.verifierNotTrusted) = state { trusted = false }
        let counterparty = TransactionCounterparty(identifier: request?.verifier.clientId ?? fallbackVerifier,
                                                   name: request?.verifier.commonName, trusted: trusted)
        var credentials: [TransactionCredential] = []
        var values = JSONObject()
        if disclosed, let request, let selection {
            for query in request.queries {
                for id in selection.chosen[query.queryId] ?? [] {
                    guard let candidate = query.candidates.first(where: { $0.credentialId == id }) else { continue }
                    let stored = (try? await store.credential(id: id)) ?? nil
                    let claims = stored.flatMap(CredentialClaims.init)
                    if let stored, stored.format == .sdJwtVc, let raw = stored.instances.first?.raw,
                       let (credential, claimValues) = CredentialClaims.loggedPresentation(
                           ofSDJWT: raw, disclosing: candidate.disclosedPaths, id: id, type: candidate.type) {
                        credentials.append(credential)
                        values[id] = .object(claimValues)
                    } else if let claims {
                        let (credential, claimValues) = claims.logged(candidate.disclosedPaths, type: candidate.type)
                        credentials.append(credential)
                        values[id] = .object(claimValues)
                    } else {
                        credentials.append(TransactionCredential(credentialId: id, type: candidate.type,
                                                                 claimPaths: candidate.disclosedPaths.map { $0.elements.map(\.jsonValue) }))
                    }
                }
            }
        }
        await recorder.record(kind: kind, counterparty: counterparty, credentials: credentials, outcome: outcome,
                              claimValues: values.isEmpty ? nil : values)
    }

    /// Whether the verifier may hold the presentation although the session failed, so
    /// that the log lists what was sent: it refused the response (`responseRejected`), or
    /// the response's POST ended without a clear answer: a redirect, an answer too large
    /// or broken, a timeout, a dropped connection. A transport error is the POST's only
    /// once the user has `responded` to a resolved request (the request object's fetch
    /// comes before); a connection never made (no host, no connection, no TLS) sent nothing.
    static func mayHaveReachedVerifier(_ error: PresentationError, responded: Bool) -> Bool {
        switch error {
        case .responseRejected:
            return true
        case .unexpected(.unexpectedRedirect):
            return responded
        case .unexpected(.transport(let failure)):
            guard responded else { return false }
            switch failure {
            case .unsupportedScheme, .transport(.cannotFindHost), .transport(.cannotConnect),
                 .transport(.notConnectedToInternet), .transport(.secureConnectionFailed):
                return false
            case .timedOut, .cancelled, .responseTooLarge, .transport:
                return true
            }
        default:
            return false
        }
    }

    /// What the log keeps of a presentation error: its case and reason case names
    /// (`invalidRequest.expired`, `verifierNotTrusted`), or the verifier's error code.
    static func failureReason(_ error: PresentationError) -> String {
        switch error {
        case .invalidRequest(let reason): "invalidRequest." + TransactionRecorder.caseName(reason)
        case .verifierNotTrusted: "verifierNotTrusted"
        case .queryNotSatisfiable: "queryNotSatisfiable"
        case .selectionIncomplete: "selectionIncomplete"
        case .responseRejected(_, let code): code.map { "responseRejected." + $0 } ?? "responseRejected"
        case .unexpected(let cause): "unexpected." + TransactionRecorder.caseName(cause)
        }
    }
}

/// A presentation session run by the wallet: the OpenID4VP session's states and
/// controls, unchanged, except that its terminal state is published once the wallet
/// has logged the exchange (what was disclosed to whom) and refreshed
/// ``WalletCredentials/changes``.
public final class WalletPresentationSession: Sendable {
    typealias Log = @Sendable (TransactionKind, String, PresentationRequest?, PresentationSelection?, PresentationState) async -> Void

    /// The protocol session underneath.
    public let session: PresentationSession
    private let stream: StateStream<PresentationState>
    private let selection = LockedBox<PresentationSelection?>(nil)

    init(_ session: PresentationSession, kind: TransactionKind, fallbackVerifier: String, log: @escaping Log) {
        self.session = session
        let stream = StateStream<PresentationState>(initial: session.currentState, isTerminal: \.isTerminal)
        self.stream = stream
        let states = session.states
        let selection = self.selection
        Task {
            var request: PresentationRequest?
            for await state in states {
                if case .requestResolved(let resolved) = state { request = resolved }
                if state.isTerminal { await log(kind, fallbackVerifier, request, selection.withLock { $0 }, state) }
                if state != stream.current || state.isTerminal { stream.send(state) }
            }
        }
    }

    /// Every state from the current one on; ends after the terminal state.
    public var states: AsyncStream<PresentationState> { stream.states }

    /// The state now.
    public var currentState: PresentationState { stream.current }

    /// Answers the resolved request with the credentials the user chose (ignored unless
    /// the session is at `.requestResolved`).
    public func respond(_ selection: PresentationSelection) {
        self.selection.withLock { $0 = $0 ?? selection }
        session.respond(selection)
    }

    /// Refuses the request: a remote verifier is told `access_denied`.
    public func decline() { session.decline() }
}
