import Foundation
import WalletCrypto
import WalletEncoding
import WalletRuntime
import WalletStorage

/// The OpenID4VP 1.0 presentation client: starts sessions for remote requests
/// (`openid4vp://` links, QR codes, request URIs) and Digital Credentials API requests,
/// answering from a credential store.
///
/// ```swift
/// let client = Openid4VpClient(store: store)
/// let session = client.start(requestUri)
/// for await state in session.states {
///     if case let .requestResolved(request) = state { session.respond(.auto(request)) }
///     if state.isTerminal { break }
/// }
/// ```
public struct Openid4VpClient: Sendable {
    /// The trust and response settings.
    public let config: PresentationConfig
    private let environment: PresentationEnvironment
    private let random: any RandomSource

    /// A client answering from `store`.
    /// - Parameters:
    ///   - httpClient: the network seam; by default `URLSession`, with `http` allowed when
    ///     `config.allowHTTP` is set (the request checks keep it to loopback hosts).
    ///   - clock: the source of "now" for request validity and KB-JWT `iat`.
    ///   - random: the source of `wallet_nonce` values.
    ///   - unlock: unlock data for a credential's holder key, asked when the key is used.
    public init(store: CredentialStore, config: PresentationConfig = PresentationConfig(), httpClient: (any HTTPClient)? = nil,
                clock: any WalletClock = SystemClock(), random: any RandomSource = SystemRandom(),
                unlock: (@Sendable (CredentialId) async -> (any KeyUnlockData)?)? = nil) {
        self.config = config
        self.random = random
        self.environment = PresentationEnvironment(
            store: store, http: httpClient ?? URLSessionHTTPClient(allowInsecureHTTP: config.allowHTTP), clock: clock,
            unlock: unlock)
    }

    /// Starts a session for an `openid4vp://` or `https://` authorization request, or a
    /// request URI captured from a QR code.
    public func start(_ uri: String) -> PresentationSession {
        begin(.uri(uri))
    }

    /// Starts a session for a Digital Credentials API request: the request object the
    /// platform hands over (`{"protocol": "openid4vp-v1-unsigned" | "openid4vp-v1-signed",
    /// "data": {...}}`, as JSON text) and the caller's origin it asserts. No HTTP is
    /// performed; the response is `.completed(_, dcApiResponse)`.
    public func startDcApi(_ requestObject: String, origin: String) -> PresentationSession {
        begin(.dcApi(requestObject: requestObject, origin: origin))
    }

    private func begin(_ invocation: PresentationFlow.Invocation) -> PresentationSession {
        // 128 bits for wallet_nonce (§5.10). Without randomness the wallet fetches the
        // request object with GET, as a wallet without request_uri_method=post does (§5).
        let nonce = (try? random.bytes(count: 16)).map { Base64URL.encode($0) }
        let session = PresentationSession(flow: PresentationFlow(invocation: invocation, config: config, walletNonce: nonce),
                                          environment: environment)
        session.begin()
        return session
    }

    /// Tells the verifier of a resolved request that the wallet will not answer, with an
    /// error code of OpenID4VP 1.0 §8.5 (a session's `decline` sends `access_denied`
    /// itself). Over the Digital Credentials API nothing is sent: the result carries the
    /// error data object for the app to return, if it chooses to (App. A.4 warns that
    /// errors there can reveal what the wallet holds).
    public func reportError(_ request: PresentationRequest, _ code: VpErrorCode,
                            description: String? = nil) async throws(PresentationError) -> ErrorReport {
        guard let post = PresentationFlow.errorResponse(request.resolved, code: code, description: description,
                                                        timeout: config.requestTimeout) else {
            return .dcApiResponse(JSONValue.object(["error": .string(code.rawValue)]).serialized)
        }
        let response: HTTPResponse
        do { response = try await environment.http.send(post) } catch { throw .unexpected(.transport(error)) }
        return .sent(redirectUri: try PresentationFlow.outcome(of: response))
    }
}

/// What reporting an error to a verifier did.
public enum ErrorReport: Sendable, Equatable {
    /// The error went to the verifier's response URI, which may name where to send the user agent.
    case sent(redirectUri: URL?)
    /// A DC API request: the error data object (JSON) the app may hand back to the platform.
    case dcApiResponse(String)
}
