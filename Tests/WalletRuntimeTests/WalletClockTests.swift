import Dispatch
import Foundation
import Testing
@testable import WalletRuntime

/// Counts the calls of scheduled actions and lets a test wait for the next one.
private final class Calls: @unchecked Sendable {
    private let lock = NSLock()
    private var names: [String] = []
    private var waiters: [(count: Int, continuation: CheckedContinuation<Void, Never>)] = []

    func record(_ name: String) {
        let ready = lock.withLock { () -> [CheckedContinuation<Void, Never>] in
            names.append(name)
            let count = names.count
            let ready = waiters.filter { $0.count <= count }.map(\.continuation)
            waiters.removeAll { $0.count <= count }
            return ready
        }
        for continuation in ready { continuation.resume() }
    }

    var recorded: [String] { lock.withLock { names } }

    /// Returns once `count` calls were recorded.
    func wait(for count: Int) async {
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            let done = lock.withLock { () -> Bool in
                if names.count >= count { return true }
                waiters.append((count, continuation))
                return false
            }
            if done { continuation.resume() }
        }
    }
}

@Suite("WalletClock timers")
struct WalletClockTests {
    @Test("SystemClock.schedule calls its action once; a timer cancelled before it is due never calls it")
    func systemClockSchedule() async {
        let calls = Calls()
        // The timers' queue is held until every timer is set and one is cancelled: what
        // runs after it resumes does not depend on how fast the machine is.
        let queue = DispatchQueue(label: "wallet-clock-test")
        queue.suspend()
        let cancelled = SystemClock.schedule(after: .zero, on: queue) { calls.record("cancelled") }
        _ = SystemClock.schedule(after: .zero, on: queue) { calls.record("first") }
        _ = SystemClock.schedule(after: .milliseconds(10), on: queue) { calls.record("second") }
        cancelled.cancel()
        queue.resume()
        await calls.wait(for: 2)
        #expect(calls.recorded.sorted() == ["first", "second"])
        cancelled.cancel()   // cancelling again is a no-op
        // The public entry point, on the global queue.
        _ = SystemClock().schedule(after: .zero) { calls.record("global") }
        await calls.wait(for: 3)
        #expect(calls.recorded.last == "global")
        queue.sync {}   // anything still queued has run
        #expect(!calls.recorded.contains("cancelled"))
    }

    @Test("the default schedule sleeps on the clock: a manual clock calls the action at once")
    func defaultSchedule() async {
        let calls = Calls()
        let clock = ManualClock(Date(timeIntervalSince1970: 0))
        _ = clock.schedule(after: .seconds(30)) { calls.record("due") }
        await calls.wait(for: 1)
        #expect(calls.recorded == ["due"])
        #expect(clock.now == Date(timeIntervalSince1970: 30))
    }

    @Test("a dispatch deadline: at once when not positive, never past a century, else now plus the duration")
    func deadlines() {
        #expect(SystemClock.deadline(after: .seconds(-5)) <= DispatchTime.now())
        #expect(SystemClock.deadline(after: .seconds(Int64.max)) == .distantFuture)
        #expect(SystemClock.deadline(after: .seconds(3_153_600_000)) == .distantFuture)
        let before = DispatchTime.now().uptimeNanoseconds
        let deadline = SystemClock.deadline(after: .milliseconds(2_500)).uptimeNanoseconds
        #expect(deadline >= before + 2_500_000_000)
        #expect(deadline < DispatchTime.now().uptimeNanoseconds + 2_500_000_001)
    }
}
