import Foundation
import WalletRuntime

/// A single-consumer queue of whole messages with an end (clean or failed), and
/// receives that can time out or be cancelled. The building block of the
/// in-memory and TCP transports.
final class MessageQueue: Sendable {
    private struct State {
        var buffer: [[UInt8]] = []
        var head = 0
        var end: ProximityError?
        var waiter: (id: UInt64, continuation: CheckedContinuation<Result<[UInt8], ProximityError>, Never>)?
        var nextWaiterID: UInt64 = 0
    }

    private let state = LockedBox(State())

    /// Adds a message (ignored after the end).
    func push(_ message: [UInt8]) {
        let waiter = state.withLock { state -> CheckedContinuation<Result<[UInt8], ProximityError>, Never>? in
            guard state.end == nil else { return nil }
            if let waiter = state.waiter {
                state.waiter = nil
                return waiter.continuation
            }
            state.buffer.append(message)
            return nil
        }
        waiter?.resume(returning: .success(message))
    }

    /// Ends the queue: buffered messages are still delivered, then `error`.
    func finish(_ error: ProximityError = .connectionClosed) {
        let waiter = state.withLock { state -> CheckedContinuation<Result<[UInt8], ProximityError>, Never>? in
            guard state.end == nil else { return nil }
            state.end = error
            let waiter = state.waiter
            state.waiter = nil
            return waiter?.continuation
        }
        waiter?.resume(returning: .failure(error))
    }

    /// Whether the queue has ended.
    var isFinished: Bool { state.withLock { $0.end != nil } }

    /// The next message, waiting up to `timeout`.
    func next(timeout: Duration?) async throws(ProximityError) -> [UInt8] {
        let id = state.withLock { state -> UInt64 in state.nextWaiterID += 1; return state.nextWaiterID }
        let result = await withTaskCancellationHandler {
            await withCheckedContinuation { (continuation: CheckedContinuation<Result<[UInt8], ProximityError>, Never>) in
                let immediate = state.withLock { state -> Result<[UInt8], ProximityError>? in
                    if state.head < state.buffer.count {
                        let message = state.buffer[state.head]
                        state.head += 1
                        if state.head > 64, state.head * 2 > state.buffer.count {
                            state.buffer.removeFirst(state.head)
                            state.head = 0
                        }
                        return .success(message)
                    }
                    if let end = state.end { return .failure(end) }
                    if Task.isCancelled { return .failure(.cancelled) }
                    state.waiter = (id, continuation)
                    return nil
                }
                if let immediate { continuation.resume(returning: immediate); return }
                if let timeout {
                    let parts = timeout.components
                    let seconds = Double(parts.seconds) + Double(parts.attoseconds) / 1e18
                    DispatchQueue.global().asyncAfter(deadline: .now() + seconds) { [weak self] in
                        self?.fail(waiter: id, with: .timeout(seconds: seconds))
                    }
                }
            }
        } onCancel: {
            fail(waiter: id, with: .cancelled)
        }
        return try result.get()
    }

    private func fail(waiter id: UInt64, with error: ProximityError) {
        let waiter = state.withLock { state -> CheckedContinuation<Result<[UInt8], ProximityError>, Never>? in
            guard let waiter = state.waiter, waiter.id == id else { return nil }
            state.waiter = nil
            return waiter.continuation
        }
        waiter?.resume(returning: .failure(error))
    }
}
