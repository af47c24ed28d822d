import Foundation
import JOSE
import Mdoc
import ReferenceParties
import SDJWT
import Testing
import WalletCrypto
import WalletEncoding
import WalletRuntime
import WalletStorage
@testable import OpenID4VCI

/// The reference issuer (ReferenceParties, written independently from the spec) on a
/// loopback port, and a wallet talking to it over real HTTP.
final class LoopbackIssuer: Sendable {
    let issuer: ReferenceIssuer
    let server: LoopbackHTTPServer
    let anchors: [X509Certificate]
    let http = PatientHTTPClient()

    init(_ configuration: ReferenceIssuerConfiguration = ReferenceIssuerConfiguration(), faults: [FaultRule] = []) async throws {
        issuer = try ReferenceIssuer(configuration: configuration)
        server = faults.isEmpty ? try LoopbackHTTPServer(handler: issuer)
            : try LoopbackHTTPServer(handler: FaultInjector(wrapping: issuer, rules: faults))
        try await issuer.setOrigin(server.baseURL)
        anchors = [issuer.trustAnchors.iaca, issuer.trustAnchors.issuerRoot]
    }

    deinit { server.stop() }

    var base: String { server.baseURL.absoluteString.hasSuffix("/") ? String(server.baseURL.absoluteString.dropLast()) : server.baseURL.absoluteString }

    /// A wallet over in-memory storage that trusts this issuer's PKI.
    func wallet(encryption: CredentialEncryption = .whenRequired, trusting: Bool = true,
                keyAttestations: (any KeyAttestationProvider)? = nil) throws -> TestWalletSetup {
        try TestWalletSetup(issuer: http, encryption: encryption, config: IssuanceConfig(
            issuerTrustAnchors: trusting ? anchors : [], keyAttestationProvider: keyAttestations, allowHTTP: true))
    }

    /// A pre-authorized offer by reference for `configuration`.
    func offer(_ configuration: String = IssuerCredentialConfiguration.pidId, txCode: String? = nil) async throws -> IssuedCredentialOffer {
        try await issuer.createOffer(.preAuthorized([configuration], txCode: txCode.map { .init(value: $0, length: $0.count) }))
    }

    /// Runs `session`; the browser step fetches the authorization URL and follows its redirect.
    func run(_ session: IssuanceSession) async throws -> IssuanceState {
        let http = self.http
        return try await terminalState(of: session) { state in
            guard case .authorizationRequired(let url) = state else { return }
            Task {
                guard let target = URL(string: url), let response = try? await http.send(HTTPRequest(url: target)),
                      let location = response.headers["Location"] else { session.cancel(); return }
                session.completeAuthorization(location)
            }
        }
    }

    /// Resolves and runs a pre-authorized offer.
    func issue(_ wallet: TestWalletSetup, _ configuration: String = IssuerCredentialConfiguration.pidId, txCode: String? = nil,
               given: String? = nil, policy: CredentialPolicy = CredentialPolicy()) async throws -> IssuanceState {
        let offer = try await wallet.client.resolveOffer(try await self.offer(configuration, txCode: txCode).byReference)
        return try await run(wallet.client.start(.fromOffer(offer, configurationId: configuration, txCode: given, policy: policy)))
    }
}

@Suite("End to end against the reference issuer over loopback HTTP (issue 13, acceptance 1)")
struct ReferenceIssuerTests {
    static let pid = IssuerCredentialConfiguration.pidId
    static let mDL = IssuerCredentialConfiguration.mDLId

    @Test("pre-authorized, tx_code given (SD-JWT VC) and asked (mdoc); both formats verified against the issuer's PKI")
    func preAuthorized() async throws {
        let party = try await LoopbackIssuer()
        let wallet = try party.wallet()
        let given = try await party.issue(wallet, txCode: "493536", given: "493536")
        guard case .completed(let result) = given else { Issue.record("ended \(given)"); return }
        let stored = try #require(try await wallet.storage.store.credential(id: result.issued[0]))
        #expect(stored.type == "urn:eudi:pid:1")
        #expect(stored.display.first?.name == "Personal ID")
        #expect(stored.issuer.identifier == party.base)

        let offer = try await wallet.client.resolveOffer(try await party.offer(Self.mDL, txCode: "2468").byValue)
        #expect(offer.txCode?.length == 4)
        let session = wallet.client.start(.fromOffer(offer, configurationId: Self.mDL))
        let asked = try await terminalState(of: session) { state in
            if case .txCodeRequired = state { session.submitTxCode("2468") }
        }
        guard case .completed(let mdoc) = asked else { Issue.record("ended \(asked)"); return }
        #expect(try await wallet.storage.store.credential(id: mdoc.issued[0])?.type == "org.iso.18013.5.1.mDL")
        let notifications = await party.issuer.inspection.notifications
        #expect(notifications.filter { $0.event == "credential_accepted" }.count == 2)
    }

