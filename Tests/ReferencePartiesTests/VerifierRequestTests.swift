import Foundation
import JOSE
import ReferenceParties
import SDJWT
import Testing
import WalletCrypto
import WalletEncoding
import WalletRuntime

@Suite("Reference verifier: requests")
struct VerifierRequestTests {
    @Test("an x509_san_dns request by reference is a JAR signed by a leaf that chains to the exposed anchor and names the DNS name")
    func x509SanDnsRequest() async throws {
        let fixture = try await VerifierFixture.make()
        let transaction = try await fixture.verifier.createTransaction(PresentationRequestOptions(query: .pidNames))
        let link = try VerifierFixture.linkParameters(transaction)
        #expect(transaction.authorizationRequestURI.hasPrefix("openid4vp://?"))
        #expect(link["client_id"] == "x509_san_dns:localhost")
        #expect(link["request_uri"] == "http://localhost:8080/request/\(transaction.id)")
        #expect(link["request_uri_method"] == "get")

        let jwt = try await fixture.fetchRequestObject(transaction)
        #expect(jwt.header.type == "oauth-authz-req+jwt")
        let path = try jwt.jws.verifyWithCertificateChain(trustAnchors: fixture.verifier.pki.anchors, at: fixture.clock.now,
                                                          policy: .openID4VPClient(sanDNS: "localhost")).path
        #expect(path.first?.subjectAlternativeDNSNames == ["localhost"])
        #expect(path.first?.subject.commonName == "Reference Verifier")
        let claims = jwt.claims
        #expect(claims["client_id"] == "x509_san_dns:localhost")
        #expect(claims["response_type"] == "vp_token")
        #expect(claims["response_mode"] == "direct_post")
        #expect(claims["response_uri"]?.stringValue == transaction.responseURI.absoluteString)
        #expect(URL(string: claims["response_uri"]?.stringValue ?? "")?.host == "localhost")
        #expect(claims.nonce == transaction.nonce)
        #expect(claims["state"]?.stringValue == transaction.state)
        #expect(claims["aud"] == "https://self-issued.me/v2")
        #expect(claims["dcql_query"] == VerifierQuery.pidNames.jsonValue)
        #expect(claims["client_metadata"]?["vp_formats_supported"]?["dc+sd-jwt"] != nil)
        #expect(claims["client_metadata"]?["jwks"] == nil)
        let iat = try #require(claims.issuedAt), exp = try #require(claims.expiration)
        #expect(iat <= fixture.clock.now && exp > fixture.clock.now)
        #expect(try await fixture.verdict(transaction.id).requestFetches == 1)
    }

    @Test("an x509_hash request names the base64url SHA-256 of the signing leaf's DER")
    func x509HashRequest() async throws {
        let fixture = try await VerifierFixture.make()
        let transaction = try await fixture.verifier.createTransaction(
            PresentationRequestOptions(query: .pidNames, clientIdPrefix: .x509Hash))
        let jwt = try await fixture.fetchRequestObject(transaction)
        let leaf = try #require(try jwt.header.certificateChain()?.first)
        let expected = "x509_hash:" + Base64URL.encode(HashAlgorithm.sha256.digest(leaf.derEncoded))
        #expect(transaction.clientId == expected)
        #expect(jwt.claims["client_id"]?.stringValue == expected)
        #expect(fixture.verifier.pki.leafHash == String(expected.dropFirst("x509_hash:".count)))
    }

