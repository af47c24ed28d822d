import Foundation
import JOSE
import ReferenceParties
import SDJWT
import Testing
import WalletCrypto
import WalletEncoding
import WalletRuntime

@Suite("Reference verifier: SD-JWT VC responses")
struct VerifierSDJWTResponseTests {
    /// Creates a transaction for `options`, presents the PID disclosing `paths` with
    /// `binding` (defaults to the transaction's), and posts it.
    private func respond(_ fixture: VerifierFixture, _ options: PresentationRequestOptions,
                         paths: [ClaimPath] = [["given_name"], ["family_name"]],
                         binding: ((VerifierTransaction) -> KeyBindingParameters?)? = nil,
                         credential: SDJWT? = nil) async throws -> (VerifierTransaction, HTTPResponse) {
        let transaction = try await fixture.verifier.createTransaction(options)
        let sdJWT: SDJWT
        if let credential { sdJWT = credential } else { sdJWT = try await fixture.issuePID() }
        let presentation = try await fixture.present(sdJWT, disclosing: paths,
                                                     keyBinding: binding.map { $0(transaction) } ?? fixture.binding(transaction))
        let response = await fixture.postVPToken(["pid": [.string(presentation)]], to: transaction)
        return (transaction, response)
    }

    @Test("a bound SD-JWT VC via direct_post is accepted, its claims recorded, and the wallet gets a redirect_uri")
    func accepted() async throws {
        let fixture = try await VerifierFixture.make()
        let (transaction, response) = try await respond(fixture, PresentationRequestOptions(query: .pidNames))
        #expect(response.status == 200)
        let redirect = try #require(VerifierFixture.body(response)["redirect_uri"]?.stringValue)
        #expect(redirect.hasPrefix("http://localhost:8080/done#response_code="))
        let verdict = try await fixture.verdict(transaction.id)
        #expect(verdict.outcome == .accepted)
        #expect(verdict.redirectUri?.absoluteString == redirect)
        let presentation = try #require(verdict.presentations(for: "pid").first)
        #expect(presentation.credentialType == VerifierFixture.pidType)
        #expect(presentation.holderBound)
        #expect(presentation.holderKey == .ec(fixture.holderKey.publicKey), "the cnf key the KB-JWT verified with")
        #expect(Set(presentation.disclosedPaths) == [["given_name"], ["family_name"]])
        #expect(presentation.value(at: ["given_name"]) == "Erika")
        // The verdict is served as JSON too.
        let status = await fixture.verifier.respond(to: HTTPRequest(url: URL(string: "http://localhost:8080/transactions/\(transaction.id)")!))
        #expect(VerifierFixture.body(status)["outcome"] == "accepted")
        #expect(VerifierFixture.body(status)["presentations"]?.arrayValue?.first?["holder_key"]
            == JWK(publicKey: fixture.holderKey.publicKey).jsonValue)
    }

    @Test("without answersWithRedirect the response endpoint answers an empty JSON object")
    func noRedirect() async throws {
        let fixture = try await VerifierFixture.make(answersWithRedirect: false)
        let (_, response) = try await respond(fixture, PresentationRequestOptions(query: .pidNames))
        #expect(response.status == 200 && VerifierFixture.body(response).isEmpty)
    }

    @Test("a KB-JWT with another nonce is rejected with nonceMismatch and a 400")
    func wrongNonce() async throws {
        let fixture = try await VerifierFixture.make()
        let (transaction, response) = try await respond(fixture, PresentationRequestOptions(query: .pidNames)) { transaction in
            KeyBindingParameters(audience: transaction.clientId, nonce: "replayed-nonce", issuedAt: fixture.clock.now)
        }
        #expect(response.status == 400 && VerifierFixture.body(response)["error"] == "invalid_request")
        let failure = try #require(try await fixture.verdict(transaction.id).failure)
        #expect(failure == .sdJwt(queryId: "pid", .keyBinding(.nonceMismatch(expected: transaction.nonce, actual: "replayed-nonce"))))
    }

    @Test("a KB-JWT for another audience is rejected")
    func wrongAudience() async throws {
        let fixture = try await VerifierFixture.make()
        let (transaction, _) = try await respond(fixture, PresentationRequestOptions(query: .pidNames)) { transaction in
            KeyBindingParameters(audience: "x509_san_dns:evil.example", nonce: transaction.nonce, issuedAt: fixture.clock.now)
        }
        #expect(try await fixture.verdict(transaction.id).failure
            == .sdJwt(queryId: "pid", .keyBinding(.audienceMismatch(expected: transaction.clientId, actual: ["x509_san_dns:evil.example"]))))
    }

    @Test("a KB-JWT whose aud is an array holding the client_id is rejected (the SDK's single-audience check, RFC 9901 §4.3)")
    func audienceArray() async throws {
        let fixture = try await VerifierFixture.make()
        let transaction = try await fixture.verifier.createTransaction(PresentationRequestOptions(query: .pidNames))
        let unbound = try await fixture.issuePID().presentation(disclosing: [["given_name"], ["family_name"]])
        let claims = try JWTClaims([
            "aud": [.string(transaction.clientId), "x509_san_dns:other.example"], "nonce": .string(transaction.nonce),
            "iat": .integer(Int64(fixture.clock.now.timeIntervalSince1970)), "sd_hash": .string(unbound.sdHash),
        ])
        let kb = try await JWT.sign(claims: claims, signer: SoftwareSigner(fixture.holderKey), type: "kb+jwt")
        _ = await fixture.postVPToken(["pid": [.string(unbound.serialization + kb.compactSerialization)]], to: transaction)
        #expect(try await fixture.verdict(transaction.id).failure
            == .sdJwt(queryId: "pid", .keyBinding(.audienceMismatch(expected: transaction.clientId,
                                                        actual: [transaction.clientId, "x509_san_dns:other.example"]))))
    }

    @Test("a KB-JWT too old for the iat window is rejected")
    func staleKeyBinding() async throws {
        let fixture = try await VerifierFixture.make()
        let (transaction, _) = try await respond(fixture, PresentationRequestOptions(query: .pidNames)) { transaction in
            KeyBindingParameters(audience: transaction.clientId, nonce: transaction.nonce,
                                 issuedAt: fixture.clock.now.addingTimeInterval(-3600))
        }
        guard case .sdJwt(_, .keyBinding(.invalidTime(.issuedTooLongAgo))) = try await fixture.verdict(transaction.id).failure else {
            Issue.record("expected keyBinding(invalidTime(issuedTooLongAgo))")
            return
        }
    }

    @Test("a tampered disclosure breaks its digest and the presentation is rejected")
    func tamperedDisclosure() async throws {
        let fixture = try await VerifierFixture.make()
        let transaction = try await fixture.verifier.createTransaction(PresentationRequestOptions(query: .pidNames))
        let sdJWT = try await fixture.issuePID()
        let honest = try sdJWT.presentation(disclosing: [["given_name"], ["family_name"]])
        // Replace the given_name disclosure with one of the same name and another value.
        let forged = try honest.disclosures.map { disclosure in
            disclosure.claimName == "given_name"
                ? try Disclosure(salt: disclosure.salt, claimName: "given_name", value: "Mallory") : disclosure
        }
        let tampered = try await SDJWT(issuerSignedJWT: sdJWT.issuerSignedJWTString, disclosures: forged)
            .bound(with: fixture.binding(transaction), signer: SoftwareSigner(fixture.holderKey))
        _ = await fixture.postVPToken(["pid": [.string(tampered.serialization)]], to: transaction)
        guard case .sdJwt("pid", .disclosure(.unreferenced)) = try await fixture.verdict(transaction.id).failure else {
            Issue.record("expected an unreferenced disclosure")
            return
        }
    }

    @Test("without a KB-JWT a presentation is rejected when holder binding is required")
    func missingKeyBinding() async throws {
        let fixture = try await VerifierFixture.make()
        let (transaction, _) = try await respond(fixture, PresentationRequestOptions(query: .pidNames)) { _ in nil }
        #expect(try await fixture.verdict(transaction.id).failure == .missingKeyBinding(queryId: "pid"))
    }

    @Test("an unbound presentation is accepted when the query sets require_cryptographic_holder_binding false")
    func unboundAccepted() async throws {
        let fixture = try await VerifierFixture.make()
        let query = VerifierQuery(credentials: [.sdJwt(id: "pid", vct: [VerifierFixture.pidType], claims: [.init(path: ["age_over_18"])],
                                                       requireCryptographicHolderBinding: false)])
        let (transaction, response) = try await respond(fixture, PresentationRequestOptions(query: query), paths: [["age_over_18"]],
                                                        binding: { _ in nil }, credential: try await fixture.issuePID(bound: false))
        #expect(response.status == 200)
        let verdict = try await fixture.verdict(transaction.id)
        #expect(verdict.outcome == .accepted)
        #expect(verdict.presentations.first?.holderBound == false)
        #expect(verdict.presentations.first.map { $0.holderKey == nil } == true)
    }

    @Test("an optional KB-JWT that is present is still checked")
    func optionalKeyBindingChecked() async throws {
        let fixture = try await VerifierFixture.make()
        let query = VerifierQuery(credentials: [.sdJwt(id: "pid", vct: [VerifierFixture.pidType], claims: [.init(path: ["age_over_18"])],
                                                       requireCryptographicHolderBinding: false)])
        let (transaction, _) = try await respond(fixture, PresentationRequestOptions(query: query), paths: [["age_over_18"]]) { transaction in
            KeyBindingParameters(audience: transaction.clientId, nonce: "other", issuedAt: fixture.clock.now)
        }
        #expect(try await fixture.verdict(transaction.id).failure
            == .sdJwt(queryId: "pid", .keyBinding(.nonceMismatch(expected: transaction.nonce, actual: "other"))))
    }

    @Test("a requested claim left undisclosed is rejected with missingClaim")
    func undisclosedClaim() async throws {
        let fixture = try await VerifierFixture.make()
        let (transaction, _) = try await respond(fixture, PresentationRequestOptions(query: .pidNames), paths: [["given_name"]])
        #expect(try await fixture.verdict(transaction.id).failure == .missingClaim(queryId: "pid", path: ["family_name"]))
    }

    @Test("a claim disclosed beyond the query is rejected with extraClaimDisclosed")
    func extraClaim() async throws {
        let fixture = try await VerifierFixture.make()
        let (transaction, _) = try await respond(fixture, PresentationRequestOptions(query: .pidNames),
                                                 paths: [["given_name"], ["family_name"], ["birthdate"]])
        #expect(try await fixture.verdict(transaction.id).failure == .extraClaimDisclosed(queryId: "pid", path: ["birthdate"]))
    }

    @Test("a nested claim path discloses its parent's members only as asked")
    func nestedPath() async throws {
        let fixture = try await VerifierFixture.make()
        let query = VerifierQuery(credentials: [.sdJwt(id: "pid", vct: [VerifierFixture.pidType], claims: [
            .init(path: ["address", "locality"]), .init(path: ["nationalities", nil]),
        ])])
        let (transaction, _) = try await respond(fixture, PresentationRequestOptions(query: query),
                                                 paths: [["address", "locality"], ["nationalities", nil]])
        let verdict = try await fixture.verdict(transaction.id)
        #expect(verdict.outcome == .accepted)
        #expect(Set(verdict.presentations.first?.disclosedPaths ?? [])
            == [["address", "locality"], ["nationalities", 0], ["nationalities", 1]])
    }

    @Test("values: a disclosed value outside the accepted ones is rejected")
    func valueMismatch() async throws {
        let fixture = try await VerifierFixture.make()
        let query = VerifierQuery(credentials: [.sdJwt(id: "pid", vct: [VerifierFixture.pidType],
                                                       claims: [.init(path: ["address", "country"], values: ["FR", "IT"])])])
        let (transaction, _) = try await respond(fixture, PresentationRequestOptions(query: query), paths: [["address", "country"]])
        #expect(try await fixture.verdict(transaction.id).failure == .claimValueNotAllowed(queryId: "pid", path: ["address", "country"]))
    }

    @Test("claim_sets: the second option is accepted and recorded; disclosing none of them is rejected")
    func claimSets() async throws {
        let fixture = try await VerifierFixture.make()
        let query = VerifierQuery(credentials: [.sdJwt(id: "pid", vct: [VerifierFixture.pidType], claims: [
            .init(id: "age", path: ["age_over_18"]), .init(id: "birth", path: ["birthdate"]), .init(id: "name", path: ["family_name"]),
        ], claimSets: [["age"], ["birth", "name"]])])
        let (accepted, _) = try await respond(fixture, PresentationRequestOptions(query: query), paths: [["birthdate"], ["family_name"]])
        let verdict = try await fixture.verdict(accepted.id)
        #expect(verdict.outcome == .accepted)
        #expect(verdict.presentations.first?.claimSet == ["birth", "name"])

        let (rejected, _) = try await respond(fixture, PresentationRequestOptions(query: query), paths: [["birthdate"]])
        #expect(try await fixture.verdict(rejected.id).failure == .noClaimSetSatisfied(queryId: "pid"))
    }

    @Test("a credential of a type the query did not ask for is rejected")
    func wrongType() async throws {
        let fixture = try await VerifierFixture.make()
        let (transaction, _) = try await respond(fixture, PresentationRequestOptions(query: .pidNames),
                                                 credential: try await fixture.issuePID(vct: "urn:example:other"))
        #expect(try await fixture.verdict(transaction.id).failure
            == .credentialTypeNotRequested(queryId: "pid", type: "urn:example:other"))
    }

    @Test("a credential from an issuer the verifier does not trust is rejected")
    func untrustedIssuer() async throws {
        let fixture = try await VerifierFixture.make(trustSdJwtIssuer: false)
        let (transaction, _) = try await respond(fixture, PresentationRequestOptions(query: .pidNames))
        guard case .sdJwt("pid", .invalidIssuerSignature) = try await fixture.verdict(transaction.id).failure else {
            Issue.record("expected invalidIssuerSignature")
            return
        }
    }

    @Test("transaction data hashes in the KB-JWT bind the entry; a mismatch or a missing hash is rejected")
    func transactionData() async throws {
        let fixture = try await VerifierFixture.make()
        let entry = VerifierTransactionData(type: "payment", credentialIds: ["pid"], details: ["amount": "42.00"])
        let options = PresentationRequestOptions(query: .pidNames, transactionData: [entry])
        let (bound, response) = try await respond(fixture, options) { transaction in
            fixture.binding(transaction, transactionData: transaction.transactionData)
        }
        #expect(response.status == 200)
        #expect(try await fixture.verdict(bound.id).presentations.first?.transactionData == [0])

        let other = VerifierTransactionData(type: "payment", credentialIds: ["pid"], details: ["amount": "4200.00"]).encoded
        let (mismatch, _) = try await respond(fixture, options) { transaction in
            fixture.binding(transaction, transactionData: [other])
        }
        #expect(try await fixture.verdict(mismatch.id).failure == .transactionData(.unexpectedHash(queryId: "pid")))

        let (missing, _) = try await respond(fixture, options)
        #expect(try await fixture.verdict(missing.id).failure == .transactionData(.notBound(index: 0)))
    }

    @Test("a second response to a decided transaction is refused and the verdict stands")
    func replay() async throws {
        let fixture = try await VerifierFixture.make()
        let transaction = try await fixture.verifier.createTransaction(PresentationRequestOptions(query: .pidNames))
        let presentation = try await fixture.present(try await fixture.issuePID(), disclosing: [["given_name"], ["family_name"]],
                                                     keyBinding: fixture.binding(transaction))
        #expect(await fixture.postVPToken(["pid": [.string(presentation)]], to: transaction).status == 200)
        let second = await fixture.postVPToken(["pid": [.string(presentation)]], to: transaction)
        #expect(second.status == 400)
        let verdict = try await fixture.verdict(transaction.id)
        #expect(verdict.outcome == .accepted && verdict.responsesReceived == 2)
    }

    @Test("two concurrent responses to one transaction: one is verified, the other refused")
    func concurrentResponses() async throws {
        let fixture = try await VerifierFixture.make()
        let transaction = try await fixture.verifier.createTransaction(PresentationRequestOptions(query: .pidNames))
        let presentation = try await fixture.present(try await fixture.issuePID(), disclosing: [["given_name"], ["family_name"]],
                                                     keyBinding: fixture.binding(transaction))
        let statuses = await withTaskGroup(of: Int.self) { group in
            for _ in 0..<2 {
                group.addTask { await fixture.postVPToken(["pid": [.string(presentation)]], to: transaction).status }
            }
            return await group.reduce(into: []) { $0.append($1) }
        }
        #expect(statuses.sorted() == [200, 400])
        let verdict = try await fixture.verdict(transaction.id)
        #expect(verdict.outcome == .accepted && verdict.responsesReceived == 2)
    }

    @Test("a response with another state is rejected")
    func stateMismatch() async throws {
        let fixture = try await VerifierFixture.make()
        let transaction = try await fixture.verifier.createTransaction(PresentationRequestOptions(query: .pidNames))
        let presentation = try await fixture.present(try await fixture.issuePID(), disclosing: [["given_name"], ["family_name"]],
                                                     keyBinding: fixture.binding(transaction))
        _ = await fixture.postVPToken(["pid": [.string(presentation)]], to: transaction, state: "forged")
        #expect(try await fixture.verdict(transaction.id).failure == .stateMismatch(expected: transaction.state, actual: "forged"))
    }

    @Test("access_denied is recorded as declined and answered with a redirect_uri")
    func declined() async throws {
        let fixture = try await VerifierFixture.make()
        let transaction = try await fixture.verifier.createTransaction(PresentationRequestOptions(query: .pidNames))
        let response = await fixture.post([("error", "access_denied"), ("error_description", "the user declined"),
                                           ("state", transaction.state ?? "")], to: transaction)
        #expect(response.status == 200 && VerifierFixture.body(response)["redirect_uri"] != nil)
        #expect(try await fixture.verdict(transaction.id).outcome == .declined(error: "access_denied", description: "the user declined"))
    }

    @Test("an error response without the request's state, or with another, is not recorded as the wallet's decline", arguments: [nil, "forged"] as [String?])
    func declinedWithoutState(state: String?) async throws {
        let fixture = try await VerifierFixture.make()
        for mode in [VerifierResponseMode.directPost, .directPostJwt] {
            let transaction = try await fixture.verifier.createTransaction(PresentationRequestOptions(query: .pidNames, responseMode: mode))
            _ = await fixture.post([("error", "access_denied")] + (state.map { [("state", $0)] } ?? []), to: transaction)
            #expect(try await fixture.verdict(transaction.id).failure == .stateMismatch(expected: transaction.state, actual: state), "\(mode)")
        }
    }

    @Test("malformed bodies are rejected: not a form, no vp_token, vp_token not an object, unknown query, too many presentations")
    func malformed() async throws {
        let fixture = try await VerifierFixture.make()
        let presentation = { (transaction: VerifierTransaction) async throws -> JSONValue in
            .string(try await fixture.present(try await fixture.issuePID(), disclosing: [["given_name"], ["family_name"]],
                                              keyBinding: fixture.binding(transaction)))
        }
        let notForm = try await fixture.verifier.createTransaction(PresentationRequestOptions(query: .pidNames))
        _ = await fixture.verifier.respond(to: HTTPRequest(method: .post, url: notForm.responseURI,
                                                           headers: ["Content-Type": "application/json"], body: Array("{}".utf8)))
        #expect(try await fixture.verdict(notForm.id).failure == .malformedResponse(.notAForm))

        let noToken = try await fixture.verifier.createTransaction(PresentationRequestOptions(query: .pidNames))
        _ = await fixture.post([("state", noToken.state ?? "")], to: noToken)
        #expect(try await fixture.verdict(noToken.id).failure == .malformedResponse(.missingVPToken))

        let notObject = try await fixture.verifier.createTransaction(PresentationRequestOptions(query: .pidNames))
        _ = await fixture.postVPToken(["a", "b"], to: notObject)
        #expect(try await fixture.verdict(notObject.id).failure == .malformedResponse(.vpTokenNotAnObject))

        let unknown = try await fixture.verifier.createTransaction(PresentationRequestOptions(query: .pidNames))
        _ = await fixture.postVPToken(["other": [try await presentation(unknown)]], to: unknown)
        #expect(try await fixture.verdict(unknown.id).failure == .unknownQuery("other"))

        let twice = try await fixture.verifier.createTransaction(PresentationRequestOptions(query: .pidNames))
        let one = try await presentation(twice)
        _ = await fixture.postVPToken(["pid": [one, one]], to: twice)
        #expect(try await fixture.verdict(twice.id).failure == .presentationCount(queryId: "pid", count: 2))
    }

    @Test("multiple: two presentations for one query are accepted")
    func multiple() async throws {
        let fixture = try await VerifierFixture.make()
        let query = VerifierQuery(credentials: [.sdJwt(id: "pid", vct: [VerifierFixture.pidType],
                                                       claims: [.init(path: ["given_name"])], multiple: true)])
        let transaction = try await fixture.verifier.createTransaction(PresentationRequestOptions(query: query))
        var presentations: [JSONValue] = []
        for _ in 0..<2 {
            presentations.append(.string(try await fixture.present(try await fixture.issuePID(), disclosing: [["given_name"]],
                                                                   keyBinding: fixture.binding(transaction))))
        }
        _ = await fixture.postVPToken(["pid": .array(presentations)], to: transaction)
        let verdict = try await fixture.verdict(transaction.id)
        #expect(verdict.outcome == .accepted && verdict.presentations.count == 2)
    }

    @Test("credential_sets: one option answered satisfies the set; answering none of a required set is rejected")
    func credentialSets() async throws {
        let fixture = try await VerifierFixture.make()
        let query = VerifierQuery(credentials: [
            .sdJwt(id: "pid", vct: [VerifierFixture.pidType], claims: [.init(path: ["given_name"])]),
            .sdJwt(id: "other", vct: ["urn:example:other"], claims: [.init(path: ["given_name"])]),
            .sdJwt(id: "extra", vct: ["urn:example:extra"]),
        ], credentialSets: [.init(options: [["other"], ["pid"]]), .init(options: [["extra"]], required: false)])
        let transaction = try await fixture.verifier.createTransaction(PresentationRequestOptions(query: query))
        let presentation = try await fixture.present(try await fixture.issuePID(), disclosing: [["given_name"]],
                                                     keyBinding: fixture.binding(transaction))
        _ = await fixture.postVPToken(["pid": [.string(presentation)]], to: transaction)
        #expect(try await fixture.verdict(transaction.id).outcome == .accepted)

        let strict = VerifierQuery(credentials: query.credentials, credentialSets: [.init(options: [["other"]])])
        let refused = try await fixture.verifier.createTransaction(PresentationRequestOptions(query: strict))
        let second = try await fixture.present(try await fixture.issuePID(), disclosing: [["given_name"]],
                                               keyBinding: fixture.binding(refused))
        _ = await fixture.postVPToken(["pid": [.string(second)]], to: refused)
        #expect(try await fixture.verdict(refused.id).failure == .queryNotSatisfied)
    }

    @Test("direct_post.jwt: an encrypted SD-JWT response is accepted; a plaintext vp_token is refused")
    func encrypted() async throws {
        let fixture = try await VerifierFixture.make()
        let options = PresentationRequestOptions(query: .pidNames, responseMode: .directPostJwt)
        let transaction = try await fixture.verifier.createTransaction(options)
        let presentation = try await fixture.present(try await fixture.issuePID(), disclosing: [["given_name"], ["family_name"]],
                                                     keyBinding: fixture.binding(transaction))
        let response = try await fixture.postEncrypted(
            ["vp_token": ["pid": [.string(presentation)]], "state": .string(transaction.state ?? "")], to: transaction,
            encryption: .a256gcm)
        #expect(response.status == 200)
        #expect(try await fixture.verdict(transaction.id).outcome == .accepted)

        let plain = try await fixture.verifier.createTransaction(options)
        _ = await fixture.postVPToken(["pid": ["x"]], to: plain)
        #expect(try await fixture.verdict(plain.id).failure == .responseNotEncrypted)

        let notOffered = try await fixture.verifier.createTransaction(PresentationRequestOptions(
            query: .pidNames, responseMode: .directPostJwt, encryptionAlgorithms: [.a128gcm]))
        _ = try await fixture.postEncrypted(["vp_token": ["pid": ["x"]]], to: notOffered, encryption: .a192gcm)
        #expect(try await fixture.verdict(notOffered.id).failure == .encryptionAlgorithmNotOffered("A192GCM"))
    }
}
