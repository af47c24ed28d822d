import Foundation
import JOSE
import SDJWT
import Testing
import WalletCrypto
import WalletEncoding
import WalletRuntime
import WalletStorage
@testable import OpenID4VCI

/// Deferred issuance, reissuance, encryption, key attestation and cancellation.
@Suite("Issuance sessions: deferred, reissue, encryption, attestation")
struct SessionOutcomeTests {
    private func preAuthorized(_ wallet: TestWalletSetup, _ issuer: TestIssuer,
                               policy: CredentialPolicy = CredentialPolicy()) async throws -> IssuanceState {
        let offer = try await wallet.client.resolveOffer(issuer.offerURI())
        return try await terminalState(of: wallet.client.start(.fromOffer(offer, configurationId: issuer.configurationId, policy: policy)))
    }

    @Test("deferred (202 and the legacy issuance_pending): stored as deferred, resumed once pending, then completed",
          arguments: [TestIssuer.Deferral.accepted, .legacy])
    func deferred(form: TestIssuer.Deferral) async throws {
        // One clock for the wallet and the issuer, an hour off the wall: however long the run
        // takes, the credential's iat is the wallet's now (see `deferredIssuedInFuture`).
        let clock = ManualClock(Date().addingTimeInterval(-3600))
        let issuer = try TestIssuer(options: .init(deferral: form), clock: clock)
        let wallet = try TestWalletSetup(issuer: issuer, clock: clock)
        let first = try await preAuthorized(wallet, issuer, policy: CredentialPolicy(batchSize: 1, use: .rotate))
        guard case .deferred(let id, let retryAfter) = first else { Issue.record("ended \(first)"); return }
        #expect(retryAfter == clock.now.addingTimeInterval(5))
        let stored = try #require(try await wallet.storage.store.credential(id: id))
        #expect(stored.instances.isEmpty)
        guard case .deferred(let transaction, _) = stored.state else { Issue.record("not deferred"); return }
        #expect(transaction.hasPrefix("tx-"))
        // The holder key the proof named stays, waiting for the credential.
        #expect(try await wallet.keyAliases().count == 1)

        clock.advance(by: 5)
        let pending = try await terminalState(of: wallet.client.resumeDeferred(id))
        guard case .deferred(let sameId, _) = pending else { Issue.record("ended \(pending)"); return }
        #expect(sameId == id)
        clock.advance(by: 5)
        let done = try await terminalState(of: wallet.client.resumeDeferred(id))
        #expect(done == .completed(IssuanceResult(issued: [id])))
        let issued = try #require(try await wallet.storage.store.credential(id: id))
        #expect(issued.state == .issued)
        #expect(issued.instances.count == 1)
        let instance = try #require(issued.instances.first)
        #expect(try SessionTests.boundKey(instance, format: .sdJwtVc)
            == (try await wallet.storage.secureArea.publicKey(alias: instance.keyAlias)))
        #expect(issuer.requests(to: "/deferred").count == 2)
        // Resuming what is not deferred is refused.
        let again = try await terminalState(of: wallet.client.resumeDeferred(id))
        #expect(again == .failed(.unexpected(.notDeferred(id))))
        #expect(try await terminalState(of: wallet.client.resumeDeferred("nope")) == .failed(.unexpected(.credentialNotFound("nope"))))
    }

    @Test("a legacy issuance_pending with a negative interval stays deferred without a time to retry, as the 1.0 form's would be refused")
    func legacyNegativeInterval() async throws {
        let clock = ManualClock(Date().addingTimeInterval(-3600))
        let issuer = try TestIssuer(options: .init(deferral: .legacy, faults: ["/deferred": [
            jsonResponse(400, ["error": "issuance_pending", "interval": -300])]]), clock: clock)
        let wallet = try TestWalletSetup(issuer: issuer, clock: clock)
        guard case .deferred(let id, _) = try await preAuthorized(wallet, issuer) else { Issue.record("not deferred"); return }
        let pending = try await terminalState(of: wallet.client.resumeDeferred(id))
        #expect(pending == .deferred(credentialId: id, retryAfter: nil))
    }

    @Test("a deferred credential minted beyond the wallet's clock skew is refused; the spent transaction's record goes with its key")
    func deferredIssuedInFuture() async throws {
        // What a loaded run did to an issuer minting on the wall clock while the wallet's
        // ManualClock stood at the test's start: two minutes apart, past the 60 s skew.
        let clock = ManualClock(Date())
        let issuer = try TestIssuer(options: .init(deferral: .accepted), clock: ManualClock(clock.now.addingTimeInterval(120)))
        let wallet = try TestWalletSetup(issuer: issuer, clock: clock)
        let first = try await preAuthorized(wallet, issuer)
        guard case .deferred(let id, _) = first else { Issue.record("ended \(first)"); return }
        #expect(try await wallet.keyAliases().count == 1)
        let pending = try await terminalState(of: wallet.client.resumeDeferred(id))
        guard case .deferred = pending else { Issue.record("ended \(pending)"); return }
        let done = try await terminalState(of: wallet.client.resumeDeferred(id))
        guard case .failed(.credentialRequestFailed(nil, .invalidCredential(.sdJWT(.invalidTime(.issuedInFuture))))) = done else {
            Issue.record("ended \(done)"); return
        }
        #expect(issuer.notifications.map { $0["event"]?.stringValue } == ["credential_failure"])
        // The issuer has spent the transaction on the refused credential (asking again gets
        // invalid_transaction_id), so nothing of it is kept: no record, no key.
        #expect(try await wallet.storage.store.credential(id: id) == nil)
        #expect(try await wallet.keyAliases().isEmpty)
        #expect(try await terminalState(of: wallet.client.resumeDeferred(id)) == .failed(.unexpected(.credentialNotFound(id))))
        #expect(issuer.requests(to: "/deferred").count == 2)
    }

    @Test("a deferred renewal answered with a refused credential is cleared: the credential stays issued with its instances")
    func deferredRenewalRefused() async throws {
        let clock = ManualClock(Date())
        let issuerClock = ManualClock(clock.now)
        let issuer = try TestIssuer(options: .init(refreshTokens: true, deferral: .accepted), clock: issuerClock)
        let wallet = try TestWalletSetup(issuer: issuer, clock: clock)
        guard case .deferred(let id, _) = try await preAuthorized(wallet, issuer) else { Issue.record("not deferred"); return }
        guard case .deferred = try await terminalState(of: wallet.client.resumeDeferred(id)) else { Issue.record("not pending"); return }
        #expect(try await terminalState(of: wallet.client.resumeDeferred(id)) == .completed(IssuanceResult(issued: [id])))
        let issued = try #require(try await wallet.storage.store.credential(id: id))
        let keysBefore = Set(try await wallet.keyAliases())
        #expect(issued.instances.count == 1)

        // The renewal is deferred: the credential stays issued, a pending key is added.
        guard case .deferred(let sameId, _) = try await terminalState(of: wallet.client.reissue(id)) else {
            Issue.record("renewal not deferred"); return
        }
        #expect(sameId == id)
        let renewing = try #require(try await wallet.storage.store.credential(id: id))
        #expect(renewing.instances == issued.instances)
        let keysPending = Set(try await wallet.keyAliases())
        #expect(keysPending.isSuperset(of: keysBefore) && keysPending.count == keysBefore.count + 1)

        // The issuer now mints two minutes ahead: the renewed credential is refused.
        issuerClock.advance(by: 120)
        guard case .deferred = try await terminalState(of: wallet.client.resumeDeferred(id)) else { Issue.record("not pending"); return }
        let refused = try await terminalState(of: wallet.client.resumeDeferred(id))
        guard case .failed(.credentialRequestFailed(nil, .invalidCredential(.sdJWT(.invalidTime(.issuedInFuture))))) = refused else {
            Issue.record("ended \(refused)"); return
        }
        let after = try #require(try await wallet.storage.store.credential(id: id))
        #expect(after.state == .issued)
        #expect(after.instances == issued.instances)
        #expect(after.refreshToken == renewing.refreshToken)   // the refresh grant's rotated token
        #expect(Set(try await wallet.keyAliases()) == keysBefore)
        // Nothing is pending any more.
        #expect(try await terminalState(of: wallet.client.resumeDeferred(id)) == .failed(.unexpected(.notDeferred(id))))
    }

    @Test("a deferred renewal completing after another session rotated the refresh token keeps the rotated one")
    func deferredRenewalKeepsRotatedToken() async throws {
        let issuer = try TestIssuer(options: .init(refreshTokens: true, deferral: .accepted))
        let wallet = try TestWalletSetup(issuer: issuer)
        guard case .deferred(let id, _) = try await preAuthorized(wallet, issuer) else { Issue.record("not deferred"); return }
        while case .deferred = try await terminalState(of: wallet.client.resumeDeferred(id)) {}
        guard case .deferred = try await terminalState(of: wallet.client.reissue(id)) else { Issue.record("renewal not deferred"); return }
        let before = try #require(try await wallet.storage.store.credential(id: id)?.refreshToken)
        // While the resumption waits for the issuer, another session rotates the token.
        let store = wallet.storage.store
        issuer.options.onDeferredRequest = { try? await store.updateRefreshToken(of: id, to: "rotated-meanwhile") }
        var state = try await terminalState(of: wallet.client.resumeDeferred(id))
        while case .deferred = state { state = try await terminalState(of: wallet.client.resumeDeferred(id)) }
        #expect(state == .completed(IssuanceResult(issued: [id])))
        let after = try #require(try await store.credential(id: id))
        #expect(before != "rotated-meanwhile")
        #expect(after.refreshToken == "rotated-meanwhile")
    }

    @Test("invalid_transaction_id at the deferred endpoint fails with that code and leaves the record for the app to decide")
    func deferredTransactionUnknown() async throws {
        let clock = ManualClock(Date())
        let issuer = try TestIssuer(options: .init(deferral: .accepted, faults: ["/deferred": [oauthError(400, "invalid_transaction_id")]]),
                                    clock: clock)
        let wallet = try TestWalletSetup(issuer: issuer, clock: clock)
        guard case .deferred(let id, _) = try await preAuthorized(wallet, issuer) else { Issue.record("not deferred"); return }
        let before = try #require(try await wallet.storage.store.credential(id: id))
        let keys = try await wallet.keyAliases()
        let failed = try await terminalState(of: wallet.client.resumeDeferred(id))
        guard case .failed(.credentialRequestFailed("invalid_transaction_id", .rejected(status: 400, _))) = failed else {
            Issue.record("ended \(failed)"); return
        }
        #expect(try await wallet.storage.store.credential(id: id) == before)
        #expect(try await wallet.keyAliases() == keys)
        try await wallet.client.deleteCredential(id)
        #expect(try await wallet.storage.store.credential(id: id) == nil)
        #expect(try await wallet.keyAliases().isEmpty)
    }

    @Test("a deferred answer without credentials (an empty array; a 202 with neither credentials nor transaction_id) fails; nothing changes",
          arguments: [(200, ["credentials": [], "notification_id": "n-1"]), (202, ["interval": 5])] as [(Int, JSONObject)])
    func deferredWithoutCredentials(status: Int, body: JSONObject) async throws {
        let clock = ManualClock(Date())
        let issuer = try TestIssuer(options: .init(deferral: .accepted, faults: ["/deferred": [jsonResponse(status, body)]]), clock: clock)
        let wallet = try TestWalletSetup(issuer: issuer, clock: clock)
        let first = try await preAuthorized(wallet, issuer)
        guard case .deferred(let id, _) = first else { Issue.record("ended \(first)"); return }
        let before = try #require(try await wallet.storage.store.credential(id: id))
        let keys = try await wallet.keyAliases()

        let failed = try await terminalState(of: wallet.client.resumeDeferred(id))
        #expect(failed == .failed(.credentialRequestFailed(oauthError: nil, reason: .malformedResponse(.invalidMember("credentials")))))
        #expect(try await wallet.storage.store.credential(id: id) == before)
        #expect(try await wallet.keyAliases() == keys)
        #expect(try await wallet.credentials().count == 1)
        #expect(issuer.notifications.isEmpty)
        // The transaction is still the issuer's to answer: later resumptions complete it.
        guard case .deferred = try await terminalState(of: wallet.client.resumeDeferred(id)) else { Issue.record("not pending"); return }
        #expect(try await terminalState(of: wallet.client.resumeDeferred(id)) == .completed(IssuanceResult(issued: [id])))
        #expect(try await wallet.storage.store.credential(id: id)?.instances.count == 1)
    }

    @Test("reissue via the refresh token tops up spent oneTime instances, keeping the unused ones; DPoP-bound refresh works")
    func reissue() async throws {
        let issuer = try TestIssuer(options: .init(dpop: true, refreshTokens: true, batchSize: 5))
        let wallet = try TestWalletSetup(issuer: issuer)
        let session = wallet.client.start(.fromIssuer(issuer.base, configurationId: "identity", policy: CredentialPolicy(batchSize: 4, use: .oneTime)))
        let first = try await SessionTests.authorize(session, issuer: issuer)
        guard case .completed(let result) = first else { Issue.record("ended \(first)"); return }
        let id = result.issued[0]
        let original = try #require(try await wallet.storage.store.credential(id: id))
        #expect(original.refreshToken != nil)
        _ = try await wallet.storage.store.consumeInstance(of: id)
        _ = try await wallet.storage.store.consumeInstance(of: id)
        #expect(try await wallet.storage.store.remainingInstances(of: id) == 2)

        let renewed = try await terminalState(of: wallet.client.reissue(id))
        #expect(renewed == .completed(IssuanceResult(issued: [id])))
        let after = try #require(try await wallet.storage.store.credential(id: id))
        #expect(after.instances.count == 4)
        #expect(try await wallet.storage.store.remainingInstances(of: id) == 4)
        // The two unused instances are kept as they were; two new ones were proven.
        let unused = original.instances.filter { instance in !after.instances.contains { $0.keyAlias == instance.keyAlias } }
        #expect(unused.count == 2)
        #expect(issuer.credentialRequests.last?["proofs"]?["jwt"]?.arrayValue?.count == 2)
        let refresh = formPairs(try #require(issuer.requests(to: "/token").last?.body))
        #expect(refresh.contains { $0 == ("grant_type", "refresh_token") })
        // No key of a spent instance is left: 4 holder keys and the one DPoP key.
        #expect(try await wallet.keyAliases().count == 5)
    }

    /// Issues a one-time batch of `batchSize` by the authorization code flow; the credential's
    /// id, or nil (recorded as an issue) when it was not issued.
    static func issueRenewable(_ wallet: TestWalletSetup, _ issuer: TestIssuer, batchSize: Int) async throws -> String? {
        let session = wallet.client.start(.fromIssuer(issuer.base, configurationId: "identity",
                                                      policy: CredentialPolicy(batchSize: batchSize, use: .oneTime)))
        guard case .completed(let result) = try await SessionTests.authorize(session, issuer: issuer) else {
            Issue.record("not issued"); return nil
        }
        return result.issued[0]
    }

    @Test("a record whose issuer was altered on disk is not renewed, resumed or notified: its tokens never go to the issuer it now names")
    func issuerAlteredOnDisk() async throws {
        let issuer = try TestIssuer(options: .init(dpop: true, refreshTokens: true, batchSize: 2))
        let wallet = try TestWalletSetup(issuer: issuer)
        guard let id = try await Self.issueRenewable(wallet, issuer, batchSize: 2) else { return }
        let stored = try #require(try await wallet.storage.store.credential(id: id))
        // The plaintext issuer column now names another host; the encrypted context is intact.
        try await wallet.storage.store.replace(StoredCredential(
            id: stored.id, format: stored.format, type: stored.type, issuer: IssuerInfo(identifier: "https://elsewhere.example"),
            instances: stored.instances, policy: stored.policy, state: stored.state, refreshToken: stored.refreshToken,
            issuanceContext: stored.issuanceContext), keepingStoredRefreshToken: true)
        let requests = issuer.log.count
        #expect(try await terminalState(of: wallet.client.reissue(id)) == .failed(.unexpected(.issuerChanged(id))))
        #expect(issuer.log.count == requests, "nothing sent, not even a metadata request")
        // Deleting it still deletes it, without telling anyone.
        try await wallet.client.deleteCredential(id)
        #expect(try await wallet.credentials().isEmpty)
        #expect(issuer.log.count == requests)
    }

    @Test("a reissue whose issuer no longer lists the server that issued the refresh token fails before sending it anywhere")
    func reissueServerChanged() async throws {
        let issuer = try TestIssuer(options: .init(dpop: true, refreshTokens: true, batchSize: 2))
        let wallet = try TestWalletSetup(issuer: issuer)
        guard let id = try await Self.issueRenewable(wallet, issuer, batchSize: 2) else { return }
        let before = try #require(try await wallet.storage.store.credential(id: id))
        let tokenRequests = issuer.requests(to: "/token").count
        issuer.options.authorizationServers = ["https://other-as.example"]
        #expect(try await terminalState(of: wallet.client.reissue(id))
            == .failed(.authorizationFailed(oauthError: nil, reason: .refreshTokenUnavailable)))
        #expect(issuer.requests(to: "/token").count == tokenRequests)
        #expect(!issuer.log.contains { $0.url.host == "other-as.example" })
        #expect(try await wallet.storage.store.credential(id: id) == before)
    }

    @Test("a deferred resumption keeps the server the refresh token came from: a server the issuer lists meanwhile never receives the token")
    func deferredServerChanged() async throws {
        let issuer = try TestIssuer(options: .init(refreshTokens: true, deferral: .accepted))
        let wallet = try TestWalletSetup(issuer: issuer)
        guard case .deferred(let id, _) = try await preAuthorized(wallet, issuer) else { Issue.record("not deferred"); return }
        // The issuer now names another authorization server, and the resumption completes.
        issuer.options.authorizationServers = ["https://other-as.example"]
        var state = try await terminalState(of: wallet.client.resumeDeferred(id))
        while case .deferred = state { state = try await terminalState(of: wallet.client.resumeDeferred(id)) }
        #expect(state == .completed(IssuanceResult(issued: [id])))
        let tokenRequests = issuer.requests(to: "/token").count
        #expect(try await terminalState(of: wallet.client.reissue(id))
            == .failed(.authorizationFailed(oauthError: nil, reason: .refreshTokenUnavailable)))
        #expect(issuer.requests(to: "/token").count == tokenRequests)
        #expect(!issuer.log.contains { $0.url.host == "other-as.example" })
    }

    @Test("a presentation made while a top-up waits for the issuer stays spent: the instance is not handed out again")
    func reissueWithPresentationMeanwhile() async throws {
        let issuer = try TestIssuer(options: .init(dpop: true, refreshTokens: true, batchSize: 5))
        let wallet = try TestWalletSetup(issuer: issuer)
        guard let id = try await Self.issueRenewable(wallet, issuer, batchSize: 4) else { return }
        let store = wallet.storage.store
        _ = try await store.consumeInstance(of: id)
        _ = try await store.consumeInstance(of: id)
        // The renewal reads the record (two unused instances), then, while the issuer has its
        // request, the wallet presents one of those two.
        let presented = LockedBox<Int?>(nil)
        issuer.options.onCredentialRequest = {
            presented.withLock { $0 = -1 }
            if let consumed = try? await store.consumeInstance(of: id) { presented.withLock { $0 = consumed.instance.index } }
        }
        let renewed = try await terminalState(of: wallet.client.reissue(id))
        #expect(renewed == .completed(IssuanceResult(issued: [id])))
        let spent = try #require(presented.withLock { $0 })
        #expect(spent == 2)
        let after = try #require(try await store.credential(id: id))
        // Kept: the two that were unused when the renewal began (one now spent), and two new ones.
        #expect(after.instances.count == 4)
        #expect(after.instances.first { $0.index == spent }?.useCount == 1)
        #expect(try await store.remainingInstances(of: id) == 3)
        var handedOut: [Int] = []
        for _ in 0..<3 { handedOut.append(try await store.consumeInstance(of: id).instance.index) }
        #expect(!handedOut.contains(spent))
        #expect(Set(handedOut).count == 3)
        await #expect(throws: StorageError.noInstancesLeft(credentialId: id)) { _ = try await store.consumeInstance(of: id) }
    }

    @Test("a credential deleted while its renewal waits for the issuer stays deleted; the renewal's keys go")
    func reissueOfDeletedCredential() async throws {
        let issuer = try TestIssuer(options: .init(dpop: true, refreshTokens: true, batchSize: 5))
        let wallet = try TestWalletSetup(issuer: issuer)
        guard let id = try await Self.issueRenewable(wallet, issuer, batchSize: 2) else { return }
        let store = wallet.storage.store
        _ = try await store.consumeInstance(of: id)
        let deleted = LockedBox(false)
        issuer.options.onCredentialRequest = {
            if (try? await store.delete(id: id)) != nil { deleted.withLock { $0 = true } }
        }
        #expect(try await terminalState(of: wallet.client.reissue(id)) == .failed(.storage(.credentialNotFound(id: id))))
        #expect(deleted.withLock { $0 })
        #expect(try await store.credential(id: id) == nil)
        #expect(try await store.list().isEmpty)
        // No holder key is left: neither the deleted record's nor the renewal's (only the
        // session's DPoP key, which the store's own deletion does not know of).
        #expect(try await wallet.keyAliases().count == 1)
    }

    @Test("a refresh token the server rotates is stored at once: a renewal failing after the token step keeps the new one")
    func rotatedRefreshTokenSurvivesFailure() async throws {
        let issuer = try TestIssuer(options: .init(dpop: true, refreshTokens: true, batchSize: 2))
        let wallet = try TestWalletSetup(issuer: issuer)
        guard let id = try await Self.issueRenewable(wallet, issuer, batchSize: 2) else { return }
        let store = wallet.storage.store
        let original = try #require(try await store.credential(id: id))
        let spent = try #require(original.refreshToken)
        issuer.options.faults["/credential"] = [jsonResponse(500, ["error": "server_error"])]
        guard case .failed = try await terminalState(of: wallet.client.reissue(id)) else { Issue.record("renewed"); return }
        let rotated = try #require(try await store.credential(id: id)?.refreshToken)
        #expect(rotated != spent)
        // Everything else of the record is as it was.
        let after = try #require(try await store.credential(id: id))
        #expect(after.instances == original.instances && after.issuanceContext == original.issuanceContext)
        // The next renewal presents the rotated token, not the spent one.
        #expect(try await terminalState(of: wallet.client.reissue(id)) == .completed(IssuanceResult(issued: [id])))
        let refresh = formPairs(try #require(issuer.requests(to: "/token").last?.body))
        #expect(refresh.contains { $0 == ("refresh_token", rotated) })
    }

    @Test("a renewal cancelled while the server answers its refresh request still keeps the rotated refresh token")
    func cancelledRenewalKeepsRotatedToken() async throws {
        let issuer = try TestIssuer(options: .init(dpop: true, refreshTokens: true, batchSize: 2))
        let wallet = try TestWalletSetup(issuer: issuer)
        guard let id = try await Self.issueRenewable(wallet, issuer, batchSize: 2) else { return }
        let store = wallet.storage.store
        let spent = try #require(try await store.credential(id: id)?.refreshToken)
        let session = LockedBox<IssuanceSession?>(nil)
        let tokenRequests = LockedBox(0)
        issuer.options.onTokenRequest = {
            // The app cancels while the server handles the refresh grant (the first token
            // request of the session only brings the DPoP nonce).
            tokenRequests.withLock { $0 += 1 }
            guard tokenRequests.withLock({ $0 }) == 2 else { return }
            while session.withLock({ $0 }) == nil { await Task.yield() }
            session.withLock { $0 }?.cancel()
        }
        let renewal = wallet.client.reissue(id)
        session.withLock { $0 = renewal }
        #expect(try await terminalState(of: renewal) == .failed(.unexpected(.cancelled)))
        let rotated = try #require(try await store.credential(id: id)?.refreshToken)
        #expect(rotated != spent)
        #expect(tokenRequests.withLock { $0 } == 2)
        #expect(issuer.requests(to: "/credential").count == 1, "only the first issuance's credential request")
    }

    @Test("a credential without a refresh token cannot be reissued")
    func reissueWithoutRefreshToken() async throws {
        let issuer = try TestIssuer()
        let wallet = try TestWalletSetup(issuer: issuer)
        guard case .completed(let result) = try await preAuthorized(wallet, issuer) else { Issue.record("not issued"); return }
        let terminal = try await terminalState(of: wallet.client.reissue(result.issued[0]))
        #expect(terminal == .failed(.authorizationFailed(oauthError: nil, reason: .refreshTokenUnavailable)))
        #expect(try await wallet.keyAliases().count == 1)
    }

    @Test("encryption policies against an issuer with encryption: whenRequired plain, preferred and required encrypted both ways",
          arguments: [CredentialEncryption.whenRequired, .preferred, .required])
    func encryptionWithIssuerSupport(policy: CredentialEncryption) async throws {
        let issuer = try TestIssuer(options: .init(requestEncryption: .init(key: try ECPrivateKey.generate(curve: .p256)),
                                                   responseEncryption: .init()))
        let wallet = try TestWalletSetup(issuer: issuer, encryption: policy)
        let terminal = try await preAuthorized(wallet, issuer)
        guard case .completed = terminal else { Issue.record("ended \(terminal)"); return }
        let request = try #require(issuer.requests(to: "/credential").first)
        let encrypted = policy != .whenRequired
        #expect((request.headers["Content-Type"] == "application/jwt") == encrypted)
        if encrypted {
            let jwe = try JWE(compact: String(decoding: try #require(request.body), as: UTF8.self))
            #expect(jwe.header.keyID == "issuer-enc-1")
            #expect(jwe.contentEncryption == .a256gcm)
            let asked = try #require(issuer.credentialRequests.first?["credential_response_encryption"]?.objectValue)
            #expect(asked["enc"]?.stringValue == "A256GCM")
            #expect(asked["jwk"]?["kty"]?.stringValue == "EC")
            #expect(asked["jwk"]?["d"] == nil)
        } else {
            #expect(issuer.credentialRequests.first?["credential_response_encryption"] == nil)
        }
    }

    @Test("encryption policies against an issuer without encryption: whenRequired and preferred plain, required refused")
    func encryptionWithoutIssuerSupport() async throws {
        for policy in CredentialEncryption.allCases {
            let issuer = try TestIssuer()
            let wallet = try TestWalletSetup(issuer: issuer, encryption: policy)
            let terminal = try await preAuthorized(wallet, issuer)
            if policy == .required {
                #expect(terminal == .failed(.credentialRequestFailed(oauthError: nil, reason: .encryption(.notOfferedByIssuer))))
                #expect(try await wallet.keyAliases().isEmpty)
            } else {
                guard case .completed = terminal else { Issue.record("\(policy) ended \(terminal)"); continue }
            }
        }
    }

    @Test("an issuer requiring encryption is encrypted to under whenRequired")
    func encryptionRequiredByIssuer() async throws {
        let issuer = try TestIssuer(options: .init(requestEncryption: .init(key: try ECPrivateKey.generate(curve: .p256), enc: ["A128GCM"]),
                                                   responseEncryption: .init(enc: ["A128GCM"], required: true)))
        let wallet = try TestWalletSetup(issuer: issuer)
        guard case .completed = try await preAuthorized(wallet, issuer) else { Issue.record("not completed"); return }
        #expect(issuer.requests(to: "/credential").first?.headers["Content-Type"] == "application/jwt")
        #expect(issuer.credentialRequests.first?["credential_response_encryption"]?["enc"]?.stringValue == "A128GCM")
    }

    @Test("a plaintext answer to an encrypted request fails; nothing stored, no key left")
    func plaintextAnswer() async throws {
        let issuer = try TestIssuer(options: .init(requestEncryption: .init(key: try ECPrivateKey.generate(curve: .p256)),
                                                   responseEncryption: .init(answerInPlaintext: true)))
        let wallet = try TestWalletSetup(issuer: issuer, encryption: .preferred)
        #expect(try await preAuthorized(wallet, issuer)
            == .failed(.credentialRequestFailed(oauthError: nil, reason: .encryption(.plaintextResponse))))
        #expect(try await wallet.credentials().isEmpty)
        #expect(try await wallet.keyAliases().isEmpty)
    }

    @Test("an encrypted response whose enc is not the one the request named fails; nothing stored, no key left")
    func responseEncWrong() async throws {
        // The wallet prefers the strongest enc the issuer lists (A256GCM); the issuer answers with A128GCM.
        let issuer = try TestIssuer(options: .init(requestEncryption: .init(key: try ECPrivateKey.generate(curve: .p256)),
                                                   responseEncryption: .init(answerWithEnc: .a128gcm)))
        let wallet = try TestWalletSetup(issuer: issuer, encryption: .preferred)
        #expect(try await preAuthorized(wallet, issuer) == .failed(.credentialRequestFailed(
            oauthError: nil, reason: .encryption(.undecryptable(.unsupportedAlgorithm(.enc, value: "A128GCM"))))))
        #expect(issuer.credentialRequests.last?["credential_response_encryption"]?["enc"]?.stringValue == "A256GCM")
        #expect(try await wallet.credentials().isEmpty)
        #expect(try await wallet.keyAliases().isEmpty)
    }

    @Test("response encryption advertised without request-encryption keys is refused before any key is made")
    func responseEncryptionWithoutRequestKeys() async throws {
        var setup = TestIssuer.RequestEncryptionSetup(key: try ECPrivateKey.generate(curve: .p256))
        setup.publishKeys = false
        let issuer = try TestIssuer(options: .init(requestEncryption: setup, responseEncryption: .init(required: true)))
        let wallet = try TestWalletSetup(issuer: issuer)
        let session = wallet.client.start(.fromIssuer(issuer.base, configurationId: "identity"))
        #expect(try await terminalState(of: session)
            == .failed(.credentialRequestFailed(oauthError: nil, reason: .encryption(.requestEncryptionKeysMissing))))
        #expect(issuer.requests(to: "/token").isEmpty)
        #expect(try await wallet.keyAliases().isEmpty)
    }

    @Test("key attestation required: the proofs carry one naming the batch keys; without a provider the session fails")
    func keyAttestation() async throws {
        let provider = try WalletProviderFixture()
        let issuer = try TestIssuer(options: .init(batchSize: 3, keyAttestationAnchor: provider.anchor))
        let wallet = try TestWalletSetup(issuer: issuer, config: IssuanceConfig(
            keyAttestationProvider: SoftwareKeyAttestationProvider(issuer: provider.issuer)))
        let terminal = try await preAuthorized(wallet, issuer, policy: CredentialPolicy(batchSize: 3, use: .oneTime))
        guard case .completed = terminal else { Issue.record("ended \(terminal)"); return }
        let proofs = try #require(issuer.credentialRequests.first?["proofs"]?["jwt"]?.arrayValue)
        let headers = try proofs.map { try JWT(compact: try #require($0.stringValue)).header }
        let attestation = try KeyAttestation(unverified: try #require(headers.first?["key_attestation"]?.stringValue))
        #expect(attestation.attestedKeys.count == 3)
        #expect(Set(try headers.map { try #require(try $0.jwk()) }) == Set(attestation.attestedKeys))

        let without = try TestWalletSetup(issuer: issuer)
        #expect(try await preAuthorized(without, issuer)
            == .failed(.credentialRequestFailed(oauthError: nil, reason: .keyAttestationUnavailable)))
        #expect(try await without.keyAliases().isEmpty)
    }

    @Test("cancel at a pause ends .failed(.unexpected(.cancelled)) with no key left")
    func cancel() async throws {
        let issuer = try TestIssuer(options: .init(txCode: "1234"))
        let wallet = try TestWalletSetup(issuer: issuer)
        let offer = try await wallet.client.resolveOffer(issuer.offerURI())
        let session = wallet.client.start(.fromOffer(offer, configurationId: "identity"))
        let terminal = try await terminalState(of: session) { state in
            if case .txCodeRequired = state { session.cancel() }
        }
        #expect(terminal == .failed(.unexpected(.cancelled)))
        #expect(session.currentState == terminal)
        #expect(try await wallet.keyAliases().isEmpty)
        #expect(try await wallet.credentials().isEmpty)
    }

    @Test("deleting a credential notifies credential_deleted and removes its keys")
    func deletion() async throws {
        let issuer = try TestIssuer(options: .init(dpop: true))
        let wallet = try TestWalletSetup(issuer: issuer)
        let terminal = try await SessionTests.authorize(wallet.client.start(.fromIssuer(issuer.base, configurationId: "identity")), issuer: issuer)
        guard case .completed(let result) = terminal else { Issue.record("ended \(terminal)"); return }
        #expect(try await wallet.keyAliases().count == 2)
        try await wallet.client.deleteCredential(result.issued[0])
        #expect(issuer.notifications.map { $0["event"]?.stringValue } == ["credential_accepted", "credential_deleted"])
        #expect(try await wallet.credentials().isEmpty)
        #expect(try await wallet.keyAliases().isEmpty)
        await #expect(throws: IssuanceError.unexpected(.credentialNotFound(result.issued[0]))) {
            try await wallet.client.deleteCredential(result.issued[0])
        }
    }

    @Test("a deletion deletes the keys the record names when it is deleted, not those it named before the notification's round trip")
    func deletionAfterRenewalMeanwhile() async throws {
        let issuer = try TestIssuer(options: .init(dpop: true))
        let wallet = try TestWalletSetup(issuer: issuer)
        let terminal = try await SessionTests.authorize(wallet.client.start(.fromIssuer(issuer.base, configurationId: "identity")), issuer: issuer)
        guard case .completed(let result) = terminal else { Issue.record("ended \(terminal)"); return }
        let id = result.issued[0]
        // While the issuer is told, a renewal commits: the record now waits for a deferred
        // credential bound to a key it just made.
        let store = wallet.storage.store, area = wallet.storage.secureArea
        issuer.options.onNotification = {
            guard let pending = try? await area.createKey(alias: "vci-holder-renewal"),
                  let stored = try? await store.credential(id: id),
                  var context = stored.issuanceContext.flatMap(IssuanceContext.init(encoded:)) else { return }
            context.pendingKeyAliases = [pending.alias]
            _ = try? await store.replace(StoredCredential(
                id: stored.id, format: stored.format, type: stored.type, issuer: stored.issuer, instances: stored.instances,
                policy: stored.policy, state: stored.state, issuanceContext: context.encoded))
        }
        try await wallet.client.deleteCredential(id)
        #expect(try await wallet.credentials().isEmpty)
        #expect(try await wallet.keyAliases().isEmpty, "the renewal's key went with the record")
    }
}
