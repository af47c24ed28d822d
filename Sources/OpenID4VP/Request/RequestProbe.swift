import Foundation
import WalletRuntime

/// The request side of a presentation run on hostile input, without a store or a network:
/// the entry of the libFuzzer target `Fuzz/Targets/FuzzOpenID4VP` (DESIGN: every parser has
/// a fuzz target, and that package sees only public symbols). Not API, hence
/// `@_spi(Fuzzing)`.
///
/// It drives the sans-IO core (`PresentationFlow`) as `PresentationSession` does, with
/// fixed answers to its effects: the request object a request URI returns, an empty
/// credential store, and a verifier that accepts the decline. Everything the wallet reads
/// before consent runs: the invocation URI, the request object (JWS header, `typ`,
/// signature and x5c, claims), the client identifier, the Authorization Request parameters,
/// `dcql_query`, `client_metadata`, `transaction_data`, the DC API request object and its
/// `expected_origins`.
@_spi(Fuzzing)
public enum RequestProbe {
    /// When the probe checks requests (request object `exp`, `iat`, certificates).
    public static let now = Date(timeIntervalSince1970: 1_750_000_000)
    /// The `wallet_nonce` the probe sends with `request_uri_method=post`.
    public static let walletNonce = "probe-wallet-nonce"

    /// Resolves an authorization request (`openid4vp://` or `https://` URI, or a bare
    /// request URI); a request URI answers with `requestObject` (404 without one).
    public static func resolve(uri: String, requestObject: String? = nil,
                               config: PresentationConfig = PresentationConfig(allowHTTP: true)) -> PresentationState {
        run(.uri(uri), requestObject: requestObject, config: config)
    }

    /// Resolves a request object as a bare request URI returns it.
    public static func resolve(requestObject: String,
                               config: PresentationConfig = PresentationConfig(allowHTTP: true)) -> PresentationState {
        run(.uri("https://verifier.example/request"), requestObject: requestObject, config: config)
    }

    /// Resolves a Digital Credentials API request object (JSON text) called from `origin`.
    public static func resolve(dcApiRequest: String, origin: String,
                               config: PresentationConfig = PresentationConfig(allowHTTP: true)) -> PresentationState {
        run(.dcApi(requestObject: dcApiRequest, origin: origin), requestObject: nil, config: config)
    }

    private static func run(_ invocation: PresentationFlow.Invocation, requestObject: String?,
                            config: PresentationConfig) -> PresentationState {
        var flow = PresentationFlow(invocation: invocation, config: config, walletNonce: walletNonce)
        var effects = flow.handle(.start(now: now))
        // A request takes at most fetch, load, decline, send: a few steps, each answered once.
        for _ in 0..<8 {
            guard let effect = effects.first else { break }
            switch effect {
            case .fetchRequestObject:
                let response = requestObject.map {
                    HTTPResponse(status: 200, headers: ["Content-Type": "application/oauth-authz-req+jwt"], body: Array($0.utf8))
                } ?? HTTPResponse(status: 404)
                effects = flow.handle(.requestObjectFetched(response, now: now))
            case .loadCredentials:
                effects = flow.handle(.credentialsLoaded([]))
                if case .requestResolved = flow.state { effects = flow.handle(.decline) }
            case .send:
                effects = flow.handle(.delivered(HTTPResponse(status: 200)))
            case .present, .encrypt:
                // Only after consent, which the probe never gives.
                return flow.state
            }
        }
        return flow.state
    }
}
