import CBOR
import Foundation
import JOSE
import Mdoc
@testable import OpenID4VP
import ReferenceParties
import SDJWT
import Testing
import WalletCrypto
import WalletEncoding
import WalletRuntime
import WalletStorage

/// Remote presentations against a scripted verifier running in-process: the session
/// resolves hand-made requests, and what it sends is checked with the SDK's verifiers.
@Suite("Remote presentation")
struct RemotePresentationTests {
    static let responseUri = "https://verifier.example/post"
    static let nonce = "n-0S6_WzA2Mj"

    static func pidQuery(claims: [String] = ["family_name", "given_name"], binding: Bool = true,
                         multiple: Bool = false) -> JSONValue {
        var query: JSONObject = [
            "id": "pid", "format": "dc+sd-jwt", "meta": ["vct_values": [.string(TestWallet.pidType)]],
            "claims": .array(claims.map { ["path": [.string($0)]] }),
        ]
        if !binding { query["require_cryptographic_holder_binding"] = false }
        if multiple { query["multiple"] = true }
        return ["credentials": [.object(query)]]
    }

    static func mdlQuery(elements: [String] = ["family_name", "age_over_18"]) -> JSONValue {
        ["credentials": [[
            "id": "mdl", "format": "mso_mdoc", "meta": ["doctype_value": .string(TestWallet.mDL)],
            "claims": .array(elements.map { ["path": [.string(TestWallet.mDLNameSpace), .string($0)]] }),
        ]]]
    }

    static func payload(clientId: String, query: JSONValue = pidQuery(), mode: String = "direct_post",
                        extra: JSONObject = [:]) -> JSONObject {
        var members: JSONObject = [
            "client_id": .string(clientId), "response_type": "vp_token", "response_mode": .string(mode),
            "response_uri": .string(responseUri), "nonce": .string(nonce), "state": "state-1",
            "dcql_query": query, "aud": "https://self-issued.me/v2", "iat": .integer(Int64(testNow.timeIntervalSince1970)),
            "exp": .integer(Int64(testNow.timeIntervalSince1970) + 300),
        ]
        for (name, value) in extra { members[name] = value }
        return members
    }

    static func requestURI(clientId: String, request: String) -> String {
        "openid4vp://?" + FormURLEncoding.encode([("client_id", clientId), ("request", request)])
    }

    /// A verifier that accepts any response with a redirect, and records what it got.
    static func acceptingVerifier(redirect: String = "https://verifier.example/done#code=1") -> RecordingHTTPClient {
        RecordingHTTPClient { _ in .json(["redirect_uri": .string(redirect)]) }
    }

    static func client(_ wallet: TestWallet, http: RecordingHTTPClient, anchors: [X509Certificate] = [],
                       binder: MdocTransactionDataBinder? = nil) -> Openid4VpClient {
        Openid4VpClient(store: wallet.store,
                        config: PresentationConfig(readerAnchorsDer: anchors.map(\.derEncoded), mdocTransactionDataBinder: binder),
                        httpClient: http, clock: ManualClock(testNow))
    }

    /// Resolves, checks the request resolved, responds with `selection` (auto by default).
    static func present(_ session: PresentationSession,
                        selection: ((PresentationRequest) -> PresentationSelection)? = nil) async throws -> (PresentationRequest, PresentationState) {
        let resolved = try await waitFor(session, resolved: true)
        let request = try #require(resolved.request, "expected a resolved request, got \(resolved)")
        session.respond(selection?(request) ?? .auto(request))
        return (request, try await waitFor(session))
    }

    static func verifySdJwt(_ presentation: String, wallet: TestWallet, audience: String,
                            transactionData: [String] = []) throws -> VerifiedSDJWT {
        let options = SDJWTVerificationOptions(
            issuerKey: .jwk(wallet.sdJwtIssuerKey), now: testNow,
            keyBinding: KeyBindingExpectation(audience: audience, nonce: nonce, transactionData: transactionData))
        return try SDJWTVerifier(options: options).verify(presentation)
    }

    static func vpToken(_ request: HTTPRequest) throws -> JSONObject {
        let text = try #require(request.form["vp_token"])
        return try JSONValue.parseObject(text)
    }

    /// The presentations of `queryId` in the first request the verifier received.
    static func presentations(_ http: RecordingHTTPClient, _ queryId: String) throws -> [String] {
        let post = try #require(http.requests.first)
        let token = try vpToken(post)
        return try #require(token[queryId]?.stringArrayValue)
    }

