import Foundation
import WalletEncoding

/// The SDK's one source of "now". Every validity check (JWT `exp`, MSO
/// `validUntil`, certificate windows, nonce lifetimes) asks the injected clock,
/// so tests and tools can check at any instant (DESIGN rule 2).
public protocol WalletClock: Sendable {
    /// The current instant.
    var now: Date { get }
    /// Suspends for `duration` of this clock's time (deferred-issuance retries, timeouts).
    func sleep(for duration: Duration) async throws
    /// Calls `action` once `duration` of this clock's time has passed, unless the timer
    /// is cancelled first (a timeout that is usually cancelled: the message arrives).
    /// The default sleeps in a task on ``sleep(for:)``.
    func schedule(after duration: Duration, _ action: @escaping @Sendable () -> Void) -> WalletTimer
}

extension WalletClock {
    /// A task that sleeps on ``sleep(for:)``, then calls `action`; cancelling the timer
    /// cancels the task.
    public func schedule(after duration: Duration, _ action: @escaping @Sendable () -> Void) -> WalletTimer {
        let task = Task {
            do { try await sleep(for: duration) } catch { return }
            action()
        }
        return WalletTimer { task.cancel() }
    }
}

/// A call a ``WalletClock`` will make when its time comes; ``cancel()`` before then
/// means it is never made. A call already under way is not interrupted.
public struct WalletTimer: Sendable {
    private let cancelAction: @Sendable () -> Void

    /// A timer that `cancel` stops.
    public init(cancel: @escaping @Sendable () -> Void) { cancelAction = cancel }

    /// Stops the timer (a no-op once it has fired or been cancelled).
    public func cancel() { cancelAction() }
}

/// The system's wall clock and `Task.sleep`.
public struct SystemClock: WalletClock {
    /// Creates the system clock.
    public init() {}
    /// `Date()`.
    public var now: Date { Date() }
    /// `Task.sleep(for:)`; throws `CancellationError` when the task is cancelled.
    public func sleep(for duration: Duration) async throws { try await Task.sleep(for: duration) }

    /// A libdispatch timer: cancelling it, the usual end of a timeout, wakes no thread
    /// and resumes no task (a sleeping task, cancelled, runs once more to finish).
    public func schedule(after duration: Duration, _ action: @escaping @Sendable () -> Void) -> WalletTimer {
        Self.schedule(after: duration, on: .global(), action)
    }

    /// `action` on `queue` once `duration` has passed, unless cancelled first.
    static func schedule(after duration: Duration, on queue: DispatchQueue,
                         _ action: @escaping @Sendable () -> Void) -> WalletTimer {
        let item = ScheduledItem(DispatchWorkItem(block: action))
        queue.asyncAfter(deadline: deadline(after: duration), execute: item.item)
        return WalletTimer { item.item.cancel() }
    }

    /// A work item shared with its timer (libdispatch's work items are thread-safe).
    private struct ScheduledItem: @unchecked Sendable {
        let item: DispatchWorkItem
        init(_ item: DispatchWorkItem) { self.item = item }
    }

    /// `now + duration` on the monotonic clock; never for a duration past a century, at
    /// once for one not positive.
    static func deadline(after duration: Duration) -> DispatchTime {
        let (seconds, attoseconds) = duration.components
        guard seconds >= 0 else { return .now() }
        guard seconds < 3_153_600_000 else { return .distantFuture }
        let nanoseconds = Int(seconds) * 1_000_000_000 + Int(attoseconds / 1_000_000_000)
        return .now() + .nanoseconds(nanoseconds)
    }
}

/// A clock that stands still until told to move: for tests and for checking
/// credentials "as of" a given time.
public final class ManualClock: WalletClock, @unchecked Sendable {
    private let lock = NSLock()
    private var instant: Date

    /// Creates a clock that reads `start` until advanced.
    public init(_ start: Date) { self.instant = start }

    /// The instant the clock stands at.
    public var now: Date {
        lock.lock(); defer { lock.unlock() }
        return instant
    }

    /// Moves the clock forward (or back, with a negative interval).
    public func advance(by seconds: TimeInterval) {
        lock.lock(); defer { lock.unlock() }
        instant = instant.addingTimeInterval(seconds)
    }

    /// Sets the clock to `date`.
    public func set(_ date: Date) {
        lock.lock(); defer { lock.unlock() }
        instant = date
    }

    /// Advances the clock by `duration` at once instead of waiting, so a flow that
    /// sleeps runs instantly under test; throws `CancellationError` if cancelled.
    public func sleep(for duration: Duration) async throws {
        try Task.checkCancellation()
        advance(by: duration.timeInterval)
        await Task.yield()
    }
}
