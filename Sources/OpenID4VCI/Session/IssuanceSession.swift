import Foundation
import JOSE
import WalletCrypto
import WalletEncoding
import WalletRuntime
import WalletStorage

/// One issuance, driven to a terminal state: observe `states`, answer the pauses with
/// ``submitTxCode(_:)`` and ``completeAuthorization(_:)``, or ``cancel()``.
///
/// ```swift
/// for await state in session.states {       // the first value is the current state
///     if case .txCodeRequired = state { session.submitTxCode(code) }
///     if state.isTerminal { break }
/// }
/// ```
/// The protocol itself is a pure value (`IssuanceFlow`); this actor performs what it asks
/// for through the client's `HTTPClient`, `SecureArea`, `CredentialStore`, clock and
/// random source. When the session fails or is cancelled nothing is stored, and every
/// key it created (holder keys, its DPoP key) is deleted again.
public actor IssuanceSession {
    private let stream: StateStream<IssuanceState>
    private let userInputs: AsyncStream<IssuanceFlow.Input>
    private let userContinuation: AsyncStream<IssuanceFlow.Input>.Continuation
    private let cancelled = LockedBox(false)
    private let task = LockedBox<Task<Void, Never>?>(nil)

    /// A new subscription to the session's states: the current one first, then each later
    /// one, ending after the terminal state. Any number of observers may subscribe.
    public nonisolated var states: AsyncStream<IssuanceState> { stream.states }

    /// The state now.
    public nonisolated var currentState: IssuanceState { stream.current }

    /// Gives the transaction code the session paused for (`.txCodeRequired`). Ignored in
    /// any other state.
    public nonisolated func submitTxCode(_ code: String) { userContinuation.yield(.txCode(code)) }

    /// Gives the full redirect URI the browser returned to (`.authorizationRequired`),
    /// e.g. `eudi-wallet://authorize?code=…&state=…`. Ignored in any other state.
    public nonisolated func completeAuthorization(_ redirectUri: String) { userContinuation.yield(.redirect(redirectUri)) }

    /// Stops the session: unless it has already begun storing its credentials, it ends in
    /// `.failed(.unexpected(.cancelled))` after deleting the keys it created.
    public nonisolated func cancel() {
        cancelled.withLock { $0 = true }
        userContinuation.finish()
        task.withLock { $0?.cancel() }
    }

    init(environment: IssuanceEnvironment, mode: @escaping @Sendable () async throws(IssuanceError) -> IssuanceMode,
         policy: CredentialPolicy) {
        stream = StateStream(initial: .preparing, isTerminal: \.isTerminal)
        (userInputs, userContinuation) = AsyncStream<IssuanceFlow.Input>.makeStream(bufferingPolicy: .unbounded)
        let driver = SessionDriver(environment: environment, stream: stream, userInputs: userInputs, cancelled: cancelled)
        let started = Task { await driver.run(mode: mode, policy: policy) }
        task.withLock { $0 = started }
    }
}

/// What a session runs with: the client's seams and settings.
struct IssuanceEnvironment: Sendable {
    let http: any HTTPClient
    let random: any RandomSource
    let clock: any WalletClock
    let logger: any Logger
    let config: IssuanceConfig
    let encryption: CredentialEncryption
    let storage: @Sendable () throws(StorageError) -> IssuanceStorage

    var urlPolicy: URLPolicy { URLPolicy(allowsLoopbackHTTP: config.allowHTTP) }

    /// `count` random bytes as base64url.
    func randomToken(_ count: Int) throws(IssuanceError) -> String {
        do { return Base64URL.encode(try random.bytes(count: count)) } catch { throw .unexpected(.randomSourceFailed) }
    }
}

/// Performs the effects of one `IssuanceFlow` and feeds the results back.
private final class SessionDriver: Sendable {
    let environment: IssuanceEnvironment
    let stream: StateStream<IssuanceState>
    let userInputs: AsyncStream<IssuanceFlow.Input>
    let cancelled: LockedBox<Bool>

    init(environment: IssuanceEnvironment, stream: StateStream<IssuanceState>, userInputs: AsyncStream<IssuanceFlow.Input>,
         cancelled: LockedBox<Bool>) {
        self.environment = environment
        self.stream = stream
        self.userInputs = userInputs
        self.cancelled = cancelled
    }

    private var isCancelled: Bool { cancelled.withLock { $0 } || Task.isCancelled }

