import Foundation
import WalletRuntime

/// The verifier is a handler: serve it in-process (`InProcessHTTPClient(handler: verifier)`)
/// or on loopback (`LoopbackHTTPServer(handler: verifier)`).
extension ReferenceVerifier: HTTPHandler {}

/// A reference verifier served on a free loopback port, for end-to-end tests: the server
/// starts first, then the verifier is made for `http://<host>:<port>` (its reader
/// certificate names `host`), and every request is forwarded to it.
public final class LoopbackVerifier: Sendable {
    /// The verifier.
    public let verifier: ReferenceVerifier
    /// The server (127.0.0.1, the port it was given or a free one).
    public let server: LoopbackHTTPServer

    /// Starts a server on `port` (0: a free one) and a verifier configured by `configure`
    /// for the base URL `http://<host>:<port>`.
    public init(host: String = "localhost", port: UInt16 = 0, clock: any WalletClock = SystemClock(),
                configure: (URL) -> VerifierConfiguration) throws {
        let target = LockedBox<ReferenceVerifier?>(nil)
        let server = try LoopbackHTTPServer(handler: AnyHTTPHandler { request in
            guard let verifier = target.withLock({ $0 }) else {
                return HTTPResponse(status: 503, headers: ["Retry-After": "1"])
            }
            return await verifier.respond(to: request)
        }, port: port)
        var components = URLComponents()
        components.scheme = "http"
        components.host = host
        components.port = Int(server.port)
        guard let baseURL = components.url else {
            server.stop()
            throw VerifierError.invalidBaseURL(host)
        }
        let verifier = try ReferenceVerifier(configuration: configure(baseURL), clock: clock)
        target.withLock { $0 = verifier }
        self.verifier = verifier
        self.server = server
    }

    /// Stops the server (also on deinit of the server).
    public func stop() { server.stop() }
}
