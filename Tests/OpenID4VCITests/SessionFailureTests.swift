import Foundation
import JOSE
import Mdoc
import SDJWT
import TestSecureAreas
import Testing
import WalletCrypto
import WalletEncoding
import WalletRuntime
import WalletStorage
@testable import OpenID4VCI

/// Failures: each ends `.failed` with its case, stores nothing and leaves no key.
@Suite("Issuance sessions: failures leave nothing behind")
struct SessionFailureTests {
    private func run(_ issuer: TestIssuer, config: IssuanceConfig = IssuanceConfig(),
                     clock: any WalletClock = SystemClock()) async throws -> (IssuanceState, TestWalletSetup) {
        let wallet = try TestWalletSetup(issuer: issuer, config: config, clock: clock)
        let offer = try await wallet.client.resolveOffer(issuer.offerURI())
        let terminal = try await terminalState(of: wallet.client.start(.fromOffer(offer, configurationId: issuer.configurationId,
                                                                                  policy: CredentialPolicy(batchSize: 2, use: .oneTime))))
        #expect(try await wallet.credentials().isEmpty)
        #expect(try await wallet.keyAliases().isEmpty)
        return (terminal, wallet)
    }

    @Test("a 500 at the credential endpoint")
    func serverError() async throws {
        let issuer = try TestIssuer(options: .init(batchSize: 2, faults: ["/credential": [HTTPResponse(status: 500)]]))
        #expect(try await run(issuer).0 == .failed(.credentialRequestFailed(oauthError: nil, reason: .malformedResponse(.unexpectedStatus(500)))))
    }

