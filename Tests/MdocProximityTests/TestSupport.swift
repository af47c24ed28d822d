import Foundation
import WalletEncoding
import WalletRuntime
@testable import MdocProximity

/// Collects every value of an async sequence until `stop` says so (inclusive).
/// The subscription is made by the caller (synchronously), so nothing published
/// after this call is missed.
func collect<T: Sendable>(_ stream: AsyncStream<T>, until stop: @escaping @Sendable (T) -> Bool) -> Task<[T], Never> {
    Task {
        var values: [T] = []
        for await value in stream {
            values.append(value)
            if stop(value) { break }
        }
        return values
    }
}

/// Same, for an observed value (subscribed now, replaying the current value).
func collect<T: Sendable>(_ observed: ObservedValue<T>, until stop: @escaping @Sendable (T) -> Bool) -> Task<[T], Never> {
    collect(observed.values, until: stop)
}

/// The instant synthetic events carry.
let eventTime = Date(timeIntervalSince1970: 1_700_000_000)

/// Builds an expected `SessionUiState` in the terms of the spec's flow diagrams (without
/// the engagement id and QR payload, which `anonymized` clears for comparison).
func ui(_ phase: UiPhase, _ label: SessionUiLabel, nfc: NfcMode = .disabled, qr: QrMode = .none,
        suspended: Bool = false, progress: Float? = nil, outcome: TerminalOutcome? = nil,
        reason: TerminalReason? = nil, interaction: Bool = false, request: [UInt8]? = nil) -> SessionUiState {
    SessionUiState(phase: phase, substate: label, nfcMode: nfc, qrMode: qr, isSuspended: suspended,
                   progressHint: progress, terminalOutcome: outcome, terminalReason: reason,
                   userInteractionRequired: interaction, deviceRequest: request)
}

extension SessionUiState {
    /// The state without its engagement id and QR payload (asserted separately).
    var anonymized: SessionUiState {
        var copy = self
        copy.engagementId = nil
        copy.qrCodePayload = nil
        return copy
    }
}

extension Array where Element == SessionUiState {
    /// The states without engagement ids and QR payloads, consecutive duplicates removed
    /// (the id alone may change between two otherwise equal states).
    var anonymized: [SessionUiState] {
        var result: [SessionUiState] = []
        for state in self.map(\.anonymized) where result.last != state { result.append(state) }
        return result
    }
}

extension MdocEventHub {
    func engagement(_ id: EngagementID, _ kind: MdocEngagementEvent.Kind) {
        publish(MdocEngagementEvent(engagementId: id, time: eventTime, kind: kind))
    }
    func transfer(_ id: EngagementID, _ kind: MdocRetrievalEvent.Kind) {
        publish(MdocRetrievalEvent(engagementId: id, time: eventTime, kind: kind))
    }
}

/// A clock for tests: time stands still until ``advance(by:)``, and `sleep`
/// suspends until the clock has moved past its deadline (or the sleeping task is
/// cancelled). Timeouts under test fire exactly when the test says so, whatever
/// the machine's load.
final class TestClock: WalletClock, @unchecked Sendable {
    private struct Sleeper {
        let id: Int
        let deadline: Double
        let continuation: CheckedContinuation<Void, any Error>
    }
    private struct State {
        var now: Double = 0
        var nextID = 0
        var sleepers: [Sleeper] = []
        var watchers: [(count: Int, continuation: CheckedContinuation<Void, Never>)] = []
    }
    private let state = LockedBox(State())
    private let origin = Date(timeIntervalSince1970: 1_700_000_000)

    var now: Date { origin.addingTimeInterval(state.withLock { $0.now }) }

    /// Tasks sleeping on this clock now.
    var sleeperCount: Int { state.withLock { $0.sleepers.count } }

