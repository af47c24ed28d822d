import Foundation
import Mdoc
import WalletCrypto
import WalletRuntime

/// The holder's side of one session: a thin driver around ``HolderSessionCore``. It
/// reads the carrier, feeds what arrives (with the time from the ``WalletClock``),
/// and performs the core's effects: sends, events on the ``MdocEventHub``, timers on
/// the clock, closing the carrier. The app answers a request with
/// ``createResponse(deviceRequest:documentProvider:)`` and ``sendDeviceResponse(_:terminate:)``,
/// or ``decline()``; ``close()`` cancels the session.
///
/// Every decision is checked against the core's state at the moment it is applied,
/// after any wait, so a response built while the reader ended the session is refused
/// and nothing is sent or published after the end.
public actor TransferManager {
    /// The engagement this session belongs to.
    public nonisolated let engagementId: EngagementID
    /// The carrier.
    public nonisolated let transmissionType: TransmissionType

    private let transport: any MdocTransport
    private let hub: MdocEventHub
    private let clock: any WalletClock
    private let providerTimeout: Duration
    private var core: HolderSessionCore
    private var receiver: Task<Void, Never>?
    /// The executor the transfer's tasks prefer (the manager's); `nil`: the pool.
    private nonisolated let executor: (any TaskExecutor)?
    private var timers: [HolderSessionCore.Timer: WalletTimer] = [:]
    private var ended: [CheckedContinuation<Void, Never>] = []
    private var carrierClosed = false

    init(engagementId: EngagementID, transport: any MdocTransport, hub: MdocEventHub, clock: any WalletClock,
         core: HolderSessionCore, providerTimeout: Duration, executor: (any TaskExecutor)? = nil) {
        self.executor = executor
        self.engagementId = engagementId
        self.transmissionType = transport.transmissionType
        self.transport = transport
        self.hub = hub
        self.clock = clock
        self.core = core
        self.providerTimeout = providerTimeout
    }

    /// The session transcript, once established.
    public var sessionTranscript: SessionTranscript? { core.sessionTranscript }
    /// The request waiting for the user (or the last one answered).
    public var deviceRequest: DeviceRequest? { core.deviceRequest }
    /// Where the session stands.
    public var phase: HolderSessionCore.Phase { core.phase }
    /// How the session ended, once it has.
    public var ending: HolderSessionCore.Ending? { core.ending }

    /// Starts reading the reader's messages.
    func start() async {
        publish(.transmissionTypeSelected(transmissionType))
        await perform(core.start())
        receiver = Task(executorPreference: executor) { [weak self, transport] in
            while true {
                let message: [UInt8]
                do throws(ProximityError) {
                    message = try await transport.receive(timeout: nil)
                } catch {
                    await self?.feed(error == .connectionClosed ? .carrierClosed : .carrierFailed(error))
                    return
                }
                guard let self, await self.receivedContinues(message) else { return }
            }
        }
    }

    private func receivedContinues(_ message: [UInt8]) async -> Bool {
        await feed(.received(message, at: clock.now))
        return core.phase != .ended
    }

    /// Returns once the session has ended.
    public func waitUntilEnded() async {
        guard core.phase != .ended else { return }
        await withCheckedContinuation { ended.append($0) }
    }

    // MARK: The app's decisions

    /// Builds the response to `deviceRequest` with the provider's credentials and the
    /// user's selection (the user accepted). Publishes `documentsSelectionProcessAccepted`.
    /// `deviceRequest` must be the request waiting for the user (``deviceRequest``, or
    /// the same bytes parsed from the event): a response answers what this reader asked
    /// in this session, so another request is refused with
    /// ``StateFailure/requestMismatch`` and the request stays pending.
    /// Fails with ``ProximityError/timeout(seconds:)`` when the provider takes longer than
    /// the configured limit, and with ``StateFailure/sessionEnded`` when the session
    /// ended meanwhile (the reader went away, the app cancelled).
    public func createResponse(deviceRequest: DeviceRequest, documentProvider: any MdocDocumentProvider)
        async throws(ProximityError) -> DeviceResponse {
        if core.phase == .awaitingConsent, let pending = core.deviceRequest, pending.encodedBytes != deviceRequest.encodedBytes {
            throw .invalidState(.requestMismatch)
        }
        try await apply(.accepted)
        guard let transcript = core.sessionTranscript else { throw .invalidState(.notEngaged) }
        let outcome = Mailbox<Result<DeviceResponse, ProximityError>>(clock: clock)
        let work = Task(executorPreference: executor) {
            outcome.push(await Self.build(deviceRequest, provider: documentProvider, transcript: transcript))
        }
        let result: Result<DeviceResponse, ProximityError>
        do {
            result = try await outcome.next(timeout: providerTimeout)
        } catch {
            work.cancel()
            await feed(.responseFailed(error))
            throw error
        }
        // The session may have ended while the provider worked.
        guard core.phase == .responding else { throw .invalidState(.sessionEnded) }
        switch result {
        case .success(let response):
            return response
        case .failure(let error):
            await feed(.responseFailed(error))
            throw error
        }
    }

    private static func build(_ request: DeviceRequest, provider: any MdocDocumentProvider,
                              transcript: SessionTranscript) async -> Result<DeviceResponse, ProximityError> {
        do throws(DocumentProviderError) {
            let credentials = try await provider.credentials(for: request)
            let consent = try await provider.consent(for: request)
            do throws(MdocError) {
                return .success(try await DeviceResponseBuilder.respond(
                    to: request, with: credentials, sessionTranscript: transcript, consented: consent.byDocType(for: request),
                    authentication: { provider.authentication(for: $0) }))
            } catch {
                return .failure(.responseCreationFailed(.building(error)))
            }
        } catch {
            return .failure(.responseCreationFailed(.provider(error)))
        }
    }

    /// Sends `response` encrypted; with `terminate` (the default) the same message
    /// carries status 20 and the session ends (ISO 18013-5 §9.1.1.4).
    public func sendDeviceResponse(_ response: DeviceResponse, terminate: Bool = true) async throws(ProximityError) {
        try await apply(.respond(response, terminate: terminate))
    }

    /// Declines the request: ends the session with status 20 and no documents. Only
    /// while a request waits for the user's decision.
    public func decline() async throws(ProximityError) {
        try await apply(.declined)
    }

    /// Ends the session from the holder's side (the app cancelled): status 20 to the
    /// reader, and the session ends as canceled. A session that has already ended while
    /// its last message still waits to be sent (a reader that stopped reading) has its
    /// carrier closed here, which ends that send.
    public func close() async {
        await feed(.cancelled)
        if core.phase == .ended, !carrierClosed { await perform([.closeCarrier]) }
    }

    // MARK: Driving the core

    /// Applies an input that cannot be refused (carrier and timer events).
    private func feed(_ input: HolderSessionCore.Input) async {
        if let effects = try? core.handle(input) { await perform(effects) }
    }

    /// Applies an app decision, which the core refuses when the state does not allow it.
    private func apply(_ input: HolderSessionCore.Input) async throws(ProximityError) {
        let effects = try core.handle(input)
        await perform(effects)
    }

    private func perform(_ effects: [HolderSessionCore.Effect]) async {
        for effect in effects {
            switch effect {
            case .send(let bytes):
                guard !carrierClosed else { continue }
                do { try await transport.send(bytes) } catch {
                    // The carrier broke: the core decides what that means now.
                    if let more = try? core.handle(.carrierFailed(error)) { await perform(more) }
                }
            case .publish(let kind):
                publish(kind)
            case .startTimer(let timer, let duration, let generation):
                timers[timer]?.cancel()
                timers[timer] = clock.schedule(after: duration) { [weak self, executor] in
                    Task(executorPreference: executor) { await self?.feed(.timerFired(timer, generation: generation)) }
                }
            case .cancelTimer(let timer):
                timers.removeValue(forKey: timer)?.cancel()
            case .closeCarrier:
                guard !carrierClosed else { continue }
                carrierClosed = true
                await transport.close()
                receiver?.cancel()
                for timer in timers.values { timer.cancel() }
                timers.removeAll()
                let waiting = ended
                ended.removeAll()
                for continuation in waiting { continuation.resume() }
            }
        }
    }

    private func publish(_ kind: MdocRetrievalEvent.Kind) {
        hub.publish(MdocRetrievalEvent(engagementId: engagementId, time: clock.now, kind: kind))
    }
}
