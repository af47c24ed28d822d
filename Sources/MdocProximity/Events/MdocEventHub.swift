import Foundation
import WalletRuntime

/// The one place every engagement and transfer event of a manager goes through.
///
/// Two ways to use it: bind a UI to ``sessionState`` (the projection of the
/// active engagement, see ``SessionUiProjector``), or follow the raw events
/// (``allEvents``, ``engagementEvents``, ``transferEvents``) with the filters,
/// per-engagement maps, bounded history and timeline below. Any number of
/// subscribers may follow any stream. Publishing is serialised: every
/// subscriber sees events in the same order, and the timeline's sequence
/// numbers follow that order.
public final class MdocEventHub: Sendable {
    /// The default number of events each recent-events buffer keeps.
    public static let defaultBufferSize = 100
    /// The largest buffer size accepted by ``setEventBufferSize(_:)``.
    public static let maximumBufferSize = 100_000

    private struct State {
        var bufferSize = MdocEventHub.defaultBufferSize
        var nextSequence: UInt64 = 0
        var timeline: [SequencedEvent] = []          // bounded, all events
        var recentEngagement: [MdocEngagementEvent] = []
        var recentTransfer: [MdocRetrievalEvent] = []
        var projector = SessionUiProjector()
    }

    private let state = LockedBox(State())
    private let events = EventBroadcast<MdocEvent>()
    private let sessionEventBroadcast = EventBroadcast<SessionEvent>()
    private let uiState = StateStream<SessionUiState>(initial: .idle)
    private let latestEngagement = StateStream<[EngagementID: MdocEngagementEvent]>(initial: [:])
    private let latestTransfer = StateStream<[EngagementID: MdocRetrievalEvent]>(initial: [:])
    private let engagementStates = StateStream<[EngagementID: MdocEngagementState]>(initial: [:])
    private let transferStates = StateStream<[EngagementID: MdocTransferState]>(initial: [:])

    /// An empty hub.
    public init() {}

    // MARK: Streams of raw events (hot: each starts at the moment of the call)

    /// Every later engagement and transfer event.
    public var allEvents: AsyncStream<MdocEvent> { events.subscribe { $0 } }

    /// Every later engagement event.
    public var engagementEvents: AsyncStream<MdocEngagementEvent> {
        events.subscribe { if case .engagement(let event) = $0 { return event } else { return nil } }
    }

    /// Every later transfer (retrieval) event.
    public var transferEvents: AsyncStream<MdocRetrievalEvent> {
        events.subscribe { if case .transfer(let event) = $0 { return event } else { return nil } }
    }

    /// ``transferEvents`` with what ends the stream: after `end`, the stream yields the
    /// events published before it, then finishes. For the wallet's recorder, which
    /// must log the sessions its `close()` ends before the store closes.
    package func transferEventSubscription() -> (events: AsyncStream<MdocRetrievalEvent>, end: @Sendable () -> Void) {
        let (stream, end) = events.subscription { if case .transfer(let event) = $0 { return event } else { return nil } }
        return (stream, end)
    }

    /// Later events that end an engagement or a transfer (state order 200 and above).
    public func finalStateEvents() -> AsyncStream<MdocEvent> {
        events.subscribe { $0.isFinal ? $0 : nil }
    }

    /// Later transfer events of an ongoing transfer (state order 100-199).
    public func activeTransferEvents() -> AsyncStream<MdocRetrievalEvent> {
        events.subscribe {
            if case .transfer(let event) = $0, (100..<200).contains(event.stateOrder) { return event }
            return nil
        }
    }

    /// Later events whose state order lies in `minOrder...maxOrder`.
    public func eventsInStateRange(minOrder: Int, maxOrder: Int) -> AsyncStream<MdocEvent> {
        events.subscribe { (minOrder...max(minOrder, maxOrder)).contains($0.stateOrder) ? $0 : nil }
    }

    /// Later transfer events that end a transfer (completed, declined, ended by the reader, failed).
    public var onTransferCompletion: AsyncStream<MdocRetrievalEvent> {
        events.subscribe {
            if case .transfer(let event) = $0, event.stateOrder >= 200 { return event }
            return nil
        }
    }

    // MARK: The UI projection

    /// The simplified events the projection maps raw events to.
    public var sessionEvents: AsyncStream<SessionEvent> { sessionEventBroadcast.subscribe { $0 } }

    /// The active engagement's UI state: the current value first, then every change.
    public var sessionState: ObservedValue<SessionUiState> { ObservedValue(uiState) }

    /// The active engagement's UI state now.
    public var currentSessionState: SessionUiState { uiState.current }

    // MARK: Per-engagement state

    /// The latest engagement event of each engagement.
    public func latestEventByEngagement() -> ObservedValue<[EngagementID: MdocEngagementEvent]> {
        ObservedValue(latestEngagement)
    }

    /// The latest transfer event of each engagement.
    public func latestTransferEventByEngagement() -> ObservedValue<[EngagementID: MdocRetrievalEvent]> {
        ObservedValue(latestTransfer)
    }

    /// The engagement state of each engagement (from its latest engagement event).
    public func currentStateByEngagement() -> ObservedValue<[EngagementID: MdocEngagementState]> {
        ObservedValue(engagementStates)
    }

    /// The transfer state of each engagement (from its latest transfer event).
    public func currentTransferStateByEngagement() -> ObservedValue<[EngagementID: MdocTransferState]> {
        ObservedValue(transferStates)
    }

    // MARK: History

    /// The last `count` events (oldest first), at most the buffer size.
    public func recentEvents(count: Int) -> [MdocEvent] {
        state.withLock { Array($0.timeline.suffix(max(0, count))).map(\.event) }
    }

