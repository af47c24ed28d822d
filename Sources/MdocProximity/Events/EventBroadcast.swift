import WalletRuntime

/// Fans events out to any number of filtered subscribers. Subscribing is
/// synchronous, so a subscriber sees every event published after the call that
/// created its stream; each subscriber has an unbounded buffer, so none is dropped.
final class EventBroadcast<Event: Sendable>: Sendable {
    private struct Subscribers {
        var nextID = 0
        var deliver: [Int: @Sendable (Event) -> Void] = [:]
    }

    private let subscribers = LockedBox(Subscribers())

    /// A stream of `transform(event)` for each later event where it is not `nil`.
    func subscribe<Output: Sendable>(_ transform: @escaping @Sendable (Event) -> Output?) -> AsyncStream<Output> {
        subscription(transform).stream
    }

    /// A stream as ``subscribe(_:)`` makes it, and what ends it: once `end` is called the
    /// stream yields what was published before, then finishes.
    func subscription<Output: Sendable>(_ transform: @escaping @Sendable (Event) -> Output?)
        -> (stream: AsyncStream<Output>, end: @Sendable () -> Void) {
        let (stream, continuation) = AsyncStream<Output>.makeStream(bufferingPolicy: .unbounded)
        let id = subscribers.withLock { state -> Int in
            let id = state.nextID
            state.nextID += 1
            state.deliver[id] = { event in
                if let output = transform(event) { continuation.yield(output) }
            }
            return id
        }
        continuation.onTermination = { [weak self] _ in
            self?.subscribers.withLock { _ = $0.deliver.removeValue(forKey: id) }
        }
        return (stream, { continuation.finish() })
    }

    /// Delivers `event` to every subscriber. Callers serialise publishing, so all
    /// subscribers see events in one order.
    func publish(_ event: Event) {
        let targets = subscribers.withLock { Array($0.deliver.values) }
        for deliver in targets { deliver(event) }
    }

    /// How many subscribers are attached (for leak checks).
    var subscriberCount: Int { subscribers.withLock { $0.deliver.count } }
}
