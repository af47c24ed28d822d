import Foundation
import JOSE
import Mdoc
import SDJWT
@testable import OpenID4VP
import Testing
import WalletCrypto
import WalletEncoding
import WalletRuntime

/// OpenID4VP 1.0 examples (../shared/vectors/openid4vp, copied from the 1.0-final text)
/// reproduced through the client's own code paths.
@Suite("OpenID4VP 1.0 vectors")
struct VectorTests {
    static func example(_ file: String, _ name: String) throws -> JSONObject {
        let vector = try VPTestSupport.vector(file)
        for entry in try vector.object("inputs").objectArray("examples") where try entry.string("name") == name { return entry }
        throw VPTestSupport.Failure(description: "no example \(name) in \(file)")
    }

    static func resolve(_ parameters: JSONObject, clientId: String) throws -> ResolvedRequest {
        let id = try ClientIdentifier(clientId)
        return try ResolvedRequest(parameters: parameters, context: .remote(
            clientId: id, verifier: VerifierIdentity(clientId: id.full, clientIdScheme: id.scheme)), allowHTTP: false)
    }

    static let anyQuery: JSONValue = ["credentials": [["id": "q", "format": "mso_mdoc", "meta": ["doctype_value": "org.iso.18013.5.1.mDL"]]]]

    @Test("the redirect SessionTranscript of App. B.2.6.1, byte for byte, from a request with those parameters")
    func redirectTranscript() throws {
        let vector = try VPTestSupport.vector("session_transcript_redirect.json")
        let inputs = try vector.object("inputs"), expected = try vector.object("expected")
        let resolved = try Self.resolve([
            "client_id": .string(try inputs.string("client_id")), "response_type": "vp_token", "response_mode": "direct_post.jwt",
            "response_uri": .string(try inputs.string("response_uri")), "nonce": .string(try inputs.string("nonce")),
            "dcql_query": Self.anyQuery, "client_metadata": ["jwks": ["keys": [.object(try inputs.object("encryption_jwk"))]]],
        ], clientId: try inputs.string("client_id"))
        #expect(resolved.encryption?.keyThumbprint == Hex.decode(try expected.string("jwk_thumbprint_hex")))
        let transcript = PresentationFlow.sessionTranscript(resolved)
        #expect(transcript.handover.handoverInfoBytes == Hex.decode(try expected.string("handover_info_hex")))
        #expect(transcript.handover.cbor.encoded() == Hex.decode(try expected.string("handover_hex")))
        #expect(Hex.encode(transcript.encodedBytes) == (try expected.string("session_transcript_hex")))
    }

    @Test("the DC API SessionTranscript of App. B.2.6.2, byte for byte, from a dc_api.jwt request at that origin")
    func dcApiTranscript() throws {
        let vector = try VPTestSupport.vector("session_transcript_dc_api.json")
        let inputs = try vector.object("inputs"), expected = try vector.object("expected")
        let origin = try inputs.string("origin")
        let clientId = ClientIdentifier(origin: origin)
        let resolved = try ResolvedRequest(parameters: [
            "response_type": "vp_token", "response_mode": "dc_api.jwt", "nonce": .string(try inputs.string("nonce")),
            "dcql_query": Self.anyQuery, "client_metadata": ["jwks": ["keys": [.object(try inputs.object("encryption_jwk"))]]],
        ], context: .dcApi(origin: origin, clientId: clientId, verifier: VerifierIdentity(clientId: clientId.full, clientIdScheme: .origin)),
        allowHTTP: false)
        let transcript = PresentationFlow.sessionTranscript(resolved)
        #expect(transcript.handover.handoverInfoBytes == Hex.decode(try expected.string("handover_info_hex")))
        #expect(transcript.handover.cbor.encoded() == Hex.decode(try expected.string("handover_hex")))
        #expect(Hex.encode(transcript.encodedBytes) == (try expected.string("session_transcript_hex")))
    }

