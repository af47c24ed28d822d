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
/// A handler reads what has arrived without waiting and returns whether to keep
/// watching; when it returns `false` the socket leaves the epoll set and the watch's
/// ownership of it is released. All the handlers run on the reactor's thread, one at a
/// time, so a handler's state is only ever touched by one thread. ``poke(_:)`` runs a
/// handler without a report (a listener that closes has no input to report).
final class SocketReactor: Sendable {
    /// The carrier's reactor; `nil` when the kernel gave no epoll instance (the carrier
    /// then keeps its ``BlockingIO`` loops).
    static let shared = SocketReactor()

    /// What a watched socket does when reported: `false` once it is done.
    typealias Handler = @Sendable () -> Bool

    private struct Watch {
        let socket: SocketHandle
        let handler: Handler
    }

    private struct State {
        var watches: [UInt64: Watch] = [:]
        var nextToken: UInt64 = 1
        var poked: [UInt64] = []
    }

    private let epoll: Int32
    /// An `eventfd` in the set with token 0: written by ``poke(_:)``.
    private let wake: Int32
    private let state = LockedBox(State())

    private init?() {
        let epoll = epoll_create1(Int32(EPOLL_CLOEXEC))
        guard epoll >= 0 else { return nil }
        let wake = eventfd(0, Int32(EFD_CLOEXEC) | Int32(EFD_NONBLOCK))
        var event = epoll_event()
        event.events = EPOLLIN.rawValue
        event.data.u64 = 0
        guard wake >= 0, epoll_ctl(epoll, Int32(EPOLL_CTL_ADD), wake, &event) == 0 else {
            if wake >= 0 { close(wake) }
            close(epoll)
            return nil
        }
        self.epoll = epoll
        self.wake = wake
        let thread = Thread { [self] in run() }
        thread.name = "MdocProximity.SocketReactor"
        thread.start()
    }

    /// Watches `socket`, taking over one ownership of it that the caller took; `nil`
    /// (and the ownership is still the caller's) when the kernel refused the registration.
    /// Returns the watch's token, for ``poke(_:)``.
    func watch(_ socket: SocketHandle, handler: @escaping Handler) -> UInt64? {
        let token = state.withLock { state -> UInt64 in
            defer { state.nextToken += 1 }
            state.watches[state.nextToken] = Watch(socket: socket, handler: handler)
            return state.nextToken
        }
        guard socket.addWatch(to: epoll, token: token) else {
            state.withLock { _ = $0.watches.removeValue(forKey: token) }
            return nil
        }
        return token
    }

    /// Runs the handler of `token` on the reactor's thread soon, reported or not; nothing
    /// once the watch has ended.
    func poke(_ token: UInt64) {
        state.withLock { $0.poked.append(token) }
        _ = eventfd_write(wake, 1)
    }

    /// Whether the watch of `token` goes on (for tests).
    func isWatching(_ token: UInt64) -> Bool { state.withLock { $0.watches[token] != nil } }

    private func run() {
        let capacity: Int32 = 64
        let events = UnsafeMutablePointer<epoll_event>.allocate(capacity: Int(capacity))
        while true {
            let count = epoll_wait(epoll, events, capacity, -1)
            guard count >= 0 else {
                // EINTR; no other error is possible with this descriptor and buffer, but
                // a retry never spins.
                if errno != EINTR { usleep(1000) }
                continue
            }
            for index in 0..<Int(count) {
                let token = events[index].data.u64
                if token == 0 {
                    var value: eventfd_t = 0
                    _ = eventfd_read(wake, &value)
                    for poked in state.withLock({ state in defer { state.poked.removeAll() }; return state.poked }) {
                        serve(poked)
                    }
                } else {
                    serve(token)
                }
            }
        }
    }

    private func serve(_ token: UInt64) {
        guard let watch = state.withLock({ $0.watches[token] }) else { return }
        guard !watch.handler() else { return }
        watch.socket.removeWatch(from: epoll)
        state.withLock { _ = $0.watches.removeValue(forKey: token) }
        watch.socket.release()
    }
}
#endif
