import Foundation
import WalletRuntime

/// Threads for the TCP carrier's blocking calls: read loops, accept loops and connects.
///
/// Each piece of work gets a thread at once, as with a thread of its own, but a thread
/// whose work is done waits for the next instead of exiting, up to `keepingIdle` of
/// them. A loopback session ran four loops, and starting and ending a thread for each
/// (a clone, a stack mapping, signal-mask and naming calls, the stack's release) was
/// a fifth of the session (issue 16: 1.92 ms before, 1.50-1.69 ms after). A concurrent
/// libdispatch queue was tried and dropped: its threads came late under the parallel
/// test run, which took 83 s instead of 49 s (the listener-race test 67 s, not 26 s).
/// The cooperative pool that runs async code is never used, so a blocked loop never
/// holds up a task.
final class BlockingIO: Sendable {
    /// The carrier's pool.
    static let shared = BlockingIO(keepingIdle: 8)

    private let idle = LockedBox<[Worker]>([])
    private let threads = LockedBox(0)
    private let keepingIdle: Int

    init(keepingIdle: Int) { self.keepingIdle = keepingIdle }

    /// Runs `work` on a waiting thread, or on a new one when none waits.
    func run(_ work: @escaping @Sendable () -> Void) {
        if let worker = idle.withLock({ $0.popLast() }) {
            worker.hand(work)
        } else {
            threads.withLock { $0 += 1 }
            Worker.start(work, pool: self)
        }
    }

    /// Threads waiting for work now (for tests).
    var idleCount: Int { idle.withLock { $0.count } }
    /// Threads alive now, working or waiting (for tests).
    var threadCount: Int { threads.withLock { $0 } }

    /// A worker that finished asks to wait for more: false when enough already wait.
    fileprivate func park(_ worker: Worker) -> Bool {
        let parked = idle.withLock { workers in
            guard workers.count < keepingIdle else { return false }
            workers.append(worker)
            return true
        }
        if !parked { threads.withLock { $0 -= 1 } }
        return parked
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