    @Test("authorization code with PAR, PKCE and DPoP with nonces: one retry at the token and at the credential endpoint")
    func authorizationCode() async throws {
        // The nonce endpoint hands out the credential endpoint's DPoP nonce ahead of time
        // (§7.2), so the issuer forces one challenge there to exercise the 401 retry.
        let party = try await LoopbackIssuer(ReferenceIssuerConfiguration(
            par: .required, dpop: .requiredWithNonce, behaviour: IssuerBehaviour(forcedCredentialNonceChallenges: 1)))
        let wallet = try party.wallet()
        let terminal = try await party.run(wallet.client.start(.fromIssuer(party.base, configurationId: Self.pid)))
        guard case .completed = terminal else { Issue.record("ended \(terminal)"); return }
        let seen = await party.issuer.inspection
        #expect(seen.authorizationRequests.first?.pushed == true)
        #expect(seen.authorizationRequests.first?.usedAuthorizationDetails == true)
        #expect(seen.refusals.filter { $0.error == "use_dpop_nonce" }.map(\.path).sorted()
            == ["/credential", "/token"].sorted())
        #expect(seen.tokenRequests.last?.dpopKeyThumbprint != nil)
        #expect(seen.credentialRequests.first?.dpopKeyThumbprint == seen.tokenRequests.last?.dpopKeyThumbprint)
    }

    @Test("credential identifiers bound by the token are requested as credential_identifier")
    func credentialIdentifiers() async throws {
        let party = try await LoopbackIssuer(ReferenceIssuerConfiguration(credentialIdentifiers: .always))
        let wallet = try party.wallet()
        let terminal = try await party.issue(wallet)
        guard case .completed = terminal else { Issue.record("ended \(terminal)"); return }
        let requests = await party.issuer.inspection.credentialRequests
        #expect(!requests.isEmpty)
        #expect(requests.allSatisfy { $0.credentialIdentifier != nil && $0.credentialConfigurationId == nil })
    }

    @Test("a batch of 5 oneTime: 5 distinct holder keys, each credential bound to its own", arguments: [pid, mDL])
    func batch(configuration: String) async throws {
        let party = try await LoopbackIssuer()
        let wallet = try party.wallet()
        let terminal = try await party.issue(wallet, configuration, policy: CredentialPolicy(batchSize: 5, use: .oneTime))
        guard case .completed(let result) = terminal else { Issue.record("ended \(terminal)"); return }
        let stored = try #require(try await wallet.storage.store.credential(id: result.issued[0]))
        #expect(stored.instances.count == 5)
        #expect(Set(stored.instances.map(\.keyAlias)).count == 5)
        for instance in stored.instances {
            #expect(try SessionTests.boundKey(instance, format: stored.format)
                == (try await wallet.storage.secureArea.publicKey(alias: instance.keyAlias)))
        }
        #expect(await party.issuer.inspection.credentialRequests.first?.proofs.count == 5)
    }

    @Test("deferred then resumed, in the 202 form and the legacy issuance_pending form",
          arguments: [DeferredIssuance.Style.accepted, .legacyIssuancePending])
    func deferred(style: DeferredIssuance.Style) async throws {
        let party = try await LoopbackIssuer(ReferenceIssuerConfiguration(deferral: DeferredIssuance(interval: 1, pendingPolls: 1, style: style)))
        let wallet = try party.wallet()
        let first = try await party.issue(wallet)
        guard case .deferred(let id, _) = first else { Issue.record("ended \(first)"); return }
        #expect(try await terminalState(of: wallet.client.resumeDeferred(id)).isTerminal)
        var final = try await terminalState(of: wallet.client.resumeDeferred(id))
        if case .deferred = final { final = try await terminalState(of: wallet.client.resumeDeferred(id)) }
        #expect(final == .completed(IssuanceResult(issued: [id])))
        #expect(try await wallet.storage.store.credential(id: id)?.state == .issued)
    }

    @Test("reissue via the refresh token (DPoP-bound)")
    func reissue() async throws {
        let party = try await LoopbackIssuer(ReferenceIssuerConfiguration(dpop: .requiredWithNonce))
        let wallet = try party.wallet()
        let first = try await party.run(wallet.client.start(.fromIssuer(party.base, configurationId: Self.pid,
                                                                            policy: CredentialPolicy(batchSize: 3, use: .oneTime))))
        guard case .completed(let result) = first else { Issue.record("ended \(first)"); return }
        let id = result.issued[0]
        _ = try await wallet.storage.store.consumeInstance(of: id)
        #expect(try await terminalState(of: wallet.client.reissue(id)) == .completed(IssuanceResult(issued: [id])))
        #expect(try await wallet.storage.store.remainingInstances(of: id) == 3)
        #expect(await party.issuer.inspection.tokenRequests.last?.grantType == "refresh_token")
    }

    @Test("each encryption policy against an issuer with and without encryption",
          arguments: [CredentialEncryption.whenRequired, .preferred, .required])
    func encryption(policy: CredentialEncryption) async throws {
        let with = try await LoopbackIssuer(ReferenceIssuerConfiguration(requestEncryption: EncryptionSupport(),
                                                                         responseEncryption: EncryptionSupport()))
        let encrypted = try await with.issue(try with.wallet(encryption: policy))
        guard case .completed = encrypted else { Issue.record("\(policy) with encryption ended \(encrypted)"); return }
        let request = try #require(await with.issuer.inspection.credentialRequests.first)
        #expect(request.encrypted == (policy != .whenRequired))
        #expect((request.responseEncryption != nil) == (policy != .whenRequired))

        let without = try await LoopbackIssuer()
        let plain = try await without.issue(try without.wallet(encryption: policy))
        if policy == .required {
            #expect(plain == .failed(.credentialRequestFailed(oauthError: nil, reason: .encryption(.notOfferedByIssuer))))
        } else {
            guard case .completed = plain else { Issue.record("\(policy) without encryption ended \(plain)"); return }
        }
    }

    @Test("an issuer that requires encryption gets it under whenRequired")
    func requiredByIssuer() async throws {
        let party = try await LoopbackIssuer(ReferenceIssuerConfiguration(requestEncryption: EncryptionSupport(required: true),
                                                                          responseEncryption: EncryptionSupport(required: true)))
        guard case .completed = try await party.issue(try party.wallet()) else { Issue.record("not completed"); return }
        #expect(await party.issuer.inspection.credentialRequests.first?.encrypted == true)
    }

    @Test("key attestation required: the wallet's software provider attests the batch keys")
    func keyAttestation() async throws {
        let provider = try WalletProviderFixture()
        let requirement = IssuerCredentialConfiguration.KeyAttestationRequirement(keyStorage: ["iso_18045_basic"])
        let party = try await LoopbackIssuer(ReferenceIssuerConfiguration(
            credentialConfigurations: [.pid(keyAttestation: requirement)], keyAttestationTrustAnchors: [provider.anchor]))
        let wallet = try party.wallet(keyAttestations: SoftwareKeyAttestationProvider(issuer: provider.issuer))
        let terminal = try await party.issue(wallet, policy: CredentialPolicy(batchSize: 2, use: .oneTime))
        guard case .completed = terminal else { Issue.record("ended \(terminal)"); return }
        let proofs = try #require(await party.issuer.inspection.credentialRequests.first?.proofs)
        #expect(proofs.allSatisfy { $0.keyAttestation != nil })
    }
}

