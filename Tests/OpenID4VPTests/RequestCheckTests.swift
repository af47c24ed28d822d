import Foundation
import JOSE
@testable import OpenID4VP
import Testing
import WalletCrypto
import WalletEncoding
import WalletRuntime

/// Reader trust and request checks (issue 14 acceptance 2): each bad request fails
/// before consent, and nothing is sent to the verifier's response URI.
@Suite("Request checks")
struct RequestCheckTests {
    typealias Remote = RemotePresentationTests

    /// Runs a session to its end and returns every state it published.
    static func run(_ session: PresentationSession) async throws -> [PresentationState] {
        try await withThrowingTaskGroup(of: [PresentationState].self) { group in
            group.addTask {
                var states: [PresentationState] = []
                for await state in session.states {
                    states.append(state)
                    if case .requestResolved = state { session.decline() }
                }
                return states
            }
            group.addTask {
                try await Task.sleep(for: .seconds(120))
                throw VPTestSupport.Failure(description: "hang: the session did not end in 120 s")
            }
            let states = try await group.next() ?? []
            group.cancelAll()
            return states
        }
    }

    /// Starts `uri`, expects `.failed(expected)` without ever resolving, and nothing sent
    /// to the response URI.
    static func expectRefused(_ uri: String, _ expected: PresentationError, anchors: [X509Certificate] = [],
                              http: RecordingHTTPClient = Remote.acceptingVerifier(),
                              sourceLocation: SourceLocation = #_sourceLocation) async throws {
        let wallet = try await TestWallet.make()
        try await wallet.addSdJwt(id: "pid-1")
        let states = try await run(Remote.client(wallet, http: http, anchors: anchors).start(uri))
        #expect(states.last == .failed(expected), sourceLocation: sourceLocation)
        #expect(!states.contains { $0.request != nil }, "resolved before failing", sourceLocation: sourceLocation)
        #expect(!http.requests.contains { $0.url.absoluteString == Remote.responseUri }, "sent to the verifier",
                sourceLocation: sourceLocation)
    }

    static func byValue(_ reader: TestReader, clientId: String? = nil, payload: JSONObject? = nil, type: String? = "oauth-authz-req+jwt",
                        signer: (any Signer)? = nil) async throws -> String {
        let id = clientId ?? reader.sanDnsClientId
        return Remote.requestURI(clientId: id, request: try await reader.sign(payload ?? Remote.payload(clientId: id), type: type,
                                                                             signer: signer))
    }

    // MARK: Reader trust → verifierNotTrusted

    @Test("a chain to an anchor the wallet does not trust is verifierNotTrusted")
    func untrustedChain() async throws {
        let reader = try TestReader.make(), stranger = try TestReader.make()
        try await Self.expectRefused(try await Self.byValue(reader), .verifierNotTrusted(.unknownAnchor), anchors: [stranger.root])
    }

    @Test("reader anchors configured but none parses: a signed request is verifierNotTrusted, never resolved as untrusted")
    func unparsableAnchors() async throws {
        let reader = try TestReader.make()
        let wallet = try await TestWallet.make()
        try await wallet.addSdJwt(id: "pid-1")
        let http = Remote.acceptingVerifier()
        let client = Openid4VpClient(store: wallet.store, config: PresentationConfig(readerAnchorsDer: [Array("not DER".utf8)]),
                                     httpClient: http, clock: ManualClock(testNow))
        let states = try await Self.run(client.start(try await Self.byValue(reader)))
        #expect(states.last == .failed(.verifierNotTrusted(.noTrustAnchors)))
        #expect(!states.contains { $0.request != nil })
    }

    @Test("a request object not signed by the x5c leaf's key is verifierNotTrusted (invalidRequest without anchors)")
    func badSignature() async throws {
        let reader = try TestReader.make()
        let forger = SoftwareSigner(try ECPrivateKey.generate(curve: .p256))
        let uri = try await Self.byValue(reader, signer: forger)
        try await Self.expectRefused(uri, .verifierNotTrusted(.signatureInvalid), anchors: [reader.root])
        try await Self.expectRefused(uri, .invalidRequest(.invalidSignature(.invalidSignature)))
    }

    @Test("x509_san_dns naming a host the leaf has no dNSName for is verifierNotTrusted")
    func sanMismatch() async throws {
        let reader = try TestReader.make()
        let clientId = "x509_san_dns:other.example"
        var payload = Remote.payload(clientId: clientId)
        payload["response_uri"] = "https://other.example/post"
        let uri = try await Self.byValue(reader, clientId: clientId, payload: payload)
        try await Self.expectRefused(uri, .verifierNotTrusted(.subjectAlternativeNameMismatch(expected: "other.example")),
                                     anchors: [reader.root])
        try await Self.expectRefused(uri, .invalidRequest(.clientIdNotBoundToCertificate))
    }

    @Test("x509_hash naming another certificate's hash is verifierNotTrusted")
    func hashMismatch() async throws {
        let reader = try TestReader.make(), other = try TestReader.make()
        let uri = try await Self.byValue(reader, clientId: other.hashClientId)
        try await Self.expectRefused(uri, .verifierNotTrusted(.certificateHashMismatch), anchors: [reader.root])
        try await Self.expectRefused(uri, .invalidRequest(.clientIdNotBoundToCertificate))
    }

    @Test("an expired reader certificate, or none at all, is verifierNotTrusted")
    func certificateProblems() async throws {
        let expired = try TestReader.make(leafNotAfter: testNow.addingTimeInterval(-60))
        try await Self.expectRefused(try await Self.byValue(expired), .verifierNotTrusted(.expired(depth: 0)), anchors: [expired.root])
        let reader = try TestReader.make()
        let id = reader.sanDnsClientId
        let bare = try await JWS.sign(payload: JSONValue.object(Remote.payload(clientId: id)).serializedBytes,
                                      signer: SoftwareSigner(reader.leafKey), type: "oauth-authz-req+jwt").compactSerialization
        try await Self.expectRefused(Remote.requestURI(clientId: id, request: bare), .verifierNotTrusted(.missingCertificate),
                                     anchors: [reader.root])
        try await Self.expectRefused(Remote.requestURI(clientId: id, request: bare), .invalidRequest(.missingCertificateChain))
    }

    // MARK: Request checks → invalidRequest

    @Test("a request object whose typ is not oauth-authz-req+jwt is not processed")
    func badType() async throws {
        let reader = try TestReader.make()
        try await Self.expectRefused(try await Self.byValue(reader, type: "JWT"), .invalidRequest(.requestObjectType("JWT")),
                                     anchors: [reader.root])
        try await Self.expectRefused(try await Self.byValue(reader, type: nil), .invalidRequest(.requestObjectType(nil)),
                                     anchors: [reader.root])
    }

    @Test("a request object whose client_id differs from the request's, prefix included, is refused")
    func clientIdMismatch() async throws {
        let reader = try TestReader.make()
        let object = try await reader.sign(Remote.payload(clientId: reader.hashClientId))
        try await Self.expectRefused(Remote.requestURI(clientId: reader.sanDnsClientId, request: object),
                                     .invalidRequest(.clientIdMismatch(expected: reader.sanDnsClientId, actual: reader.hashClientId)),
                                     anchors: [reader.root])
        let unprefixed = try await reader.sign(Remote.payload(clientId: "verifier.example"))
        try await Self.expectRefused(Remote.requestURI(clientId: reader.sanDnsClientId, request: unprefixed),
                                     .invalidRequest(.clientIdMismatch(expected: reader.sanDnsClientId, actual: "verifier.example")))
    }

    static func postFlow(_ reader: TestReader, echo: @escaping @Sendable (String?) -> String?) async throws -> (String, RecordingHTTPClient) {
        let requestUri = "https://verifier.example/request/1"
        let signer = SoftwareSigner(reader.leafKey), leaf = reader.leaf, clientId = reader.sanDnsClientId
        let http = RecordingHTTPClient { request in
            guard request.url.absoluteString == requestUri else { return .json([:]) }
            var payload = Remote.payload(clientId: clientId)
            payload["wallet_nonce"] = echo(request.form["wallet_nonce"]).map(JSONValue.string)
            let jws = try? await JWS.sign(payload: JSONValue.object(payload).serializedBytes, signer: signer,
                                          type: "oauth-authz-req+jwt", x5c: [leaf])
            return .jwt(jws?.compactSerialization ?? "")
        }
        let uri = "openid4vp://?" + FormURLEncoding.encode([
            ("client_id", clientId), ("request_uri", requestUri), ("request_uri_method", "post"),
        ])
        return (uri, http)
    }

    @Test("with request_uri_method=post a missing or different wallet_nonce terminates the request")
    func walletNonce() async throws {
        let reader = try TestReader.make()
        let (missingUri, missingHTTP) = try await Self.postFlow(reader) { _ in nil }
        let wallet = try await TestWallet.make()
        let missing = try await Self.run(Remote.client(wallet, http: missingHTTP, anchors: [reader.root]).start(missingUri))
        guard case .failed(.invalidRequest(.walletNonceMismatch(let expected, nil)))? = missing.last else {
            Issue.record("expected walletNonceMismatch, got \(String(describing: missing.last))")
            return
        }
        #expect(missingHTTP.requests.count == 1 && missingHTTP.requests[0].form["wallet_nonce"] == expected)
        let (wrongUri, wrongHTTP) = try await Self.postFlow(reader) { _ in "qPmxiNFCR3QTm19POc8u" }
        let wrong = try await Self.run(Remote.client(wallet, http: wrongHTTP, anchors: [reader.root]).start(wrongUri))
        guard case .failed(.invalidRequest(.walletNonceMismatch(let sent, "qPmxiNFCR3QTm19POc8u")))? = wrong.last else {
            Issue.record("expected walletNonceMismatch, got \(String(describing: wrong.last))")
            return
        }
        #expect(wrongHTTP.requests.count == 1 && wrongHTTP.requests[0].form["wallet_nonce"] == sent)
        #expect(!wrong.contains { $0.request != nil } && !missing.contains { $0.request != nil })
    }

    @Test("an expired request object, or one issued in the future, is refused")
    func expired() async throws {
        let reader = try TestReader.make()
        var payload = Remote.payload(clientId: reader.sanDnsClientId)
        payload["exp"] = .integer(Int64(testNow.timeIntervalSince1970) - 600)
        try await Self.expectRefused(try await Self.byValue(reader, payload: payload), .invalidRequest(.requestExpired(
            exp: Date(timeIntervalSince1970: testNow.timeIntervalSince1970 - 600), now: testNow)), anchors: [reader.root])
        var future = Remote.payload(clientId: reader.sanDnsClientId)
        future["iat"] = .integer(Int64(testNow.timeIntervalSince1970) + 3600)
        try await Self.expectRefused(try await Self.byValue(reader, payload: future), .invalidRequest(.requestNotYetValid(
            Date(timeIntervalSince1970: testNow.timeIntervalSince1970 + 3600), now: testNow)), anchors: [reader.root])
    }

    @Test("a response_uri whose host is not the x509_san_dns name is refused")
    func responseUriHost() async throws {
        let reader = try TestReader.make()
        var payload = Remote.payload(clientId: reader.sanDnsClientId)
        payload["response_uri"] = "https://attacker.example/post"
        try await Self.expectRefused(try await Self.byValue(reader, payload: payload),
                                     .invalidRequest(.responseUriHostMismatch(expected: "verifier.example", actual: "attacker.example")),
                                     anchors: [reader.root])
    }

    static let otherRuleCases: [(JSONObject, InvalidRequestReason)] = [
        (["aud": "https://someone-else.example"] as JSONObject, InvalidRequestReason.audienceMismatch(["https://someone-else.example"])),
        (["nonce": "has space"], .invalidNonce),
        (["nonce": nil], .invalidNonce),
        (["response_type": "code"], .unsupportedResponseType("code")),
        (["response_mode": "fragment"], .unsupportedResponseMode("fragment")),
        (["response_mode": "dc_api"], .unsupportedResponseMode("dc_api")),
        (["response_mode": "direct_post.jwt"], .noUsableEncryptionKey),
        (["redirect_uri": "https://verifier.example/cb"], .redirectUriWithDirectPost),
        (["response_uri": nil], .missingResponseUri),
        (["response_uri": "http://verifier.example/post"], .insecureURL(parameter: "response_uri")),
        (["scope": "com.example.pid"], .dcqlQueryAndScope),
        (["dcql_query": nil, "scope": "com.example.pid"], .scopeNotSupported),
        (["dcql_query": ["credentials": []]], .invalidDcqlQuery(.emptyArray("credentials"))),
        (["state": "a b"], .invalidState),
        (["transaction_data": ["%%%"]], .invalidTransactionData(.notBase64URLJSON(index: 0))),
        // {"type":"t","credential_ids":["pid"],"transaction_data_hashes_alg":["md5"]}
        (["transaction_data": ["eyJ0eXBlIjoidCIsImNyZWRlbnRpYWxfaWRzIjpbInBpZCJdLCJ0cmFuc2FjdGlvbl9kYXRhX2hhc2hlc19hbGciOlsibWQ1Il19"]],
         .invalidTransactionData(.unsupportedHashAlgorithm(["md5"]))),
        // Two entries for the one SD-JWT query whose hashes have none in common: one KB-JWT cannot carry both (App. B.3.3).
        (["transaction_data": [.string(transaction(["sha-256"])), .string(transaction(["sha-384"]))]],
         .invalidTransactionData(.unsupportedHashAlgorithm(["sha-256", "sha-384"]))),
        (["transaction_data": [.string(transaction(nil)), .string(transaction(["sha-512", "md5"]))]],
         .invalidTransactionData(.unsupportedHashAlgorithm(["sha-256", "sha-512", "md5"]))),
    ]

    /// A transaction_data entry for the `pid` query, with these hashes (none: sha-256).
    static func transaction(_ algorithms: [String]?) -> String {
        var members: JSONObject = ["type": "t", "credential_ids": ["pid"]]
        if let algorithms { members["transaction_data_hashes_alg"] = .array(algorithms.map(JSONValue.string)) }
        return Base64URL.encode(JSONValue.object(members).serializedBytes)
    }

    @Test("other request rules", arguments: otherRuleCases)
    func otherRules(changes: JSONObject, reason: InvalidRequestReason) async throws {
        let reader = try TestReader.make()
        var payload = Remote.payload(clientId: reader.sanDnsClientId)
        for (name, value) in changes {
            if value.isNull { payload.removeValue(forKey: name) } else { payload[name] = value }
        }
        try await Self.expectRefused(try await Self.byValue(reader, payload: payload), .invalidRequest(reason), anchors: [reader.root])
    }

    @Test("x509 prefixes need a signed request; redirect_uri cannot sign; origin and pre-registered ids are refused")
    func prefixRules() async throws {
        let reader = try TestReader.make()
        let unsigned = "openid4vp://?" + FormURLEncoding.encode([
            ("client_id", reader.sanDnsClientId), ("response_type", "vp_token"), ("response_mode", "direct_post"),
            ("response_uri", Remote.responseUri), ("nonce", "n"), ("dcql_query", Remote.pidQuery().serialized),
        ])
        try await Self.expectRefused(unsigned, .invalidRequest(.unsignedRequestNotAllowed))
        let redirectId = "redirect_uri:" + Remote.responseUri
        try await Self.expectRefused(try await Self.byValue(reader, clientId: redirectId), .invalidRequest(.signedRequestNotAllowed))
        try await Self.expectRefused(try await Self.byValue(reader, clientId: "origin:https://verifier.example"),
                                     .invalidRequest(.unsupportedClientIdPrefix("origin")))
        try await Self.expectRefused(try await Self.byValue(reader, clientId: "verifier-123"),
                                     .invalidRequest(.unsupportedClientIdPrefix("pre-registered")))
        try await Self.expectRefused(try await Self.byValue(reader, clientId: "decentralized_identifier:did:example:123"),
                                     .invalidRequest(.unsupportedClientIdPrefix("decentralized_identifier")))
    }

    @Test("an encrypted request object, an unknown alg, a malformed client_id, request_uri_method alone, a redirect_uri client answering elsewhere: all refused")
    func moreRequestRules() async throws {
        let reader = try TestReader.make()
        let id = reader.sanDnsClientId
        try await Self.expectRefused(Remote.requestURI(clientId: id, request: "a.b.c.d.e"), .invalidRequest(.encryptedRequestObject))
        // {"alg":"XS512","typ":"oauth-authz-req+jwt"}
        let unknownAlgorithm = "eyJhbGciOiJYUzUxMiIsInR5cCI6Im9hdXRoLWF1dGh6LXJlcStqd3QifQ."
            + Base64URL.encode(JSONValue.object(Remote.payload(clientId: id)).serializedBytes) + ".c2ln"
        try await Self.expectRefused(Remote.requestURI(clientId: id, request: unknownAlgorithm),
                                     .invalidRequest(.unsupportedSignatureAlgorithm("XS512")))
        for malformed in ["x509_san_dns:not a host", "x509_hash:c2hvcnQ", "redirect_uri:not-a-url"] {
            try await Self.expectRefused(try await Self.byValue(reader, clientId: malformed), .invalidRequest(.malformedClientId))
        }
        try await Self.expectRefused("openid4vp://?" + FormURLEncoding.encode([("client_id", id), ("request_uri_method", "post")]),
                                     .invalidRequest(.requestUriMethodWithoutRequestUri))
        // A redirect_uri client's response goes to the client identifier's URL, nowhere else (§5.9.3).
        let elsewhere = "openid4vp://?" + FormURLEncoding.encode([
            ("client_id", "redirect_uri:" + Remote.responseUri), ("response_type", "vp_token"), ("response_mode", "direct_post"),
            ("response_uri", "https://verifier.example/other"), ("nonce", "n"), ("dcql_query", Remote.pidQuery().serialized),
        ])
        try await Self.expectRefused(elsewhere, .invalidRequest(.responseUriNotClientId))
    }

    @Test("request URI problems: an unknown method, an error status, a redirect, an http URL")
    func requestUriRules() async throws {
        let reader = try TestReader.make()
        let id = reader.sanDnsClientId
        try await Self.expectRefused("openid4vp://?" + FormURLEncoding.encode([
            ("client_id", id), ("request_uri", "https://verifier.example/r"), ("request_uri_method", "PUT"),
        ]), .invalidRequest(.invalidRequestUriMethod("PUT")))
        #expect(PresentationError.invalidRequest(.invalidRequestUriMethod("PUT")).vpErrorCode == .invalidRequestUriMethod)
        for status in [404, 302] {
            let http = RecordingHTTPClient { _ in HTTPResponse(status: status, headers: ["Location": "https://elsewhere.example"]) }
            try await Self.expectRefused("openid4vp://?" + FormURLEncoding.encode([("client_id", id), ("request_uri", "https://verifier.example/r")]),
                                         .invalidRequest(.requestUriStatus(status)), http: http)
            #expect(http.requests.count == 1)
        }
        try await Self.expectRefused("openid4vp://?" + FormURLEncoding.encode([("client_id", id), ("request_uri", "http://verifier.example/r")]),
                                     .invalidRequest(.insecureURL(parameter: "request_uri")))
        try await Self.expectRefused("mailto:someone@example.com", .invalidRequest(.unsupportedURI))
        try await Self.expectRefused("openid4vp://?client_id=%zz", .invalidRequest(.malformedQuery))
    }

    @Test("a transport failure while fetching the request object is unexpected(transport)")
    func transportFailure() async throws {
        struct Failing: HTTPClient {
            func send(_ request: HTTPRequest) async throws(HTTPError) -> HTTPResponse { throw .timedOut }
        }
        let wallet = try await TestWallet.make()
        let client = Openid4VpClient(store: wallet.store, httpClient: Failing(), clock: ManualClock(testNow))
        let states = try await Self.run(client.start("https://verifier.example/request/1"))
        #expect(states.last == .failed(.unexpected(.transport(.timedOut))))
    }
}