    @Test("malformed JSON at the credential endpoint")
    func malformedJSON() async throws {
        let issuer = try TestIssuer(options: .init(batchSize: 2, faults: [
            "/credential": [HTTPResponse(status: 200, headers: ["Content-Type": "application/json"], body: Array(#"{"credentials": ["#.utf8))]]))
        let (terminal, _) = try await run(issuer)
        guard case .failed(.credentialRequestFailed(nil, .malformedResponse(.notJSON))) = terminal else {
            Issue.record("ended \(terminal)"); return
        }
    }

    @Test("a credential response without credentials (an empty array, or none and no transaction_id)",
          arguments: [["credentials": [], "notification_id": "n-1"], ["notification_id": "n-1"]] as [JSONObject])
    func noCredentials(body: JSONObject) async throws {
        let issuer = try TestIssuer(options: .init(batchSize: 2, faults: ["/credential": [jsonResponse(200, body)]]))
        #expect(try await run(issuer).0
            == .failed(.credentialRequestFailed(oauthError: nil, reason: .malformedResponse(.invalidMember("credentials")))))
        #expect(issuer.notifications.isEmpty)
    }

    @Test("a credential endpoint slower than the request timeout")
    func timeout() async throws {
        let issuer = try TestIssuer(options: .init(batchSize: 2, delayAtCredential: .seconds(60)))
        #expect(try await run(issuer, config: IssuanceConfig(requestTimeout: .seconds(5))).0 == .failed(.unexpected(.transport(.timedOut))))
    }

    @Test("an invalid_grant from the token endpoint (a code used twice)")
    func invalidGrant() async throws {
        let issuer = try TestIssuer(options: .init(faults: ["/token": [oauthError(400, "invalid_grant")]]))
        #expect(try await run(issuer).0 == .failed(.authorizationFailed(oauthError: "invalid_grant", reason: .rejected(status: 400, description: nil))))
    }

    @Test("a Bearer token answering a DPoP proof is a downgrade: refused, nothing stored, no key left")
    func bearerAfterDPoPProof() async throws {
        let issuer = try TestIssuer(options: .init(dpop: true, faults: ["/token": [jsonResponse(200, [
            "access_token": "at", "token_type": "Bearer", "expires_in": 3600])]]))
        #expect(try await run(issuer).0 == .failed(.authorizationFailed(oauthError: nil, reason: .malformedResponse(.invalidMember("token_type")))))
        #expect(issuer.requests(to: "/token").first?.headers["DPoP"] != nil, "the proof was sent")
        #expect(issuer.requests(to: "/credential").isEmpty)
    }

    @Test("an SD-JWT VC signed by a key the issuer's metadata does not publish; credential_failure is sent")
    func unknownKeyWithoutAnchors() async throws {
        let issuer = try TestIssuer(options: .init(batchSize: 2, rogueSigner: try ECPrivateKey.generate(curve: .p256), x5c: false))
        let (terminal, _) = try await run(issuer)
        guard case .failed(.credentialRequestFailed(nil, .invalidCredential(.sdJWT(.invalidIssuerSignature)))) = terminal else {
            Issue.record("ended \(terminal)"); return
        }
        #expect(issuer.notifications.map { $0["event"]?.stringValue } == ["credential_failure"])
        #expect(issuer.requests(to: "/.well-known/jwt-vc-issuer").count == 1)
    }

    @Test("credentials chained to another root than the configured anchors", arguments: [CredentialFormat.sdJwtVc, .msoMdoc])
    func unknownKeyWithAnchors(format: CredentialFormat) async throws {
        let issuer = try TestIssuer(options: .init(format: format, batchSize: 2))
        let stranger = try TestPKI(name: "Stranger")
        let (terminal, _) = try await run(issuer, config: IssuanceConfig(issuerTrustAnchors: [stranger.anchor]))
        switch (format, terminal) {
        case (.sdJwtVc, .failed(.credentialRequestFailed(nil, .invalidCredential(.sdJWT(.untrustedIssuer))))),
             (.msoMdoc, .failed(.credentialRequestFailed(nil, .invalidCredential(.mdoc(.untrustedIssuer))))):
            break
        default:
            Issue.record("\(format) ended \(terminal)")
        }
        // With the right anchor the same issuer is accepted.
        let wallet = try TestWalletSetup(issuer: issuer, config: IssuanceConfig(issuerTrustAnchors: [issuer.pki.anchor]))
        let offer = try await wallet.client.resolveOffer(issuer.offerURI())
        guard case .completed = try await terminalState(of: wallet.client.start(.fromOffer(offer, configurationId: issuer.configurationId))) else {
            Issue.record("the issuer's own anchor was refused"); return
        }
    }

    @Test("a credential whose cnf / deviceKey is not the proof key", arguments: [CredentialFormat.sdJwtVc, .msoMdoc])
    func holderKeyMismatch(format: CredentialFormat) async throws {
        let other = try ECPrivateKey.generate(curve: .p256)
        let issuer = try TestIssuer(options: .init(format: format, batchSize: 2, bindTo: .ec(other.publicKey)))
        #expect(try await run(issuer).0 == .failed(.credentialRequestFailed(oauthError: nil, reason: .invalidCredential(.holderKeyMismatch))))
    }

    @Test("an expired mdoc and a credential of another type are refused")
    func validityAndType() async throws {
        let issuer = try TestIssuer(options: .init(format: .msoMdoc, batchSize: 2))
        let later = ManualClock(Date().addingTimeInterval(365 * 86_400))
        let (expired, _) = try await run(issuer, clock: later)
        guard case .failed(.credentialRequestFailed(nil, .invalidCredential(.mdoc(.msoExpired)))) = expired else {
            Issue.record("ended \(expired)"); return
        }
        // A validly signed credential of a vct / docType other than the configuration's.
        for (format, expected, other) in [(CredentialFormat.sdJwtVc, TestIssuer.vct, "https://credentials.example/other"),
                                          (.msoMdoc, TestIssuer.docType, "org.example.other")] {
            let issuer = try TestIssuer(options: .init(format: format, batchSize: 2, issuedType: other))
            #expect(try await run(issuer).0 == .failed(.credentialRequestFailed(
                oauthError: nil, reason: .invalidCredential(.typeMismatch(expected: expected, actual: other)))), "\(format)")
        }
    }

    @Test("an mdoc whose issuerAuth carries alg only in the unprotected bucket is refused, with or without anchors")
    func mdocUnprotectedAlgorithm() async throws {
        let issuer = try TestIssuer(options: .init(format: .msoMdoc, batchSize: 2, unprotectedMdocAlgorithm: true))
        for config in [IssuanceConfig(), IssuanceConfig(issuerTrustAnchors: [issuer.pki.anchor])] {
            #expect(try await run(issuer, config: config).0 == .failed(.credentialRequestFailed(
                oauthError: nil, reason: .invalidCredential(.mdoc(.issuerSignatureInvalid(.algorithmNotProtected))))))
        }
    }

    @Test("http is refused unless allowed, and then only to loopback hosts")
    func httpPolicy() async throws {
        let issuer = try TestIssuer(base: "http://127.0.0.1:9")
        let refused = try TestWalletSetup(issuer: issuer)
        await #expect(throws: IssuanceError.invalidOffer(.insecureURL("http://127.0.0.1:9"))) {
            _ = try await refused.client.resolveOffer(issuer.offerURI())
        }
        let allowed = try TestWalletSetup(issuer: issuer, config: IssuanceConfig(allowHTTP: true))
        let offer = try await allowed.client.resolveOffer(issuer.offerURI())
        guard case .completed = try await terminalState(of: allowed.client.start(.fromOffer(offer, configurationId: "identity"))) else {
            Issue.record("loopback http refused"); return
        }
        let remote = try TestIssuer(base: "http://issuer.example")
        let notLoopback = try TestWalletSetup(issuer: remote, config: IssuanceConfig(allowHTTP: true))
        await #expect(throws: IssuanceError.invalidOffer(.insecureURL("http://issuer.example"))) {
            _ = try await notLoopback.client.resolveOffer(remote.offerURI())
        }
    }
}

/// A signer that fails as a dismissed authentication prompt does.
struct CancelledSigner: Signer {
    let publicKey: PublicKey
    var algorithm: SignatureAlgorithm { .es256 }
    func sign(_ message: [UInt8]) async throws(KeyOperationError) -> [UInt8] { throw .userCancelled }
}