@Suite("End to end failures against the reference issuer (issue 13, acceptance 2)")
struct ReferenceIssuerFailureTests {
    /// Runs a pre-authorized issuance of a batch of 2 and checks that nothing is stored and no key is left.
    private func failing(_ party: LoopbackIssuer, txCode: String? = nil, given: String? = nil,
                         encryption: CredentialEncryption = .whenRequired) async throws -> IssuanceState {
        let wallet = try party.wallet(encryption: encryption)
        let terminal = try await party.issue(wallet, txCode: txCode, given: given, policy: CredentialPolicy(batchSize: 2, use: .oneTime))
        #expect(try await wallet.credentials().isEmpty)
        #expect(try await wallet.keyAliases().isEmpty)
        return terminal
    }

    @Test("wrong tx_code")
    func wrongTxCode() async throws {
        let party = try await LoopbackIssuer()
        let terminal = try await failing(party, txCode: "493536", given: "000000")
        #expect(terminal.oauthError == "invalid_grant")
        guard case .failed(.authorizationFailed) = terminal else { Issue.record("ended \(terminal)"); return }
    }

    @Test("invalid_grant from the token endpoint")
    func invalidGrant() async throws {
        let party = try await LoopbackIssuer(ReferenceIssuerConfiguration(behaviour: IssuerBehaviour(tokenError: "invalid_grant")))
        let terminal = try await failing(party)
        #expect(terminal.oauthError == "invalid_grant")
        guard case .failed(.authorizationFailed) = terminal else { Issue.record("ended \(terminal)"); return }
    }

