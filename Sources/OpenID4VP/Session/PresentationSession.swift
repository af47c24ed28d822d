import Foundation
import JOSE
import WalletCrypto
import WalletEncoding
import WalletRuntime
import WalletStorage

/// One presentation: resolve the verifier's request, wait for the user's decision, then
/// build and send the response (the spec's session: `states`, `currentState`,
/// `respond`, `decline`).
///
/// A thin driver around `PresentationFlow`: it performs the flow's effects (HTTP, the
/// credential store, signing, encryption) through the injected seams and publishes each
/// state on `states`, which replays the current state to every new observer.
public actor PresentationSession {
    private enum Command: Sendable {
        case respond(PresentationSelection)
        case decline
    }

    private var flow: PresentationFlow
    private let stream: StateStream<PresentationState>
    private let environment: PresentationEnvironment
    private let commands: AsyncStream<Command>
    private let commandSink: AsyncStream<Command>.Continuation

    init(flow: PresentationFlow, environment: PresentationEnvironment) {
        self.flow = flow
        self.environment = environment
        self.stream = StateStream(initial: flow.state, isTerminal: { $0.isTerminal })
        (commands, commandSink) = AsyncStream<Command>.makeStream(bufferingPolicy: .unbounded)
    }

    /// Every state from the current one on; ends after the terminal state.
    public nonisolated var states: AsyncStream<PresentationState> { stream.states }

    /// The state now.
    public nonisolated var currentState: PresentationState { stream.current }

    /// Answers the resolved request with the credentials the user chose. Ignored unless
    /// the session is at `.requestResolved`; a selection that does not answer the
    /// request ends the session `.failed` (`.selectionIncomplete`, `.queryNotSatisfiable`).
    public nonisolated func respond(_ selection: PresentationSelection) {
        commandSink.yield(.respond(selection))
    }

    /// Refuses the request: the verifier of a remote request is told `access_denied`
    /// (OpenID4VP 1.0 §8.5); nothing is sent over the Digital Credentials API.
    public nonisolated func decline() {
        commandSink.yield(.decline)
    }

    /// Starts the session's work; the client calls it once. The task holds the session
    /// only while it works: a session dropped while it waits for the user's decision is
    /// released, which ends its streams.
    nonisolated func begin() {
        let commands = self.commands
        Task { [weak self] in
            // No strong reference outlives a call: `guard let` would hold it across the loop.
            guard await self?.start() == true else { return }
            for await command in commands {
                guard let session = self else { return }
                if await session.handle(command) { break }
            }
        }
    }

    deinit {
        commandSink.finish()
        stream.finish()
    }

    /// Resolves the request; whether the session still waits for the user.
    private func start() async -> Bool {
        await process(.start(now: environment.clock.now))
        return finishIfTerminal()
    }

    /// Handles the user's command; whether the session has ended.
    private func handle(_ command: Command) async -> Bool {
        switch command {
        case .respond(let selection): await process(.respond(selection, now: environment.clock.now))
        case .decline: await process(.decline)
        }
        return !finishIfTerminal()
    }

    /// Stops taking commands once the flow has ended; whether it is still going.
    private func finishIfTerminal() -> Bool {
        guard flow.state.isTerminal else { return true }
        commandSink.finish()
        return false
    }

    /// Feeds `input` and performs the effects it leads to, until the flow waits for the user.
    private func process(_ input: PresentationFlow.Input) async {
        var pending = [input]
        while !pending.isEmpty {
            let effects = flow.handle(pending.removeFirst())
            publish()
            for effect in effects { pending.append(await perform(effect)) }
        }
    }

    private func publish() {
        if stream.current != flow.state { stream.send(flow.state) }
    }

    private func perform(_ effect: PresentationFlow.Effect) async -> PresentationFlow.Input {
        switch effect {
        case .fetchRequestObject(let request):
            do {
                let response = try await environment.http.send(request)
                return .requestObjectFetched(response, now: environment.clock.now)
            } catch {
                return .effectFailed(.unexpected(.transport(error)))
            }
        case .loadCredentials(let filters):
            do {
                return .credentialsLoaded(try await environment.credentials(matching: filters))
            } catch {
                return .effectFailed(.unexpected(.storage(error)))
            }
        case .present(let jobs, let context):
            do {
                var entries: [String] = []
                for job in jobs { entries.append(try await environment.present(job, context: context)) }
                return .presentationsMade(entries)
            } catch {
                return .effectFailed(error)
            }
        case .encrypt(let payload, let encryption):
            do {
                let jwe = try JWE.encrypt(payload, to: encryption.key, contentEncryption: encryption.contentEncryption)
                return .encrypted(jwe.compactSerialization)
            } catch {
                return .effectFailed(.unexpected(.jose(error)))
            }
        case .send(let request):
            do {
                return .delivered(try await environment.http.send(request))
            } catch {
                return .effectFailed(.unexpected(.transport(error)))
            }
        }
    }
}

/// The seams a session performs its effects through.
struct PresentationEnvironment: Sendable {
    let store: CredentialStore
    let http: any HTTPClient
    let clock: any WalletClock
    let unlock: (@Sendable (CredentialId) async -> (any KeyUnlockData)?)?

    /// The store's credentials for each filter, each credential once, in store order.
    ///
    /// Each filter is one scan of the credentials table; past
    /// ``filtersPerScan`` filters (a query may name up to 64 types in each of 64
    /// credential queries), one scan of the whole store is grouped instead, with the
    /// same result.
    func credentials(matching filters: [CredentialFilter]) async throws(StorageError) -> [StoredCredential] {
        var seen = Set<CredentialId>()
        var credentials: [StoredCredential] = []
        if filters.count > Self.filtersPerScan {
            var byFilter: [CredentialFilter: [StoredCredential]] = [:]
            for credential in try await store.list() {
                byFilter[CredentialFilter(format: credential.format, type: credential.type), default: []].append(credential)
            }
            for filter in filters {
                let matched = filter.issuer == nil ? byFilter[CredentialFilter(format: filter.format, type: filter.type)] ?? []
                    : try await store.list(filter)
                for credential in matched where seen.insert(credential.id).inserted { credentials.append(credential) }
            }
            return credentials
        }
        for filter in filters {
            for credential in try await store.list(filter) where seen.insert(credential.id).inserted {
                credentials.append(credential)
            }
        }
        return credentials
    }

    /// The most filters looked up one by one.
    static let filtersPerScan = 8

    /// Consumes an instance of the job's credential (a one-time instance is spent here,
    /// whatever happens next) and presents it.
    func present(_ job: PresentationJob, context: PresentationContext) async throws(PresentationError) -> String {
        let instance: ConsumedInstance
        do {
            instance = try await store.consumeInstance(of: job.credentialId, unlock: await unlock?(job.credentialId))
        } catch {
            throw .unexpected(.storage(error))
        }
        return try await PresentationBuilder.present(job, instance: instance, context: context)
    }
}
