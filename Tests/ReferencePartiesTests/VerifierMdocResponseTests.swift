import CBOR
import Foundation
import JOSE
import Mdoc
import ReferenceParties
import SDJWT
import Testing
import WalletCrypto
import WalletEncoding
import WalletRuntime

@Suite("Reference verifier: mdoc and DC API responses")
struct VerifierMdocResponseTests {
    static let ns = VerifierFixture.mDLNameSpace

    @Test("an mdoc via direct_post.jwt over the OpenID4VPHandover transcript (with the key thumbprint) is accepted")
    func mdocEncrypted() async throws {
        let fixture = try await VerifierFixture.make()
        let transaction = try await fixture.verifier.createTransaction(
            PresentationRequestOptions(query: .mdlAge, responseMode: .directPostJwt))
        let presentation = try await fixture.presentMdoc(try await fixture.issueMDL(), elements: ["family_name", "age_over_18"],
                                                         transcript: VerifierFixture.transcript(transaction))
        let response = try await fixture.postEncrypted(
            ["vp_token": ["mdl": [.string(presentation)]], "state": .string(transaction.state ?? "")], to: transaction)
        #expect(response.status == 200)
        let verdict = try await fixture.verdict(transaction.id)
        #expect(verdict.outcome == .accepted)
        let document = try #require(verdict.presentations.first)
        #expect(document.format == .msoMdoc && document.credentialType == VerifierFixture.mDL && document.holderBound)
        #expect(document.value(at: [.key(Self.ns), .key("age_over_18")]) == true)
        #expect(document.issuerCertificateSubjects.first?.contains("Test DS") == true)
    }

    @Test("an mdoc signed over another transcript (nonce, response_uri, or missing thumbprint) is rejected")
    func wrongTranscript() async throws {
        let fixture = try await VerifierFixture.make()
        let credential = try await fixture.issueMDL()
        func attempt(_ transcript: (VerifierTransaction) -> SessionTranscript, encrypted: Bool) async throws -> VerificationFailure? {
            let transaction = try await fixture.verifier.createTransaction(
                PresentationRequestOptions(query: .mdlAge, responseMode: encrypted ? .directPostJwt : .directPost))
            let presentation = try await fixture.presentMdoc(credential, elements: ["family_name", "age_over_18"],
                                                             transcript: transcript(transaction))
            if encrypted {
                _ = try await fixture.postEncrypted(["vp_token": ["mdl": [.string(presentation)]],
                                                     "state": .string(transaction.state ?? "")], to: transaction)
            } else {
                _ = await fixture.postVPToken(["mdl": [.string(presentation)]], to: transaction)
            }
            return try await fixture.verdict(transaction.id).failure
        }
        let cases: [((VerifierTransaction) -> SessionTranscript, Bool)] = [
            ({ VerifierFixture.transcript($0, nonce: "other") }, false),
            ({ VerifierFixture.transcript($0, responseUri: "https://evil.example/response") }, false),
            ({ .openID4VP(.openID4VP(clientId: $0.clientId, nonce: $0.nonce, jwkThumbprint: nil,
                                     responseUri: $0.responseURI.absoluteString)) }, true),
        ]
        for (transcript, encrypted) in cases {
            guard case .mdoc("mdl", .deviceAuthenticationFailed) = try await attempt(transcript, encrypted: encrypted) else {
                Issue.record("expected deviceAuthenticationFailed")
                continue
            }
        }
    }