    @Test("use_dpop_nonce twice in a row")
    func dpopNonceTwice() async throws {
        let party = try await LoopbackIssuer(ReferenceIssuerConfiguration(
            dpop: .requiredWithNonce, behaviour: IssuerBehaviour(forcedTokenNonceChallenges: 2)))
        let terminal = try await failing(party)
        #expect(terminal.oauthError == "use_dpop_nonce")
        guard case .failed(.authorizationFailed) = terminal else { Issue.record("ended \(terminal)"); return }
    }

    @Test("500 at the credential endpoint")
    func serverError() async throws {
        let party = try await LoopbackIssuer(faults: [FaultRule(.post, path: "/credential", fault: .status(500))])
        #expect(try await failing(party) == .failed(.credentialRequestFailed(oauthError: nil, reason: .malformedResponse(.unexpectedStatus(500)))))
    }

    @Test("malformed JSON at the credential endpoint")
    func malformedJSON() async throws {
        let party = try await LoopbackIssuer(faults: [FaultRule(.post, path: "/credential", fault: .malformedBody)])
        let terminal = try await failing(party)
        guard case .failed(.credentialRequestFailed(nil, .malformedResponse(.notJSON))) = terminal else { Issue.record("ended \(terminal)"); return }
    }

    @Test("a timeout at the credential endpoint (in-process, on a manual clock: deterministic under load)")
    func timeout() async throws {
        let clock = ManualClock(Date())
        let issuer = try ReferenceIssuer(clock: clock)
        let faults = FaultInjector(wrapping: issuer, rules: [FaultRule(.post, path: "/credential", fault: .delay(.seconds(120)))],
                                   clock: clock)
        let wallet = try TestWalletSetup(issuer: InProcessHTTPClient(handler: faults, clock: clock), clock: clock)
        let offer = try await wallet.client.resolveOffer(try await issuer.createOffer(.preAuthorized([IssuerCredentialConfiguration.pidId])).byValue)
        let terminal = try await terminalState(of: wallet.client.start(.fromOffer(offer, configurationId: IssuerCredentialConfiguration.pidId)))
        #expect(terminal == .failed(.unexpected(.transport(.timedOut))))
        #expect(try await wallet.keyAliases().isEmpty)
    }

    @Test("state mismatch on the redirect")
    func stateMismatch() async throws {
        let party = try await LoopbackIssuer(ReferenceIssuerConfiguration(behaviour: IssuerBehaviour(redirectState: "forged")))
        let wallet = try party.wallet()
        let terminal = try await party.run(wallet.client.start(.fromIssuer(party.base, configurationId: IssuerCredentialConfiguration.pidId)))
        #expect(terminal == .failed(.authorizationFailed(oauthError: nil, reason: .stateMismatch)))
        #expect(try await wallet.keyAliases().isEmpty)
    }

    @Test("a plaintext answer to an encrypted request")
    func plaintextAnswer() async throws {
        let party = try await LoopbackIssuer(ReferenceIssuerConfiguration(
            requestEncryption: EncryptionSupport(), responseEncryption: EncryptionSupport(),
            behaviour: IssuerBehaviour(answerPlaintextToEncryptedRequest: true)))
        #expect(try await failing(party, encryption: .preferred)
            == .failed(.credentialRequestFailed(oauthError: nil, reason: .encryption(.plaintextResponse))))
    }

    @Test("a credential signed by an unknown key; credential_failure is sent")
    func unknownKey() async throws {
        let party = try await LoopbackIssuer(ReferenceIssuerConfiguration(behaviour: IssuerBehaviour(signWithUnknownKey: true)))
        let terminal = try await failing(party)
        guard case .failed(.credentialRequestFailed(nil, .invalidCredential(.sdJWT))) = terminal else { Issue.record("ended \(terminal)"); return }
        #expect(await party.issuer.inspection.notifications.map(\.event) == ["credential_failure"])
    }

    @Test("cnf not the proof key")
    func wrongBinding() async throws {
        let party = try await LoopbackIssuer(ReferenceIssuerConfiguration(behaviour: IssuerBehaviour(bindToWrongKey: true)))
        #expect(try await failing(party) == .failed(.credentialRequestFailed(oauthError: nil, reason: .invalidCredential(.holderKeyMismatch))))
    }

    @Test("response encryption advertised without request-encryption keys")
    func responseEncryptionWithoutRequestKeys() async throws {
        let party = try await LoopbackIssuer(ReferenceIssuerConfiguration(
            responseEncryption: EncryptionSupport(required: true),
            behaviour: IssuerBehaviour(advertiseResponseEncryptionWithoutRequestKeys: true)))
        #expect(try await failing(party)
            == .failed(.credentialRequestFailed(oauthError: nil, reason: .encryption(.requestEncryptionKeysMissing))))
    }
}

extension IssuanceState {
    /// The OAuth error code of a failed state.
    var oauthError: String? { if case .failed(let error) = self { error.oauthError } else { nil } }
}
