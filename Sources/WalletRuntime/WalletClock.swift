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
}

/// The system's wall clock and `Task.sleep`.
public struct SystemClock: WalletClock {
    /// Creates the system clock.
    public init() {}
    /// `Date()`.
    public var now: Date { Date() }
    /// `Task.sleep(for:)`; throws `CancellationError` when the task is cancelled.
    public func sleep(for duration: Duration) async throws { try await Task.sleep(for: duration) }
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
