import Foundation
import JOSE
import Mdoc
@testable import OpenID4VP
import SDJWT
import Testing
import WalletCrypto
import WalletEncoding
import WalletRuntime

/// Presentations through the Digital Credentials API (OpenID4VP 1.0 App. A): nothing
/// goes over HTTP, the response comes back in `.completed(_, dcApiResponse)`.
@Suite("Digital Credentials API")
struct DcApiTests {
    typealias Remote = RemotePresentationTests
    static let origin = "https://rp.example"

    static func data(query: JSONValue, mode: String = "dc_api", extra: JSONObject = [:]) -> JSONObject {
        var members: JSONObject = ["response_type": "vp_token", "response_mode": .string(mode), "nonce": .string(Remote.nonce),
                                   "dcql_query": query]
        for (name, value) in extra { members[name] = value }
        return members
    }

    static func unsigned(_ data: JSONObject) -> String {
        JSONValue.object(["protocol": "openid4vp-v1-unsigned", "data": .object(data)]).serialized
    }

    static func signed(_ reader: TestReader, _ data: JSONObject, clientId: String? = nil,
                       expectedOrigins: [String]? = [origin]) async throws -> String {
        var payload = data
        payload["client_id"] = .string(clientId ?? reader.sanDnsClientId)
        if let expectedOrigins { payload["expected_origins"] = .array(expectedOrigins.map(JSONValue.string)) }
        let request = try await reader.sign(payload)
        return JSONValue.object(["protocol": "openid4vp-v1-signed", "data": ["request": .string(request)]]).serialized
    }

    static func complete(_ session: PresentationSession) async throws -> (PresentationRequest, JSONObject) {
        let (request, done) = try await Remote.present(session)
        guard case .completed(nil, let response?) = done else {
            throw VPTestSupport.Failure(description: "expected a DC API completion, got \(done)")
        }
        return (request, try JSONValue.parseObject(response))
    }

    @Test("unsigned, SD-JWT: the KB-JWT audience is origin:<origin>, the response the data object")
    func unsignedSdJwt() async throws {
        let wallet = try await TestWallet.make()
        try await wallet.addSdJwt(id: "pid-1")
        let http = RecordingHTTPClient { _ in .json([:]) }
        var data = Self.data(query: Remote.pidQuery())
        data["client_id"] = "x509_san_dns:ignored.example"
        let (request, response) = try await Self.complete(Remote.client(wallet, http: http).startDcApi(Self.unsigned(data), origin: Self.origin))
        #expect(request.verifier == VerifierIdentity(clientId: "origin:https://rp.example", clientIdScheme: .origin))
        #expect(request.origin == Self.origin)
        #expect(http.requests.isEmpty)
        #expect(response.keys == ["vp_token"])
        let presentation = try #require(response["vp_token"]?["pid"]?.stringArrayValue?.first)
        let verified = try Remote.verifySdJwt(presentation, wallet: wallet, audience: "origin:" + Self.origin)
        #expect(verified.claims["family_name"] == "Doe")
    }

