import Foundation

/// An HTTP method.
public struct HTTPMethod: RawRepresentable, Hashable, Sendable, ExpressibleByStringLiteral {
    /// The method token as sent on the wire (`GET`, `POST`, ...).
    public let rawValue: String
    /// Creates a method from its token.
    public init(rawValue: String) { self.rawValue = rawValue.uppercased() }
    /// Creates a method from a string literal.
    public init(stringLiteral value: String) { self.init(rawValue: value) }
    /// `GET`.
    public static let get: HTTPMethod = "GET"
    /// `POST`.
    public static let post: HTTPMethod = "POST"
    /// `PUT`.
    public static let put: HTTPMethod = "PUT"
    /// `DELETE`.
    public static let delete: HTTPMethod = "DELETE"
}

/// Header fields with case-insensitive names that keep the order they were added in.
public struct HTTPHeaders: Sendable, Equatable, Sequence, ExpressibleByDictionaryLiteral {
    /// The fields in order, names as given.
    public private(set) var fields: [(name: String, value: String)]

    /// Creates headers from name/value pairs.
    public init(_ fields: [(name: String, value: String)] = []) { self.fields = fields }

    /// Creates headers from a dictionary literal.
    public init(dictionaryLiteral elements: (String, String)...) {
        self.fields = elements.map { (name: $0.0, value: $0.1) }
    }

    /// The first value of `name`, compared case-insensitively; setting replaces every
    /// field of that name (or removes them when `nil`).
    public subscript(name: String) -> String? {
        get { fields.first { $0.name.caseInsensitiveCompare(name) == .orderedSame }?.value }
        set {
            fields.removeAll { $0.name.caseInsensitiveCompare(name) == .orderedSame }
            if let newValue { fields.append((name: name, value: newValue)) }
        }
    }

    /// Every value of `name`, in order.
    public func values(for name: String) -> [String] {
        fields.filter { $0.name.caseInsensitiveCompare(name) == .orderedSame }.map(\.value)
    }

    /// Appends a field, keeping earlier fields of the same name.
    public mutating func add(name: String, value: String) { fields.append((name: name, value: value)) }

    /// Iterates the fields in order.
    public func makeIterator() -> IndexingIterator<[(name: String, value: String)]> { fields.makeIterator() }

    /// Headers are equal when they hold the same fields in the same order (names compared case-insensitively).
    public static func == (lhs: HTTPHeaders, rhs: HTTPHeaders) -> Bool {
        lhs.fields.count == rhs.fields.count && zip(lhs.fields, rhs.fields).allSatisfy {
            $0.name.caseInsensitiveCompare($1.name) == .orderedSame && $0.value == $1.value
        }
    }
}

/// One HTTP request as a value: what a protocol core asks its driver to send.
public struct HTTPRequest: Sendable, Equatable {
    /// The method.
    public var method: HTTPMethod
    /// The absolute URL.
    public var url: URL
    /// The header fields.
    public var headers: HTTPHeaders
    /// The body, if any.
    public var body: [UInt8]?
    /// How long the whole exchange may take before it fails with ``HTTPError/timedOut``.
    public var timeout: Duration

    /// Creates a request; the default timeout is 30 seconds.
    public init(method: HTTPMethod = .get, url: URL, headers: HTTPHeaders = HTTPHeaders(),
                body: [UInt8]? = nil, timeout: Duration = .seconds(30)) {
        self.method = method
        self.url = url
        self.headers = headers
        self.body = body
        self.timeout = timeout
    }
}

/// One HTTP response as a value.
public struct HTTPResponse: Sendable, Equatable {
    /// The status code.
    public var status: Int
    /// The header fields.
    public var headers: HTTPHeaders
    /// The body (empty when there was none).
    public var body: [UInt8]

    /// Creates a response.
    public init(status: Int, headers: HTTPHeaders = HTTPHeaders(), body: [UInt8] = []) {
        self.status = status
        self.headers = headers
        self.body = body
    }

    /// Whether the status is in 200...299.
    public var isSuccess: Bool { (200..<300).contains(status) }
}

/// Why an HTTP exchange failed before a response arrived.
public enum HTTPError: Error, Equatable, Sendable {
    /// The request took longer than its ``HTTPRequest/timeout``.
    case timedOut
    /// The task was cancelled.
    case cancelled
    /// The response body exceeded the client's size limit.
    case responseTooLarge(limit: Int)
    /// The connection could not be made or broke off, or what came back was not an HTTP
    /// response; the reason says which.
    case transport(TransportFailure)
    /// The URL's scheme is not one the client allows.
    case unsupportedScheme(String)
}

/// Why no HTTP response arrived (``HTTPError/transport(_:)``): what a UI can act on
/// (offline, unreachable, TLS refused) without reading an error message.
public enum TransportFailure: Hashable, Sendable {
    /// The host name could not be resolved (or a client has no route for it).
    case cannotFindHost
    /// The host was found but the connection could not be made (refused, unreachable).
    case cannotConnect
    /// The device has no network connection.
    case notConnectedToInternet
    /// The connection broke off, or the server closed it, before a response arrived.
    case networkConnectionLost
    /// TLS failed: the handshake, or a server certificate that was not accepted.
    case secureConnectionFailed
    /// What arrived is not a well-formed HTTP response.
    case badServerResponse
    /// Another failure of the URL loading system; `code` is its `URLError` code, for logs.
    case other(code: Int)
}

/// The SDK's one seam to the network. Protocol drivers call it; tests and the
/// reference parties answer it in-process, apps may supply their own (certificate
/// pinning, proxies, instrumentation).
public protocol HTTPClient: Sendable {
    /// Sends `request` and returns the response whatever its status; throws
    /// ``HTTPError`` only when no response could be obtained.
    func send(_ request: HTTPRequest) async throws(HTTPError) -> HTTPResponse
}
