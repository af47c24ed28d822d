import Foundation

/// A broadcast stream of states (DESIGN rule 7): each new subscriber first
/// receives the current state, then every later one in order; any number of
/// subscribers may follow it; after a terminal state (or ``finish()``) every
/// subscription ends, and later subscribers receive the final state and end.
///
/// Sessions own one and expose ``states`` and ``current``:
/// ```swift
/// for await state in session.states {
///     render(state)          // the first value is the state at subscription time
/// }                          // ends after the terminal state
/// ```
/// No value is dropped: each subscriber has its own unbounded buffer, so a slow
/// observer sees every state, in the order they were sent.
///
/// ``send(_:)`` and ``current`` are inlinable, as is ``LockedBox/withLock(_:)``: a
/// generic type's methods called from another module otherwise run unspecialised and
/// look up the metadata of `Storage`, `AsyncStream<State>.Continuation` and its
/// `YieldResult` in the runtime's caches on every call. The proximity event hub sends
/// about 33 states a session (docs/performance.md, 2026-12-05, fifth session).
public final class StateStream<State: Sendable>: Sendable {
    @usableFromInline
    struct Storage {
        @usableFromInline var current: State
        @usableFromInline var finished = false
        @usableFromInline var nextID = 0
        @usableFromInline var subscribers: [Int: AsyncStream<State>.Continuation] = [:]

        @usableFromInline init(current: State) { self.current = current }
    }

    @usableFromInline let storage: LockedBox<Storage>
    @usableFromInline let isTerminal: @Sendable (State) -> Bool

    /// Creates a stream at `initial`; `isTerminal` says which states end it.
    public init(initial: State, isTerminal: @escaping @Sendable (State) -> Bool = { _ in false }) {
        self.storage = LockedBox(Storage(current: initial))
        self.isTerminal = isTerminal
        if isTerminal(initial) { storage.withLock { $0.finished = true } }
    }

    /// The latest state.
    @inlinable
    public var current: State { storage.withLock { $0.current } }

    /// Whether a terminal state was sent or ``finish()`` was called.
    public var isFinished: Bool { storage.withLock { $0.finished } }

    /// A new subscription: the current state first, then each later one.
    public var states: AsyncStream<State> {
        let (stream, continuation) = AsyncStream<State>.makeStream(bufferingPolicy: .unbounded)
        let alreadyFinished = storage.withLock { storage -> Bool in
            continuation.yield(storage.current)
            if storage.finished { return true }
            let id = storage.nextID
            storage.nextID += 1
            storage.subscribers[id] = continuation
            continuation.onTermination = { [weak self] _ in
                self?.storage.withLock { _ = $0.subscribers.removeValue(forKey: id) }
            }
            return false
        }
        if alreadyFinished { continuation.finish() }
        return stream
    }

    /// Publishes `state` to every subscriber and makes it current. Returns `false`
    /// (and changes nothing) once the stream has finished.
    @discardableResult @inlinable
    public func send(_ state: State) -> Bool {
        let terminal = isTerminal(state)
        // Yield under the lock so that concurrent senders cannot interleave their
        // states differently for different subscribers; finish outside it, since
        // finishing runs the termination handlers, which take the lock.
        let (accepted, closed) = storage.withLock { storage -> (Bool, [AsyncStream<State>.Continuation]) in
            guard !storage.finished else { return (false, []) }
            storage.current = state
            for continuation in storage.subscribers.values { continuation.yield(state) }
            return (true, terminal ? Self.close(&storage) : [])
        }
        for continuation in closed { continuation.finish() }
        return accepted
    }

    /// Ends every subscription without a new state; the current state stays readable.
    public func finish() {
        let closed = storage.withLock { storage in storage.finished ? [] : Self.close(&storage) }
        for continuation in closed { continuation.finish() }
    }

    /// Marks the stream finished and hands back the subscriptions to end.
    @usableFromInline
    static func close(_ storage: inout Storage) -> [AsyncStream<State>.Continuation] {
        storage.finished = true
        let continuations = Array(storage.subscribers.values)
        storage.subscribers.removeAll()
        return continuations
    }
}

/// A value guarded by a lock, for the few shared mutable cells of the runtime and the
/// modules built on it; a helper of this package, not API.
/// (Foundation's `NSLock` rather than `Synchronization.Mutex`, which needs
/// macOS 15 / iOS 18.)
@usableFromInline
package final class LockedBox<Value>: @unchecked Sendable {
    @usableFromInline let lock = NSLock()
    @usableFromInline var value: Value

    /// Wraps `value`.
    @usableFromInline
    package init(_ value: Value) { self.value = value }

    /// Runs `body` with exclusive access to the value.
    @inlinable
    package func withLock<Result>(_ body: (inout Value) throws -> Result) rethrows -> Result {
        lock.lock()
        defer { lock.unlock() }
        return try body(&value)
    }
}
