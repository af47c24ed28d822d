import Foundation
import JOSE
import Mdoc
import SDJWT
import Testing
import WalletCrypto
import WalletEncoding
import WalletRuntime
import WalletStorage
@testable import OpenID4VCI

/// Sessions driven end to end against the in-process `TestIssuer`.
@Suite("Issuance sessions")
struct SessionTests {
    /// The holder key the stored instance's credential is bound to.
    static func boundKey(_ instance: CredentialInstance, format: CredentialFormat) throws -> PublicKey {
        switch format {
        case .sdJwtVc:
            let sdJWT = try SDJWT(compact: String(decoding: instance.raw, as: UTF8.self))
            return try #require(try sdJWT.payload.confirmationKey()).publicKey()
        case .msoMdoc:
            return try IssuerSigned(encoded: instance.raw).mobileSecurityObject.devicePublicKey()
        }
    }

    @Test("pre-authorized with the tx_code given up front: one verified credential stored with its key and metadata")
    func preAuthorizedWithTxCode() async throws {
        let issuer = try TestIssuer(options: .init(txCode: "493536"))
        let wallet = try TestWalletSetup(issuer: issuer)
        let offer = try await wallet.client.resolveOffer(issuer.offerURI())
        #expect(offer.requiresTxCode)
        let session = wallet.client.start(.fromOffer(offer, configurationId: "identity", txCode: "493536"))
        let terminal = try await terminalState(of: session)
        guard case .completed(let result) = terminal else { Issue.record("ended \(terminal)"); return }
        #expect(result.issued.count == 1)
        let id = try #require(result.issued.first)
        let stored = try #require(try await wallet.storage.store.credential(id: id))
        #expect(stored.format == .sdJwtVc)
        #expect(stored.type == TestIssuer.vct)
        #expect(stored.issuer == IssuerInfo(identifier: issuer.base, display: [DisplayMetadata(name: "Test Issuer", locale: "en")]))
        #expect(stored.display == [DisplayMetadata(name: "Identity", locale: "en")])
        #expect(stored.instances.count == 1)
        let keys = try await wallet.keyAliases()
        #expect(keys == stored.instances.map(\.keyAlias))
        let instance = try #require(stored.instances.first)
        let key = try #require(keys.first)
        #expect(try Self.boundKey(instance, format: .sdJwtVc) == (try await wallet.storage.secureArea.publicKey(alias: key)))
        // The token request carried the code; the proof had the issuer's c_nonce and no iss (anonymous access).
        let tokenForm = formPairs(try #require(issuer.requests(to: "/token").first?.body))
        #expect(tokenForm.contains { $0 == ("tx_code", "493536") })
        #expect(!tokenForm.contains { $0.0 == "client_id" })
        let proof = try JWT(compact: try #require(issuer.credentialRequests.first?["proofs"]?["jwt"]?.arrayValue?.first?.stringValue))
        #expect(proof.header.type == "openid4vci-proof+jwt")
        #expect(proof.claims.issuer == nil)
        #expect(proof.claims.nonce?.hasPrefix("c-nonce") == true)
        #expect(issuer.notifications.map { $0["event"]?.stringValue } == ["credential_accepted"])
    }

    @Test("pre-authorized with the tx_code asked: the session pauses at .txCodeRequired with the offer's hints")
    func txCodeAsked() async throws {
        let issuer = try TestIssuer(options: .init(txCode: "1234"))
        let wallet = try TestWalletSetup(issuer: issuer)
        let offer = try await wallet.client.resolveOffer(issuer.offerURI())
        let session = wallet.client.start(.fromOffer(offer, configurationId: "identity"))
        let seen = LockedBox<[IssuanceState]>([])
        let terminal = try await terminalState(of: session) { state in
            seen.withLock { $0.append(state) }
            if case .txCodeRequired = state { session.submitTxCode("1234") }
        }
        #expect(seen.withLock { $0 }.contains(.txCodeRequired(TxCodeSpec(inputMode: .numeric, length: 4, description: "Sent by SMS"))))
        guard case .completed = terminal else { Issue.record("ended \(terminal)"); return }
        #expect(seen.withLock { $0 }.contains(.processing))
    }

    @Test("a wrong tx_code ends .failed(authorizationFailed(invalid_grant)) with nothing stored and no key left")
    func wrongTxCode() async throws {
        let issuer = try TestIssuer(options: .init(txCode: "1234"))
        let wallet = try TestWalletSetup(issuer: issuer)
        let offer = try await wallet.client.resolveOffer(issuer.offerURI())
        let terminal = try await terminalState(of: wallet.client.start(.fromOffer(offer, configurationId: "identity", txCode: "9999")))
        #expect(terminal == .failed(.authorizationFailed(oauthError: "invalid_grant", reason: .rejected(status: 400, description: nil))))
        #expect(try await wallet.credentials().isEmpty)
        #expect(try await wallet.keyAliases().isEmpty)
    }

    /// Runs an authorization code session, playing the browser with `issuer.authorize`.
    static func authorize(_ session: IssuanceSession, issuer: TestIssuer, state: String? = nil) async throws -> IssuanceState {
        try await terminalState(of: session) { current in
            if case .authorizationRequired(let url) = current {
                session.completeAuthorization(issuer.authorize(url, state: state))
            }
        }
    }

    @Test("authorization code with PAR, PKCE and DPoP: nonce retries at the token and credential endpoints, DPoP-bound token")
    func authorizationCodeWithDPoP() async throws {
        let issuer = try TestIssuer(options: .init(dpop: true, tokenNonceChallenges: 1, credentialNonceChallenges: 1))
        let wallet = try TestWalletSetup(issuer: issuer)
        let session = wallet.client.start(.fromIssuer(issuer.base, configurationId: "identity"))
        let terminal = try await Self.authorize(session, issuer: issuer)
        guard case .completed(let result) = terminal else { Issue.record("ended \(terminal)"); return }
        #expect(result.issued.count == 1)
        // PAR carried the PKCE challenge; the authorization URL only the request_uri.
        let par = formPairs(try #require(issuer.requests(to: "/par").first?.body))
        #expect(par.contains { $0 == ("code_challenge_method", "S256") })
        #expect(par.contains { $0.0 == "authorization_details" })
        #expect(par.contains { $0 == ("client_id", "wallet-dev") })
        #expect(par.contains { $0 == ("redirect_uri", "eudi-wallet://authorize") })
        // Two token requests (the first answered use_dpop_nonce), both with DPoP; the second with the nonce.
        let tokens = issuer.requests(to: "/token")
        try #require(tokens.count == 2)
        let retried = try JWT(compact: try #require(tokens[1].headers["DPoP"]))
        #expect(retried.claims["nonce"]?.stringValue == "dpop-nonce-1")
        let credentials = issuer.requests(to: "/credential")
        #expect(credentials.count == 2)
        #expect(credentials.allSatisfy { $0.headers["Authorization"]?.hasPrefix("DPoP ") == true && $0.headers["DPoP"] != nil })
        // The proofs name the client (not anonymous) and the DPoP key is kept with the credential
        // because its notification id needs the DPoP-bound token later.
        let proof = try JWT(compact: try #require(issuer.credentialRequests.last?["proofs"]?["jwt"]?.arrayValue?.first?.stringValue))
        #expect(proof.claims.issuer == "wallet-dev")
        let keys = try await wallet.keyAliases()
        #expect(keys.count == 2)
        #expect(keys.contains { $0.hasPrefix("dpop-") })
    }

    @Test("use_dpop_nonce twice in a row at the token endpoint fails with that code; nothing stored, no key left")
    func dpopNonceTwice() async throws {
        let issuer = try TestIssuer(options: .init(dpop: true, tokenNonceChallenges: 2))
        let wallet = try TestWalletSetup(issuer: issuer)
        let terminal = try await Self.authorize(wallet.client.start(.fromIssuer(issuer.base, configurationId: "identity")), issuer: issuer)
        #expect(terminal == .failed(.authorizationFailed(oauthError: "use_dpop_nonce", reason: .rejected(status: 400, description: nil))))
        #expect(issuer.requests(to: "/token").count == 2)
        #expect(try await wallet.credentials().isEmpty)
        #expect(try await wallet.keyAliases().isEmpty)
    }

    @Test("use_dpop_nonce twice at the credential endpoint fails as credentialRequestFailed; no key left")
    func dpopNonceTwiceAtCredential() async throws {
        let issuer = try TestIssuer(options: .init(dpop: true, credentialNonceChallenges: 2))
        let wallet = try TestWalletSetup(issuer: issuer)
        let terminal = try await Self.authorize(wallet.client.start(.fromIssuer(issuer.base, configurationId: "identity")), issuer: issuer)
        #expect(terminal == .failed(.credentialRequestFailed(oauthError: "use_dpop_nonce", reason: .rejected(status: 401, description: nil))))
        #expect(try await wallet.credentials().isEmpty)
        #expect(try await wallet.keyAliases().isEmpty)
    }

    @Test("a state mismatch on the redirect fails before any token request; no key left")
    func stateMismatch() async throws {
        let issuer = try TestIssuer(options: .init(dpop: true))
        let wallet = try TestWalletSetup(issuer: issuer)
        let terminal = try await Self.authorize(wallet.client.start(.fromIssuer(issuer.base, configurationId: "identity")),
                                                issuer: issuer, state: "forged")
        #expect(terminal == .failed(.authorizationFailed(oauthError: nil, reason: .stateMismatch)))
        #expect(issuer.requests(to: "/token").isEmpty)
        #expect(try await wallet.keyAliases().isEmpty)
    }

    @Test("without PAR the authorization URL carries every parameter; an AS requiring PAR without an endpoint is refused")
    func withoutPAR() async throws {
        let issuer = try TestIssuer(options: .init(par: false))
        let wallet = try TestWalletSetup(issuer: issuer)
        let seen = LockedBox<String?>(nil)
        let session = wallet.client.start(.fromIssuer(issuer.base, configurationId: "identity"))
        let terminal = try await terminalState(of: session) { state in
            if case .authorizationRequired(let url) = state {
                seen.withLock { $0 = url }
                session.completeAuthorization(issuer.authorize(url))
            }
        }
        guard case .completed = terminal else { Issue.record("ended \(terminal)"); return }
        let url = try #require(seen.withLock { $0 })
        #expect(url.hasPrefix(issuer.base + "/authorize?response_type=code&client_id=wallet-dev"))
        #expect(url.contains("code_challenge_method=S256"))

        issuer.options.requirePAR = true
        let refused = try await terminalState(of: wallet.client.start(.fromIssuer(issuer.base, configurationId: "identity")))
        #expect(refused == .failed(.invalidOffer(.authorizationServerMetadata(.missingEndpoint("pushed_authorization_request_endpoint")))))
    }

    @Test("an authorization server that does not offer PKCE with S256 is refused before any authorization request")
    func pkceRequired() async throws {
        let issuer = try TestIssuer(options: .init(codeChallengeMethods: ["plain"]))
        let wallet = try TestWalletSetup(issuer: issuer)
        let terminal = try await terminalState(of: wallet.client.start(.fromIssuer(issuer.base, configurationId: "identity")))
        #expect(terminal == .failed(.authorizationFailed(oauthError: nil, reason: .pkceUnsupported)))
        #expect(issuer.requests(to: "/par").isEmpty && issuer.requests(to: "/token").isEmpty)
    }

    @Test("credential identifiers from the token response are requested instead of the configuration id, one credential each")
    func credentialIdentifiers() async throws {
        let issuer = try TestIssuer(options: .init(credentialIdentifiers: ["CivilEngineeringDegree-2023", "ElectricalEngineeringDegree-2023"]))
        let wallet = try TestWalletSetup(issuer: issuer)
        let offer = try await wallet.client.resolveOffer(issuer.offerURI())
        let terminal = try await terminalState(of: wallet.client.start(.fromOffer(offer, configurationId: "identity")))
        guard case .completed(let result) = terminal else { Issue.record("ended \(terminal)"); return }
        #expect(result.issued.count == 2)
        #expect(issuer.credentialRequests.map { $0["credential_identifier"]?.stringValue }
            == ["CivilEngineeringDegree-2023", "ElectricalEngineeringDegree-2023"])
        #expect(issuer.credentialRequests.allSatisfy { $0["credential_configuration_id"] == nil })
        #expect(try await wallet.credentials().count == 2)
    }

    @Test("a batch of 5 oneTime instances: 5 distinct holder keys, each credential bound to its own key", arguments: [CredentialFormat.sdJwtVc, .msoMdoc])
    func batch(format: CredentialFormat) async throws {
        let issuer = try TestIssuer(options: .init(format: format, batchSize: 10))
        let wallet = try TestWalletSetup(issuer: issuer)
        let offer = try await wallet.client.resolveOffer(issuer.offerURI())
        let session = wallet.client.start(.fromOffer(offer, configurationId: issuer.configurationId,
                                                     policy: CredentialPolicy(batchSize: 5, use: .oneTime)))
        let terminal = try await terminalState(of: session)
        guard case .completed(let result) = terminal else { Issue.record("ended \(terminal)"); return }
        let stored = try #require(try await wallet.storage.store.credential(id: result.issued[0]))
        #expect(stored.format == format)
        #expect(stored.policy == CredentialPolicy(batchSize: 5, use: .oneTime))
        #expect(stored.instances.count == 5)
        #expect(Set(stored.instances.map(\.keyAlias)).count == 5)
        for instance in stored.instances {
            let key = try await wallet.storage.secureArea.publicKey(alias: instance.keyAlias)
            #expect(try Self.boundKey(instance, format: format) == key)
        }
        #expect(issuer.credentialRequests.first?["proofs"]?["jwt"]?.arrayValue?.count == 5)
    }

    @Test("the batch is capped by the issuer's batch_size, and is one without batch_credential_issuance")
    func batchCap() async throws {
        let issuer = try TestIssuer(options: .init(batchSize: 3))
        let wallet = try TestWalletSetup(issuer: issuer)
        let offer = try await wallet.client.resolveOffer(issuer.offerURI())
        let capped = try await terminalState(of: wallet.client.start(.fromOffer(offer, configurationId: "identity",
                                                                                policy: CredentialPolicy(batchSize: 5, use: .oneTime))))
        guard case .completed(let result) = capped else { Issue.record("ended \(capped)"); return }
        #expect(try await wallet.storage.store.credential(id: result.issued[0])?.instances.count == 3)
        issuer.options.batchSize = nil
        let single = try await terminalState(of: wallet.client.start(.fromOffer(
            try await wallet.client.resolveOffer(issuer.offerURI()), configurationId: "identity", policy: CredentialPolicy(batchSize: 5, use: .oneTime))))
        guard case .completed(let second) = single else { Issue.record("ended \(single)"); return }
        #expect(try await wallet.storage.store.credential(id: second.issued[0])?.instances.count == 1)
    }
}
