#if os(Linux)
import Foundation
import Glibc

/// The thread behind ``SystemClock``'s timers on Linux: one heap of deadlines and one
/// thread that sleeps until the earliest.
///
/// The SDK's timers are timeouts that are almost always cancelled long before they are
/// due (a message arrives, the app answers). A libdispatch timer source costs two
/// wake-ups of libdispatch's manager thread per timer on Linux (an `eventfd` write to
/// arm it, another to cancel it), on whichever core the session is not using; a
/// proximity session arms about five (issue 16). Here, arming a timer wakes the thread
/// only when the timer is due before everything it already waits for, and cancelling
/// never wakes it: the cancelled entry stays in the heap, without its action, until its
/// deadline passes or the heap is compacted.
///
/// A due timer's action runs on its queue; the action is taken when it runs, so a
/// cancel before then still prevents the call (as with a cancelled source).
final class TimerThread: @unchecked Sendable {
    static let shared = TimerThread()

    /// One armed timer's action, taken by whichever comes first: the call or the cancel.
    final class Armed: Sendable {
        private let action: LockedBox<(@Sendable () -> Void)?>
        init(_ action: @escaping @Sendable () -> Void) { self.action = LockedBox(action) }
        func take() -> (@Sendable () -> Void)? { action.withLock { action in defer { action = nil }; return action } }
        var isCancelled: Bool { action.withLock { $0 == nil } }
    }

    private struct Entry {
        let deadline: UInt64
        let sequence: UInt64
        let armed: Armed
        let queue: DispatchQueue

        func isBefore(_ other: Entry) -> Bool {
            deadline != other.deadline ? deadline < other.deadline : sequence < other.sequence
        }
    }

    // Guarded by `mutex`.
    private var heap: [Entry] = []
    private var sequence: UInt64 = 0
    /// Entries of the heap whose timer was cancelled (an upper bound: a timer cancelled
    /// after it left the heap is counted too, until the next compaction).
    private var cancelled = 0
    /// The deadline the thread sleeps until (`UInt64.max`: no timer), or 0 while it is
    /// awake, when it looks at the heap again before sleeping.
    private var sleepingUntil: UInt64 = 0
    private var started = false

    private let mutex: UnsafeMutablePointer<pthread_mutex_t>
    private let condition: UnsafeMutablePointer<pthread_cond_t>

    init() {
        mutex = .allocate(capacity: 1)
        condition = .allocate(capacity: 1)
        pthread_mutex_init(mutex, nil)
        var attributes = pthread_condattr_t()
        pthread_condattr_init(&attributes)
        pthread_condattr_setclock(&attributes, CLOCK_MONOTONIC)
        pthread_cond_init(condition, &attributes)
        pthread_condattr_destroy(&attributes)
    }

    /// Now on the monotonic clock, in nanoseconds.
    static func now() -> UInt64 {
        var time = timespec()
        clock_gettime(CLOCK_MONOTONIC, &time)
        return UInt64(time.tv_sec) * 1_000_000_000 + UInt64(time.tv_nsec)
    }

    /// The monotonic instant `duration` from now: now when not positive, never later than
    /// a century from now.
    static func deadline(after duration: Duration) -> UInt64 {
        let (seconds, attoseconds) = duration.components
        let now = now()
        guard seconds >= 0 else { return now }
        let nanoseconds = min(UInt64(seconds), 3_153_600_000) * 1_000_000_000 + UInt64(max(0, attoseconds) / 1_000_000_000)
        return now + nanoseconds
    }

    /// Arms a timer: `action` on `queue` at `deadline` (monotonic nanoseconds), unless
    /// the returned timer is cancelled first.
    func schedule(at deadline: UInt64, on queue: DispatchQueue, _ action: @escaping @Sendable () -> Void) -> WalletTimer {
        let armed = Armed(action)
        pthread_mutex_lock(mutex)
        sequence += 1
        push(Entry(deadline: deadline, sequence: sequence, armed: armed, queue: queue))
        if !started {
            started = true
            let thread = Thread { [self] in run() }
            thread.name = "WalletRuntime.TimerThread"
            thread.stackSize = 128 * 1024
            thread.start()
        } else if deadline < sleepingUntil {
            pthread_cond_signal(condition)
        }
        pthread_mutex_unlock(mutex)
        return WalletTimer { [self] in
            // Released here, outside every lock (its captures may cancel other timers).
            guard armed.take() != nil else { return }
            pthread_mutex_lock(mutex)
            cancelled += 1
            if heap.count > 64, cancelled * 2 > heap.count { compact() }
            pthread_mutex_unlock(mutex)
        }
    }

    /// Timers in the heap, cancelled ones included (for tests).
    var pendingCount: Int {
        pthread_mutex_lock(mutex)
        defer { pthread_mutex_unlock(mutex) }
        return heap.count
    }

    private func run() {
        pthread_mutex_lock(mutex)
        while true {
            guard let first = heap.first else {
                sleepingUntil = .max
                pthread_cond_wait(condition, mutex)
                sleepingUntil = 0
                continue
            }
            if first.armed.isCancelled {
                _ = popFirst()
                cancelled = max(0, cancelled - 1)
                continue
            }
            guard first.deadline <= Self.now() else {
                sleepingUntil = first.deadline
                var until = timespec(tv_sec: Int(first.deadline / 1_000_000_000), tv_nsec: Int(first.deadline % 1_000_000_000))
                pthread_cond_timedwait(condition, mutex, &until)
                sleepingUntil = 0
                continue
            }
            let due = popFirst()
            pthread_mutex_unlock(mutex)
            due.queue.async { due.armed.take()?() }
            pthread_mutex_lock(mutex)
        }
    }

    /// Drops the cancelled entries and rebuilds the heap (mutex held).
    private func compact() {
        heap.removeAll { $0.armed.isCancelled }
        cancelled = 0
        var index = heap.count / 2
        while index > 0 {
            index -= 1
            siftDown(index)
        }
    }

    // MARK: Binary min-heap on (deadline, sequence)

    private func push(_ entry: Entry) {
        heap.append(entry)
        var child = heap.count - 1
        while child > 0 {
            let parent = (child - 1) / 2
            guard heap[child].isBefore(heap[parent]) else { break }
            heap.swapAt(child, parent)
            child = parent
        }
    }

    private func popFirst() -> Entry {
        let first = heap[0]
        let last = heap.removeLast()
        if !heap.isEmpty {
            heap[0] = last
            siftDown(0)
        }
        return first
    }

    private func siftDown(_ start: Int) {
        var parent = start
        while true {
            let left = 2 * parent + 1
            guard left < heap.count else { return }
            var smallest = left
            if left + 1 < heap.count, heap[left + 1].isBefore(heap[left]) { smallest = left + 1 }
            guard heap[smallest].isBefore(heap[parent]) else { return }
            heap.swapAt(parent, smallest)
            parent = smallest
        }
    }
}
#endif