    @Test("an SD-JWT VC goes by direct_post to a trusted x509_san_dns verifier, disclosing only what was asked")
    func sdJwtDirectPost() async throws {
        let wallet = try await TestWallet.make()
        try await wallet.addSdJwt(id: "pid-1")
        let reader = try TestReader.make()
        let http = Self.acceptingVerifier()
        let session = Self.client(wallet, http: http, anchors: [reader.root])
            .start(Self.requestURI(clientId: reader.sanDnsClientId, request: try await reader.sign(Self.payload(clientId: reader.sanDnsClientId))))
        #expect(session.currentState == .resolvingRequest || session.currentState.request != nil)
        let (request, done) = try await Self.present(session)
        #expect(request.verifier == VerifierIdentity(clientId: "x509_san_dns:verifier.example", clientIdScheme: .x509SanDns,
                                                     commonName: "Test Verifier", trusted: true))
        #expect(request.satisfiable)
        #expect(request.queries.map(\.queryId) == ["pid"])
        #expect(request.queries[0].required && !request.queries[0].multiple)
        #expect(request.queries[0].candidates.map(\.credentialId) == ["pid-1"])
        #expect(request.queries[0].candidates[0].disclosedPaths == [["family_name"], ["given_name"]])
        #expect(request.transactionData == nil)
        #expect(done == .completed(redirectUri: URL(string: "https://verifier.example/done#code=1"), dcApiResponse: nil))

        #expect(http.requests.count == 1)
        let post = try #require(http.requests.first)
        #expect(post.method == .post && post.url.absoluteString == Self.responseUri)
        #expect(post.headers["Content-Type"] == "application/x-www-form-urlencoded")
        #expect(post.form["state"] == "state-1")
        let token = try Self.vpToken(post)
        let presentations = try #require(token["pid"]?.stringArrayValue)
        #expect(presentations.count == 1)
        let verified = try Self.verifySdJwt(try #require(presentations.first), wallet: wallet, audience: reader.sanDnsClientId)
        #expect(verified.claims["family_name"] == "Doe" && verified.claims["given_name"] == "John")
        #expect(verified.claims["birthdate"] == nil && verified.claims["address"] == nil)
        #expect(verified.sdJWT.disclosures.count == 2)
    }

    @Test("a verifier's redirect_uri the app cannot safely open (javascript:, data:, file:, plain http elsewhere) is dropped; the response stands",
          arguments: [("javascript:alert(document.cookie)", false), ("data:text/html,<script>x</script>", false),
                      ("FILE:///etc/passwd", false), ("http://verifier.example/done", false), ("about:blank", false),
                      ("https://verifier.example/done", true), ("verifierapp://done?code=1", true),
                      ("http://127.0.0.1:8080/done", true)])
    func redirectSchemes(redirect: String, kept: Bool) async throws {
        let wallet = try await TestWallet.make()
        try await wallet.addSdJwt(id: "pid-1")
        let reader = try TestReader.make()
        let session = Self.client(wallet, http: Self.acceptingVerifier(redirect: redirect), anchors: [reader.root])
            .start(Self.requestURI(clientId: reader.sanDnsClientId, request: try await reader.sign(Self.payload(clientId: reader.sanDnsClientId))))
        let (_, done) = try await Self.present(session)
        #expect(done == .completed(redirectUri: kept ? URL(string: redirect) : nil, dcApiResponse: nil))
    }

    @Test("the states run resolving, resolved, submitting, completed; a late observer sees the current one")
    func stateSequence() async throws {
        let wallet = try await TestWallet.make()
        try await wallet.addSdJwt(id: "pid-1")
        let reader = try TestReader.make()
        let session = Self.client(wallet, http: Self.acceptingVerifier())
            .start(Self.requestURI(clientId: reader.sanDnsClientId, request: try await reader.sign(Self.payload(clientId: reader.sanDnsClientId))))
        let observer = Task {
            var seen: [String] = []
            for await state in session.states {
                switch state {
                case .resolvingRequest: seen.append("resolving")
                case .requestResolved: seen.append("resolved")
                case .submitting: seen.append("submitting")
                case .completed: seen.append("completed")
                case .declined: seen.append("declined")
                case .failed: seen.append("failed")
                }
            }
            return seen
        }
        let resolved = try await waitFor(session, resolved: true)
        session.respond(.auto(try #require(resolved.request)))
        _ = try await waitFor(session)
        let seen = await observer.value
        #expect(seen.last == "completed")
        #expect(seen.contains("submitting"))
        #expect(Array(seen.drop(while: { $0 == "resolving" }).prefix(1)) == ["resolved"])
        var late: [PresentationState] = []
        for await state in session.states { late.append(state) }
        #expect(late.count == 1 && late[0].isTerminal)
    }

    @Test("a session dropped while it waits for the user is released, and its observers' streams end")
    func droppedSession() async throws {
        let wallet = try await TestWallet.make()
        try await wallet.addSdJwt(id: "pid-1")
        let reader = try TestReader.make()
        let http = Self.acceptingVerifier()
        var session: PresentationSession? = Self.client(wallet, http: http)
            .start(Self.requestURI(clientId: reader.sanDnsClientId, request: try await reader.sign(Self.payload(clientId: reader.sanDnsClientId))))
        let states = try #require(session).states
        _ = try await waitFor(try #require(session), resolved: true)
        weak let released = session
        session = nil
        let ended = try await withThrowingTaskGroup(of: Bool.self) { group in
            group.addTask {
                for await _ in states {}
                return true
            }
            group.addTask {
                try await Task.sleep(for: .seconds(120))
                throw VPTestSupport.Failure(description: "hang: the dropped session's stream did not end in 120 s")
            }
            let result = try await group.next() ?? false
            group.cancelAll()
            return result
        }
        #expect(ended && released == nil)
        #expect(http.requests.isEmpty)
    }

    @Test("request_uri_method=post sends wallet_metadata and a fresh wallet_nonce, which must come back")
    func requestUriPost() async throws {
        let wallet = try await TestWallet.make()
        try await wallet.addSdJwt(id: "pid-1")
        let reader = try TestReader.make()
        let requestUri = "https://verifier.example/request/abc"
        let signer = SoftwareSigner(reader.leafKey), leaf = reader.leaf
        let clientId = reader.sanDnsClientId
        let http = RecordingHTTPClient { request in
            if request.url.absoluteString == requestUri {
                var payload = Self.payload(clientId: clientId)
                payload["wallet_nonce"] = request.form["wallet_nonce"].map(JSONValue.string)
                let jws = try? await JWS.sign(payload: JSONValue.object(payload).serializedBytes, signer: signer,
                                              type: "oauth-authz-req+jwt", x5c: [leaf])
                return .jwt(jws?.compactSerialization ?? "")
            }
            return .json([:])
        }
        let uri = "openid4vp://?" + FormURLEncoding.encode([
            ("client_id", clientId), ("request_uri", requestUri), ("request_uri_method", "post"),
        ])
        let (_, done) = try await Self.present(Self.client(wallet, http: http, anchors: [reader.root]).start(uri))
        #expect(done == .completed(redirectUri: nil, dcApiResponse: nil))
        let fetch = try #require(http.requests.first)
        #expect(fetch.method == .post)
        #expect(fetch.headers["Accept"] == "application/oauth-authz-req+jwt")
        let nonce = try #require(fetch.form["wallet_nonce"])
        #expect(Base64URL.decodeStrict(nonce)?.count == 16)
        let metadata = try JSONValue.parseObject(try #require(fetch.form["wallet_metadata"]))
        #expect(metadata["vp_formats_supported"]?["dc+sd-jwt"] != nil)
        #expect(http.requests.count == 2)
    }

    @Test("request_uri with GET fetches the request object and answers")
    func requestUriGet() async throws {
        let wallet = try await TestWallet.make()
        try await wallet.addSdJwt(id: "pid-1")
        let reader = try TestReader.make()
        let object = try await reader.sign(Self.payload(clientId: reader.hashClientId))
        let http = RecordingHTTPClient { request in
            request.method == .get ? .jwt(object) : .json([:])
        }
        let uri = "https://wallet.example/authorize?" + FormURLEncoding.encode([
            ("client_id", reader.hashClientId), ("request_uri", "https://elsewhere.example/r/1"),
        ])
        let (request, done) = try await Self.present(Self.client(wallet, http: http, anchors: [reader.root]).start(uri))
        #expect(request.verifier.clientIdScheme == .x509Hash && request.verifier.trusted)
        #expect(done == .completed(redirectUri: nil, dcApiResponse: nil))
        #expect(http.requests.map(\.method) == [.get, .post])
    }

    @Test("without reader anchors a signed request resolves untrusted")
    func untrustedWithoutAnchors() async throws {
        let wallet = try await TestWallet.make()
        try await wallet.addSdJwt(id: "pid-1")
        let reader = try TestReader.make()
        let session = Self.client(wallet, http: Self.acceptingVerifier())
            .start(Self.requestURI(clientId: reader.sanDnsClientId, request: try await reader.sign(Self.payload(clientId: reader.sanDnsClientId))))
        let resolved = try await waitFor(session, resolved: true)
        let request = try #require(resolved.request)
        #expect(request.verifier.trusted == false)
        #expect(request.verifier.commonName == "Test Verifier")
        session.decline()
        _ = try await waitFor(session)
    }

    @Test("mdoc over direct_post.jwt: a DeviceResponse over the OpenID4VP handover with the key thumbprint, in a JWE to the verifier's key")
    func mdocDirectPostJwt() async throws {
        let wallet = try await TestWallet.make()
        try await wallet.addMdl(id: "mdl-1")
        let reader = try TestReader.make()
        let encryptionKey = try ECPrivateKey.generate(curve: .p256)
        let publicJWK = try JWK(publicKey: encryptionKey.publicKey).adding(["kid": "enc-1", "use": "enc", "alg": "ECDH-ES"])
        let metadata: JSONObject = [
            "jwks": ["keys": [publicJWK.jsonValue]],
            "encrypted_response_enc_values_supported": ["A128GCM", "A256GCM", "A128CBC-HS256"],
        ]
        let http = Self.acceptingVerifier()
        let payload = Self.payload(clientId: reader.sanDnsClientId, query: Self.mdlQuery(), mode: "direct_post.jwt",
                                   extra: ["client_metadata": .object(metadata)])
        let (_, done) = try await Self.present(Self.client(wallet, http: http, anchors: [reader.root])
            .start(Self.requestURI(clientId: reader.sanDnsClientId, request: try await reader.sign(payload))))
        #expect(done.isTerminal && done.failure == nil)
        let post = try #require(http.requests.first)
        #expect(post.form["vp_token"] == nil && post.form["state"] == nil)
        let jwe = try JWE(compact: try #require(post.form["response"]))
        #expect(jwe.contentEncryption == .a256gcm)
        #expect(jwe.header.keyID == "enc-1")
        let plaintext = try jwe.decrypt(with: encryptionKey)
        let response = try JSONValue.parseObject(plaintext)
        #expect(response["state"] == "state-1")
        let entries = try #require(response["vp_token"]?["mdl"]?.stringArrayValue)
        let bytes = try #require(Base64URL.decodeStrict(entries[0]))
        let transcript = SessionTranscript.openID4VP(.openID4VP(
            clientId: reader.sanDnsClientId, nonce: Self.nonce, jwkThumbprint: publicJWK.thumbprintBytes, responseUri: Self.responseUri))
        let verified = try await DeviceResponseVerifier(trustAnchors: [wallet.iaca], sessionTranscript: transcript)
            .verify(try DeviceResponse(encoded: bytes), at: testNow)
        let document = try #require(verified.documents.first)
        #expect(document.value(nameSpace: TestWallet.mDLNameSpace, identifier: "family_name") == "Doe")
        #expect(document.value(nameSpace: TestWallet.mDLNameSpace, identifier: "age_over_18") == true)
        #expect(document.value(nameSpace: TestWallet.mDLNameSpace, identifier: "given_name") == nil)
        // Without the thumbprint, the transcript differs and the device signature fails.
        let unbound = SessionTranscript.openID4VP(.openID4VP(
            clientId: reader.sanDnsClientId, nonce: Self.nonce, jwkThumbprint: nil, responseUri: Self.responseUri))
        await #expect(throws: MdocError.self) {
            try await DeviceResponseVerifier(trustAnchors: [wallet.iaca], sessionTranscript: unbound)
                .verify(try DeviceResponse(encoded: bytes), at: testNow)
        }
    }

    @Test("decline posts access_denied with the state and surfaces the verifier's redirect")
    func decline() async throws {
        let wallet = try await TestWallet.make()
        try await wallet.addSdJwt(id: "pid-1")
        let reader = try TestReader.make()
        let http = Self.acceptingVerifier(redirect: "https://verifier.example/declined")
        let session = Self.client(wallet, http: http)
            .start(Self.requestURI(clientId: reader.sanDnsClientId, request: try await reader.sign(Self.payload(clientId: reader.sanDnsClientId))))
        _ = try await waitFor(session, resolved: true)
        session.decline()
        #expect(try await waitFor(session) == .declined(redirectUri: URL(string: "https://verifier.example/declined")))
        let post = try #require(http.requests.first)
        #expect(post.form["error"] == "access_denied")
        #expect(post.form["state"] == "state-1")
        #expect(post.form["vp_token"] == nil)
    }

    @Test("the verifier's rejection ends the session responseRejected with its status and error")
    func rejected() async throws {
        let wallet = try await TestWallet.make()
        try await wallet.addSdJwt(id: "pid-1")
        let reader = try TestReader.make()
        let http = RecordingHTTPClient { _ in .json(["error": "invalid_request"], status: 400) }
        let (_, done) = try await Self.present(Self.client(wallet, http: http)
            .start(Self.requestURI(clientId: reader.sanDnsClientId, request: try await reader.sign(Self.payload(clientId: reader.sanDnsClientId)))))
        #expect(done == .failed(.responseRejected(status: 400, error: "invalid_request")))
    }

    @Test("an unbound SD-JWT goes without KB-JWT when the verifier waives holder binding")
    func unboundSdJwt() async throws {
        let wallet = try await TestWallet.make()
        try await wallet.addSdJwt(id: "pid-1", bound: false)
        let reader = try TestReader.make()
        let http = Self.acceptingVerifier()
        let payload = Self.payload(clientId: reader.sanDnsClientId, query: Self.pidQuery(binding: false))
        let (request, _) = try await Self.present(Self.client(wallet, http: http)
            .start(Self.requestURI(clientId: reader.sanDnsClientId, request: try await reader.sign(payload))))
        #expect(request.queries.map(\.holderBinding) == [false], "the consent screen can say the presentation is replayable")
        let presentation = try #require(try Self.presentations(http, "pid").first)
        #expect(presentation.hasSuffix("~"))
        let sdJwt = try SDJWT(compact: presentation)
        #expect(sdJwt.keyBindingJWT == nil && sdJwt.disclosures.count == 2)
    }

    @Test("multiple: every chosen credential is presented under the query's id")
    func multiplePresentations() async throws {
        let wallet = try await TestWallet.make()
        try await wallet.addSdJwt(id: "pid-1")
        try await wallet.addSdJwt(id: "pid-2")
        let reader = try TestReader.make()
        let http = Self.acceptingVerifier()
        let payload = Self.payload(clientId: reader.sanDnsClientId, query: Self.pidQuery(multiple: true))
        let (request, _) = try await Self.present(Self.client(wallet, http: http)
            .start(Self.requestURI(clientId: reader.sanDnsClientId, request: try await reader.sign(payload))))
        #expect(request.queries[0].multiple)
        let presentations = try Self.presentations(http, "pid")
        #expect(presentations.count == 2)
        for presentation in presentations {
            _ = try Self.verifySdJwt(presentation, wallet: wallet, audience: reader.sanDnsClientId)
        }
    }

    @Test("a oneTime credential spends one instance, and its key, per presentation; rotate reuses")
    func oneTimeConsumed() async throws {
        let wallet = try await TestWallet.make()
        let stored = try await wallet.addSdJwt(id: "pid-1", instances: 2, use: .oneTime)
        let reader = try TestReader.make()
        let keysBefore = try await wallet.area.listKeys().count
        var holderKeys: [JWK] = []
        for _ in 0..<2 {
            let http = Self.acceptingVerifier()
            _ = try await Self.present(Self.client(wallet, http: http)
                .start(Self.requestURI(clientId: reader.sanDnsClientId, request: try await reader.sign(Self.payload(clientId: reader.sanDnsClientId)))))
            let presentation = try #require(try Self.presentations(http, "pid").first)
            holderKeys.append(try #require(try Self.verifySdJwt(presentation, wallet: wallet, audience: reader.sanDnsClientId).holderKey))
        }
        #expect(holderKeys[0] != holderKeys[1])
        #expect(try await wallet.store.remainingInstances(of: stored.id) == 0)
        #expect(try await wallet.area.listKeys().count == keysBefore - 2)
        // With nothing left, the credential is no longer a candidate.
        let session = Self.client(wallet, http: Self.acceptingVerifier())
            .start(Self.requestURI(clientId: reader.sanDnsClientId, request: try await reader.sign(Self.payload(clientId: reader.sanDnsClientId))))
        let resolved = try #require(try await waitFor(session, resolved: true).request)
        #expect(!resolved.satisfiable)
        session.respond(.auto(resolved))
        #expect(try await waitFor(session) == .failed(.queryNotSatisfiable(queryIds: ["pid"])))

        // A rotate credential keeps its one instance and key across presentations.
        let rotating = try await wallet.addSdJwt(id: "pid-r", instances: 1, use: .rotate)
        var rotatingKeys: [JWK] = []
        for _ in 0..<2 {
            let http = Self.acceptingVerifier()
            _ = try await Self.present(Self.client(wallet, http: http)
                .start(Self.requestURI(clientId: reader.sanDnsClientId, request: try await reader.sign(Self.payload(clientId: reader.sanDnsClientId)))))
            let presentation = try #require(try Self.presentations(http, "pid").first)
            rotatingKeys.append(try #require(try Self.verifySdJwt(presentation, wallet: wallet, audience: reader.sanDnsClientId).holderKey))
        }
        #expect(rotatingKeys[0] == rotatingKeys[1])
        #expect(try await wallet.store.remainingInstances(of: rotating.id) == 1)
    }

    @Test("SD-JWT transaction data: the KB-JWT carries the hash of each entry bound to it")
    func sdJwtTransactionData() async throws {
        let wallet = try await TestWallet.make()
        try await wallet.addSdJwt(id: "pid-1", bound: true)
        let reader = try TestReader.make()
        let entry = Base64URL.encode(JSONValue.object([
            "type": "payment_confirmation", "credential_ids": ["pid"], "amount": "42.00",
        ]).serializedBytes)
        let http = Self.acceptingVerifier()
        let payload = Self.payload(clientId: reader.sanDnsClientId, query: Self.pidQuery(binding: false),
                                   extra: ["transaction_data": [.string(entry)]])
        let (request, _) = try await Self.present(Self.client(wallet, http: http)
            .start(Self.requestURI(clientId: reader.sanDnsClientId, request: try await reader.sign(payload))))
        #expect(request.transactionData?.map(\.type) == ["payment_confirmation"])
        #expect(request.queries.map(\.holderBinding) == [true], "transaction data forces binding back on")
        let presentation = try #require(try Self.presentations(http, "pid").first)
        let verified = try Self.verifySdJwt(presentation, wallet: wallet, audience: reader.sanDnsClientId, transactionData: [entry])
        #expect(verified.keyBinding?["transaction_data_hashes"]?.stringArrayValue
            == [SDJWTHashAlgorithm.sha256.base64URLDigest(of: entry)])
    }

    @Test("transactionDataTypes: an SD-JWT-bound entry of a type the app does not list is refused before consent; a listed one reaches it")
    func transactionDataTypes() async throws {
        let wallet = try await TestWallet.make()
        try await wallet.addSdJwt(id: "pid-1", bound: true)
        let reader = try TestReader.make()
        func start(_ type: String) async throws -> PresentationState {
            let entry = Base64URL.encode(JSONValue.object(["type": .string(type), "credential_ids": ["pid"]]).serializedBytes)
            let payload = Self.payload(clientId: reader.sanDnsClientId, query: Self.pidQuery(), extra: ["transaction_data": [.string(entry)]])
            let client = Openid4VpClient(store: wallet.store, config: PresentationConfig(transactionDataTypes: ["payment_confirmation"]),
                                         httpClient: Self.acceptingVerifier(), clock: ManualClock(testNow))
            return try await waitFor(client.start(Self.requestURI(clientId: reader.sanDnsClientId, request: try await reader.sign(payload))),
                                     resolved: true)
        }
        let unknown = try await start("qes_authorization")
        #expect(unknown == .failed(.invalidRequest(.invalidTransactionData(.unsupportedType("qes_authorization")))))
        #expect(unknown.failure?.vpErrorCode == .invalidTransactionData)
        let known = try await start("payment_confirmation")
        #expect(known.request?.transactionData?.map(\.type) == ["payment_confirmation"])
    }

    @Test("intent_to_retain: the claims the verifier says it keeps are on the query, for the consent screen")
    func intentToRetain() async throws {
        let wallet = try await TestWallet.make()
        try await wallet.addMdl(id: "mdl-1")
        let reader = try TestReader.make()
        let query: JSONValue = ["credentials": [[
            "id": "mdl", "format": "mso_mdoc", "meta": ["doctype_value": .string(TestWallet.mDL)],
            "claims": [
                ["path": [.string(TestWallet.mDLNameSpace), "family_name"], "intent_to_retain": true],
                ["path": [.string(TestWallet.mDLNameSpace), "age_over_18"], "intent_to_retain": false],
            ],
        ]]]
        let payload = Self.payload(clientId: reader.sanDnsClientId, query: query)
        let state = try await waitFor(Self.client(wallet, http: Self.acceptingVerifier())
            .start(Self.requestURI(clientId: reader.sanDnsClientId, request: try await reader.sign(payload))), resolved: true)
        let request = try #require(state.request)
        #expect(request.queries.map(\.retainedPaths) == [[[.key(TestWallet.mDLNameSpace), "family_name"]]])
        #expect(request.queries.map(\.holderBinding) == [true], "an mdoc always signs with its device key")
    }

    @Test("SD-JWT transaction data under one KB-JWT: the hash is one every entry accepts, in the first entry's order", arguments: [
        ([["sha-384", "sha-256"], nil], SDJWTHashAlgorithm.sha256),
        ([["sha-384"], ["sha-512", "sha-384"]], .sha384),
        ([nil, nil], .sha256),
    ] as [([[String]?], SDJWTHashAlgorithm)])
    func sdJwtTransactionHashes(algorithms: [[String]?], expected: SDJWTHashAlgorithm) async throws {
        let wallet = try await TestWallet.make()
        try await wallet.addSdJwt(id: "pid-1", bound: true)
        let reader = try TestReader.make()
        let entries = algorithms.enumerated().map { index, names in
            var members: JSONObject = ["type": "payment_confirmation", "credential_ids": ["pid"], "amount": .string("\(index).00")]
            if let names { members["transaction_data_hashes_alg"] = .array(names.map(JSONValue.string)) }
            return Base64URL.encode(JSONValue.object(members).serializedBytes)
        }
        let http = Self.acceptingVerifier()
        let payload = Self.payload(clientId: reader.sanDnsClientId, query: Self.pidQuery(),
                                   extra: ["transaction_data": .array(entries.map(JSONValue.string))])
        _ = try await Self.present(Self.client(wallet, http: http)
            .start(Self.requestURI(clientId: reader.sanDnsClientId, request: try await reader.sign(payload))))
        let presentation = try #require(try Self.presentations(http, "pid").first)
        let verified = try Self.verifySdJwt(presentation, wallet: wallet, audience: reader.sanDnsClientId, transactionData: entries)
        #expect(verified.keyBinding?["transaction_data_hashes_alg"]?.stringValue == expected.rawValue)
        #expect(verified.keyBinding?["transaction_data_hashes"]?.stringArrayValue == entries.map { expected.base64URLDigest(of: $0) })
    }

    static let transactionElement = MdocTransactionDataElement(nameSpace: "org.example.tx", elementIdentifier: "tx_hash",
                                                               value: .byteString([1, 2, 3]))

    @Test("mdoc transaction data: the binder's element is device-signed when keyAuthorizations allow it")
    func mdocTransactionData() async throws {
        let wallet = try await TestWallet.make()
        try await wallet.addMdl(id: "mdl-1", keyAuthorizations: KeyAuthorizations(nameSpaces: ["org.example.tx"]))
        let reader = try TestReader.make()
        let entry = Base64URL.encode(JSONValue.object(["type": "tx", "credential_ids": ["mdl"]]).serializedBytes)
        let http = Self.acceptingVerifier()
        let payload = Self.payload(clientId: reader.sanDnsClientId, query: Self.mdlQuery(), extra: ["transaction_data": [.string(entry)]])
        let element = Self.transactionElement
        _ = try await Self.present(Self.client(wallet, http: http, binder: { _ in element })
            .start(Self.requestURI(clientId: reader.sanDnsClientId, request: try await reader.sign(payload))))
        let entries = try Self.presentations(http, "mdl")
        let transcript = SessionTranscript.openID4VP(.openID4VP(
            clientId: reader.sanDnsClientId, nonce: Self.nonce, jwkThumbprint: nil, responseUri: Self.responseUri))
        let bytes = try #require(Base64URL.decodeStrict(entries[0]))
        let verified = try await DeviceResponseVerifier(trustAnchors: [wallet.iaca], sessionTranscript: transcript)
            .verify(try DeviceResponse(encoded: bytes), at: testNow)
        let signed = try #require(verified.documents.first?.deviceSigned.first)
        #expect(signed.nameSpace == "org.example.tx")
        #expect(signed.elements.first?.identifier == "tx_hash" && signed.elements.first?.value == .byteString([1, 2, 3]))
    }

    @Test("MdocTransactionDataElement.digest: the entry's type in the namespace, the SHA-256 of its string as received, the reference verifier's expectation")
    func digestConvention() throws {
        // The string is base64url of {"type":"payment","credential_ids":["mdl"],"amount":"42.00"};
        // the digest is Python's hashlib.sha256 over it.
        let encoded = "eyJ0eXBlIjoicGF5bWVudCIsImNyZWRlbnRpYWxfaWRzIjpbIm1kbCJdLCJhbW91bnQiOiI0Mi4wMCJ9"
        let digest = "8362501e067c9a12d3bdc44cde27613d6be9dee22be890f80bc69961db2ec366"
        let transaction = try TransactionData(encoded: encoded)
        let element = MdocTransactionDataElement.digest(of: transaction)
        #expect(element.nameSpace == "org.openid4vp.transaction_data" && element.elementIdentifier == "payment")
        #expect(element.value.bytesValue.map { Hex.encode($0) } == digest)
        #expect(MdocTransactionDataElement.digest(of: transaction, nameSpace: "org.example.tx").nameSpace == "org.example.tx")
        // The same entry as the reference verifier reads it, and the element its default rule expects.
        let entry = try VerifierTransactionData(json: try JSONValue.parse(Array(Base64URL.decode(encoded) ?? [])))
        let expected = try #require(MdocTransactionDataBinding.digest().expectedElement(entry, encoded))
        #expect(expected.nameSpace == element.nameSpace && expected.identifier == element.elementIdentifier
            && expected.value == element.value)
        // A different string of the same object is a different digest: the string is hashed, not the object.
        let padded = try TransactionData(encoded: Base64URL.encode(Array(#"{"type":"payment", "credential_ids":["mdl"],"amount":"42.00"}"#.utf8)))
        #expect(MdocTransactionDataElement.digest(of: padded).value != element.value)
    }

    @Test("mdoc transaction data is refused without a binder, or outside keyAuthorizations, before consent")
    func mdocTransactionDataRefused() async throws {
        let wallet = try await TestWallet.make()
        try await wallet.addMdl(id: "mdl-1")
        let reader = try TestReader.make()
        let entry = Base64URL.encode(JSONValue.object(["type": "tx", "credential_ids": ["mdl"]]).serializedBytes)
        let payload = Self.payload(clientId: reader.sanDnsClientId, query: Self.mdlQuery(), extra: ["transaction_data": [.string(entry)]])
        let uri = Self.requestURI(clientId: reader.sanDnsClientId, request: try await reader.sign(payload))
        let http = Self.acceptingVerifier()
        let withoutBinder = try await waitFor(Self.client(wallet, http: http).start(uri))
        #expect(withoutBinder == .failed(.invalidRequest(.invalidTransactionData(.unsupportedType("tx")))))
        #expect(withoutBinder.failure?.vpErrorCode == .invalidTransactionData)
        let element = Self.transactionElement
        let unauthorized = try await waitFor(Self.client(wallet, http: http, binder: { _ in element }).start(uri))
        #expect(unauthorized == .failed(.invalidRequest(.invalidTransactionData(.notAuthorizedByKeyAuthorizations(
            nameSpace: "org.example.tx", elementIdentifier: "tx_hash")))))
        let unknown = Base64URL.encode(JSONValue.object(["type": "tx", "credential_ids": ["nope"]]).serializedBytes)
        let unknownUri = Self.requestURI(clientId: reader.sanDnsClientId, request: try await reader.sign(
            Self.payload(clientId: reader.sanDnsClientId, query: Self.mdlQuery(), extra: ["transaction_data": [.string(unknown)]])))
        #expect(try await waitFor(Self.client(wallet, http: http, binder: { _ in element }).start(unknownUri))
            == .failed(.invalidRequest(.invalidTransactionData(.unknownCredentialId("nope")))))
        #expect(http.requests.isEmpty)
    }

    @Test("a selection that leaves out a required query fails selectionIncomplete")
    func selectionIncomplete() async throws {
        let wallet = try await TestWallet.make()
        try await wallet.addSdJwt(id: "pid-1")
        try await wallet.addMdl(id: "mdl-1")
        let reader = try TestReader.make()
        let query: JSONValue = ["credentials": .array((Self.pidQuery()["credentials"]?.arrayValue ?? []) + (Self.mdlQuery()["credentials"]?.arrayValue ?? []))]
        let http = Self.acceptingVerifier()
        let (request, done) = try await Self.present(Self.client(wallet, http: http)
            .start(Self.requestURI(clientId: reader.sanDnsClientId, request: try await reader.sign(Self.payload(clientId: reader.sanDnsClientId, query: query)))),
            selection: { _ in PresentationSelection(chosen: ["pid": ["pid-1"]]) })
        #expect(request.queries.allSatisfy { $0.required })
        #expect(done == .failed(.selectionIncomplete(missing: ["mdl"])))
        #expect(http.requests.isEmpty)
    }

    @Test("the explicit selection of the spec's snippet answers each query with its first candidate")
    func explicitSelection() async throws {
        let wallet = try await TestWallet.make()
        try await wallet.addSdJwt(id: "pid-1")
        let reader = try TestReader.make()
        let http = Self.acceptingVerifier()
        let (_, done) = try await Self.present(Self.client(wallet, http: http)
            .start(Self.requestURI(clientId: reader.sanDnsClientId, request: try await reader.sign(Self.payload(clientId: reader.sanDnsClientId)))),
            selection: { request in
                var chosen: [String: [CredentialId]] = [:]
                for query in request.queries { chosen[query.queryId] = [query.candidates.first!.credentialId] }
                return PresentationSelection(chosen: chosen)
            })
        #expect(done.failure == nil)
        #expect(http.requests.count == 1)
    }

    @Test("an unsigned redirect_uri request by value is answered at the client identifier's URL")
    func redirectUriByValue() async throws {
        let wallet = try await TestWallet.make()
        try await wallet.addSdJwt(id: "pid-1")
        let http = Self.acceptingVerifier()
        let uri = "openid4vp://authorize?" + FormURLEncoding.encode([
            ("response_type", "vp_token"), ("client_id", "redirect_uri:" + Self.responseUri), ("response_mode", "direct_post"),
            ("nonce", Self.nonce), ("dcql_query", Self.pidQuery().serialized),
            ("client_metadata", #"{"vp_formats_supported":{"dc+sd-jwt":{"sd-jwt_alg_values": ["ES256"],"kb-jwt_alg_values": ["ES256"]}}}"#),
        ])
        let (request, done) = try await Self.present(Self.client(wallet, http: http).start(uri))
        #expect(request.verifier == VerifierIdentity(clientId: "redirect_uri:" + Self.responseUri, clientIdScheme: .redirectUri))
        #expect(done.failure == nil)
        let post = try #require(http.requests.first)
        #expect(post.url.absoluteString == Self.responseUri && post.form["state"] == nil)
        let presentation = try #require(try Self.vpToken(post)["pid"]?.stringArrayValue?.first)
        _ = try Self.verifySdJwt(presentation, wallet: wallet, audience: "redirect_uri:" + Self.responseUri)
    }

    @Test("reportError posts the code to the response URI; over the DC API it only returns the data object")
    func reportError() async throws {
        let wallet = try await TestWallet.make()
        try await wallet.addSdJwt(id: "pid-1")
        let reader = try TestReader.make()
        let http = Self.acceptingVerifier(redirect: "https://verifier.example/err")
        let client = Self.client(wallet, http: http)
        let session = client.start(Self.requestURI(clientId: reader.sanDnsClientId,
                                                   request: try await reader.sign(Self.payload(clientId: reader.sanDnsClientId))))
        let request = try #require(try await waitFor(session, resolved: true).request)
        let report = try await client.reportError(request, .vpFormatsNotSupported, description: "no such format")
        #expect(report == .sent(redirectUri: URL(string: "https://verifier.example/err")))
        let post = try #require(http.requests.first)
        #expect(post.form["error"] == "vp_formats_not_supported" && post.form["error_description"] == "no such format")
        #expect(post.form["state"] == "state-1")
        session.decline()
        _ = try await waitFor(session)
    }
}
