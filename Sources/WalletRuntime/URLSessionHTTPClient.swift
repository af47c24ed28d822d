import Foundation
import WalletEncoding
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// The default ``HTTPClient``, over `URLSession` (FoundationNetworking on Linux).
///
/// Cookies and caches are off: the protocols the SDK speaks carry their state in
/// tokens, and a wallet must not leak one verifier's cookies to another. Redirects
/// are not followed, so a driver sees every 3xx (OpenID4VP and OpenID4VCI handle
/// them explicitly). Plain `http` is refused unless allowed, and then only to loopback
/// hosts.
///
/// On Linux, FoundationNetworking cannot resend a request body: when a reused
/// keep-alive connection closes without an answer, libcurl retries the request on a
/// fresh connection, and for a POST that retry goes out without its body and waits for
/// the timeout. Only the short race of a server closing an idle connection as it is
/// reused exposes this; `LoopbackHTTPServer` closes its connections after every answer.
///
/// The request's timeout bounds the whole exchange and is enforced here, not left to
/// `URLRequest.timeoutInterval`: that is an idle timeout on Apple platforms, and
/// FoundationNetworking truncates it to whole seconds (`Int(timeoutInterval) * 1000`
/// milliseconds), so a 500 ms timeout there fired at once. Foundation's own timer is set
/// past the deadline, as a backstop.
public final class URLSessionHTTPClient: HTTPClient {
    private let session: URLSession
    private let maxResponseBytes: Int
    private let allowInsecureHTTP: Bool

    /// Creates a client.
    /// - Parameters:
    ///   - maxResponseBytes: a larger body fails with ``HTTPError/responseTooLarge(limit:)``
    ///     (checked once the body has arrived; the request timeout bounds the transfer itself).
    ///   - allowInsecureHTTP: allow `http` as well as `https`, to loopback hosts only
    ///     (`localhost`, `127.0.0.0/8`, `::1`): local reference parties and tests. `http`
    ///     to any other host still fails with ``HTTPError/unsupportedScheme(_:)``.
    public init(maxResponseBytes: Int = 4 * 1024 * 1024, allowInsecureHTTP: Bool = false) {
        let configuration = URLSessionConfiguration.ephemeral
        configuration.httpCookieStorage = nil
        configuration.httpShouldSetCookies = false
        configuration.urlCache = nil
        configuration.requestCachePolicy = .reloadIgnoringLocalCacheData
        self.session = URLSession(configuration: configuration, delegate: NoRedirects(), delegateQueue: nil)
        self.maxResponseBytes = maxResponseBytes
        self.allowInsecureHTTP = allowInsecureHTTP
    }

    deinit { session.finishTasksAndInvalidate() }

    /// Sends the request with `URLSession`, enforcing its timeout and the size limit.
    public func send(_ request: HTTPRequest) async throws(HTTPError) -> HTTPResponse {
        let scheme = request.url.scheme?.lowercased() ?? ""
        guard scheme == "https" || (scheme == "http" && allowInsecureHTTP && LoopbackHost.contains(request.url)) else {
            throw .unsupportedScheme(scheme)
        }
        var urlRequest = URLRequest(url: request.url)
        urlRequest.httpMethod = request.method.rawValue
        urlRequest.timeoutInterval = Self.backstopInterval(for: request.timeout)
        for field in request.headers { urlRequest.addValue(field.value, forHTTPHeaderField: field.name) }
        if let body = request.body { urlRequest.httpBody = Data(body) }

        let box = TaskBox()
        // The deadline: when it passes first, the task is cancelled and the exchange is timedOut.
        let deadline = Task { [box, timeout = request.timeout] in
            guard (try? await Task.sleep(for: timeout)) != nil else { return }
            box.expire()
        }
        defer { deadline.cancel() }
        let outcome: Result<(Data, URLResponse), HTTPError> = await withTaskCancellationHandler {
            await withCheckedContinuation { continuation in
                let task = session.dataTask(with: urlRequest) { data, response, error in
                    if let error {
                        continuation.resume(returning: .failure(box.hasExpired ? .timedOut : Self.map(error)))
                    } else if let response {
                        continuation.resume(returning: .success((data ?? Data(), response)))
                    } else {
                        continuation.resume(returning: .failure(.transport(.networkConnectionLost)))
                    }
                }
                box.set(task)
                task.resume()
            }
        } onCancel: {
            box.cancel()
        }
        let (data, response) = try outcome.get()
        guard let http = response as? HTTPURLResponse else { throw .transport(.badServerResponse) }
        guard data.count <= maxResponseBytes else { throw .responseTooLarge(limit: maxResponseBytes) }
        var headers = HTTPHeaders()
        for (name, value) in http.allHeaderFields {
            headers.add(name: String(describing: name), value: String(describing: value))
        }
        return HTTPResponse(status: http.statusCode, headers: headers, body: [UInt8](data))
    }