    @Test("request_uri_method=post echoes the wallet_nonce and records the wallet metadata")
    func requestUriPost() async throws {
        let fixture = try await VerifierFixture.make()
        let transaction = try await fixture.verifier.createTransaction(
            PresentationRequestOptions(query: .pidNames, delivery: .byReference(method: .post)))
        #expect(try VerifierFixture.linkParameters(transaction)["request_uri_method"] == "post")
        let jwt = try await fixture.fetchRequestObject(
            transaction, walletNonce: "qPmxiNFCR3QTm19POc8u",
            walletMetadata: #"{"vp_formats_supported":{"dc+sd-jwt":{"sd-jwt_alg_values":["ES256"]}}}"#)
        #expect(jwt.claims["wallet_nonce"] == "qPmxiNFCR3QTm19POc8u")
        let verdict = try await fixture.verdict(transaction.id)
        #expect(verdict.walletNonce == "qPmxiNFCR3QTm19POc8u")
        #expect(verdict.walletMetadata?["vp_formats_supported"] != nil)
    }

    @Test("the wallet_nonce faults drop or replace the echo")
    func walletNonceFaults() async throws {
        let fixture = try await VerifierFixture.make()
        let missing = try await fixture.verifier.createTransaction(PresentationRequestOptions(
            query: .pidNames, delivery: .byReference(method: .post), faults: [.missingWalletNonce]))
        #expect(try await fixture.fetchRequestObject(missing, walletNonce: "abc").claims["wallet_nonce"] == nil)
        let wrong = try await fixture.verifier.createTransaction(PresentationRequestOptions(
            query: .pidNames, delivery: .byReference(method: .post), faults: [.wrongWalletNonce]))
        let echoed = try await fixture.fetchRequestObject(wrong, walletNonce: "abc").claims["wallet_nonce"]
        #expect(echoed != nil && echoed != "abc")
    }

    @Test("a get request_uri refuses a POST")
    func getRefusesPost() async throws {
        let fixture = try await VerifierFixture.make()
        let transaction = try await fixture.verifier.createTransaction(PresentationRequestOptions(query: .pidNames))
        await #expect(throws: VerifierFixture.Failure.self) { try await fixture.fetchRequestObject(transaction, walletNonce: "n") }
    }

    @Test("the signature, type, time and certificate faults each break exactly their check")
    func signedRequestFaults() async throws {
        let fixture = try await VerifierFixture.make()
        let pki = fixture.verifier.pki
        let now = fixture.clock.now
        func fetch(_ faults: Set<RequestFault>, prefix: VerifierClientIdPrefix = .x509SanDns) async throws
            -> (VerifierTransaction, JWT) {
            let transaction = try await fixture.verifier.createTransaction(
                PresentationRequestOptions(query: .pidNames, clientIdPrefix: prefix, faults: faults))
            return (transaction, try await fixture.fetchRequestObject(transaction))
        }

        let (_, wrongType) = try await fetch([.wrongType])
        #expect(wrongType.header.type == "JWT")
        _ = try wrongType.jws.verifyWithCertificateChain(trustAnchors: pki.anchors, at: now, policy: .signingCertificate)

        let (_, expired) = try await fetch([.expired])
        #expect(try #require(expired.claims.expiration) < now)
        #expect(throws: JOSEError.self) { try expired.validate(JWTValidationOptions(now: now)) }

        let (_, badSignature) = try await fetch([.badSignature])
        #expect(throws: JOSEError.invalidSignature) {
            _ = try badSignature.jws.verifyWithCertificateChain(trustAnchors: pki.anchors, at: now, policy: .signingCertificate)
        }

        let (_, untrusted) = try await fetch([.untrustedChain])
        #expect(throws: JOSEError.self) { _ = try untrusted.jws.verifyWithCertificateChain(trustAnchors: pki.anchors, at: now, policy: .signingCertificate) }
        let untrustedLeaf = try #require(try untrusted.header.certificateChain()?.first)
        #expect(untrustedLeaf.subjectAlternativeDNSNames == ["localhost"])
        try untrusted.jws.verify(with: untrustedLeaf.publicKey)

        let (sanTransaction, san) = try await fetch([.sanMismatch])
        let sanPath = try san.jws.verifyWithCertificateChain(trustAnchors: pki.anchors, at: now, policy: .signingCertificate).path
        #expect(sanPath.first?.subjectAlternativeDNSNames == [VerifierReaderPKI.mismatchedDNSName])
        #expect(throws: JOSEError.self) {
            _ = try san.jws.verifyWithCertificateChain(trustAnchors: pki.anchors, at: now, policy: .openID4VPClient(sanDNS: "localhost"))
        }
        #expect(sanTransaction.clientId == "x509_san_dns:localhost")