    @Test("the §8.3 request picks key ac and A128GCM; the published JWE decrypts; ours decrypts with the verifier's key")
    func encryptedResponse() throws {
        let vector = try VPTestSupport.vector("encrypted_response_jwe.json")
        let inputs = try vector.object("inputs"), expected = try vector.object("expected")
        let request = try inputs.object("request").object("json")
        let metadata = try ClientMetadata(json: try request.object("client_metadata"))
        #expect(metadata.keys.count == 3, "the X448 key is skipped")
        let choice = try #require(metadata.responseEncryption)
        #expect(choice.key.keyID == "ac" && choice.contentEncryption == .a128gcm)
        let privateKey = try JWK(members: try inputs.object("verifier_private_jwk"))
        let published = try JWE(compact: try inputs.string("response_jwe_compact"))
        #expect(try JSONValue.parseObject(try published.decrypt(with: privateKey)) == (try expected.object("payload")))
        let payload = JSONValue.object(["vp_token": ["my_credential": ["eyJ..."]], "state": "s"]).serializedBytes
        let ours = try JWE.encrypt(payload, to: choice.key, contentEncryption: choice.contentEncryption)
        #expect(ours.header.keyID == "ac" && ours.header.algorithm == "ECDH-ES" && ours.header.encryption == "A128GCM")
        #expect(try ours.decrypt(with: privateKey) == payload)
        // The dc_api.jwt request of the example resolves and asks for that encryption.
        let clientId = ClientIdentifier(origin: "https://verifier.example")
        let resolved = try ResolvedRequest(parameters: request, context: .dcApi(
            origin: "https://verifier.example", clientId: clientId, verifier: VerifierIdentity(clientId: clientId.full, clientIdScheme: .origin)),
            allowHTTP: false)
        #expect(resolved.responseMode == .dcApiJwt && resolved.encryption == choice)
    }

    @Test("every client_metadata example parses; only the one with jwks offers response encryption")
    func clientMetadata() throws {
        let examples = try VPTestSupport.vector("client_metadata.json").object("inputs").objectArray("examples")
        for example in examples {
            let metadata = try ClientMetadata(json: try example.object("json"))
            let name = try example.string("name")
            #expect((metadata.responseEncryption != nil) == (name == "client_metadata_with_jwks_and_enc_values"), "\(name)")
        }
    }

    @Test("client identifier prefixes split at the first colon (§5.9)", arguments: [
        ("redirect_uri:https://client.example.org/cb", ClientIdScheme.redirectUri, "https://client.example.org/cb"),
        ("x509_san_dns:client.example.org", .x509SanDns, "client.example.org"),
        ("x509_hash:Uvo3HtuIxuhC92rShpgqcT3YXwrqRxWEviRiA0OZszk", .x509Hash, "Uvo3HtuIxuhC92rShpgqcT3YXwrqRxWEviRiA0OZszk"),
    ])
    func prefixes(clientId: String, scheme: ClientIdScheme, value: String) throws {
        let parsed = try ClientIdentifier(clientId)
        #expect(parsed.scheme == scheme && parsed.value == value && parsed.full == clientId)
    }

    @Test("prefixes this wallet does not support are refused by name", arguments: [
        ("decentralized_identifier:did:example:123", "decentralized_identifier"),
        ("verifier_attestation:example-client", "verifier_attestation"),
        ("openid_federation:https://federation-verifier.example.com", "openid_federation"),
        ("example-client", "pre-registered"),
        ("https://client.example.org/cb", "https"),
    ])
    func unsupportedPrefixes(clientId: String, prefix: String) {
        #expect(throws: InvalidRequestReason.unsupportedClientIdPrefix(prefix)) { try ClientIdentifier(clientId) }
    }

    @Test("the §5.4 and §8.2 request invocations parse to their request URIs and methods")
    func invocations() throws {
        let byReference = try Self.example("authorization_requests.json", "request_object_by_reference_query_x509_san_dns_request_uri_method_post")
        let query = try byReference.string("text").replacingOccurrences(of: "\n  ", with: "")
            .replacingOccurrences(of: "GET /authorize?", with: "openid4vp://?").replacingOccurrences(of: " HTTP/1.1", with: "")
        #expect(try RequestInvocation.parse(query, allowHTTP: false) == .requestUri(
            clientId: "x509_san_dns:client.example.org",
            url: try #require(URL(string: "https://client.example.org/request/vapof4ql2i7m41m68uep")), method: .post))
        let link = try Self.example("authorization_requests.json", "direct_post_request_uri_link")
        let text = try link.string("text").replacingOccurrences(of: "\n  ", with: "")
        #expect(try RequestInvocation.parse(text, allowHTTP: false) == .requestUri(
            clientId: "https://client.example.org/cb", url: try #require(URL(string: "https://client.example.org/567545564")), method: .get))
    }