    func sleep(for duration: Duration) async throws {
        let id = state.withLock { state -> Int in state.nextID += 1; return state.nextID }
        try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Void, any Error>) in
                let (cancelled, ready) = state.withLock { state -> (Bool, [CheckedContinuation<Void, Never>]) in
                    if Task.isCancelled { return (true, []) }
                    state.sleepers.append(Sleeper(id: id, deadline: state.now + duration.timeInterval, continuation: continuation))
                    return (false, Self.takeWatchers(&state))
                }
                if cancelled { continuation.resume(throwing: CancellationError()) }
                for watcher in ready { watcher.resume() }
            }
        } onCancel: {
            let sleeper = state.withLock { state -> Sleeper? in
                guard let index = state.sleepers.firstIndex(where: { $0.id == id }) else { return nil }
                return state.sleepers.remove(at: index)
            }
            sleeper?.continuation.resume(throwing: CancellationError())
        }
    }

    /// Moves time forward and wakes every sleeper whose deadline has passed.
    func advance(by duration: Duration) {
        let due = state.withLock { state -> [Sleeper] in
            state.now += duration.timeInterval
            let due = state.sleepers.filter { $0.deadline <= state.now }
            state.sleepers.removeAll { $0.deadline <= state.now }
            return due
        }
        for sleeper in due { sleeper.continuation.resume() }
    }

    /// Returns once at least `count` tasks sleep on this clock (no polling, no wall time).
    func waitForSleepers(_ count: Int) async {
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            let ready = state.withLock { state -> Bool in
                if state.sleepers.count >= count { return true }
                state.watchers.append((count, continuation))
                return false
            }
            if ready { continuation.resume() }
        }
    }

    private static func takeWatchers(_ state: inout State) -> [CheckedContinuation<Void, Never>] {
        let count = state.sleepers.count
        let ready = state.watchers.filter { $0.count <= count }.map(\.continuation)
        state.watchers.removeAll { $0.count <= count }
        return ready
    }
}

/// The limit on waits in tests that expect something to arrive: generous, so that
/// only a real hang (never a slow, loaded machine) trips it, and it reads as a hang.
let hangGuard: Duration = .seconds(600)

/// A TCP listener on a loopback port below the kernel's ephemeral range (32768 and up on
/// Linux), for tests that count the connections they accept. Listeners bound to port 0
/// get ephemeral ports, and a test elsewhere in the run that connects to its own closed
/// listener's port can land on whoever got that number next; no test connects to these.
func privateTCPListener(maxMessageSize: Int = TCPTransport.defaultMaxMessageSize, watched: Bool = true) throws -> TCPListener {
    var generator = SystemRandomNumberGenerator()
    var lastError: ProximityError?
    for _ in 0..<64 {
        do {
            return try TCPListener(host: "127.0.0.1", port: UInt16.random(in: 20_000..<32_768, using: &generator),
                                   maxMessageSize: maxMessageSize, clock: SystemClock(), watched: watched)
        } catch { lastError = error }   // that port is taken: draw another
    }
    throw lastError ?? ProximityError.connectionClosed
}

/// An engagement configuration for tests: message waits limited only by the hang guard.
let testConfig = EngagementConfig(messageTimeout: hangGuard)

/// A one-shot signal a test opens to let gated work proceed; `wait` returns at once
/// after `open`. Records when someone started waiting, so a test can sequence
/// steps without sleeping.
final class Gate: Sendable {
    private struct State {
        var open = false
        var waiters: [CheckedContinuation<Void, Never>] = []
        var arrivals = 0
        var arrivalWatchers: [(count: Int, continuation: CheckedContinuation<Void, Never>)] = []
    }
    private let state = LockedBox(State())

    func wait() async {
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            let (proceed, arrived) = state.withLock { state -> (Bool, [CheckedContinuation<Void, Never>]) in
                let arrived = Self.arrive(&state)
                if state.open { return (true, arrived) }
                state.waiters.append(continuation)
                return (false, arrived)
            }
            for watcher in arrived { watcher.resume() }
            if proceed { continuation.resume() }
        }
    }

    /// Records an arrival without waiting (a signal that something happened; nothing
    /// is left suspended on a gate nobody opens).
    func arrive() {
        let arrived = state.withLock { Self.arrive(&$0) }
        for watcher in arrived { watcher.resume() }
    }

    private static func arrive(_ state: inout State) -> [CheckedContinuation<Void, Never>] {
        state.arrivals += 1
        let count = state.arrivals
        let arrived = state.arrivalWatchers.filter { $0.count <= count }.map(\.continuation)
        state.arrivalWatchers.removeAll { $0.count <= count }
        return arrived
    }

    func open() {
        let waiters = state.withLock { state -> [CheckedContinuation<Void, Never>] in
            state.open = true
            defer { state.waiters.removeAll() }
            return state.waiters
        }
        for waiter in waiters { waiter.resume() }
    }

    /// Returns once `count` tasks have arrived at the gate.
    func arrivals(_ count: Int) async {
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            let ready = state.withLock { state -> Bool in
                if state.arrivals >= count { return true }
                state.arrivalWatchers.append((count, continuation))
                return false
            }
            if ready { continuation.resume() }
        }
    }
}