    /// What one run has done that cleanup must know.
    private final class Ledger: @unchecked Sendable {
        var created: [String] = []
        var signers: [String: any Signer] = [:]
        var storing = false
    }

    func run(mode makeMode: @Sendable () async throws(IssuanceError) -> IssuanceMode, policy: CredentialPolicy) async {
        let ledger = Ledger()
        let storage: IssuanceStorage
        let mode: IssuanceMode
        let seeds: FlowSeeds
        do {
            storage = try resolveStorage()
            mode = try await makeMode()
            seeds = FlowSeeds(state: try environment.randomToken(24), pkce: PKCE(randomBytes: try randomBytes(32)),
                              dpopKeyAlias: IssuanceKeyAlias.dpopPrefix + (try environment.randomToken(16)),
                              credentialId: try credentialId())
        } catch {
            stream.send(.failed(error))
            return
        }
        let settings = FlowSettings(
            clientId: environment.config.clientId, redirectUri: environment.config.redirectUri,
            urlPolicy: environment.urlPolicy, encryption: environment.encryption,
            trustAnchors: environment.config.issuerTrustAnchors,
            hasKeyAttestationProvider: environment.config.keyAttestationProvider != nil,
            requestTimeout: environment.config.requestTimeout, policy: policy)
        var flow = IssuanceFlow(mode: mode, settings: settings, seeds: seeds)
        var pending = flow.handle(.start, at: environment.clock.now)
        var userIterator = userInputs.makeAsyncIterator()
        while true {
            if isCancelled && !ledger.storing {
                await finish(.failed(.unexpected(.cancelled)), keep: [], discard: [], ledger: ledger, storage: storage)
                return
            }
            guard !pending.isEmpty else {
                // The flow waits for the app (a transaction code, a redirect).
                guard let input = await userIterator.next() else {
                    await finish(.failed(.unexpected(.cancelled)), keep: [], discard: [], ledger: ledger, storage: storage)
                    return
                }
                pending = flow.handle(input, at: environment.clock.now)
                continue
            }
            let effect = pending.removeFirst()
            let input: IssuanceFlow.Input
            switch effect {
            case .publish(let state):
                stream.send(state)
                continue
            case .abandonDeferred(let id):
                await abandonDeferred(id, storage: storage)
                continue
            case .storeRefreshToken(let id, let token):
                await storeRefreshToken(token, of: id, storage: storage)
                continue
            case .finish(let state, let keep, let discard):
                await finish(state, keep: keep, discard: discard, ledger: ledger, storage: storage)
                return
            case .send(let outgoing):
                input = await send(outgoing, ledger: ledger, storage: storage)
            case .createKeys(let count, let algorithm):
                do {
                    let keys = try await storage.secureArea.createKeys(
                        count: count, aliasPrefix: IssuanceKeyAlias.holderPrefix,
                        options: KeyCreationOptions(algorithm: algorithm, protection: environment.config.holderKeyProtection))
                    ledger.created += keys.map(\.alias)
                    input = .keysReady(keys)
                } catch {
                    input = .failed(.storage(error))
                }
            case .loadKeys(let aliases):
                input = await loadKeys(aliases, storage: storage)
            case .attestKeys(let keys, let nonce):
                input = await attest(keys, nonce: nonce)
            case .signProofs(let job):
                input = await signProofs(job, ledger: ledger, storage: storage)
            case .createResponseKey:
                do { input = .responseKey(try JweRecipientKey.generate()) } catch { input = .failed(error) }
            case .save(let credentials, let renewing, let newRefreshToken):
                ledger.storing = true
                input = await save(credentials, renewing: renewing, newRefreshToken: newRefreshToken, storage: storage)
            }
            if isCancelled && !ledger.storing {
                // Cancelled while the server answered: nothing more is done with the answer,
                // except keeping a refresh token it rotated (the old one is spent now).
                for case .storeRefreshToken(let id, let token) in flow.handle(input, at: environment.clock.now) {
                    await storeRefreshToken(token, of: id, storage: storage)
                }
                continue
            }
            pending = flow.handle(input, at: environment.clock.now)
        }
    }

    private func storeRefreshToken(_ token: String, of id: String, storage: IssuanceStorage) async {
        do { try await storage.store.updateRefreshToken(of: id, to: token) } catch {
            environment.logger.warning("could not store the rotated refresh token of \(id): \(error)", module: "OpenID4VCI")
        }
    }