    @Test("with allowHTTP, http reaches only loopback literals and localhost, not names that start with 127.", arguments: [
        ("http://127.0.0.1:8080/request", true), ("http://127.1.2.3/request", true), ("http://localhost/request", true),
        ("http://[::1]:9000/request", true), ("http://127.evil.example/request", false),
        ("http://127.0.0.1.evil.example/request", false), ("http://128.0.0.1/request", false),
    ])
    func loopbackOnly(uri: String, allowed: Bool) throws {
        if allowed {
            #expect(try RequestInvocation.parse(uri, allowHTTP: true) == .requestUri(clientId: nil, url: try #require(URL(string: uri)),
                                                                                       method: .get))
        } else {
            #expect(throws: InvalidRequestReason.insecureURL(parameter: "request URI")) { try RequestInvocation.parse(uri, allowHTTP: true) }
        }
        #expect(throws: InvalidRequestReason.insecureURL(parameter: "request URI")) { try RequestInvocation.parse(uri, allowHTTP: false) }
    }

    @Test("the §5.9.3 redirect_uri request parses by value, its client_metadata included")
    func redirectUriRequest() throws {
        let example = try Self.example("authorization_requests.json", "redirect_uri_prefix_unsigned_request")
        let metadata = try example.string("client_metadata_joined")
        let uri = "https://wallet.example.org/universal-link?response_type=vp_token"
            + "&client_id=redirect_uri%3Ahttps%3A%2F%2Fclient.example.org%2Fcb"
            + "&dcql_query=" + FormURLEncoding.percentEncode(Self.anyQuery.serialized)
            + "&nonce=n-0S6_WzA2Mj&client_metadata=" + metadata
        guard case .byValue(let clientId, let parameters) = try RequestInvocation.parse(uri, allowHTTP: false) else {
            Issue.record("not by value")
            return
        }
        #expect(clientId == "redirect_uri:https://client.example.org/cb")
        #expect(parameters["client_metadata"]?["vp_formats_supported"]?["dc+sd-jwt"]?["kb-jwt_alg_values"] == ["ES256"])
        // The example has redirect_uri and no response_mode: a fragment response, which this wallet cannot send.
        var withRedirect = parameters
        withRedirect["redirect_uri"] = "https://client.example.org/cb"
        #expect(throws: InvalidRequestReason.missingParameter("response_mode")) {
            try Self.resolve(withRedirect, clientId: clientId)
        }
        var directPost = parameters
        directPost["response_mode"] = "direct_post"
        #expect(try Self.resolve(directPost, clientId: clientId).responseUri == "https://client.example.org/cb")
    }

    @Test("the wallet's request_uri POST carries the form §5.10 prints: wallet_metadata JSON and wallet_nonce")
    func requestUriPostForm() throws {
        let example = try Self.example("authorization_requests.json", "request_uri_post_wallet_metadata_wallet_nonce")
        let pairs = try FormURLEncoding.decode("wallet_metadata=" + (try example.string("wallet_metadata_joined"))
                                               + "&wallet_nonce=" + (try example.string("wallet_nonce")))
        #expect(pairs.fields.map(\.name) == ["wallet_metadata", "wallet_nonce"])
        let printed = try JSONValue.parseObject(try #require(pairs["wallet_metadata"]))
        #expect(printed["vp_formats_supported"]?["dc+sd-jwt"] != nil)
        var flow = PresentationFlow(invocation: .uri("openid4vp://?" + FormURLEncoding.encode([
            ("client_id", "x509_san_dns:client.example.org"), ("request_uri", "https://client.example.org/request/vapof4ql2i7m41m68uep"),
            ("request_uri_method", "post"),
        ])), config: PresentationConfig(), walletNonce: "qPmxiNFCR3QTm19POc8u")
        guard case .fetchRequestObject(let post)? = flow.handle(.start(now: testNow)).first else {
            Issue.record("no fetch")
            return
        }
        #expect(post.method == .post && post.headers["Content-Type"] == "application/x-www-form-urlencoded")
        #expect(post.headers["Accept"] == "application/oauth-authz-req+jwt")
        #expect(post.form["wallet_nonce"] == "qPmxiNFCR3QTm19POc8u")
        let ours = try JSONValue.parseObject(try #require(post.form["wallet_metadata"]))
        #expect(ours["vp_formats_supported"]?["dc+sd-jwt"]?["kb-jwt_alg_values"]?.stringArrayValue?.contains("ES256") == true)
    }

    @Test("the App. A.3 signed DC API payload resolves for a listed origin and not for another")
    func signedDcApiPayload() async throws {
        let example = try Self.example("authorization_requests.json", "dc_api_signed_request_payload_compact")
        let text = try example.string("text").replacingOccurrences(of: "{...}", with: RemotePresentationTests.pidQuery().serialized)
        let payload = try JSONValue.parseObject(text)
        let reader = try TestReader.make(host: "rp.example.com")
        let request = JSONValue.object(["protocol": "openid4vp-v1-signed", "data": ["request": .string(try await reader.sign(payload))]]).serialized
        let wallet = try await TestWallet.make()
        try await wallet.addSdJwt(id: "pid-1")
        let client = RemotePresentationTests.client(wallet, http: RecordingHTTPClient { _ in .json([:]) }, anchors: [reader.root])
        let listed = try await waitFor(client.startDcApi(request, origin: "https://origin2.example.com"), resolved: true)
        #expect(listed.request?.verifier.clientId == "x509_san_dns:rp.example.com")
        #expect(listed.request?.verifier.trusted == true)
        let other = try await waitFor(client.startDcApi(request, origin: "https://origin3.example.com"))
        #expect(other == .failed(.invalidRequest(.originNotExpected("https://origin3.example.com"))))
    }

    @Test("responses: the §8.2 error body, the response URI's redirect reply, the DC API error object, the KB-JWT members")
    func responses() throws {
        let errorExample = try Self.example("responses.json", "direct_post_error_response_invalid_request")
        let printedBody = try errorExample.string("text").components(separatedBy: "\n\n")[1]
            .replacingOccurrences(of: " ", with: "").replacingOccurrences(of: "\n", with: "")
        let resolved = try Self.resolve([
            "client_id": "x509_san_dns:client.example.org", "response_type": "vp_token", "response_mode": "direct_post",
            "response_uri": "https://client.example.org/post", "nonce": "n-0S6_WzA2Mj", "state": "eyJhb...6-sVA",
            "dcql_query": Self.anyQuery,
        ], clientId: "x509_san_dns:client.example.org")
        let post = try #require(PresentationFlow.errorResponse(resolved, code: .invalidRequest, description: "unsupported client_id_prefix"))
        #expect(String(decoding: try #require(post.body), as: UTF8.self) == printedBody)
        #expect(post.url.absoluteString == "https://client.example.org/post")

        let reply = try Self.example("responses.json", "response_uri_reply_with_redirect_uri")
        let body = try reply.object("body_json")
        #expect(try PresentationFlow.outcome(of: .json(body)) == URL(string: try body.string("redirect_uri")))

        let dcError = try Self.example("responses.json", "dc_api_error_data_object")
        #expect(JSONValue.object(try dcError.object("json")).serialized == #"{"error":"invalid_request"}"#)

    }

    @Test("our KB-JWT carries the members of the App. B.3.6 example, with aud the full client identifier")
    func keyBindingMembers() async throws {
        let kb = try Self.example("responses.json", "sd_jwt_vc_kb_jwt_payload")
        let printed = try kb.object("json")
        let holder = try ECPrivateKey.generate(curve: .p256), issuer = try ECPrivateKey.generate(curve: .p256)
        let credential = try await SDJWTIssuer(signer: SoftwareSigner(issuer)).issue(
            claims: ["vct": "https://credentials.example.com/identity_credential", "given_name": "John"],
            plan: DisclosurePlan(members: ["given_name": .disclosable]), holderKey: JWK(publicKey: holder.publicKey))
        let entry = Base64URL.encode(JSONValue.object(["type": "t", "credential_ids": ["q"]]).serializedBytes)
        let job = PresentationJob(queryId: "q", credentialId: "c", format: "dc+sd-jwt", disclosedPaths: [["given_name"]],
                                  intentToRetain: [:], holderBound: true, transactionData: [try TransactionData(encoded: entry)],
                                  deviceSignedElements: [])
        let context = PresentationContext(
            audience: try printed.string("aud"), nonce: try printed.string("nonce"), issuedAt: testNow,
            sessionTranscript: .openID4VP(.openID4VP(clientId: "", nonce: "", jwkThumbprint: nil, responseUri: "")))
        let presentation = try await PresentationBuilder.sdJwt(job, raw: Array(credential.serialization.utf8),
                                                               signer: SoftwareSigner(holder), context: context)
        let claims = try #require(try SDJWT(compact: presentation).keyBindingJWT?.claims)
        #expect(Set(printed.keys).isSubset(of: Set(claims.members.keys)))
        #expect(claims.audience == ["x509_san_dns:client.example.org"] && claims.nonce == "n-0S6_WzA2Mj")
        #expect(claims["transaction_data_hashes"]?.stringArrayValue == [SDJWTHashAlgorithm.sha256.base64URLDigest(of: entry)])
    }
}
