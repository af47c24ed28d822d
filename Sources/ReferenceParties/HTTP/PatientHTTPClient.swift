import WalletRuntime

/// The HTTP client of the tests that talk to the reference parties over loopback: a
/// `URLSessionHTTPClient` (http allowed to loopback hosts) whose every request waits at
/// least `minimumTimeout` (10 minutes by default) before it times out.
///
/// A request's timeout in these tests only guards against a hang: on a loaded machine
/// (a sanitizer run beside a build, every suite in parallel on two cores) a handler can
/// wait tens of seconds for a thread, and a product-sized timeout would turn that wait
/// into a failure of the behaviour under test. Timeouts that a test is about are tested
/// in-process on a manual clock instead. A helper of this package's tests, not API.
package struct PatientHTTPClient: HTTPClient {
    private let base: URLSessionHTTPClient
    private let minimumTimeout: Duration

    /// A client over URLSession whose requests wait at least `minimumTimeout`.
    package init(minimumTimeout: Duration = .seconds(600)) {
        base = URLSessionHTTPClient(allowInsecureHTTP: true)
        self.minimumTimeout = minimumTimeout
    }

    /// Sends `request` with its timeout raised to at least the minimum.
    package func send(_ request: HTTPRequest) async throws(HTTPError) -> HTTPResponse {
        var request = request
        request.timeout = max(request.timeout, minimumTimeout)
        return try await base.send(request)
    }
}