    private func resolveStorage() throws(IssuanceError) -> IssuanceStorage {
        do { return try environment.storage() } catch { throw .storage(error) }
    }

    private func randomBytes(_ count: Int) throws(IssuanceError) -> [UInt8] {
        do { return try environment.random.bytes(count: count) } catch { throw .unexpected(.randomSourceFailed) }
    }

    /// A credential id shaped like a UUID (version 4), from the random source.
    private func credentialId() throws(IssuanceError) -> String {
        var bytes = try randomBytes(16)
        bytes[6] = (bytes[6] & 0x0F) | 0x40
        bytes[8] = (bytes[8] & 0x3F) | 0x80
        let hex = Hex.encode(bytes)
        let parts = [0..<8, 8..<12, 12..<16, 16..<20, 20..<32].map { range in
            String(hex[hex.index(hex.startIndex, offsetBy: range.lowerBound)..<hex.index(hex.startIndex, offsetBy: range.upperBound)])
        }
        return parts.joined(separator: "-")
    }

    // MARK: Effects

    private func send(_ outgoing: IssuanceFlow.Outgoing, ledger: Ledger, storage: IssuanceStorage) async -> IssuanceFlow.Input {
        var request = outgoing.request
        guard environment.urlPolicy.allows(request.url) else {
            return .failed(.unexpected(.insecureURL(request.url.absoluteString)))
        }
        if let key = outgoing.encryptTo, let enc = outgoing.encryptWith, let body = request.body {
            do {
                request.body = Array(try JWE.encrypt(body, to: key, contentEncryption: enc).compactSerialization.utf8)
                request.headers["Content-Type"] = "application/jwt"
            } catch {
                return .failed(.credentialRequestFailed(oauthError: nil, reason: .encryption(.requestEncryptionFailed(error))))
            }
        }
        if let dpop = outgoing.dpop {
            do {
                let signer = try await dpopSigner(dpop, ledger: ledger, storage: storage)
                let claims = DPoPProof.claims(method: request.method.rawValue, url: request.url, issuedAt: environment.clock.now,
                                              jwtID: try environment.randomToken(16), nonce: dpop.nonce,
                                              accessToken: dpop.accessToken)
                request.headers["DPoP"] = try await DPoPProof.sign(claims: claims, signer: signer)
            } catch let error as IssuanceError {
                return .failed(error)
            } catch let error as JOSEError {
                return .failed(.signing(error))
            } catch {
                return .failed(.unexpected(.randomSourceFailed))
            }
        }
        environment.logger.debug("\(request.method.rawValue) \(DPoPProof.targetURI(request.url))", module: "OpenID4VCI")
        do {
            let response = try await environment.http.send(request)
            environment.logger.debug("\(response.status) from \(DPoPProof.targetURI(request.url))", module: "OpenID4VCI")
            return .response(response, outgoing.step)
        } catch {
            return .transportFailed(error, outgoing.step)
        }
    }

    private func dpopSigner(_ dpop: IssuanceFlow.DPoPUse, ledger: Ledger, storage: IssuanceStorage) async throws(IssuanceError) -> any Signer {
        if let signer = ledger.signers[dpop.keyAlias] { return signer }
        do {
            if (try? await storage.secureArea.keyInfo(alias: dpop.keyAlias)) == nil {
                _ = try await storage.secureArea.createKey(alias: dpop.keyAlias, options: KeyCreationOptions(algorithm: dpop.algorithm))
                ledger.created.append(dpop.keyAlias)
            }
            let signer = try await storage.secureArea.signer(for: dpop.keyAlias, unlock: nil)
            ledger.signers[dpop.keyAlias] = signer
            return signer
        } catch {
            throw .storage(error)
        }
    }

    private func loadKeys(_ aliases: [String], storage: IssuanceStorage) async -> IssuanceFlow.Input {
        var keys: [KeyInfo] = []
        for alias in aliases {
            do { keys.append(try await storage.secureArea.keyInfo(alias: alias)) } catch { return .failed(.storage(error)) }
        }
        return .keysReady(keys)
    }