/// Signs as `inner` does, except a JWT whose payload names the notification endpoint (the
/// DPoP proof of a notification request), which fails as a dismissed prompt does.
struct NotificationRefusingSigner: Signer {
    let inner: any Signer
    var publicKey: PublicKey { inner.publicKey }
    var algorithm: SignatureAlgorithm { inner.algorithm }
    func sign(_ message: [UInt8]) async throws(KeyOperationError) -> [UInt8] {
        let parts = message.split(separator: UInt8(ascii: "."), omittingEmptySubsequences: false)
        if parts.count == 2, let payload = Base64URL.decode(String(decoding: parts[1], as: UTF8.self)),
           String(decoding: payload, as: UTF8.self).contains("/notification") {
            throw .userCancelled
        }
        return try await inner.sign(message)
    }
}

/// A secure area whose signers fail as a dismissed authentication prompt does.
func cancellingSecureArea(_ inner: SoftwareSecureArea) -> ForwardingSecureArea {
    ForwardingSecureArea(inner: inner, name: "cancelling", signer: { alias, _ throws(StorageError) in
        CancelledSigner(publicKey: try await inner.keyInfo(alias: alias).publicKey)
    })
}

@Suite("Issuance sessions: the holder's authentication")
struct SessionAuthenticationTests {
    @Test("a signer's userCancelled reaches the app unchanged; no key is left")
    func userCancelled() async throws {
        let issuer = try TestIssuer()
        let inner = try SoftwareSecureArea(location: .inMemory, wrapping: try EphemeralWrappingProvider())
        let area = cancellingSecureArea(inner)
        let store = try CredentialStore(location: .inMemory, secureArea: area, wrapping: try EphemeralWrappingProvider())
        let client = Openid4VciClient(http: issuer, storage: IssuanceStorage(secureArea: area, store: store))
        let offer = try await client.resolveOffer(issuer.offerURI())
        let terminal = try await terminalState(of: client.start(.fromOffer(offer, configurationId: "identity")))
        #expect(terminal == .failed(.unexpected(.keyOperation(.userCancelled))))
        #expect(try await inner.listKeys().isEmpty)
        #expect(try await store.list().isEmpty)
    }

    @Test("a notification whose DPoP proof cannot be signed is skipped: the stored credential keeps its keys")
    func notificationProofFails() async throws {
        let issuer = try TestIssuer(options: .init(dpop: true, batchSize: 2))
        let inner = try SoftwareSecureArea(location: .inMemory, wrapping: try EphemeralWrappingProvider())
        let area = ForwardingSecureArea(inner: inner, name: "no notification proofs", signer: { alias, unlock throws(StorageError) in
            NotificationRefusingSigner(inner: try await inner.signer(for: alias, unlock: unlock))
        })
        let store = try CredentialStore(location: .inMemory, secureArea: area, wrapping: try EphemeralWrappingProvider())
        let client = Openid4VciClient(http: issuer, storage: IssuanceStorage(secureArea: area, store: store))
        let session = client.start(.fromIssuer(issuer.base, configurationId: "identity", policy: CredentialPolicy(batchSize: 2, use: .oneTime)))
        let terminal = try await SessionTests.authorize(session, issuer: issuer)
        guard case .completed(let result) = terminal, let id = result.issued.first else { Issue.record("ended \(terminal)"); return }
        #expect(issuer.notifications.isEmpty)
        #expect(issuer.requests(to: "/token").last?.headers["DPoP"] != nil)
        let stored = try #require(try await store.credential(id: id))
        let aliases = Set(try await inner.listKeys().map(\.alias))
        #expect(stored.instances.count == 2)
        #expect(stored.instances.allSatisfy { aliases.contains($0.keyAlias) })
        // The credential is usable: an instance's key signs.
        let consumed = try await store.consumeInstance(of: id)
        #expect(consumed.signer.publicKey.verify(signature: try await consumed.signer.sign([1]), for: [1], algorithm: .es256))
    }

    @Test("passphrase-protected holder keys: the right unlock signs, a wrong one fails as authenticationRequired")
    func protectedKeys() async throws {
        let issuer = try TestIssuer()
        let storage = try IssuanceStorage.inMemory()
        let good = Openid4VciClient(http: issuer, config: IssuanceConfig(holderKeyProtection: .passphrase("1234"),
                                                                         holderKeyUnlock: PassphraseUnlock("1234")), storage: storage)
        guard case .completed = try await terminalState(of: good.start(.fromOffer(
            try await good.resolveOffer(issuer.offerURI()), configurationId: "identity"))) else {
            Issue.record("the right passphrase did not sign"); return
        }
        let wrong = Openid4VciClient(http: issuer, config: IssuanceConfig(holderKeyProtection: .passphrase("1234"),
                                                                          holderKeyUnlock: PassphraseUnlock("0000")), storage: storage)
        let terminal = try await terminalState(of: wrong.start(.fromOffer(try await wrong.resolveOffer(issuer.offerURI()), configurationId: "identity")))
        guard case .failed(.unexpected(.storage(.authenticationRequired))) = terminal else { Issue.record("ended \(terminal)"); return }
        #expect(try await storage.secureArea.listKeys().count == 1)
    }
}