    /// The last `count` engagement events (oldest first), at most the buffer size.
    public func recentEngagementEvents(count: Int) -> [MdocEngagementEvent] {
        state.withLock { Array($0.recentEngagement.suffix(max(0, count))) }
    }

    /// The last `count` transfer events (oldest first), at most the buffer size.
    public func recentTransferEvents(count: Int) -> [MdocRetrievalEvent] {
        state.withLock { Array($0.recentTransfer.suffix(max(0, count))) }
    }

    /// The buffered events with their sequence numbers, oldest first.
    public func eventTimeline() -> [SequencedEvent] { state.withLock { $0.timeline } }

    /// How many events each buffer keeps.
    public var eventBufferSize: Int { state.withLock { $0.bufferSize } }

    /// Sets how many events each buffer keeps (clamped to 1...``maximumBufferSize``);
    /// older events beyond the new size are dropped.
    public func setEventBufferSize(_ size: Int) {
        state.withLock { state in
            state.bufferSize = min(max(size, 1), Self.maximumBufferSize)
            Self.trim(&state)
        }
    }

    // MARK: Clearing

    /// Forgets every event, per-engagement state and projection progress; the
    /// UI state restarts from the active engagement's initial state.
    public func clearAllState() {
        state.withLock { state in
            state.timeline.removeAll()
            state.recentEngagement.removeAll()
            state.recentTransfer.removeAll()
            state.projector.resetAll()
            latestEngagement.send([:])
            latestTransfer.send([:])
            engagementStates.send([:])
            transferStates.send([:])
            sendUiState(state.projector.state)
        }
    }

    /// Forgets one engagement's events, per-engagement state and progress.
    public func clearStateForEngagement(_ id: EngagementID) {
        state.withLock { state in
            state.timeline.removeAll { $0.event.engagementId == id }
            state.recentEngagement.removeAll { $0.engagementId == id }
            state.recentTransfer.removeAll { $0.engagementId == id }
            state.projector.reset(id)
            Self.remove(id, from: latestEngagement)
            Self.remove(id, from: latestTransfer)
            Self.remove(id, from: engagementStates)
            Self.remove(id, from: transferStates)
            sendUiState(state.projector.state)
        }
    }

    // MARK: Publishing (the manager and sessions; not API)

    /// Publishes an engagement event.
    func publish(_ event: MdocEngagementEvent) { publish(.engagement(event), context: nil) }

    /// Publishes a transfer event.
    func publish(_ event: MdocRetrievalEvent) { publish(.transfer(event), context: nil) }

    /// Replaces the engagement context (which engagements exist, which is active,
    /// which are suspended) and recomputes the UI state.
    func updateContext(_ context: EngagementContext) {
        state.withLock { state in
            state.projector.update(context: context)
            sendUiState(state.projector.state)
        }
    }

    /// Publishes `event` and, in the same step, replaces the context, so that a
    /// change of the active engagement and the event that caused it give one UI state.
    func publish(_ event: MdocEvent, context: EngagementContext?) {
        state.withLock { state in
            if let context { state.projector.update(context: context) }
            let sequenced = SequencedEvent(sequenceNumber: state.nextSequence, event: event)
            state.nextSequence += 1
            state.timeline.append(sequenced)
            switch event {
            case .engagement(let raw):
                state.recentEngagement.append(raw)
                Self.set(raw, for: raw.engagementId, in: latestEngagement)
                Self.set(raw.state, for: raw.engagementId, in: engagementStates)
            case .transfer(let raw):
                state.recentTransfer.append(raw)
                Self.set(raw, for: raw.engagementId, in: latestTransfer)
                Self.set(raw.state, for: raw.engagementId, in: transferStates)
            }
            Self.trim(&state)
            events.publish(event)
            if let sessionEvent = state.projector.apply(event) { sessionEventBroadcast.publish(sessionEvent) }
            sendUiState(state.projector.state)
        }
    }

    /// Drops a closed engagement from the per-engagement maps (its events stay in the
    /// bounded history until they age out).
    func prune(_ id: EngagementID) {
        state.withLock { _ in
            Self.remove(id, from: latestEngagement)
            Self.remove(id, from: latestTransfer)
            Self.remove(id, from: engagementStates)
            Self.remove(id, from: transferStates)
        }
    }

    /// The projection's context now.
    public var context: EngagementContext { state.withLock { $0.projector.context } }

    /// Subscribers attached to the raw and session event streams (for leak checks).
    public var subscriberCount: Int { events.subscriberCount + sessionEventBroadcast.subscriberCount }

    // MARK: Helpers

    private func sendUiState(_ next: SessionUiState) {
        if uiState.current != next { uiState.send(next) }
    }

    private static func trim(_ state: inout State) {
        let size = state.bufferSize
        if state.timeline.count > size { state.timeline.removeFirst(state.timeline.count - size) }
        if state.recentEngagement.count > size { state.recentEngagement.removeFirst(state.recentEngagement.count - size) }
        if state.recentTransfer.count > size { state.recentTransfer.removeFirst(state.recentTransfer.count - size) }
    }

    private static func set<V: Sendable>(_ value: V, for id: EngagementID, in stream: StateStream<[EngagementID: V]>) {
        var map = stream.current
        map[id] = value
        stream.send(map)
    }

    private static func remove<V: Sendable>(_ id: EngagementID, from stream: StateStream<[EngagementID: V]>) {
        var map = stream.current
        guard map.removeValue(forKey: id) != nil else { return }
        stream.send(map)
    }
}
