import Foundation
import OpenID4VCI
import WalletEncoding
import WalletRuntime
import WalletStorage

/// Issuance through the wallet (`wallet.issuance`): OpenID4VCI sessions that store
/// their credentials in the wallet's store and leave an entry in its transaction log.
///
/// ```swift
/// let offer = try await wallet.issuance.resolveOffer(offerUri)
/// let session = wallet.issuance.start(.fromOffer(offer, configurationId: offer.credentialConfigurationIds[0]))
/// for await state in session.states where state.isTerminal { break }
/// ```
public final class WalletIssuance: Sendable {
    /// The OpenID4VCI client the wallet drives (for what the facade does not wrap).
    public let client: Openid4VciClient
    private let store: CredentialStore
    private let recorder: TransactionRecorder
    private let monitor: CredentialMonitor
    private let anchorsConfigured: Bool

    init(client: Openid4VciClient, store: CredentialStore, recorder: TransactionRecorder, monitor: CredentialMonitor,
         anchorsConfigured: Bool) {
        self.client = client
        self.store = store
        self.recorder = recorder
        self.monitor = monitor
        self.anchorsConfigured = anchorsConfigured
    }

    /// Resolves an offer from a deep link (`openid-credential-offer://…`), a QR code's
    /// text or raw JSON, with the issuer's metadata.
    public func resolveOffer(_ offer: String) async throws(IssuanceError) -> CredentialOffer {
        try await client.resolveOffer(offer)
    }

    /// Starts issuing what `request` names.
    public func start(_ request: IssuanceRequest) -> WalletIssuanceSession {
        let issuer = request.credentialIssuer
        return follow(client.start(request)) { issuer }
    }

    /// Asks the issuer again for a credential stored as deferred.
    public func resumeDeferred(_ credentialId: CredentialId) -> WalletIssuanceSession {
        let store = self.store
        return follow(client.resumeDeferred(credentialId)) {
            (try? await store.credential(id: credentialId))??.issuer.identifier ?? ""
        }
    }

    /// Renews a credential with its stored refresh token.
    public func reissue(_ credentialId: CredentialId) -> WalletIssuanceSession {
        let store = self.store
        return follow(client.reissue(credentialId)) {
            (try? await store.credential(id: credentialId))??.issuer.identifier ?? ""
        }
    }

    private func follow(_ session: IssuanceSession, issuer: @escaping @Sendable () async -> String) -> WalletIssuanceSession {
        let recorder = self.recorder, monitor = self.monitor, store = self.store, anchorsConfigured = self.anchorsConfigured
        return WalletIssuanceSession(session) { terminal in
            await Self.record(terminal, issuer: await issuer(), store: store, recorder: recorder, anchorsConfigured: anchorsConfigured)
            await monitor.refresh()
        }
    }

    /// One log entry for a session that ended in `state`.
    static func record(_ state: IssuanceState, issuer: String, store: CredentialStore, recorder: TransactionRecorder,
                       anchorsConfigured: Bool) async {
        let ids: [CredentialId]
        let outcome: TransactionOutcome
        var trusted: Bool?
        switch state {
        case .completed(let result):
            ids = result.issued + result.deferred
            outcome = result.issued.isEmpty ? .deferred : .completed
            trusted = anchorsConfigured ? true : nil
        case .deferred(let id, _):
            ids = [id]
            outcome = .deferred
        case .failed(let error):
            ids = []
            outcome = error == .unexpected(.cancelled) ? .cancelled : .failed(reason: failureReason(error))
            if case .credentialRequestFailed(_, .invalidCredential) = error { trusted = false }
            if case .invalidOffer(.issuerMetadata(.invalidSignedMetadata)) = error { trusted = false }
        case .preparing, .authorizationRequired, .txCodeRequired, .processing:
            return
        }
        var credentials: [TransactionCredential] = []
        var values = JSONObject()
        var issuerName: String?
        for id in ids {
            guard let stored = (try? await store.credential(id: id)) ?? nil else { continue }
            issuerName = issuerName ?? stored.issuer.display.first?.name
            guard let claims = CredentialClaims(stored) else {
                credentials.append(TransactionCredential(credentialId: id, type: stored.type))
                continue
            }
            let (credential, claimValues) = claims.logged(claims.paths, type: stored.type)
            credentials.append(credential)
            values[id] = .object(claimValues)
        }
        await recorder.record(kind: .issuance,
                              counterparty: TransactionCounterparty(identifier: issuer, name: issuerName, trusted: trusted),
                              credentials: credentials, outcome: outcome, claimValues: values.isEmpty ? nil : values)
    }

    /// What the log keeps of an issuance error: the OAuth error code the server sent, or
    /// the case names of the error and its reason (`unexpected.transport`).
    static func failureReason(_ error: IssuanceError) -> String {
        if let code = error.oauthError { return code }
        switch error {
        case .invalidOffer(let reason): return "invalidOffer." + TransactionRecorder.caseName(reason)
        case .authorizationFailed(_, let reason): return "authorizationFailed." + TransactionRecorder.caseName(reason)
        case .credentialRequestFailed(_, let reason): return "credentialRequestFailed." + TransactionRecorder.caseName(reason)
        case .unexpected(let reason): return "unexpected." + TransactionRecorder.caseName(reason)
        }
    }
}

/// An issuance session run by the wallet: the OpenID4VCI session's states, controls and
/// pauses, unchanged, except that its terminal state is published once the wallet has
/// logged the exchange and refreshed ``WalletCredentials/changes``, so that an app that
/// saw it finds the log and the list up to date.
public final class WalletIssuanceSession: Sendable {
    /// The protocol session underneath.
    public let session: IssuanceSession
    private let stream: StateStream<IssuanceState>

    init(_ session: IssuanceSession, onTerminal: @escaping @Sendable (IssuanceState) async -> Void) {
        self.session = session
        let stream = StateStream<IssuanceState>(initial: session.currentState, isTerminal: \.isTerminal)
        self.stream = stream
        let states = session.states
        Task {
            for await state in states {
                if state.isTerminal { await onTerminal(state) }
                if state != stream.current || state.isTerminal { stream.send(state) }
            }
        }
    }

    /// A new subscription to the session's states: the current one first, ending after
    /// the terminal state. Any number of observers may subscribe.
    public var states: AsyncStream<IssuanceState> { stream.states }

    /// The state now.
    public var currentState: IssuanceState { stream.current }

    /// Gives the transaction code the session paused for (`.txCodeRequired`).
    public func submitTxCode(_ code: String) { session.submitTxCode(code) }

    /// Gives the full redirect URI the browser returned to (`.authorizationRequired`).
    public func completeAuthorization(_ redirectUri: String) { session.completeAuthorization(redirectUri) }

    /// Stops the session; it ends `.failed(.unexpected(.cancelled))` unless it was already storing.
    public func cancel() { session.cancel() }
}
