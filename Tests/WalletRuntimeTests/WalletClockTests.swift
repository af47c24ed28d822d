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

/// Tells whether a payload captured by a timer's action was released.
private final class ReleaseProbe: @unchecked Sendable {
    private let lock = NSLock()
    private var flag = false
    var released: Bool { lock.withLock { flag } }

    final class Payload: Sendable {
        let probe: ReleaseProbe
        init(_ probe: ReleaseProbe) { self.probe = probe }
        deinit { probe.lock.withLock { probe.flag = true } }
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

    @Test("a cancelled SystemClock timer lets go of its action at once, not at its deadline an hour later")
    func cancelledTimerReleasesAction() async {
        let probe = ReleaseProbe()
        let timer: WalletTimer
        do {
            let payload = ReleaseProbe.Payload(probe)
            timer = SystemClock.schedule(after: .seconds(3600), on: .global()) { _ = payload }
        }
        #expect(!probe.released)
        timer.cancel()
        // Releasing follows the cancel on a libdispatch thread; the wait only paces the
        // checks (up to a minute, a hang guard), the outcome is the flag's.
        for _ in 0..<60_000 { if probe.released { break }; try? await Task.sleep(for: .milliseconds(1)) }
        #expect(probe.released, "the cancelled timer still holds its action")
    }

    @Test("a SystemClock timer that fired lets go of its action")
    func firedTimerReleasesAction() async {
        let probe = ReleaseProbe()
        let calls = Calls()
        do {
            let payload = ReleaseProbe.Payload(probe)
            _ = SystemClock.schedule(after: .zero, on: .global()) { _ = payload; calls.record("fired") }
        }
        await calls.wait(for: 1)
        for _ in 0..<60_000 { if probe.released { break }; try? await Task.sleep(for: .milliseconds(1)) }
        #expect(probe.released, "the fired timer still holds its action")
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

    #if os(Linux)
    @Test("the timer thread wakes for a timer due before the one it sleeps for, and never calls a cancelled one")
    func timerThreadEarlierDeadline() async {
        let calls = Calls()
        let timers = TimerThread()
        // The timers' queue is held until the due timer is cancelled: the timer thread may
        // hand it to the queue before `cancel()` (it is due at once), and on a loaded machine
        // did, but the action is taken when the queue runs it, after the cancel.
        let queue = DispatchQueue(label: "timer-thread-test")
        queue.suspend()
        let late = timers.schedule(at: TimerThread.deadline(after: .seconds(3600)), on: queue) { calls.record("late") }
        let cancelled = timers.schedule(at: TimerThread.deadline(after: .zero), on: queue) { calls.record("cancelled") }
        cancelled.cancel()
        _ = timers.schedule(at: TimerThread.deadline(after: .zero), on: queue) { calls.record("early") }
        queue.resume()
        await calls.wait(for: 1)
        queue.sync {}
        #expect(calls.recorded == ["early"])
        late.cancel()
    }

    @Test("cancelled timers do not pile up in the timer heap: it is compacted as they are cancelled")
    func timerThreadCompacts() {
        let timers = TimerThread()
        let deadline = TimerThread.deadline(after: .seconds(3600))
        for _ in 0..<10_000 { timers.schedule(at: deadline, on: .global()) {}.cancel() }
        #expect(timers.pendingCount <= 130)
        let live = (0..<1_000).map { _ in timers.schedule(at: deadline, on: .global()) {} }
        #expect(timers.pendingCount >= 1_000)
        for timer in live { timer.cancel() }
        #expect(timers.pendingCount <= 130)
    }

    @Test("timer deadlines: now when not positive, at most a century ahead")
    func timerThreadDeadlines() {
        let before = TimerThread.now()
        #expect(TimerThread.deadline(after: .seconds(-5)) >= before)
        #expect(TimerThread.deadline(after: .seconds(-5)) <= TimerThread.now())
        #expect(TimerThread.deadline(after: .seconds(Int64.max)) <= TimerThread.now() + 3_153_600_000 * 1_000_000_000)
        let deadline = TimerThread.deadline(after: .milliseconds(2_500))
        #expect(deadline >= before + 2_500_000_000)
        #expect(deadline <= TimerThread.now() + 2_500_000_000)
    }
    #endif

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
