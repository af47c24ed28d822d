import Foundation
import WalletRuntime

/// One thread on which a proximity session's work can run from its start to its end.
///
/// By default a session's jobs run on the cooperative pool: the carrier hands a message
/// to one of its threads, the session's actors and tasks take turns on whichever thread
/// is free, and the app's tasks on another. Each hand-off between two threads is a
/// wake-up and, on a two-core phone or VM, often a move to the other core with cold
/// caches. A session is a strict alternation (a request, then its response), so those
/// hand-offs buy no parallelism (issue 16, docs/performance.md).
///
/// This executor keeps all of it on one thread: give it to ``MdocEngagementManager``
/// (the SDK's own tasks for the holder's sessions then prefer it) and run the app's side
/// of a session with it preferred:
///
/// ```swift
/// let manager = MdocEngagementManager(connector: connector, executor: ProximityExecutor.shared)
/// try await withTaskExecutorPreference(ProximityExecutor.shared) {
///     let reader = try MdocReader(connector: connector, trustAnchors: anchors)
///     try await reader.engage(qrCodeUri: uri)
///     let response = try await reader.request(items)
/// }
/// ```
///
/// On Linux the thread is also the TCP carrier's reactor: a frame read from a socket
/// resumes the task that waits for it on the same thread, with no other thread woken.
/// Elsewhere it is a thread of its own that sleeps on a condition.
///
/// The thread runs one job at a time, in the order they arrive. A job that blocks it
/// (a synchronous wait, a long computation) delays every session on it, and the sockets
/// it serves; the SDK's jobs never block.
public final class ProximityExecutor: TaskExecutor, Sendable {
    /// The process's executor (on Linux, the TCP carrier's reactor thread).
    public static let shared = ProximityExecutor(loop: defaultLoop())

    private let loop: any JobLoop

    /// An executor on `loop` (tests build one per loop kind).
    init(loop: any JobLoop) { self.loop = loop }

    /// Queues `job` for the executor's thread.
    public func enqueue(_ job: consuming ExecutorJob) {
        loop.submit(UnownedJob(job), on: asUnownedTaskExecutor())
    }

    private static func defaultLoop() -> any JobLoop {
        #if os(Linux)
        if let reactor = SocketReactor.shared { return reactor }
        #endif
        return ConditionJobLoop(name: "MdocProximity.ProximityExecutor")
    }
}

/// A thread that runs submitted jobs in order.
protocol JobLoop: Sendable {
    /// Queues `job`, to run on the loop's thread as a job of the task executor `executor`.
    func submit(_ job: UnownedJob, on executor: UnownedTaskExecutor)
}

/// The jobs waiting for a loop's thread, and whether that thread is about to sleep or
/// asleep (so that only a submission that finds it so pays for waking it).
struct PendingJobs {
    typealias Batch = [(job: UnownedJob, executor: UnownedTaskExecutor)]

    private var jobs: Batch = []
    private var sleeping = false

    init() {}

    /// Queues a job; `true` when the thread has to be woken for it.
    mutating func append(_ job: UnownedJob, on executor: UnownedTaskExecutor) -> Bool {
        jobs.append((job, executor))
        defer { sleeping = false }
        return sleeping
    }

    /// Takes every queued job into `batch` (empty on entry) and, when there were none,
    /// marks the thread asleep: it must then wait until woken.
    mutating func take(into batch: inout Batch) {
        swap(&batch, &jobs)
        sleeping = batch.isEmpty
    }

    /// Marks the thread awake (it returned from a wait, and may queue jobs before it
    /// takes the queue again).
    mutating func markAwake() { sleeping = false }

    /// Runs a taken batch on the calling thread, in order, and empties it for the next.
    static func run(_ batch: inout Batch) {
        for entry in batch { entry.job.runSynchronously(on: entry.executor) }
        batch.removeAll(keepingCapacity: true)
    }
}

/// A ``JobLoop`` on a thread of its own, which sleeps on a condition when it has no job.
final class ConditionJobLoop: JobLoop, @unchecked Sendable {
    // `@unchecked`: `pending` is only touched with `condition` locked.
    private let condition = NSCondition()
    private var pending = PendingJobs()

    init(name: String) {
        let thread = Thread { [self] in run() }
        thread.name = name
        thread.start()
    }

    func submit(_ job: UnownedJob, on executor: UnownedTaskExecutor) {
        condition.lock()
        let wake = pending.append(job, on: executor)
        condition.unlock()
        if wake { condition.signal() }
    }

    private func run() {
        var batch = PendingJobs.Batch()
        while true {
            condition.lock()
            pending.take(into: &batch)
            while batch.isEmpty {
                condition.wait()
                pending.take(into: &batch)
            }
            condition.unlock()
            PendingJobs.run(&batch)
        }
    }
}
