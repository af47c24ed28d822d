import Foundation
import Testing
@testable import MdocProximity

/// The TCP carrier's thread pool: work never waits for a thread, and finished threads
/// are reused, up to the number kept idle.
@Suite("BlockingIO: a thread for every piece of work at once, reused when done")
struct BlockingIOTests {
    /// Runs `count` pieces of work on `pool`, each signalling `started` (when given), then
    /// waiting on `release`, then signalling `finished` (when given).
    private static func runHeld(_ count: Int, on pool: BlockingIO, release: DispatchSemaphore,
                                started: DispatchSemaphore? = nil, finished: DispatchSemaphore? = nil) {
        for _ in 0..<count {
            pool.run {
                started?.signal()
                release.wait()
                finished?.signal()
            }
        }
    }

    @Test("twelve pieces of work that block until the thirteenth runs all finish: none waits for a free thread")
    func neverQueues() {
        let pool = BlockingIO(keepingIdle: 4)
        let release = DispatchSemaphore(value: 0)
        let finished = DispatchSemaphore(value: 0)
        Self.runHeld(12, on: pool, release: release, finished: finished)
        // If the pool held work back until a thread were free, this would never run.
        pool.run { for _ in 0..<12 { release.signal() } }
        for _ in 0..<12 { finished.wait() }
    }

    @Test("finished threads wait for more, at most keepingIdle of them, and take the next work")
    func reuse() {
        let pool = BlockingIO(keepingIdle: 2)
        let release = DispatchSemaphore(value: 0)
        let started = DispatchSemaphore(value: 0)
        Self.runHeld(5, on: pool, release: release, started: started)
        for _ in 0..<5 { started.wait() }
        #expect(pool.threadCount == 5)
        #expect(pool.idleCount == 0)
        for _ in 0..<5 { release.signal() }
        // Three of the five exit and two park; both follow the work, so wait for them.
        while pool.threadCount > 2 || pool.idleCount < 2 { Thread.sleep(forTimeInterval: 0.001) }
        #expect(pool.threadCount == 2)
        #expect(pool.idleCount == 2)
        // Two more pieces of work, held until checked: they went to the parked threads
        // (none is left idle and no thread was started).
        let hold = DispatchSemaphore(value: 0)
        let done = DispatchSemaphore(value: 0)
        Self.runHeld(2, on: pool, release: hold, finished: done)
        #expect(pool.idleCount == 0)
        #expect(pool.threadCount == 2)
        hold.signal()
        hold.signal()
        done.wait()
        done.wait()
        while pool.idleCount < 2 { Thread.sleep(forTimeInterval: 0.001) }
        #expect(pool.idleCount == 2)
        #expect(pool.threadCount == 2)
    }
}