    @Test("an mdoc with an undisclosed requested element, an extra element, or another docType is rejected")
    func mdocClaims() async throws {
        let fixture = try await VerifierFixture.make()
        func attempt(_ elements: [String], docType: String = VerifierFixture.mDL) async throws -> VerificationFailure? {
            let transaction = try await fixture.verifier.createTransaction(PresentationRequestOptions(query: .mdlAge))
            let presentation = try await fixture.presentMdoc(try await fixture.issueMDL(docType: docType), elements: elements,
                                                             transcript: VerifierFixture.transcript(transaction))
            _ = await fixture.postVPToken(["mdl": [.string(presentation)]], to: transaction)
            return try await fixture.verdict(transaction.id).failure
        }
        #expect(try await attempt(["family_name"]) == .missingClaim(queryId: "mdl", path: [.key(Self.ns), .key("age_over_18")]))
        #expect(try await attempt(["family_name", "age_over_18", "document_number"])
            == .extraClaimDisclosed(queryId: "mdl", path: [.key(Self.ns), .key("document_number")]))
        #expect(try await attempt(["family_name", "age_over_18"], docType: "org.example.other")
            == .credentialTypeNotRequested(queryId: "mdl", type: "org.example.other"))
    }

    @Test("an mdoc values query is checked on the element converted to JSON")
    func mdocValues() async throws {
        let fixture = try await VerifierFixture.make()
        let query = VerifierQuery(credentials: [.mdoc(id: "mdl", docType: VerifierFixture.mDL, claims: [
            .init(path: [.key(Self.ns), .key("age_over_18")], values: [false]),
        ])])
        let transaction = try await fixture.verifier.createTransaction(PresentationRequestOptions(query: query))
        let presentation = try await fixture.presentMdoc(try await fixture.issueMDL(), elements: ["age_over_18"],
                                                         transcript: VerifierFixture.transcript(transaction))
        _ = await fixture.postVPToken(["mdl": [.string(presentation)]], to: transaction)
        #expect(try await fixture.verdict(transaction.id).failure
            == .claimValueNotAllowed(queryId: "mdl", path: [.key(Self.ns), .key("age_over_18")]))
    }

    @Test("an mdoc from an untrusted IACA is rejected")
    func untrustedIssuer() async throws {
        let fixture = try await VerifierFixture.make(trustMdocIssuer: false)
        let transaction = try await fixture.verifier.createTransaction(PresentationRequestOptions(query: .mdlAge))
        let presentation = try await fixture.presentMdoc(try await fixture.issueMDL(), elements: ["family_name", "age_over_18"],
                                                         transcript: VerifierFixture.transcript(transaction))
        _ = await fixture.postVPToken(["mdl": [.string(presentation)]], to: transaction)
        guard case .mdoc("mdl", .untrustedIssuer) = try await fixture.verdict(transaction.id).failure else {
            Issue.record("expected untrustedIssuer")
            return
        }
    }

    @Test("mdoc transaction data: the device-signed digest element binds the entry; a wrong value or none is rejected")
    func mdocTransactionData() async throws {
        let fixture = try await VerifierFixture.make()
        let entry = VerifierTransactionData(type: "payment", credentialIds: ["mdl"], details: ["amount": "42.00"])
        let options = PresentationRequestOptions(query: .mdlAge, transactionData: [entry])
        func attempt(_ value: (String) -> CBOR?) async throws -> PresentationVerdict {
            let transaction = try await fixture.verifier.createTransaction(options)
            let encoded = try #require(transaction.transactionData.first)
            let deviceSigned = value(encoded).map { DeviceNameSpaces(nameSpaces: [NameSpaced(VerifierFixture.txNameSpace, [DataElement("payment", $0)])]) }
            let presentation = try await fixture.presentMdoc(try await fixture.issueMDL(), elements: ["family_name", "age_over_18"],
                                                             transcript: VerifierFixture.transcript(transaction),
                                                             deviceSigned: deviceSigned ?? .empty)
            _ = await fixture.postVPToken(["mdl": [.string(presentation)]], to: transaction)
            return try await fixture.verdict(transaction.id)
        }
        let accepted = try await attempt { .byteString(HashAlgorithm.sha256.digest(Array($0.utf8))) }
        #expect(accepted.outcome == .accepted && accepted.presentations.first?.transactionData == [0])
        #expect(try await attempt { _ in .byteString([0, 1, 2]) }.failure
            == .transactionData(.elementValueMismatch(queryId: "mdl", index: 0)))
        #expect(try await attempt { _ in nil }.failure == .transactionData(.notBound(index: 0)))
    }

    @Test("an SD-JWT VC and an mdoc answer one request together")
    func bothFormats() async throws {
        let fixture = try await VerifierFixture.make()
        let query = VerifierQuery(credentials: VerifierQuery.pidNames.credentials + VerifierQuery.mdlAge.credentials)
        let transaction = try await fixture.verifier.createTransaction(PresentationRequestOptions(query: query))
        let sdJwt = try await fixture.present(try await fixture.issuePID(), disclosing: [["given_name"], ["family_name"]],
                                              keyBinding: fixture.binding(transaction))
        let mdoc = try await fixture.presentMdoc(try await fixture.issueMDL(), elements: ["family_name", "age_over_18"],
                                                 transcript: VerifierFixture.transcript(transaction))
        _ = await fixture.postVPToken(["pid": [.string(sdJwt)], "mdl": [.string(mdoc)]], to: transaction)
        let verdict = try await fixture.verdict(transaction.id)
        #expect(verdict.outcome == .accepted)
        #expect(verdict.presentations.map(\.queryId) == ["pid", "mdl"])
    }

    // MARK: DC API

    @Test("an unsigned DC API request carries the parameters without client_id")
    func dcApiUnsignedRequest() async throws {
        let fixture = try await VerifierFixture.make()
        let request = try await fixture.verifier.createDcApiRequest(DcApiRequestOptions(query: .pidNames))
        #expect(request.protocolIdentifier == "openid4vp-v1-unsigned")
        #expect(request.data["client_id"] == nil && request.data["expected_origins"] == nil)
        #expect(request.data["response_mode"] == "dc_api" && request.data["nonce"]?.stringValue == request.nonce)
        #expect(request.requestJSON["protocol"] == "openid4vp-v1-unsigned")
    }

    @Test("a signed DC API request is a JAR with client_id and expected_origins; unexpectedOrigin lists another origin")
    func dcApiSignedRequest() async throws {
        let fixture = try await VerifierFixture.make()
        let origins = ["https://verifier.example"]
        let request = try await fixture.verifier.createDcApiRequest(
            DcApiRequestOptions(query: .pidNames, signed: true, expectedOrigins: origins, encrypted: true))
        #expect(request.protocolIdentifier == "openid4vp-v1-signed")
        let jwt = try JWT(compact: try #require(request.data["request"]?.stringValue))
        #expect(jwt.header.type == "oauth-authz-req+jwt")
        _ = try jwt.jws.verifyWithCertificateChain(trustAnchors: fixture.verifier.pki.anchors, at: fixture.clock.now,
                                                   policy: .openID4VPClient(sanDNS: "localhost"))
        #expect(jwt.claims["client_id"] == "x509_san_dns:localhost")
        #expect(jwt.claims["expected_origins"] == ["https://verifier.example"])
        #expect(jwt.claims["response_mode"] == "dc_api.jwt")
        #expect(jwt.claims["client_metadata"]?["jwks"]?["keys"]?.arrayValue?.count == 1)

        let faulty = try await fixture.verifier.createDcApiRequest(
            DcApiRequestOptions(query: .pidNames, signed: true, expectedOrigins: origins, faults: [.unexpectedOrigin]))
        let faultyJWT = try JWT(compact: try #require(faulty.data["request"]?.stringValue))
        #expect(faultyJWT.claims["expected_origins"] == ["https://unexpected.invalid"])
        await #expect(throws: VerifierError.unsupportedCombination(.noExpectedOrigins)) {
            try await fixture.verifier.createDcApiRequest(DcApiRequestOptions(query: .pidNames, signed: true))
        }
    }

    @Test("DC API: an SD-JWT VC bound to origin:<origin> is accepted; bound to the wrong origin it is rejected")
    func dcApiSdJwt() async throws {
        let fixture = try await VerifierFixture.make()
        let origin = "https://verifier.example"
        for (audience, accepted) in [("origin:" + origin, true), ("origin:https://evil.example", false)] {
            let request = try await fixture.verifier.createDcApiRequest(DcApiRequestOptions(query: .pidNames))
            let presentation = try await fixture.present(
                try await fixture.issuePID(), disclosing: [["given_name"], ["family_name"]],
                keyBinding: KeyBindingParameters(audience: audience, nonce: request.nonce, issuedAt: fixture.clock.now))
            let verdict = try await fixture.verifier.verifyDcApiResponse(["vp_token": ["pid": [.string(presentation)]]],
                                                                        transactionId: request.id, origin: origin)
            #expect((verdict.outcome == .accepted) == accepted)
            #expect(verdict.redirectUri == nil)
        }
    }

    @Test("DC API: an mdoc over the OpenID4VPDCAPIHandover is accepted encrypted (dc_api.jwt); for another origin it is rejected")
    func dcApiMdoc() async throws {
        let fixture = try await VerifierFixture.make()
        let origin = "https://verifier.example"
        let credential = try await fixture.issueMDL()
        for (signedOrigin, accepted) in [(origin, true), ("https://evil.example", false)] {
            let request = try await fixture.verifier.createDcApiRequest(DcApiRequestOptions(
                query: .mdlAge, signed: true, expectedOrigins: [origin], encrypted: true))
            let key = try #require(request.encryptionKey)
            let transcript = SessionTranscript.openID4VP(.openID4VPDCAPI(origin: signedOrigin, nonce: request.nonce,
                                                                         jwkThumbprint: key.thumbprintBytes))
            let presentation = try await fixture.presentMdoc(credential, elements: ["family_name", "age_over_18"],
                                                             transcript: transcript)
            let jwe = try JWE.encrypt(JSONValue.object(["vp_token": ["mdl": [.string(presentation)]]]).serializedBytes, to: key)
            let verdict = try await fixture.verifier.verifyDcApiResponse(["response": .string(jwe.compactSerialization)],
                                                                        transactionId: request.id, origin: origin)
            #expect((verdict.outcome == .accepted) == accepted)
            if !accepted {
                guard case .mdoc("mdl", .deviceAuthenticationFailed) = verdict.failure else {
                    Issue.record("expected deviceAuthenticationFailed")
                    continue
                }
            }
        }
    }

    @Test("DC API: an unencrypted answer to dc_api.jwt is refused; an unknown transaction is an error")
    func dcApiRefusals() async throws {
        let fixture = try await VerifierFixture.make()
        let request = try await fixture.verifier.createDcApiRequest(DcApiRequestOptions(query: .pidNames, encrypted: true))
        let verdict = try await fixture.verifier.verifyDcApiResponse(["vp_token": ["pid": ["x"]]], transactionId: request.id,
                                                                    origin: "https://verifier.example")
        #expect(verdict.failure == .responseNotEncrypted)
        await #expect(throws: VerifierError.unknownTransaction("nope")) {
            try await fixture.verifier.verifyDcApiResponse([:], transactionId: "nope", origin: "https://verifier.example")
        }
    }

    @Test("the verifier's transcripts match OpenID4VP 1.0 App. B.2.6 byte for byte")
    func handoverVectors() throws {
        // ../shared/vectors/openid4vp/session_transcript_{redirect,dc_api}.json (OpenID4VP 1.0 final, App. B.2.6.1/2).
        let directory = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent().deletingLastPathComponent().appendingPathComponent("shared/vectors/openid4vp")
        for name in ["session_transcript_redirect.json", "session_transcript_dc_api.json"] {
            let file = try JSONValue.parse(Array(try Data(contentsOf: directory.appendingPathComponent(name))))
            let inputs = try #require(file["inputs"]?.objectValue)
            let jwk = try JWK(members: try #require(inputs["encryption_jwk"]?.objectValue))
            let nonce = try #require(inputs["nonce"]?.stringValue)
            let handover: Handover = if let origin = inputs["origin"]?.stringValue {
                .openID4VPDCAPI(origin: origin, nonce: nonce, jwkThumbprint: jwk.thumbprintBytes)
            } else {
                .openID4VP(clientId: try #require(inputs["client_id"]?.stringValue), nonce: nonce,
                           jwkThumbprint: jwk.thumbprintBytes, responseUri: try #require(inputs["response_uri"]?.stringValue))
            }
            let expected = try #require(file["expected"]?["session_transcript_hex"]?.stringValue)
            #expect(Hex.encode(SessionTranscript.openID4VP(handover).encodedBytes) == expected)
        }
    }
}
