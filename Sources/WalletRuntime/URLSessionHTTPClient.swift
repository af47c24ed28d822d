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
/// The size limit holds while the body arrives: a declared `Content-Length` over it ends
/// the exchange when the head arrives, and a body that grows past it ends the exchange at
/// the chunk that crosses it, so a hostile server cannot make the wallet hold more than
/// the limit (plus the chunks already in flight) however long it streams. The one
/// exception is the body of a 3xx answer, which FoundationNetworking keeps to itself until
/// the redirect decision; the request's timeout bounds that transfer.
///
/// The request's timeout bounds the whole exchange and is enforced here, not left to
/// `URLRequest.timeoutInterval`: that is an idle timeout on Apple platforms, and
/// FoundationNetworking truncates it to whole seconds (`Int(timeoutInterval) * 1000`
/// milliseconds), so a 500 ms timeout there fired at once. Foundation's own timer is set
/// past the deadline, as a backstop.
public final class URLSessionHTTPClient: HTTPClient {
    private let session: URLSession
    private let transfers: TransferDelegate
    private let maxResponseBytes: Int
    private let allowInsecureHTTP: Bool

    /// Creates a client.
    /// - Parameters:
    ///   - maxResponseBytes: a larger body fails with ``HTTPError/responseTooLarge(limit:)``
    ///     as soon as its declared length or the bytes received so far pass the limit.
    ///   - allowInsecureHTTP: allow `http` as well as `https`, to loopback hosts only
    ///     (`localhost`, `127.0.0.0/8`, `::1`): local reference parties and tests. `http`
    ///     to any other host still fails with ``HTTPError/unsupportedScheme(_:)``.
    public init(maxResponseBytes: Int = 4 * 1024 * 1024, allowInsecureHTTP: Bool = false) {
        let configuration = URLSessionConfiguration.ephemeral
        configuration.httpCookieStorage = nil
        configuration.httpShouldSetCookies = false
        configuration.urlCache = nil
        configuration.requestCachePolicy = .reloadIgnoringLocalCacheData
        let transfers = TransferDelegate()
        self.transfers = transfers
        self.session = URLSession(configuration: configuration, delegate: transfers, delegateQueue: nil)
        self.maxResponseBytes = max(0, maxResponseBytes)
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

        let transfer = Transfer(limit: maxResponseBytes)
        // The deadline: when it passes first, the task is cancelled and the exchange is timedOut.
        let deadline = Task { [transfer, timeout = request.timeout] in
            guard (try? await Task.sleep(for: timeout)) != nil else { return }
            transfer.expire()
        }
        defer { deadline.cancel() }
        let outcome: Result<HTTPResponse, HTTPError> = await withTaskCancellationHandler {
            await withCheckedContinuation { continuation in
                transfer.await(continuation)
                let task = session.dataTask(with: urlRequest)
                transfers.register(transfer, for: task.taskIdentifier)
                transfer.set(task)
                task.resume()
            }
        } onCancel: {
            transfer.cancel()
        }
        return try outcome.get()
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
    fileprivate static func map(_ error: any Error) -> HTTPError {
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

/// One exchange: its task, the body received so far, and the continuation its outcome
/// resumes, once. Cancelling the Swift task, the deadline passing, or the body passing the
/// limit cancels the URL task (and only it), even when that happens before the task exists.
private final class Transfer: @unchecked Sendable {
    private let lock = NSLock()
    private let limit: Int
    private var task: URLSessionTask?
    private var continuation: CheckedContinuation<Result<HTTPResponse, HTTPError>, Never>?
    private var body = Data()
    private var cancelled = false
    private var expired = false
    private var tooLarge = false

    init(limit: Int) { self.limit = limit }

    func await(_ continuation: CheckedContinuation<Result<HTTPResponse, HTTPError>, Never>) {
        lock.lock(); defer { lock.unlock() }
        self.continuation = continuation
    }

    func set(_ task: URLSessionTask) {
        lock.lock(); defer { lock.unlock() }
        self.task = task
        if cancelled { task.cancel() }
    }

    func cancel() {
        lock.lock(); defer { lock.unlock() }
        cancelLocked()
    }

    /// The deadline passed: the task is cancelled, and its failure reads as a timeout.
    func expire() {
        lock.lock(); defer { lock.unlock() }
        expired = true
        cancelLocked()
    }

    /// The response head arrived: a declared length over the limit ends the exchange now.
    func receive(declaredLength: Int64) {
        lock.lock(); defer { lock.unlock() }
        if declaredLength > Int64(limit) { refuseLocked() }
    }

    /// A chunk of the body arrived: it is kept while the body stays within the limit.
    func receive(_ data: Data) {
        lock.lock(); defer { lock.unlock() }
        guard !tooLarge else { return }
        guard data.count <= limit - body.count else { return refuseLocked() }
        body.append(data)
    }

    /// The task ended, with `error` or with `response`: the continuation resumes with
    /// the outcome, the first time only.
    func complete(response: URLResponse?, error: (any Error)?) {
        lock.lock()
        guard let continuation else { lock.unlock(); return }
        self.continuation = nil
        let outcome: Result<HTTPResponse, HTTPError>
        if tooLarge {
            outcome = .failure(.responseTooLarge(limit: limit))
        } else if let error {
            outcome = .failure(expired ? .timedOut : URLSessionHTTPClient.map(error))
        } else if let http = response as? HTTPURLResponse {
            var headers = HTTPHeaders()
            for (name, value) in http.allHeaderFields {
                headers.add(name: String(describing: name), value: String(describing: value))
            }
            outcome = .success(HTTPResponse(status: http.statusCode, headers: headers, body: [UInt8](body)))
        } else {
            outcome = .failure(.transport(response == nil ? .networkConnectionLost : .badServerResponse))
        }
        body = Data()
        lock.unlock()
        continuation.resume(returning: outcome)
    }

    private func refuseLocked() {
        tooLarge = true
        body = Data()
        cancelLocked()
    }

    private func cancelLocked() {
        cancelled = true
        task?.cancel()
    }
}

/// The session's delegate: it routes each task's events to its ``Transfer`` and follows
/// no redirect, so that a driver sees every 3xx.
private final class TransferDelegate: NSObject, URLSessionDataDelegate, @unchecked Sendable {
    private let lock = NSLock()
    private var transfers: [Int: Transfer] = [:]

    func register(_ transfer: Transfer, for taskIdentifier: Int) {
        lock.lock(); defer { lock.unlock() }
        transfers[taskIdentifier] = transfer
    }

    private func transfer(for task: URLSessionTask, removing: Bool = false) -> Transfer? {
        lock.lock(); defer { lock.unlock() }
        return removing ? transfers.removeValue(forKey: task.taskIdentifier) : transfers[task.taskIdentifier]
    }

    func urlSession(_ session: URLSession, dataTask: URLSessionDataTask, didReceive response: URLResponse,
                    completionHandler: @escaping (URLSession.ResponseDisposition) -> Void) {
        transfer(for: dataTask)?.receive(declaredLength: response.expectedContentLength)
        completionHandler(.allow)
    }

    func urlSession(_ session: URLSession, dataTask: URLSessionDataTask, didReceive data: Data) {
        transfer(for: dataTask)?.receive(data)
    }

    func urlSession(_ session: URLSession, task: URLSessionTask, didCompleteWithError error: (any Error)?) {
        transfer(for: task, removing: true)?.complete(response: task.response, error: error)
    }

    func urlSession(_ session: URLSession, task: URLSessionTask, willPerformHTTPRedirection response: HTTPURLResponse,
                    newRequest request: URLRequest, completionHandler: @escaping (URLRequest?) -> Void) {
        completionHandler(nil)
    }
}