/// An in-memory connector whose listener closes and connects wait at gates, to
/// reproduce the interleavings of an actor that awaits them.
final class GatedConnector: MdocTransportConnector {
    let exchange: InMemoryTransport.Exchange
    let listenerClose = Gate()
    let connectGate = Gate()
    /// Passed once a gated connect has returned or thrown.
    let connectReturned = Gate()
    let gateListenerClose: Bool
    let gateConnect: Bool
    let failConnect: Bool

    init(exchange: InMemoryTransport.Exchange = .init(), gateListenerClose: Bool = false, gateConnect: Bool = false,
         failConnect: Bool = false) {
        self.exchange = exchange
        self.gateListenerClose = gateListenerClose
        self.gateConnect = gateConnect
        self.failConnect = failConnect
    }

    func canConnect(to endpoint: TransportEndpoint) -> Bool { exchange.canConnect(to: endpoint) }

    func connect(to endpoint: TransportEndpoint, context: ConnectionContext,
                 timeout: Duration?) async throws(ProximityError) -> any MdocTransport {
        if gateConnect { await connectGate.wait() }
        defer { if gateConnect { Task { [connectReturned] in connectReturned.arrive() } } }
        if failConnect { throw .connectionClosed }
        return try await exchange.connect(to: endpoint, timeout: timeout)
    }

    func listen(context: ConnectionContext) async throws(ProximityError) -> any MdocTransportListener {
        let inner = try await exchange.listen()
        return GatedListener(inner: inner, gate: gateListenerClose ? listenerClose : nil)
    }

    struct GatedListener: MdocTransportListener {
        let inner: any MdocTransportListener
        let gate: Gate?
        var endpoint: TransportEndpoint { inner.endpoint }
        func accept(timeout: Duration?) async throws(ProximityError) -> any MdocTransport {
            try await inner.accept(timeout: timeout)
        }
        func close() async {
            if let gate { await gate.wait() }
            await inner.close()
        }
    }
}

/// The shared test vectors, `../shared/vectors` beside the package (read as the Mdoc
/// tests read them: WalletEncoding's JSON parser and hex decoder).
enum SharedVectors {
    static let directory: URL = URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent().appendingPathComponent("shared/vectors")

    struct Missing: Error, CustomStringConvertible { let description: String }

    /// `section.key` of the vector file at `relativePath`, hex-decoded.
    static func hex(_ relativePath: String, _ section: String, _ key: String) throws -> [UInt8] {
        let data = try Data(contentsOf: directory.appendingPathComponent(relativePath))
        let root = try JSONValue.parse([UInt8](data))
        guard let text = root[section]?[key]?.stringValue, let bytes = Hex.decode(text) else {
            throw Missing(description: "no hex \(section).\(key) in \(relativePath)")
        }
        return bytes
    }
}

/// Waits until `condition` holds, checking every millisecond for at most the hang guard.
/// The pause only paces the checks (a spin of `Task.yield()` would hold a thread of the
/// two-thread cooperative pool and starve every other test); the outcome depends on the
/// condition, never on the time, and the caller's expectation says what it needed.
func poll(_ condition: () -> Bool) async {
    let checks = Int(hangGuard.components.seconds) * 1000
    // Not `for … where !condition()`: that form goes on evaluating the condition for
    // every remaining check once it holds (600,000 locked reads, seconds of CPU a call).
    for _ in 0..<checks {
        if condition() { return }
        try? await Task.sleep(for: .milliseconds(1))
    }
}
