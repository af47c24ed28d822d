import WalletRuntime

/// Dispatches requests by method and path to the routes added to it, in the order
/// they were added.
///
/// A pattern is a path whose segments are literals or parameters in braces:
/// `/credential`, `/offers/{id}`, `/.well-known/openid-credential-issuer`. Segments are
/// compared after percent-decoding, one for one (so `/a/` is not `/a`), and a
/// parameter matches exactly one non-empty segment, handed to the route decoded. A
/// path that no route has answers 404; one that routes have, but not for this method,
/// answers 405 with `Allow`; a path with a malformed percent escape answers 400.
///
/// ```swift
/// var router = HTTPRouter()
/// router.add(.get, "/offers/{id}") { request, parameters in
///     .json(["id": .string(parameters["id"] ?? "")])
/// }
/// router.add(.post, "/token") { request, _ in
///     let form = try request.formParameters()
///     return .json(["grant_type": .string(try form.requiredValue("grant_type"))])
/// }
/// ```
public struct HTTPRouter: HTTPHandler {
    /// A route: the request and its path parameters in, the response out. It may throw
    /// any error so that `try` needs no annotation: ``HTTPHandlerError`` keeps its
    /// meaning, anything else answers 500 with the OAuth error `server_error`.
    public typealias Route = @Sendable (HTTPRequest, _ pathParameters: [String: String]) async throws -> HTTPResponse

    private struct Entry: Sendable {
        let method: HTTPMethod
        let pattern: PathPattern
        let route: Route
    }

    private var entries: [Entry] = []

    /// An empty router (every request answers 404).
    public init() {}

    /// Adds a route for `method` and `pattern`; an earlier route that also matches wins.
    public mutating func add(_ method: HTTPMethod, _ pattern: String, _ route: @escaping Route) {
        entries.append(Entry(method: method, pattern: PathPattern(pattern), route: route))
    }

    /// Runs the first route whose method and pattern match.
    public func respond(to request: HTTPRequest) async throws(HTTPHandlerError) -> HTTPResponse {
        guard let segments = PathPattern.segments(ofPath: request.path) else {
            return .oauthError("invalid_request", description: "malformed percent escape in the path")
        }
        var allowed: [HTTPMethod] = []
        for entry in entries {
            guard let parameters = entry.pattern.match(segments) else { continue }
            if entry.method == request.method {
                do {
                    return try await entry.route(request, parameters)
                } catch {
                    return try HTTPHandlerError.answer(for: error)
                }
            }
            if !allowed.contains(entry.method) { allowed.append(entry.method) }
        }
        return allowed.isEmpty ? .notFound() : .methodNotAllowed(allowed: allowed)
    }
}

/// A path pattern of literal and `{parameter}` segments, shared by the router and the
/// fault injector's rules.
struct PathPattern: Sendable, Equatable {
    enum Segment: Sendable, Equatable {
        case literal(String)
        case parameter(String)
    }

    let segments: [Segment]

    init(_ pattern: String) {
        segments = pattern.split(separator: "/", omittingEmptySubsequences: false).dropFirst().map { raw in
            if raw.count > 2, raw.hasPrefix("{"), raw.hasSuffix("}") {
                return .parameter(String(raw.dropFirst().dropLast()))
            }
            return .literal(String(raw).removingPercentEncoding ?? String(raw))
        }
    }

    /// The percent-decoded segments of an absolute path, or `nil` when an escape is malformed.
    static func segments(ofPath path: String) -> [String]? {
        var decoded: [String] = []
        for raw in path.split(separator: "/", omittingEmptySubsequences: false).dropFirst() {
            guard let segment = String(raw).removingPercentEncoding else { return nil }
            decoded.append(segment)
        }
        return decoded
    }

    /// The parameters when `path` (decoded segments) matches, else `nil`.
    func match(_ path: [String]) -> [String: String]? {
        guard path.count == segments.count else { return nil }
        var parameters: [String: String] = [:]
        for (segment, actual) in zip(segments, path) {
            switch segment {
            case .literal(let literal):
                guard literal == actual else { return nil }
            case .parameter(let name):
                guard !actual.isEmpty else { return nil }
                parameters[name] = actual
            }
        }
        return parameters
    }
}
