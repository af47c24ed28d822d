import Foundation
import JOSE
@_spi(Fuzzing) @testable import OpenID4VP
import SDJWT
import Testing
import WalletCrypto
import WalletEncoding
import WalletRuntime
import WalletStorage

/// The sans-IO core on its own: inputs in, effects and states out, no store, no network.
@Suite("Presentation flow (sans-IO core)")
struct PresentationFlowTests {
    typealias Remote = RemotePresentationTests

    static func stored(_ id: String) async throws -> (TestWallet, StoredCredential) {
        let wallet = try await TestWallet.make()
        return (wallet, try await wallet.addSdJwt(id: id))
    }

    @Test("start → loadCredentials for the query's type; credentials → requestResolved; respond → present; made → send; delivered → completed")
    func happyPath() async throws {
        let (_, credential) = try await Self.stored("pid-1")
        let reader = try TestReader.make()
        let uri = Remote.requestURI(clientId: reader.sanDnsClientId, request: try await reader.sign(Remote.payload(clientId: reader.sanDnsClientId)))
        var flow = PresentationFlow(invocation: .uri(uri), config: PresentationConfig(readerAnchorsDer: [reader.root.derEncoded]),
                                    walletNonce: nil)
        #expect(flow.state == .resolvingRequest)

        let load = flow.handle(.start(now: testNow))
        #expect(load == [.loadCredentials([CredentialFilter(format: .sdJwtVc, type: TestWallet.pidType)])])
        #expect(flow.state == .resolvingRequest)

        #expect(flow.handle(.credentialsLoaded([credential])).isEmpty)
        let request = try #require(flow.state.request)
        #expect(request.verifier.trusted && request.queries[0].candidates.map(\.credentialId) == ["pid-1"])

        // A respond before the state allows it, or a second one, is ignored; only one job is made.
        let present = flow.handle(.respond(.auto(request), now: testNow))
        guard case .present(let jobs, let context)? = present.first, present.count == 1 else {
            Issue.record("expected one present effect, got \(present)")
            return
        }
        #expect(flow.state == .submitting)
        #expect(flow.handle(.respond(.auto(request), now: testNow)).isEmpty)
        #expect(jobs == [PresentationJob(queryId: "pid", credentialId: "pid-1", format: "dc+sd-jwt",
                                         disclosedPaths: [["family_name"], ["given_name"]], holderBound: true)])
        #expect(context.audience == reader.sanDnsClientId && context.nonce == Remote.nonce && context.issuedAt == testNow)

        let send = flow.handle(.presentationsMade(["presentation-text~"]))
        guard case .send(let post)? = send.first else {
            Issue.record("expected a send effect, got \(send)")
            return
        }
        #expect(post.url.absoluteString == Remote.responseUri)
        #expect(post.form["vp_token"] == #"{"pid":["presentation-text~"]}"#)
        #expect(post.form["state"] == "state-1")

        #expect(flow.handle(.delivered(.json(["redirect_uri": "https://verifier.example/next"]))).isEmpty)
        #expect(flow.state == .completed(redirectUri: URL(string: "https://verifier.example/next"), dcApiResponse: nil))
        // A terminal flow takes nothing more.
        #expect(flow.handle(.decline).isEmpty)
        #expect(flow.state.isTerminal)
    }

    @Test("many filters (past the one-by-one limit) load the same credentials, in the same order, as one lookup per filter")
    func manyFilters() async throws {
        let wallet = try await TestWallet.make()
        try await wallet.addSdJwt(id: "b", vct: "https://types.example/b")
        try await wallet.addMdl(id: "m")
        try await wallet.addSdJwt(id: "a", vct: "https://types.example/a")
        try await wallet.addSdJwt(id: "b2", vct: "https://types.example/b")
        try await wallet.addSdJwt(id: "z", vct: "https://types.example/z")
        let environment = PresentationEnvironment(store: wallet.store, http: URLSessionHTTPClient(), clock: ManualClock(testNow), unlock: nil)
        let vcts = (0..<20).map { "https://types.example/unknown-\($0)" } + ["https://types.example/a", "https://types.example/b"]
        let query = try DcqlQuery(json: """
            {"credentials": [{"id": "s", "format": "dc+sd-jwt", "meta": {"vct_values": [\(vcts.map { "\"\($0)\"" }.joined(separator: ","))]}},
                             {"id": "d", "format": "mso_mdoc", "meta": {"doctype_value": "\(TestWallet.mDL)"}},
                             {"id": "again", "format": "dc+sd-jwt", "meta": {"vct_values": ["https://types.example/b"]}}]}
            """)
        let filters = PresentationFlow.filters(for: query)
        #expect(filters.count == 23)
        #expect(filters.count > PresentationEnvironment.filtersPerScan)
        let grouped = try await environment.credentials(matching: filters).map(\.id)
        var oneByOne: [String] = []
        for filter in filters {
            for credential in try await wallet.store.list(filter) where !oneByOne.contains(credential.id) { oneByOne.append(credential.id) }
        }
        #expect(grouped == ["a", "b", "b2", "m"])
        #expect(grouped == oneByOne)
        let few = try await environment.credentials(matching: Array(filters.suffix(3))).map(\.id)
        #expect(few == ["a", "b", "b2", "m"])
    }

    @Test("the fuzzing probe drives the core to the end: a valid unsigned request resolves and is declined; bad ones fail typed")
    func requestProbe() throws {
        let payload = RemotePresentationTests.payload(clientId: "redirect_uri:" + RemotePresentationTests.responseUri,
                                                      extra: ["iat": .integer(Int64(RequestProbe.now.timeIntervalSince1970)),
                                                              "exp": .integer(Int64(RequestProbe.now.timeIntervalSince1970) + 300)])
        let unsigned = Base64URL.encode(Array(#"{"alg":"none","typ":"oauth-authz-req+jwt"}"#.utf8)) + "."
            + Base64URL.encode(JSONValue.object(payload).serializedBytes) + "."
        #expect(RequestProbe.resolve(requestObject: unsigned) == .declined(redirectUri: nil))
        #expect(RequestProbe.resolve(requestObject: "e30.e30.") == .failed(.invalidRequest(.requestObjectType(nil))))
        #expect(RequestProbe.resolve(uri: "https://verifier.example/request") == .failed(.invalidRequest(.requestUriStatus(404))))
        var data = payload
        for name in ["client_id", "response_uri", "state"] { data.removeValue(forKey: name) }
        data["response_mode"] = "dc_api"
        let dcApi = JSONValue.object(["protocol": "openid4vp-v1-unsigned", "data": .object(data)]).serialized
        #expect(RequestProbe.resolve(dcApiRequest: dcApi, origin: "https://verifier.example") == .declined(redirectUri: nil))
        #expect(RequestProbe.resolve(dcApiRequest: "{}", origin: "https://verifier.example") == .failed(.invalidRequest(.malformedDcApiRequest)))
    }

    @Test("a request URI's body is the request object with the white space at its ends dropped; inner white space, no text or a failure status is refused")
    func requestObjectBody() throws {
        func body(_ text: [UInt8], status: Int = 200) throws(PresentationError) -> String {
            try PresentationFlow.requestObject(in: HTTPResponse(status: status, body: text))
        }
        let compact = "eyJhbGciOiJFUzI1NiJ9.e30.c2ln"
        // A server's trailing line end (or one CR) leaves the signed bytes as they were.
        #expect(try body(Array(compact.utf8)) == compact)
        #expect(try body(Array((compact + "\r").utf8)) == compact)
        #expect(try body(Array((" \t" + compact + "\r\n").utf8)) == compact)
        #expect(throws: PresentationError.invalidRequest(.requestObjectMissing)) { try body(Array("eyJ.e30 .c2ln".utf8)) }
        #expect(throws: PresentationError.invalidRequest(.requestObjectMissing)) { try body(Array(" \r\n".utf8)) }
        #expect(throws: PresentationError.invalidRequest(.requestObjectMissing)) { try body([0xFF] + Array(compact.utf8)) }
        #expect(throws: PresentationError.invalidRequest(.requestUriStatus(404))) { try body(Array(compact.utf8), status: 404) }
    }

    @Test("an effect's failure ends the flow with that error")
    func effectFailure() async throws {
        var flow = PresentationFlow(invocation: .uri("https://verifier.example/request/1"), config: PresentationConfig(), walletNonce: "n")
        let fetch = flow.handle(.start(now: testNow))
        guard case .fetchRequestObject(let request)? = fetch.first else {
            Issue.record("expected a fetch, got \(fetch)")
            return
        }
        #expect(request.method == .get && request.url.absoluteString == "https://verifier.example/request/1")
        #expect(flow.handle(.effectFailed(.unexpected(.transport(.timedOut)))).isEmpty)
        #expect(flow.state == .failed(.unexpected(.transport(.timedOut))))
    }

    @Test("decline before the request is resolved ends the session without a word to anyone")
    func earlyDecline() {
        var flow = PresentationFlow(invocation: .uri("https://verifier.example/request/1"), config: PresentationConfig(), walletNonce: nil)
        _ = flow.handle(.start(now: testNow))
        #expect(flow.handle(.decline).isEmpty)
        #expect(flow.state == .declined(redirectUri: nil))
    }

    @Test("an encrypted response goes through the encrypt effect, then out as response=")
    func encryptEffect() async throws {
        let (_, credential) = try await Self.stored("pid-1")
        let reader = try TestReader.make()
        let key = try ECPrivateKey.generate(curve: .p256)
        let jwk = try JWK(publicKey: key.publicKey).adding(["alg": "ECDH-ES", "kid": "k"])
        let payload = Remote.payload(clientId: reader.sanDnsClientId, mode: "direct_post.jwt",
                                     extra: ["client_metadata": ["jwks": ["keys": [jwk.jsonValue]]]])
        var flow = PresentationFlow(invocation: .uri(Remote.requestURI(clientId: reader.sanDnsClientId, request: try await reader.sign(payload))),
                                    config: PresentationConfig(), walletNonce: nil)
        _ = flow.handle(.start(now: testNow))
        _ = flow.handle(.credentialsLoaded([credential]))
        let request = try #require(flow.state.request)
        _ = flow.handle(.respond(.auto(request), now: testNow))
        let encrypt = flow.handle(.presentationsMade(["p~"]))
        guard case .encrypt(let plaintext, let encryption)? = encrypt.first else {
            Issue.record("expected an encrypt effect, got \(encrypt)")
            return
        }
        #expect(encryption.key.keyID == "k" && encryption.contentEncryption == .a128gcm)
        #expect(try JSONValue.parseObject(plaintext) == ["vp_token": ["pid": ["p~"]], "state": "state-1"])
        guard case .send(let post)? = flow.handle(.encrypted("header..iv.ciphertext.tag")).first else {
            Issue.record("expected a send effect")
            return
        }
        #expect(post.form == ["response": "header..iv.ciphertext.tag"])
    }
}
