import WalletEncoding
import WalletRuntime

/// A queue of values with an end (clean or failed) and any number of waiting
/// receivers, served in arrival order. The one implementation behind every
/// "wait for the next thing" of the carriers: the message queues of the
/// in-memory and TCP transports and the pending connections of the listeners.
///
/// Each waiter owns its timer: a timer scheduled on the injected ``WalletClock``
/// that fails only the waiter it was started for (by id), and it is cancelled as
/// soon as that waiter is served, so a timer that comes due for a waiter already
/// served does nothing.
final class Mailbox<Element: Sendable>: Sendable {
    private typealias Continuation = CheckedContinuation<Result<Element, ProximityError>, Never>

    private struct Waiter {
        let id: UInt64
        let continuation: Continuation
        var timer: WalletTimer?
    }

    private struct State {
        var buffer: [Element] = []
        var head = 0
        var end: ProximityError?
        var waiters: [Waiter] = []
        var nextWaiterID: UInt64 = 0

        var bufferedCount: Int { buffer.count - head }

        mutating func popFirst() -> Element? {
            guard head < buffer.count else { return nil }
            let value = buffer[head]
            head += 1
            // Compact once the consumed prefix dominates, so memory stays linear in what is queued.
            if head > 64, head * 2 > buffer.count {
                buffer.removeFirst(head)
                head = 0
            }
            return value
        }

        mutating func removeWaiter(_ id: UInt64) -> Waiter? {
            guard let index = waiters.firstIndex(where: { $0.id == id }) else { return nil }
            return waiters.remove(at: index)
        }
    }

    private let state = LockedBox(State())
    private let clock: any WalletClock

    /// A mailbox whose timeouts run on `clock`.
    init(clock: any WalletClock = SystemClock()) {
        self.clock = clock
    }

    /// Delivers `value` to the first waiter, or queues it. Returns `false` (and
    /// keeps nothing) once the mailbox has ended.
    @discardableResult
    func push(_ value: Element) -> Bool {
        let (accepted, served) = state.withLock { state -> (Bool, Waiter?) in
            guard state.end == nil else { return (false, nil) }
            if !state.waiters.isEmpty { return (true, state.waiters.removeFirst()) }
            state.buffer.append(value)
            return (true, nil)
        }
        if let served {
            served.timer?.cancel()
            served.continuation.resume(returning: .success(value))
        }
        return accepted
    }

    /// Delivers `value` to the first waiter, or queues it in place of what is queued
    /// (only the newest value matters). Returns the values it replaced, or nil (keeping
    /// nothing) once the mailbox has ended.
    func pushReplacing(_ value: Element) -> [Element]? {
        let (accepted, served, replaced) = state.withLock { state -> (Bool, Waiter?, [Element]) in
            guard state.end == nil else { return (false, nil, []) }
            if !state.waiters.isEmpty { return (true, state.waiters.removeFirst(), []) }
            let replaced = Array(state.buffer[state.head...])
            state.buffer = [value]
            state.head = 0
            return (true, nil, replaced)
        }
        if let served {
            served.timer?.cancel()
            served.continuation.resume(returning: .success(value))
        }
        return accepted ? replaced : nil
    }

    /// Ends the mailbox: queued values are still handed out, then every receive
    /// fails with `error`. Only the first end counts.
    func finish(_ error: ProximityError = .connectionClosed) {
        let failed = state.withLock { state -> [Waiter] in
            guard state.end == nil else { return [] }
            state.end = error
            defer { state.waiters.removeAll() }
            return state.waiters
        }
        for waiter in failed {
            waiter.timer?.cancel()
            waiter.continuation.resume(returning: .failure(error))
        }
    }

    /// Ends the mailbox and hands back what was queued instead of delivering it
    /// (a listener that closes closes its pending connections).
    func finishDiscarding(_ error: ProximityError = .connectionClosed) -> [Element] {
        let (failed, discarded) = state.withLock { state -> ([Waiter], [Element]) in
            let discarded = Array(state.buffer[state.head...])
            state.buffer.removeAll()
            state.head = 0
            guard state.end == nil else { return ([], discarded) }
            state.end = error
            defer { state.waiters.removeAll() }
            return (state.waiters, discarded)
        }
        for waiter in failed {
            waiter.timer?.cancel()
            waiter.continuation.resume(returning: .failure(error))
        }
        return discarded
    }

    /// Whether the mailbox has ended.
    var isFinished: Bool { state.withLock { $0.end != nil } }

    /// How many values are queued.
    var bufferedCount: Int { state.withLock { $0.bufferedCount } }

    /// Receivers waiting now (for tests).
    var waiterCount: Int { state.withLock { $0.waiters.count } }

    /// The next value, waiting up to `timeout` of the clock (`nil`: no limit).
    /// Fails with the end's error, ``ProximityError/timeout(seconds:)``, or
    /// ``ProximityError/cancelled`` when the calling task is cancelled.
    func next(timeout: Duration?) async throws(ProximityError) -> Element {
        let id = state.withLock { state -> UInt64 in
            state.nextWaiterID += 1
            return state.nextWaiterID
        }
        let result = await withTaskCancellationHandler {
            await withCheckedContinuation { (continuation: Continuation) in
                let immediate = state.withLock { state -> Result<Element, ProximityError>? in
                    if let value = state.popFirst() { return .success(value) }
                    if let end = state.end { return .failure(end) }
                    if Task.isCancelled { return .failure(.cancelled) }
                    state.waiters.append(Waiter(id: id, continuation: continuation))
                    return nil
                }
                if let immediate {
                    continuation.resume(returning: immediate)
                    return
                }
                guard let timeout else { return }
                let timer = clock.schedule(after: timeout) { [weak self] in
                    self?.fail(waiter: id, with: .timeout(seconds: timeout.timeInterval))
                }
                // The waiter may have been served between registering and here.
                let stillWaiting = state.withLock { state -> Bool in
                    guard let index = state.waiters.firstIndex(where: { $0.id == id }) else { return false }
                    state.waiters[index].timer = timer
                    return true
                }
                if !stillWaiting { timer.cancel() }
            }
        } onCancel: {
            fail(waiter: id, with: .cancelled)
        }
        return try result.get()
    }

    /// Fails one waiter, if it is still waiting; a no-op for a waiter already served.
    private func fail(waiter id: UInt64, with error: ProximityError) {
        guard let waiter = state.withLock({ $0.removeWaiter(id) }) else { return }
        waiter.timer?.cancel()
        waiter.continuation.resume(returning: .failure(error))
    }
}
