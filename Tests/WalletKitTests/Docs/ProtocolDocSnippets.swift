import Foundation
import OpenID4VCI
import OpenID4VP
import Testing
import WalletCrypto
import WalletRuntime
import WalletStorage

/// The examples of docs/issuance.md, docs/presentation.md and docs/dc-api.md: the
/// protocol clients used without the facade. They reach real networks through
/// `URLSession`, so they are compiled here; the same calls run end to end in
/// `OpenID4VCITests`, `OpenID4VPTests` and, through `Wallet`, in `WalletKitTests`.
@Suite("docs/issuance.md, presentation.md, dc-api.md examples")
struct ProtocolDocSnippets {
    static func issuance(anchors: [X509Certificate], provider: any KeyAttestationProvider, area: any SecureArea,
                         store: CredentialStore, scannedText: String) async throws {
        func askUser(_ spec: TxCodeSpec?) async -> String { "" }
        func openBrowser(_ url: String) {}
        func show(_ ids: [CredentialId]) {}
        func schedule(_ id: CredentialId, after retryAfter: Date?) {}
        func report(_ error: IssuanceError) {}
        // snippet: docs/issuance.md#1
        let client = Openid4VciClient(
            http: URLSessionHTTPClient(), rng: SystemRandom(), clock: SystemClock(),
            credentialEncryption: .whenRequired,
            config: IssuanceConfig(issuerTrustAnchors: anchors,                 // empty: no chain required
                                   keyAttestationProvider: provider),           // when issuers require attestations
            storage: IssuanceStorage(secureArea: area, store: store))           // nil: in memory

        let offer = try await client.resolveOffer(scannedText)                  // deep link, QR text or JSON
        let session = client.start(.fromOffer(offer, configurationId: offer.credentialConfigurationIds[0],
                                              policy: CredentialPolicy(batchSize: 5, use: .oneTime)))
        for await state in session.states {
            switch state {
            case .txCodeRequired(let spec): session.submitTxCode(await askUser(spec))
            case .authorizationRequired(let url): openBrowser(url)              // then session.completeAuthorization(redirect)
            case .completed(let result): show(result.issued)
            case .deferred(let id, let retryAfter): schedule(id, after: retryAfter)   // client.resumeDeferred(id)
            case .failed(let error): report(error)
            default: break
            }
            if state.isTerminal { break }
        }
        // end snippet
    }

    static func presentation(store: CredentialStore, anchors: [[UInt8]], uriFromQRCode: String, userAgrees: Bool,
                             show: (VerifierIdentity, [QueryPresentation]) -> Void, open: (URL?) -> Void,
                             report: (PresentationError) -> Void) async {
                                 // snippet: docs/presentation.md#1
                                 let client = Openid4VpClient(store: store, config: PresentationConfig(readerAnchorsDer: anchors))
                                 let session = client.start(uriFromQRCode)            // openid4vp://…, https://…?request_uri=…, or a request URI
                                 for await state in session.states {                  // the first value is the current state
                                     switch state {
                                     case .requestResolved(let request):
                                         show(request.verifier, request.queries)       // who asks, what each credential would reveal
                                         if userAgrees { session.respond(.auto(request)) } else { session.decline() }
                                     case .completed(let redirectUri, _): open(redirectUri)
                                     case .declined(let redirectUri): open(redirectUri)
                                     case .failed(let error): report(error)
                                     default: break
                                     }
                                     if state.isTerminal { break }
                                 }
                                 // end snippet
    }

    struct Platform { func finish(with response: String) {} }

    static func dcApi(client: Openid4VpClient, requestObject: String, origin: String, show: (PresentationRequest) -> Void,
                      platform: Platform) async {
                          // snippet: docs/dc-api.md#1
                          // requestObject: what the platform handed over, {"protocol": ..., "data": {...}} as JSON text
                          // origin: the caller's origin as the platform asserts it, e.g. "https://shop.example"
                          let session = client.startDcApi(requestObject, origin: origin)
                          for await state in session.states {
                              if case .requestResolved(let request) = state {
                                  show(request)                                  // request.origin is the caller
                                  session.respond(.auto(request))                // or decline()
                              }
                              if case .completed(_, let response?) = state { platform.finish(with: response) }  // JSON text
                              if state.isTerminal { break }
                          }
                          // end snippet
    }

    @Test("the examples compile against the clients' API")
    func compiled() {
        _ = (Self.issuance, Self.presentation, Self.dcApi)
    }
}