    /// Foundation's own timeout: whole seconds past the deadline (never below one second,
    /// which FoundationNetworking would truncate to none), so that the deadline decides.
    static func backstopInterval(for timeout: Duration) -> TimeInterval {
        let seconds = timeout.timeInterval
        guard seconds.isFinite, seconds < 86_400 * 365 else { return 86_400 * 365 }
        return max(1, seconds.rounded(.up)) + 1
    }

    /// Maps a URL loading error to a typed value by its `URLError` code: the
    /// localized text of the error never leaves the client.
    private static func map(_ error: any Error) -> HTTPError {
        let nsError = error as NSError
        guard nsError.domain == NSURLErrorDomain else { return .transport(.other(code: nsError.code)) }
        switch nsError.code {
        case NSURLErrorTimedOut: return .timedOut
        case NSURLErrorCancelled: return .cancelled
        case NSURLErrorCannotFindHost, NSURLErrorDNSLookupFailed: return .transport(.cannotFindHost)
        case NSURLErrorCannotConnectToHost: return .transport(.cannotConnect)
        case NSURLErrorNotConnectedToInternet, NSURLErrorInternationalRoamingOff, NSURLErrorDataNotAllowed:
            return .transport(.notConnectedToInternet)
        case NSURLErrorNetworkConnectionLost: return .transport(.networkConnectionLost)
        case NSURLErrorSecureConnectionFailed, NSURLErrorServerCertificateHasBadDate, NSURLErrorServerCertificateUntrusted,
             NSURLErrorServerCertificateHasUnknownRoot, NSURLErrorServerCertificateNotYetValid,
             NSURLErrorClientCertificateRejected, NSURLErrorClientCertificateRequired:
            return .transport(.secureConnectionFailed)
        case NSURLErrorBadServerResponse, NSURLErrorCannotParseResponse, NSURLErrorZeroByteResource:
            return .transport(.badServerResponse)
        default: return .transport(.other(code: nsError.code))
        }
    }
}

/// Holds the one task of a request so that cancelling the Swift task, or the deadline
/// passing, cancels it (and only it), even when that happens before the task exists.
private final class TaskBox: @unchecked Sendable {
    private let lock = NSLock()
    private var task: URLSessionTask?
    private var cancelled = false
    private var expired = false

    func set(_ task: URLSessionTask) {
        lock.lock(); defer { lock.unlock() }
        self.task = task
        if cancelled { task.cancel() }
    }

    func cancel() {
        lock.lock(); defer { lock.unlock() }
        cancelled = true
        task?.cancel()
    }

    /// The deadline passed: the task is cancelled, and its failure reads as a timeout.
    func expire() {
        lock.lock(); defer { lock.unlock() }
        expired = true
        cancelled = true
        task?.cancel()
    }

    /// Whether the deadline passed before the exchange ended.
    var hasExpired: Bool {
        lock.lock(); defer { lock.unlock() }
        return expired
    }
}

private final class NoRedirects: NSObject, URLSessionTaskDelegate, @unchecked Sendable {
    func urlSession(_ session: URLSession, task: URLSessionTask, willPerformHTTPRedirection response: HTTPURLResponse,
                    newRequest request: URLRequest, completionHandler: @escaping (URLRequest?) -> Void) {
        completionHandler(nil)
    }
}