        let (hashTransaction, hash) = try await fetch([.x509HashMismatch], prefix: .x509Hash)
        let hashLeaf = try #require(try hash.header.certificateChain()?.first)
        #expect(hashTransaction.clientId != "x509_hash:" + VerifierReaderPKI.x509Hash(of: hashLeaf))
        _ = try hash.jws.verifyWithCertificateChain(trustAnchors: pki.anchors, at: now, policy: .signingCertificate)
        let named = try #require(Base64URL.decodeStrict(hashTransaction.clientId.dropFirst("x509_hash:".count)))
        #expect(throws: JOSEError.self) {
            _ = try hash.jws.verifyWithCertificateChain(trustAnchors: pki.anchors, at: now,
                                                        policy: .openID4VPClient(certificateSHA256: named))
        }

        let (hostTransaction, host) = try await fetch([.responseUriHostMismatch])
        #expect(hostTransaction.responseURI.host == "127.0.0.1")
        #expect(host.claims["response_uri"]?.stringValue == hostTransaction.responseURI.absoluteString)

        let (mismatch, mismatchJWT) = try await fetch([.clientIdMismatch])
        let link = try VerifierFixture.linkParameters(mismatch)
        #expect(link["client_id"] == "x509_san_dns:" + VerifierReaderPKI.mismatchedDNSName)
        #expect(mismatchJWT.claims["client_id"] == "x509_san_dns:localhost")
    }

    @Test("a request by value carries the signed request object in the link")
    func byValue() async throws {
        let fixture = try await VerifierFixture.make()
        let transaction = try await fixture.verifier.createTransaction(
            PresentationRequestOptions(query: .pidNames, delivery: .byValue))
        let link = try VerifierFixture.linkParameters(transaction)
        #expect(transaction.requestURI == nil && link["request_uri"] == nil)
        let jwt = try JWT(compact: try #require(link["request"]))
        _ = try jwt.jws.verifyWithCertificateChain(trustAnchors: fixture.verifier.pki.anchors, at: fixture.clock.now,
                                                   policy: .openID4VPClient(sanDNS: "localhost"))
        #expect(jwt.claims.nonce == transaction.nonce)
    }

    @Test("a redirect_uri request goes unsigned in the link, its client_id the response URI")
    func redirectUriRequest() async throws {
        let fixture = try await VerifierFixture.make()
        let transaction = try await fixture.verifier.createTransaction(
            PresentationRequestOptions(query: .pidNames, clientIdPrefix: .redirectUri, delivery: .byValue))
        let link = try VerifierFixture.linkParameters(transaction)
        #expect(link["client_id"] == "redirect_uri:" + transaction.responseURI.absoluteString)
        #expect(link["request"] == nil)
        #expect(link["response_uri"] == transaction.responseURI.absoluteString)
        #expect(link["nonce"] == transaction.nonce)
        #expect(try JSONValue.parse(try #require(link["dcql_query"])) == VerifierQuery.pidNames.jsonValue)
        await #expect(throws: VerifierError.unsupportedCombination(.unsignedRequestByReference)) {
            try await fixture.verifier.createTransaction(PresentationRequestOptions(query: .pidNames, clientIdPrefix: .redirectUri))
        }
    }

    @Test("direct_post.jwt offers one P-256 ECDH-ES key with a kid and the enc values")
    func encryptedResponseMetadata() async throws {
        let fixture = try await VerifierFixture.make()
        let transaction = try await fixture.verifier.createTransaction(PresentationRequestOptions(
            query: .pidNames, responseMode: .directPostJwt, encryptionAlgorithms: [.a256gcm, .a128gcm]))
        let metadata = try #require(try await fixture.fetchRequestObject(transaction).claims["client_metadata"])
        let keys = try #require(metadata["jwks"]?["keys"]?.arrayValue)
        #expect(keys.count == 1)
        let key = try JWK(members: try #require(keys.first?.objectValue))
        #expect(key == transaction.encryptionKey && !key.isPrivate)
        #expect(key.curveName == "P-256" && key.algorithm == "ECDH-ES" && key.use == "enc" && key.keyID != nil)
        #expect(metadata["encrypted_response_enc_values_supported"] == ["A256GCM", "A128GCM"])
    }

    @Test("transaction data goes as base64url JSON strings that name the query")
    func transactionDataParameter() async throws {
        let fixture = try await VerifierFixture.make()
        let entry = VerifierTransactionData(type: "payment", credentialIds: ["pid"], details: ["amount": "42.00"])
        let transaction = try await fixture.verifier.createTransaction(
            PresentationRequestOptions(query: .pidNames, transactionData: [entry]))
        let sent = try #require(try await fixture.fetchRequestObject(transaction).claims["transaction_data"]?.arrayValue)
        #expect(sent == [.string(entry.encoded)])
        let decoded = try JSONValue.parse(try #require(Base64URL.decodeStrict(entry.encoded)))
        #expect(decoded["type"] == "payment" && decoded["credential_ids"] == ["pid"] && decoded["amount"] == "42.00")
    }

    @Test("POST transactions creates a transaction from JSON options; bad options answer 400")
    func transactionAPI() async throws {
        let fixture = try await VerifierFixture.make()
        let options: JSONValue = [
            "dcql_query": VerifierQuery.pidNames.jsonValue, "response_mode": "direct_post.jwt",
            "client_id_prefix": "x509_hash", "request_uri_method": "post",
            "transaction_data": [["type": "payment", "credential_ids": ["pid"], "amount": "1.00"]],
        ]
        let url = URL(string: "http://localhost:8080/transactions")!
        let created = await fixture.verifier.respond(to: HTTPRequest(
            method: .post, url: url, headers: ["Content-Type": "application/json"], body: options.serializedBytes))
        #expect(created.status == 201)
        let body = VerifierFixture.body(created)
        let id = try #require(body["id"]?.stringValue)
        let transaction = try #require(await fixture.verifier.transaction(id))
        #expect(transaction.responseMode == .directPostJwt && transaction.clientId.hasPrefix("x509_hash:"))
        #expect(body["authorization_request"]?.stringValue == transaction.authorizationRequestURI)
        #expect(try VerifierFixture.linkParameters(transaction)["request_uri_method"] == "post")
        #expect(transaction.transactionData.count == 1)

        let bad = await fixture.verifier.respond(to: HTTPRequest(
            method: .post, url: url, headers: ["Content-Type": "application/json"],
            body: JSONValue.object(["dcql_query": ["credentials": []]]).serializedBytes))
        #expect(bad.status == 400)
        let unknown = await fixture.verifier.respond(to: HTTPRequest(url: URL(string: "http://localhost:8080/nothing")!))
        #expect(unknown.status == 404)
    }

    @Test("invalid queries, transaction data and fault combinations are refused when creating")
    func refusals() async throws {
        let fixture = try await VerifierFixture.make()
        let verifier = fixture.verifier
        await #expect(throws: VerifierError.invalidQuery(.noCredentials)) {
            try await verifier.createTransaction(PresentationRequestOptions(query: VerifierQuery(credentials: [])))
        }
        await #expect(throws: VerifierError.invalidQuery(.duplicateCredentialId("a"))) {
            try await verifier.createTransaction(PresentationRequestOptions(query: VerifierQuery(credentials: [
                .sdJwt(id: "a", vct: ["t"]), .sdJwt(id: "a", vct: ["t"]),
            ])))
        }
        await #expect(throws: VerifierError.invalidQuery(.unknownClaimId(queryId: "a", claimId: "x"))) {
            try await verifier.createTransaction(PresentationRequestOptions(query: VerifierQuery(credentials: [
                .sdJwt(id: "a", vct: ["t"], claims: [.init(id: "y", path: ["n"])], claimSets: [["x"]]),
            ])))
        }
        await #expect(throws: VerifierError.invalidQuery(.invalidPath(queryId: "m"))) {
            try await verifier.createTransaction(PresentationRequestOptions(query: VerifierQuery(credentials: [
                .mdoc(id: "m", docType: "d", claims: [.init(path: ["only_one"])]),
            ])))
        }
        await #expect(throws: VerifierError.invalidTransactionData(.unknownCredentialId("nope"))) {
            try await verifier.createTransaction(PresentationRequestOptions(
                query: .pidNames, transactionData: [VerifierTransactionData(type: "t", credentialIds: ["nope"])]))
        }
        await #expect(throws: VerifierError.unsupportedCombination(.faultNotApplicable(.wrongWalletNonce))) {
            try await verifier.createTransaction(PresentationRequestOptions(query: .pidNames, faults: [.wrongWalletNonce]))
        }
        await #expect(throws: VerifierError.unsupportedCombination(.faultNotApplicable(.x509HashMismatch))) {
            try await verifier.createTransaction(PresentationRequestOptions(query: .pidNames, faults: [.x509HashMismatch]))
        }
    }

    @Test("a DCQL query survives its JSON form, and the spec's query shape reads")
    func queryJSONRoundTrip() throws {
        let query = VerifierQuery(credentials: [
            .sdJwt(id: "pid", vct: ["a", "b"], claims: [.init(id: "g", path: ["given_name"], values: ["Erika"]),
                                                       .init(id: "n", path: ["nationalities", nil])],
                   claimSets: [["g"], ["n"]], multiple: true, requireCryptographicHolderBinding: false),
            .mdoc(id: "mdl", docType: "org.iso.18013.5.1.mDL",
                  claims: [.init(path: ["org.iso.18013.5.1", "age_over_18"], values: [true], intentToRetain: false)]),
        ], credentialSets: [.init(options: [["pid"], ["mdl"]]), .init(options: [["mdl"]], required: false)])
        #expect(try VerifierQuery(json: query.jsonValue) == query)
    }

    @Test("every OpenID4VP 1.0 DCQL example in SD-JWT VC or mdoc reads, validates and survives its JSON form; other formats are refused")
    func specQueries() throws {
        // ../shared/vectors/openid4vp/dcql_queries.json: the DCQL examples of OpenID4VP 1.0 final (§6, App. B, D).
        let url = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent().deletingLastPathComponent()
            .appendingPathComponent("shared/vectors/openid4vp/dcql_queries.json")
        let file = try JSONValue.parse(Array(try Data(contentsOf: url)))
        let examples = try #require(file["inputs"]?["queries"]?.arrayValue)
        var read = 0
        for example in examples {
            guard let json = example["json"], let credentials = json["credentials"]?.arrayValue else { continue }
            let formats = Set(credentials.compactMap { $0["format"]?.stringValue })
            if formats.isSubset(of: ["dc+sd-jwt", "mso_mdoc"]) {
                let query = try VerifierQuery(json: json)
                #expect(query.credentials.map(\.id) == credentials.compactMap { $0["id"]?.stringValue })
                #expect(query.credentials.map { $0.claims?.count ?? 0 } == credentials.map { $0["claims"]?.arrayValue?.count ?? 0 })
                #expect(try VerifierQuery(json: query.jsonValue) == query)
                read += 1
            } else {
                #expect(throws: VerifierError.self) { try VerifierQuery(json: json) }
            }
        }
        #expect(read == 9)
    }
}