    private func attest(_ keys: [KeyInfo], nonce: String?) async -> IssuanceFlow.Input {
        guard let provider = environment.config.keyAttestationProvider else {
            return .failed(.credentialRequestFailed(oauthError: nil, reason: .keyAttestationUnavailable))
        }
        do {
            return .keyAttestation(try await provider.attest(keys, nonce: nonce, now: environment.clock.now).compactSerialization)
        } catch {
            if case .signingFailed(.keyOperation(let keyError)) = error { return .failed(.unexpected(.keyOperation(keyError))) }
            return .failed(.unexpected(.keyAttestation(error)))
        }
    }

    private func signProofs(_ job: IssuanceFlow.ProofJob, ledger: Ledger, storage: IssuanceStorage) async -> IssuanceFlow.Input {
        var proofs: [String] = []
        for key in job.keys {
            let signer: any Signer
            do {
                signer = try await storage.secureArea.signer(for: key.alias, unlock: environment.config.holderKeyUnlock)
            } catch {
                return .failed(.storage(error))
            }
            do {
                let jwt = try await JWT.sign(claims: try JWTClaims(job.claims), signer: signer, type: ProofJWT.type,
                                             jwk: JWK(publicKey: key.publicKey), additionalHeaders: job.header)
                proofs.append(jwt.compactSerialization)
            } catch {
                return .failed(.signing(error))
            }
        }
        return .proofsSigned(proofs)
    }

    private func save(_ credentials: [StoredCredential], renewing: String?, newRefreshToken: Bool,
                      storage: IssuanceStorage) async -> IssuanceFlow.Input {
        var saved: [String] = []
        for credential in credentials {
            var existed = credential.id == renewing
            if !existed { existed = (try? await storage.store.credential(id: credential.id)) != nil }
            do {
                // A renewed credential the user deleted during the session stays deleted:
                // the session fails with `.storage(.credentialNotFound)` and its new keys go.
                if credential.id == renewing {
                    try await storage.store.replace(credential, keepingStoredRefreshToken: !newRefreshToken)
                } else {
                    try await storage.store.save(credential)
                }
                if !existed { saved.append(credential.id) }
            } catch {
                for id in saved { try? await storage.store.delete(id: id) }
                return .failed(.storage(error))
            }
        }
        return .saved
    }

    /// Forgets the deferred transaction of credential `id`, which the issuer spent on a
    /// credential the wallet refused: a first issuance's record goes with its keys; an
    /// issued credential keeps its instances and loses the pending renewal and its keys.
    /// The record is read afresh, so that uses since the session began are kept. Best
    /// effort: the session fails either way, and a key is deleted only once no record
    /// names it.
    private func abandonDeferred(_ id: String, storage: IssuanceStorage) async {
        do {
            guard let stored = try await storage.store.credential(id: id) else { return }
            guard stored.state == .issued else {
                try await storage.deleteRecord(stored)
                return
            }
            guard var context = stored.issuanceContext.flatMap(IssuanceContext.init(encoded:)),
                  context.pendingTransactionId != nil else { return }
            let pendingKeys = context.pendingKeyAliases
            context.pendingKeyAliases = []
            context.pendingTransactionId = nil
            context.pendingRetryAfter = nil
            // Over the record only while it is stored (a deletion meanwhile stands), and
            // with the token it holds then (a renewal meanwhile may have rotated it).
            _ = try await storage.store.replace(StoredCredential(
                id: stored.id, format: stored.format, type: stored.type, issuer: stored.issuer, display: stored.display,
                instances: stored.instances, policy: stored.policy, state: stored.state, refreshToken: stored.refreshToken,
                issuanceContext: context.encoded), keepingStoredRefreshToken: true)
            if !pendingKeys.isEmpty { try await storage.secureArea.deleteKeys(aliases: pendingKeys) }
        } catch {
            environment.logger.warning("could not forget the spent deferred transaction of \(id): \(error)", module: "OpenID4VCI")
        }
    }

    private func finish(_ state: IssuanceState, keep: Set<String>, discard: [String], ledger: Ledger,
                        storage: IssuanceStorage) async {
        let doomed = ledger.created.filter { !keep.contains($0) } + discard
        if !doomed.isEmpty {
            do { try await storage.secureArea.deleteKeys(aliases: doomed) } catch {
                environment.logger.warning("could not delete \(doomed.count) session keys: \(error)", module: "OpenID4VCI")
            }
        }
        stream.send(state)
    }
}

/// The key proof JWT of Appendix F.1.
enum ProofJWT {
    /// Its `typ`.
    static let type = "openid4vci-proof+jwt"
}
