import WalletRuntime

/// The server side of an HTTP exchange: a request value in, a response value out.
///
/// The reference parties are handlers. The same handler answers in-process through
/// ``InProcessHTTPClient`` (tests, benchmarks) and on a loopback port through
/// ``LoopbackHTTPServer``, so a flow tested without sockets behaves the same over HTTP.
/// A handler may be called concurrently; it should return promptly when its task is
/// cancelled (a transport that stops or gives up cancels it).
public protocol HTTPHandler: Sendable {
    /// Answers `request`. Throwing ``HTTPHandlerError/response(_:)`` is the same as
    /// returning that response; ``HTTPHandlerError/dropConnection`` closes the
    /// connection without an answer.
    func respond(to request: HTTPRequest) async throws(HTTPHandlerError) -> HTTPResponse
}

/// How a handler leaves the ordinary return path.
public enum HTTPHandlerError: Error, Equatable, Sendable {
    /// Answer with this response: an early exit, so that a parsing helper such as
    /// `request.formParameters()` can end the exchange with a 400 from deep inside a handler.
    case response(HTTPResponse)
    /// Close the connection without answering (the client sees a transport failure).
    case dropConnection
}

/// A handler made from a closure, or any handler behind one type.
///
/// The closure may throw any error, so that `try` works in it without annotations:
/// ``HTTPHandlerError`` keeps its meaning, and any other error answers 500 with the
/// OAuth error `server_error` (its details stay on the server).
public struct AnyHTTPHandler: HTTPHandler {
    private let body: @Sendable (HTTPRequest) async throws(HTTPHandlerError) -> HTTPResponse

    /// A handler that runs `body` for every request.
    public init(_ body: @escaping @Sendable (HTTPRequest) async throws -> HTTPResponse) {
        self.body = { request throws(HTTPHandlerError) in
            do {
                return try await body(request)
            } catch {
                return try HTTPHandlerError.answer(for: error)
            }
        }
    }

    /// Wraps another handler.
    public init(_ handler: some HTTPHandler) {
        self.body = { request throws(HTTPHandlerError) in try await handler.respond(to: request) }
    }

    /// Runs the closure.
    public func respond(to request: HTTPRequest) async throws(HTTPHandlerError) -> HTTPResponse {
        try await body(request)
    }
}

extension HTTPHandlerError {
    /// What a closure's error means: an early-exit response is the answer, a drop is
    /// thrown on, anything else is a 500 `server_error`.
    static func answer(for error: any Error) throws(HTTPHandlerError) -> HTTPResponse {
        switch error as? HTTPHandlerError {
        case .response(let response): return response
        case .dropConnection: throw .dropConnection
        case nil: return .oauthError("server_error", status: 500)
        }
    }
}

/// What a transport does with one request once the handler is done.
enum HTTPHandlerOutcome: Sendable, Equatable {
    case respond(HTTPResponse)
    case drop
}

extension HTTPHandler {
    /// Runs the handler and folds its early exits into one outcome.
    func outcome(for request: HTTPRequest) async -> HTTPHandlerOutcome {
        do {
            return .respond(try await respond(to: request))
        } catch {
            switch error {
            case .response(let response): return .respond(response)
            case .dropConnection: return .drop
            }
        }
    }
}
