import Foundation
import WalletEncoding
import WalletRuntime

/// An ``HTTPClient`` that hands each request straight to a handler: no sockets, no
/// threads of its own, the same values in and out as over the network. Whatever the
/// URL's host, the one handler answers.
///
/// It keeps the promises of a network client:
/// - a body over `maxRequestBodyBytes` is answered 413 without calling the handler,
///   as ``LoopbackHTTPServer`` does; a response body over `maxResponseBytes` fails with
///   ``HTTPError/responseTooLarge(limit:)``, as `URLSessionHTTPClient` does;
/// - a handler that drops the connection fails the exchange with
///   `HTTPError.transport(.networkConnectionLost)`;
/// - cancelling the caller's task cancels the handler and fails with ``HTTPError/cancelled``;
/// - the request's `timeout` holds, in one of two ways. Without a `clock`, in real
///   time: a handler still busy when the timeout has passed is cancelled and the
///   exchange fails with ``HTTPError/timedOut``. With a `clock`, in that clock's time:
///   the client reads it before and after the handler and fails with `timedOut` when
///   more than the timeout passed. Give it the `ManualClock` that a ``FaultInjector``
///   sleeps on, and a delay longer than the timeout fails at once, deterministically,
///   however loaded the machine (the clock moves only when something sleeps on it,
///   so a handler that hangs without sleeping hangs until cancelled).
public struct InProcessHTTPClient: HTTPClient {
    private let handler: any HTTPHandler
    private let clock: (any WalletClock)?
    private let maxRequestBodyBytes: Int
    private let maxResponseBytes: Int

    /// Creates a client for `handler`.
    /// - Parameters:
    ///   - clock: `nil` for real-time timeouts, or the clock whose time the timeouts count.
    ///   - maxRequestBodyBytes: a larger request body is answered 413.
    ///   - maxResponseBytes: a larger response body fails with ``HTTPError/responseTooLarge(limit:)``.
    public init(handler: some HTTPHandler, clock: (any WalletClock)? = nil,
                maxRequestBodyBytes: Int = LoopbackHTTPServer.defaultMaxRequestBodyBytes,
                maxResponseBytes: Int = 4 * 1024 * 1024) {
        self.handler = handler
        self.clock = clock
        self.maxRequestBodyBytes = maxRequestBodyBytes
        self.maxResponseBytes = maxResponseBytes
    }

    /// Runs the handler for `request` under the rules above.
    public func send(_ request: HTTPRequest) async throws(HTTPError) -> HTTPResponse {
        guard !Task.isCancelled else { throw .cancelled }
        if let body = request.body, body.count > maxRequestBodyBytes {
            return .contentTooLarge(limit: maxRequestBodyBytes)
        }
        let started = clock?.now
        let race = Race()
        let handler = self.handler
        let work = Task {
            race.finish(.outcome(await handler.outcome(for: request)))
        }
        let timer: Task<Void, Never>? = clock == nil ? Task {
            do {
                try await SystemClock().sleep(for: request.timeout)
                race.finish(.timedOut)
            } catch {
                // Cancelled: the exchange ended first.
            }
        } : nil
        let result = await withTaskCancellationHandler {
            await race.wait()
        } onCancel: {
            race.finish(.cancelled)
        }
        work.cancel()
        timer?.cancel()

        switch result {
        case .cancelled:
            throw .cancelled
        case .timedOut:
            throw .timedOut
        case .outcome(let outcome):
            if let clock, let started, request.timeout.timeInterval < clock.now.timeIntervalSince(started) {
                throw .timedOut
            }
            switch outcome {
            case .drop:
                throw .transport(.networkConnectionLost)
            case .respond(let response):
                guard response.body.count <= maxResponseBytes else { throw .responseTooLarge(limit: maxResponseBytes) }
                return response
            }
        }
    }
}

/// The first of the handler's outcome, the timer and the caller's cancellation; later
/// arrivals are ignored. The waiter may arrive before or after the winner.
private final class Race: @unchecked Sendable {
    enum Result: Sendable {
        case outcome(HTTPHandlerOutcome)
        case timedOut
        case cancelled
    }

    private let lock = NSLock()
    private var result: Result?
    private var waiter: CheckedContinuation<Result, Never>?

    func finish(_ value: Result) {
        lock.lock()
        guard result == nil else { lock.unlock(); return }
        result = value
        let continuation = waiter
        waiter = nil
        lock.unlock()
        continuation?.resume(returning: value)
    }

    func wait() async -> Result {
        await withCheckedContinuation { continuation in
            lock.lock()
            if let result {
                lock.unlock()
                continuation.resume(returning: result)
            } else {
                waiter = continuation
                lock.unlock()
            }
        }
    }
}
