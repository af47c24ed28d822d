import Foundation
import WalletRuntime

/// Threads for the TCP carrier's blocking calls: read loops, accept loops and connects.
///
/// Each piece of work gets a thread at once, as with a thread of its own, but a thread
/// whose work is done waits for the next instead of exiting, up to `keepingIdle` of
/// them. A loopback session ran four loops, and starting and ending a thread for each
/// (a clone, a stack mapping, signal-mask and naming calls, the stack's release) was
/// a fifth of the session (issue 16: 1.92 ms before, 1.16-1.64 ms after). A concurrent
/// libdispatch queue was tried and dropped: its threads came late under the parallel
/// test run, which took 83 s instead of 49 s (the listener-race test 67 s, not 26 s).
/// The cooperative pool that runs async code is never used, so a blocked loop never
/// holds up a task.
final class BlockingIO: Sendable {
    /// The carrier's pool.
    static let shared = BlockingIO(keepingIdle: 8)

    /// The parked workers and the number of live threads, under one lock so that the two
    /// always agree.
    private struct State {
        var idle: [Worker] = []
        var threads = 0
    }
    private let state = LockedBox(State())
    private let keepingIdle: Int

    init(keepingIdle: Int) { self.keepingIdle = keepingIdle }

    /// Runs `work` on a waiting thread, or on a new one when none waits.
    func run(_ work: @escaping @Sendable () -> Void) {
        let parked = state.withLock { state -> Worker? in
            if let worker = state.idle.popLast() { return worker }
            state.threads += 1
            return nil
        }
        if let parked { parked.hand(work) } else { Worker.start(work, pool: self) }
    }

    /// Threads waiting for work now (for tests).
    var idleCount: Int { state.withLock { $0.idle.count } }
    /// Threads alive now, working or waiting (for tests).
    var threadCount: Int { state.withLock { $0.threads } }

    /// A worker that finished asks to wait for more: false (and it is no longer counted)
    /// when enough already wait.
    fileprivate func park(_ worker: Worker) -> Bool {
        state.withLock { state in
            guard state.idle.count < keepingIdle else {
                state.threads -= 1
                return false
            }
            state.idle.append(worker)
            return true
        }
    }
}

/// One thread of a ``BlockingIO`` pool: it runs its work, then waits to be handed more.
private final class Worker: Sendable {
    private let pool: BlockingIO
    /// The next work: set before the thread starts or before `wake` is signalled, taken
    /// by the thread; the lock orders the two.
    private let pending = LockedBox<(@Sendable () -> Void)?>(nil)
    private let wake = DispatchSemaphore(value: 0)

    private init(pool: BlockingIO) { self.pool = pool }

    static func start(_ work: @escaping @Sendable () -> Void, pool: BlockingIO) {
        let worker = Worker(pool: pool)
        worker.pending.withLock { $0 = work }
        let thread = Thread { worker.loop() }
        thread.stackSize = 256 * 1024
        thread.start()
    }

    /// Gives a waiting worker its next work. A worker is handed work only after it
    /// parked, so `pending` is empty here.
    func hand(_ work: @escaping @Sendable () -> Void) {
        pending.withLock { $0 = work }
        wake.signal()
    }

    private func loop() {
        while let work = pending.withLock({ next -> (@Sendable () -> Void)? in
            defer { next = nil }
            return next
        }) {
            work()
            guard pool.park(self) else { return }
            wake.wait()
        }
    }
}
