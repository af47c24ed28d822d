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

    /// A timer whose cancel, the usual end of a timeout, resumes no task (a sleeping
    /// task, cancelled, runs once more to finish); on Linux it wakes no thread either.
    public func schedule(after duration: Duration, _ action: @escaping @Sendable () -> Void) -> WalletTimer {
        Self.schedule(after: duration, on: .global(), action)
    }

    /// `action` on `queue` once `duration` has passed, unless cancelled first; a
    /// cancelled timer lets go of `action` at once.
    ///
    /// On Linux, an entry in the SDK's one timer heap (see `TimerThread`: libdispatch's
    /// timer sources wake its manager thread twice per timer there). Elsewhere a
    /// libdispatch timer source, not `asyncAfter` with a cancelled work item: libdispatch
    /// keeps such an item, and everything its block holds, until its deadline, so a
    /// 30-second message timeout cancelled at once still held about 1 KB for 30 seconds
    /// (200,000 of them: 194 MB resident against 25 MB with sources).
    static func schedule(after duration: Duration, on queue: DispatchQueue,
                         _ action: @escaping @Sendable () -> Void) -> WalletTimer {
        #if os(Linux)
        return TimerThread.shared.schedule(at: TimerThread.deadline(after: duration), on: queue, action)
        #else
        return scheduleSource(after: duration, on: queue, action)
        #endif
    }

    /// A libdispatch timer source; cancelling it unregisters it.
    static func scheduleSource(after duration: Duration, on queue: DispatchQueue,
                               _ action: @escaping @Sendable () -> Void) -> WalletTimer {
        let timer = ScheduledSource(DispatchSource.makeTimerSource(queue: queue))
        timer.source.schedule(deadline: deadline(after: duration))
        // Firing cancels the source too, which releases this handler (and its capture of
        // the source) once it has run.
        timer.source.setEventHandler {
            timer.source.cancel()
            action()
        }
        timer.source.resume()
        return WalletTimer { timer.source.cancel() }
    }

    /// A timer source shared with its timer (libdispatch's sources are thread-safe).
    private struct ScheduledSource: @unchecked Sendable {
        let source: any DispatchSourceTimer
        init(_ source: any DispatchSourceTimer) { self.source = source }
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
