#if os(Linux)
import Foundation
internal import CEpoll
import Glibc
import WalletRuntime

/// One thread that serves every socket of the TCP carrier that has something to read
/// (Linux, `epoll`).
///
/// Before, each connection had a read loop and each listener an accept loop, each on a
/// ``BlockingIO`` thread: a loopback session handed work to three such threads and woke
/// each of them again for every message, on a two-core host beside the two threads of
/// the cooperative pool that do the session's work (issue 16). Here a watched socket
/// costs a registration, and its handler runs on this one thread when the kernel reports
/// input, the peer's end or an error.
///
/// The same thread runs the jobs of ``ProximityExecutor``: between two waits it runs
/// every queued job, and a job queued from another thread while it waits wakes it
/// through an `eventfd` in the same epoll set. A frame a handler reads thus resumes a
/// task that prefers the executor on this thread, with no other thread woken.
///
/// A handler reads what has arrived without waiting and returns whether to keep
/// watching; when it returns `false` the socket leaves the epoll set and the watch's
/// ownership of it is released. All the handlers run on the reactor's thread, one at a
/// time. The socket's owner ends the watch itself with ``end(_:)`` when it closes, so a
/// socket this side closes costs the reactor no wake-up.
final class SocketReactor: JobLoop, Sendable {
    /// The carrier's reactor; `nil` when the kernel gave no epoll instance or no
    /// `eventfd` (the carrier then keeps its ``BlockingIO`` loops, and
    /// ``ProximityExecutor`` runs on a thread of its own).
    static let shared = SocketReactor()

    /// What a watched socket does when reported: `false` once it is done.
    typealias Handler = @Sendable () -> Bool

    private final class Watch: Sendable {
        let socket: SocketHandle
        let handler: Handler
        /// Whether the watch has ended; the handler runs under this lock, so ``end(_:)``
        /// waits for a call in progress and no call starts after it.
        let ended = LockedBox(false)

        init(socket: SocketHandle, handler: @escaping Handler) {
            self.socket = socket
            self.handler = handler
        }
    }

    private struct State {
        var watches: [UInt64: Watch] = [:]
        var nextToken: UInt64 = 1
    }

    private let epoll: Int32
    private let state = LockedBox(State())
    /// Written to wake the thread for a job queued while it waits; in the epoll set
    /// with token 0 (watches count from 1).
    private let wakeDescriptor: Int32
    private let pending = LockedBox(PendingJobs())

    private init?() {
        let epoll = epoll_create1(Int32(EPOLL_CLOEXEC))
        guard epoll >= 0 else { return nil }
        let wake = eventfd(0, Int32(EFD_CLOEXEC | EFD_NONBLOCK))
        var event = epoll_event()
        event.events = EPOLLIN.rawValue
        event.data.u64 = 0
        guard wake >= 0, epoll_ctl(epoll, Int32(EPOLL_CTL_ADD), wake, &event) == 0 else {
            if wake >= 0 { close(wake) }
            close(epoll)
            return nil
        }
        self.epoll = epoll
        self.wakeDescriptor = wake
        let thread = Thread { [self] in run() }
        thread.name = "MdocProximity.SocketReactor"
        thread.start()
    }

    /// Watches `socket` for input, or (`connecting`) for the end of its pending connect,
    /// taking over one ownership of it that the caller took; `nil` (and the ownership is
    /// still the caller's) when the kernel refused the registration. Returns the watch's
    /// token, for ``end(_:)``.
    func watch(_ socket: SocketHandle, connecting: Bool = false, handler: @escaping Handler) -> UInt64? {
        let token = state.withLock { state -> UInt64 in
            defer { state.nextToken += 1 }
            state.watches[state.nextToken] = Watch(socket: socket, handler: handler)
            return state.nextToken
        }
        guard socket.addWatch(to: epoll, token: token, connecting: connecting) else {
            state.withLock { _ = $0.watches.removeValue(forKey: token) }
            return nil
        }
        return token
    }

    /// Ends the watch of `token` from any thread (the socket's owner closing it): waits
    /// for a handler call in progress, calls the handler no more, takes the socket out of
    /// the epoll set and releases the watch's ownership. Nothing once the watch has ended.
    func end(_ token: UInt64) {
        guard let watch = state.withLock({ $0.watches[token] }) else { return }
        let first = watch.ended.withLock { ended -> Bool in
            defer { ended = true }
            return !ended
        }
        if first { remove(token) }
    }

    /// Queues a job of ``ProximityExecutor`` for this thread, waking it when it waits.
    func submit(_ job: UnownedJob, on executor: UnownedTaskExecutor) {
        guard pending.withLock({ $0.append(job, on: executor) }) else { return }
        var one: UInt64 = 1
        while write(wakeDescriptor, &one, 8) < 0 && errno == EINTR {}
    }

    /// Whether the watch of `token` goes on (for tests).
    func isWatching(_ token: UInt64) -> Bool { state.withLock { $0.watches[token] != nil } }

    private func run() {
        let capacity: Int32 = 64
        let events = UnsafeMutablePointer<epoll_event>.allocate(capacity: Int(capacity))
        var batch = PendingJobs.Batch()
        var batchesSincePoll = 0
        while true {
            // The queued jobs first, and the jobs they queue, until none is left; the
            // sockets are looked at (without waiting) every 16 batches meanwhile, so a
            // stream of jobs cannot keep a frame waiting.
            pending.withLock { $0.take(into: &batch) }
            let idle = batch.isEmpty
            if !idle {
                PendingJobs.run(&batch)
                batchesSincePoll += 1
                if batchesSincePoll < 16 { continue }
            }
            batchesSincePoll = 0
            let count = epoll_wait(epoll, events, capacity, idle ? -1 : 0)
            // Awake before the handlers run: the jobs they queue need no eventfd write.
            if idle { pending.withLock { $0.markAwake() } }
            guard count >= 0 else {
                // EINTR; no other error is possible with this descriptor and buffer, but
                // a retry never spins.
                if errno != EINTR { usleep(1000) }
                continue
            }
            for index in 0..<Int(count) { serve(events[index].data.u64) }
        }
    }

    private func serve(_ token: UInt64) {
        if token == 0 {
            var count: UInt64 = 0
            _ = read(wakeDescriptor, &count, 8)
            return
        }
        guard let watch = state.withLock({ $0.watches[token] }) else { return }
        let done = watch.ended.withLock { ended -> Bool in
            guard !ended, !watch.handler() else { return false }
            ended = true
            return true
        }
        if done { remove(token) }
    }

    /// Called once per watch, by whichever ended it.
    private func remove(_ token: UInt64) {
        guard let watch = state.withLock({ $0.watches.removeValue(forKey: token) }) else { return }
        watch.socket.removeWatch(from: epoll)
        watch.socket.release()
    }
}
#endif