    @Test("unsigned, mdoc: the device signature covers the OpenID4VPDCAPIHandover with the origin")
    func unsignedMdoc() async throws {
        let wallet = try await TestWallet.make()
        try await wallet.addMdl(id: "mdl-1")
        let http = RecordingHTTPClient { _ in .json([:]) }
        let (_, response) = try await Self.complete(Remote.client(wallet, http: http)
            .startDcApi(Self.unsigned(Self.data(query: Remote.mdlQuery())), origin: Self.origin))
        let entry = try #require(response["vp_token"]?["mdl"]?.stringArrayValue?.first)
        let bytes = try #require(Base64URL.decodeStrict(entry))
        let transcript = SessionTranscript.openID4VP(.openID4VPDCAPI(origin: Self.origin, nonce: Remote.nonce, jwkThumbprint: nil))
        let verified = try await DeviceResponseVerifier(trustAnchors: [wallet.iaca], sessionTranscript: transcript)
            .verify(try DeviceResponse(encoded: bytes), at: testNow)
        #expect(verified.documents.first?.value(nameSpace: TestWallet.mDLNameSpace, identifier: "family_name") == "Doe")
        // Another origin makes another transcript: the response cannot be replayed there.
        let elsewhere = SessionTranscript.openID4VP(.openID4VPDCAPI(origin: "https://evil.example", nonce: Remote.nonce,
                                                                    jwkThumbprint: nil))
        await #expect(throws: MdocError.self) {
            try await DeviceResponseVerifier(trustAnchors: [wallet.iaca], sessionTranscript: elsewhere)
                .verify(try DeviceResponse(encoded: bytes), at: testNow)
        }
        #expect(http.requests.isEmpty)
    }

    @Test("signed, mdoc: a trusted reader whose expected_origins lists the caller")
    func signedMdoc() async throws {
        let wallet = try await TestWallet.make()
        try await wallet.addMdl(id: "mdl-1")
        let reader = try TestReader.make(host: "rp.example")
        let session = Remote.client(wallet, http: RecordingHTTPClient { _ in .json([:]) }, anchors: [reader.root])
            .startDcApi(try await Self.signed(reader, Self.data(query: Remote.mdlQuery())), origin: Self.origin)
        let (request, response) = try await Self.complete(session)
        #expect(request.verifier == VerifierIdentity(clientId: "x509_san_dns:rp.example", clientIdScheme: .x509SanDns,
                                                     commonName: "Test Verifier", trusted: true))
        let entry = try #require(response["vp_token"]?["mdl"]?.stringArrayValue?.first)
        let transcript = SessionTranscript.openID4VP(.openID4VPDCAPI(origin: Self.origin, nonce: Remote.nonce, jwkThumbprint: nil))
        let bytes = try #require(Base64URL.decodeStrict(entry))
        _ = try await DeviceResponseVerifier(trustAnchors: [wallet.iaca], sessionTranscript: transcript)
            .verify(try DeviceResponse(encoded: bytes), at: testNow)
    }

    @Test("signed, SD-JWT, dc_api.jwt: the response is {\"response\": JWE}; aud stays the origin even for a signed request")
    func signedSdJwtEncrypted() async throws {
        let wallet = try await TestWallet.make()
        try await wallet.addSdJwt(id: "pid-1")
        let reader = try TestReader.make(host: "rp.example")
        let key = try ECPrivateKey.generate(curve: .p384)
        let jwk = try JWK(publicKey: key.publicKey).adding(["kid": "k1", "alg": "ECDH-ES"])
        let data = Self.data(query: Remote.pidQuery(), mode: "dc_api.jwt", extra: ["client_metadata": ["jwks": ["keys": [jwk.jsonValue]]]])
        let (_, response) = try await Self.complete(Remote.client(wallet, http: RecordingHTTPClient { _ in .json([:]) }, anchors: [reader.root])
            .startDcApi(try await Self.signed(reader, data), origin: Self.origin))
        #expect(response.keys == ["response"])
        let jwe = try JWE(compact: try #require(response["response"]?.stringValue))
        #expect(jwe.contentEncryption == .a128gcm && jwe.header.keyID == "k1")
        let payload = try JSONValue.parseObject(try jwe.decrypt(with: key))
        #expect(payload["state"] == nil)
        let presentation = try #require(payload["vp_token"]?["pid"]?.stringArrayValue?.first)
        _ = try Remote.verifySdJwt(presentation, wallet: wallet, audience: "origin:" + Self.origin)
    }

    @Test("a signed request without the caller in expected_origins, or without them, is refused before consent")
    func expectedOrigins() async throws {
        let wallet = try await TestWallet.make()
        try await wallet.addSdJwt(id: "pid-1")
        let reader = try TestReader.make(host: "rp.example")
        let client = Remote.client(wallet, http: RecordingHTTPClient { _ in .json([:]) }, anchors: [reader.root])
        let data = Self.data(query: Remote.pidQuery())
        let other = try await RequestCheckTests.run(client.startDcApi(
            try await Self.signed(reader, data, expectedOrigins: ["https://other.example", "https://rp.example/"]), origin: Self.origin))
        #expect(other.last == .failed(.invalidRequest(.originNotExpected(Self.origin))))
        let none = try await RequestCheckTests.run(client.startDcApi(try await Self.signed(reader, data, expectedOrigins: nil),
                                                                      origin: Self.origin))
        #expect(none.last == .failed(.invalidRequest(.missingExpectedOrigins)))
        let stranger = try TestReader.make(host: "rp.example")
        let untrusted = try await RequestCheckTests.run(client.startDcApi(try await Self.signed(stranger, data), origin: Self.origin))
        #expect(untrusted.last == .failed(.verifierNotTrusted(.unknownAnchor)))
    }

    @Test("without reader anchors, a signed x509_san_dns request resolves (untrusted) only from an origin on its DNS name")
    func untrustedSanDnsOrigin() async throws {
        let wallet = try await TestWallet.make()
        try await wallet.addSdJwt(id: "pid-1")
        let client = Remote.client(wallet, http: RecordingHTTPClient { _ in .json([:]) })
        let data = Self.data(query: Remote.pidQuery())
        // A self-made certificate naming bank.example, sent from another site that lists itself.
        let impostor = try TestReader.make(host: "bank.example")
        let elsewhere = try await RequestCheckTests.run(client.startDcApi(
            try await Self.signed(impostor, data, expectedOrigins: [Self.origin]), origin: Self.origin))
        #expect(elsewhere.last == .failed(.invalidRequest(.originHostMismatch(expected: "bank.example", actual: "rp.example"))))
        // The same kind of certificate from its own name's origin: shown, untrusted.
        let own = try TestReader.make(host: "rp.example")
        let (request, _) = try await Self.complete(client.startDcApi(try await Self.signed(own, data), origin: Self.origin))
        #expect(request.verifier.clientId == "x509_san_dns:rp.example" && !request.verifier.trusted)
        // A trusted verifier may serve its users from another origin it lists.
        let trustedClient = Remote.client(wallet, http: RecordingHTTPClient { _ in .json([:]) }, anchors: [impostor.root])
        let (trusted, _) = try await Self.complete(trustedClient.startDcApi(
            try await Self.signed(impostor, data, expectedOrigins: [Self.origin]), origin: Self.origin))
        #expect(trusted.verifier.clientId == "x509_san_dns:bank.example" && trusted.verifier.trusted)
    }

    @Test("the signed protocol with an alg none request object is refused, whatever client it names and with or without anchors")
    func signedProtocolUnsignedObject() async throws {
        let wallet = try await TestWallet.make()
        try await wallet.addSdJwt(id: "pid-1")
        let reader = try TestReader.make(host: "rp.example")
        // An attacker's page names another verifier's redirect_uri client (which may only be
        // unsigned) and lists its own origin in expected_origins: nothing authenticates it.
        for clientId in ["redirect_uri:https://bank.example/cb", reader.sanDnsClientId] {
            var payload = Self.data(query: Remote.pidQuery())
            payload["client_id"] = .string(clientId)
            payload["expected_origins"] = [.string(Self.origin)]
            let header = Base64URL.encode(Array(#"{"alg":"none","typ":"oauth-authz-req+jwt"}"#.utf8))
            let object = header + "." + Base64URL.encode(Array(JSONValue.object(payload).serialized.utf8)) + "."
            let request = JSONValue.object(["protocol": "openid4vp-v1-signed", "data": ["request": .string(object)]]).serialized
            for anchors in [[], [reader.root]] {
                let states = try await RequestCheckTests.run(Remote.client(wallet, http: RecordingHTTPClient { _ in .json([:]) },
                                                                           anchors: anchors).startDcApi(request, origin: Self.origin))
                #expect(states.last == .failed(.invalidRequest(.unsignedRequestNotAllowed)), "\(clientId), \(anchors.count) anchors")
                #expect(!states.contains { if case .requestResolved = $0 { true } else { false } })
            }
        }
    }

    @Test("malformed DC API requests: protocol, data, origin", arguments: [
        (#"{"protocol": "openid4vp-v1-multisigned", "data": {}}"#, "https://rp.example",
         InvalidRequestReason.unsupportedDcApiProtocol("openid4vp-v1-multisigned")),
        (#"{"protocol": "openid4vp-v1-unsigned"}"#, "https://rp.example", .malformedDcApiRequest),
        (#"{"protocol": "openid4vp-v1-unsigned", "data": 7}"#, "https://rp.example", .malformedDcApiRequest),
        (#"{"protocol": "openid4vp-v1-unsigned", "data": {}}"#, "http://rp.example", .invalidOrigin("http://rp.example")),
        (#"{"protocol": "openid4vp-v1-unsigned", "data": {}}"#, "https://rp.example/path", .invalidOrigin("https://rp.example/path")),
        (#"{"protocol": "openid4vp-v1-signed", "data": {}}"#, "https://rp.example", .missingParameter("request")),
        (#"{"protocol": "openid4vp-v1-unsigned", "data": {"response_type": "vp_token", "response_mode": "direct_post", "nonce": "n", "dcql_query": {"credentials": [{"id": "a", "format": "mso_mdoc", "meta": {"doctype_value": "x"}}]}}}"#,
         "https://rp.example", .unsupportedResponseMode("direct_post")),
    ])
    func malformed(request: String, origin: String, reason: InvalidRequestReason) async throws {
        let wallet = try await TestWallet.make()
        let states = try await RequestCheckTests.run(Remote.client(wallet, http: RecordingHTTPClient { _ in .json([:]) })
            .startDcApi(request, origin: origin))
        #expect(states.last == .failed(.invalidRequest(reason)))
    }

    @Test("declining a DC API request sends nothing; reportError only hands back the error object")
    func declineSendsNothing() async throws {
        let wallet = try await TestWallet.make()
        try await wallet.addSdJwt(id: "pid-1")
        let http = RecordingHTTPClient { _ in .json([:]) }
        let client = Remote.client(wallet, http: http)
        let session = client.startDcApi(Self.unsigned(Self.data(query: Remote.pidQuery())), origin: Self.origin)
        let request = try #require(try await waitFor(session, resolved: true).request)
        #expect(try await client.reportError(request, .accessDenied) == .dcApiResponse(#"{"error":"access_denied"}"#))
        session.decline()
        #expect(try await waitFor(session) == .declined(redirectUri: nil))
        #expect(http.requests.isEmpty)
    }

    @Test("the data object may arrive as a JSON string")
    func dataAsString() async throws {
        let wallet = try await TestWallet.make()
        try await wallet.addSdJwt(id: "pid-1")
        let text = JSONValue.object(["protocol": "openid4vp-v1-unsigned",
                                     "data": .string(JSONValue.object(Self.data(query: Remote.pidQuery())).serialized)]).serialized
        let (_, response) = try await Self.complete(Remote.client(wallet, http: RecordingHTTPClient { _ in .json([:]) })
            .startDcApi(text, origin: Self.origin))
        #expect(response["vp_token"]?["pid"] != nil)
    }
}
