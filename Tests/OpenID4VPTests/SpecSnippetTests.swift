import Foundation
import OpenID4VP
import Testing
import WalletEncoding
import WalletStorage

/// The Swift snippets of ../shared/spec/presentation.txt, compiled against the real API
/// (issue 14 acceptance 5) and run against the scripted verifier. `wallet.presentation`
/// is the `Openid4VpClient` the WalletKit facade will expose under that name.
@Suite("Spec snippets (presentation.txt)")
struct SpecSnippetTests {
    struct Wallet { let presentation: Openid4VpClient }

    static func setUp() async throws -> (Wallet, String, RecordingHTTPClient) {
        let testWallet = try await TestWallet.make()
        try await testWallet.addSdJwt(id: "pid-1")
        let reader = try TestReader.make()
        let http = RemotePresentationTests.acceptingVerifier()
        let requestUri = RemotePresentationTests.requestURI(
            clientId: reader.sanDnsClientId,
            request: try await reader.sign(RemotePresentationTests.payload(clientId: reader.sanDnsClientId)))
        return (Wallet(presentation: RemotePresentationTests.client(testWallet, http: http)), requestUri, http)
    }

    @Test("remote: start, await RequestResolved, inspect, respond auto, await the terminal state")
    func remoteSnippets() async throws {
        let (wallet, requestUri, http) = try await Self.setUp()
        var lines: [String] = []

        // --- "Remote (URL / QR)"
        let session = wallet.presentation.start(requestUri)   // openid4vp://… or a request_uri

        var request: PresentationRequest?
        for await state in session.states {
            if case let .requestResolved(resolved) = state { request = resolved; break }
            if state.isTerminal { break }   // .failed before it ever resolved
        }
        guard let request else { Issue.record("did not resolve"); return }

        // --- "Inspect who is asking and what answers it"
        let v = request.verifier
        // v.clientId, v.clientIdScheme, v.commonName (from the certificate), v.trusted
        lines.append("\(v.commonName ?? v.clientId) · trusted=\(v.trusted)")

        for query in request.queries {
            // query.queryId, query.required
            for candidate in query.candidates {
                // candidate.credentialId — a stored credential that satisfies this query
                // candidate.disclosedPaths — the claims that would be revealed if chosen
                lines.append("\(query.queryId) \(query.required) \(candidate.credentialId) \(candidate.disclosedPaths)")
            }
        }

        _ = request.satisfiable        // true if every required query has at least one candidate
        _ = request.transactionData    // optional transaction data to confirm (e.g. payment), or nil

        // --- "Respond and await the result"
        session.respond(PresentationSelection.auto(request))   // or a user-chosen selection
        // session.decline() instead, if the user refuses

        var outcome: URL??
        for await state in session.states {
            switch state {
            case let .completed(redirectUri, _): _ = redirectUri; outcome = redirectUri   // optional redirect after success
            case let .declined(redirectUri): _ = redirectUri       // verifier told `access_denied`; follow its redirect
            case let .failed(error): _ = error
            default: break
            }
            if state.isTerminal { break }
        }

        #expect(lines == ["Test Verifier · trusted=false", #"pid true pid-1 [["family_name"], ["given_name"]]"#])
        #expect(outcome == .some(URL(string: "https://verifier.example/done#code=1")))
        #expect(http.requests.count == 1)
    }

    @Test("selection: the explicit map of query ids to chosen credentials")
    func selectionSnippet() async throws {
        let (wallet, requestUri, http) = try await Self.setUp()
        let session = wallet.presentation.start(requestUri)
        let request = try #require(try await waitFor(session, resolved: true).request)

        // --- "Selection: automatic or explicit"
        // Automatic: all candidates for a `multiple` query, first otherwise
        _ = PresentationSelection.auto(request)

        // Explicit: map each query to the chosen credential(s)
        var chosen: [String: [CredentialId]] = [:]
        for query in request.queries {
            chosen[query.queryId] = [query.candidates.first!.credentialId]
        }
        session.respond(PresentationSelection(chosen: chosen))

        #expect(try await waitFor(session).isTerminal)
        #expect(http.requests.count == 1)
    }

    @Test("DC API: startDcApi(requestObject, origin:), the dcApiResponse out of .completed")
    func dcApiSnippet() async throws {
        let testWallet = try await TestWallet.make()
        try await testWallet.addSdJwt(id: "pid-1")
        let wallet = Wallet(presentation: RemotePresentationTests.client(testWallet, http: RecordingHTTPClient { _ in .json([:]) }))
        let requestObject = DcApiTests.unsigned(DcApiTests.data(query: RemotePresentationTests.pidQuery()))
        let origin = DcApiTests.origin

        // --- "Digital Credentials API (browser)"
        let session = wallet.presentation.startDcApi(requestObject, origin: origin)
        // resolve → inspect → respond, exactly as above
        let request = try #require(try await waitFor(session, resolved: true).request)
        session.respond(.auto(request))
        var response: String?
        for await state in session.states {
            if case let .completed(_, dcApiResponse) = state { response = dcApiResponse; break }
            if state.isTerminal { break }
        }

        let data = try JSONValue.parseObject(try #require(response))
        #expect(data["vp_token"]?["pid"]?.arrayValue?.count == 1)
    }
}
