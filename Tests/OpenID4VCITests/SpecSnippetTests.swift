import Foundation
import Testing
import WalletCrypto
import WalletRuntime
import WalletStorage
@testable import OpenID4VCI

/// The Swift snippets of ../shared/spec/issuance.txt, as written there, compiled against
/// the real API and run against the scripted issuer. `wallet.issuance` is the client
/// (the WalletKit facade will expose it under that name).
@Suite("The issuance spec's Swift snippets")
struct SpecSnippetTests {
    struct Wallet { let issuance: Openid4VciClient }

    final class Failures: @unchecked Sendable {
        private let lock = NSLock()
        private var errors: [IssuanceError] = []
        func append(_ error: IssuanceError) { lock.lock(); errors.append(error); lock.unlock() }
        var all: [IssuanceError] { lock.lock(); defer { lock.unlock() }; return errors }
    }

    @Test("pre-authorized code flow with a pre-known tx code, and the terminal idiom")
    func preAuthorized() async throws {
        let issuer = try TestIssuer(options: .init(txCode: "1234"))
        let wallet = Wallet(issuance: try TestWalletSetup(issuer: issuer).client)
        let offerUri = issuer.offerURI()
        let failures = Failures()
        func handle(_ error: IssuanceError) { failures.append(error) }
        var issued: [CredentialId] = []

        let offer = try await wallet.issuance.resolveOffer(offerUri)   // deep link / QR / raw JSON

        let session = wallet.issuance.start(
            IssuanceRequest.fromOffer(
                offer,
                configurationId: offer.credentialConfigurationIds.first!,
                txCode: "1234"   // pre-known transaction code, if any
            )
        )

        for await state in session.states {
            if case .completed(let result) = state {
                let ids = result.issued   // stored credential ids
                issued = ids
            }
            if case .failed(let error) = state {
                handle(error)
            }
            if state.isTerminal { break }
        }
        #expect(issued.count == 1)
        #expect(failures.all.isEmpty)
        #expect(offer.requiresTxCode)
    }

    @Test("interactive transaction code")
    func interactiveTxCode() async throws {
        let issuer = try TestIssuer(options: .init(txCode: "493536"))
        let wallet = Wallet(issuance: try TestWalletSetup(issuer: issuer).client)
        let offer = try await wallet.issuance.resolveOffer(issuer.offerURI())
        let userEnteredCode = "493536"
        var last: IssuanceState?

        let session = wallet.issuance.start(
            IssuanceRequest.fromOffer(offer, configurationId: offer.credentialConfigurationIds.first!)  // no txCode
        )

        for await state in session.states {
            if case .txCodeRequired = state {
                session.submitTxCode(userEnteredCode)   // e.g. from SMS / email
            }
            last = state
            if state.isTerminal { break }   // .completed | .failed
        }
        guard case .completed = last else { Issue.record("ended \(String(describing: last))"); return }
    }

    @Test("authorization code flow: open the browser, feed the redirect back")
    func authorizationCode() async throws {
        let issuer = try TestIssuer(base: "https://issuer.example.org",
                                    options: .init(dpop: true, configurationName: "eu.europa.ec.eudi.pid_jwt_vc_json"))
        let wallet = Wallet(issuance: try TestWalletSetup(issuer: issuer).client)
        var last: IssuanceState?
        // The "browser" approves at once and the app's deep-link handler receives the redirect.
        func openInBrowser(_ url: String) { onRedirect(issuer.authorize(url)) }

        let session = wallet.issuance.start(
            IssuanceRequest.fromIssuer(
                "https://issuer.example.org",
                configurationId: "eu.europa.ec.eudi.pid_jwt_vc_json"
            )
        )

        // Drive the session; open the browser when it pauses:
        for await state in session.states {
            if case .authorizationRequired(let url) = state {
                openInBrowser(url)   // system browser / ASWebAuthenticationSession
            }
            last = state
            if state.isTerminal { break }   // .completed | .failed
        }

        // From your redirect (deep-link) handler, feed the full redirect back in:
        func onRedirect(_ redirectUri: String) {
            session.completeAuthorization(redirectUri)   // "eudi-wallet://authorize?code=…&state=…"
        }
        guard case .completed = last else { Issue.record("ended \(String(describing: last))"); return }
    }

    @Test("deferred and reissue return sessions driven the same way; key policy and encryption options")
    func deferredAndReissue() async throws {
        let issuer = try TestIssuer(options: .init(dpop: true, refreshTokens: true, batchSize: 5, deferral: .accepted))
        let setup = try TestWalletSetup(issuer: issuer)
        let wallet = Wallet(issuance: setup.client)
        let offer = try await wallet.issuance.resolveOffer(issuer.offerURI())
        let request = IssuanceRequest.fromOffer(
            offer,
            configurationId: offer.credentialConfigurationIds.first!,
            policy: CredentialPolicy(batchSize: 5, use: .oneTime)
        )
        guard case .deferred(let credentialId, _) = try await terminalState(of: wallet.issuance.start(request)) else {
            Issue.record("not deferred"); return
        }

        // Deferred — resume a not-yet-ready credential:
        let deferred = wallet.issuance.resumeDeferred(credentialId)
        for await state in deferred.states where state.isTerminal { break }
        #expect(deferred.currentState.isTerminal)
        let ready = wallet.issuance.resumeDeferred(credentialId)
        for await state in ready.states where state.isTerminal { break }
        #expect(ready.currentState == .completed(IssuanceResult(issued: [credentialId])))

        // Reissue — renew an existing credential via its stored refresh token:
        let renewed = wallet.issuance.reissue(credentialId)
        for await state in renewed.states where state.isTerminal { break }
        // This issuer defers every request: the renewal waits, the credential stays usable.
        guard case .deferred(credentialId, _) = renewed.currentState else { Issue.record("reissue ended \(renewed.currentState)"); return }
        let meanwhile = try #require(try await setup.storage.store.credential(id: credentialId))
        #expect(meanwhile.state == .issued)
        #expect(meanwhile.instances.count == 5)
        #expect(try await setup.storage.store.remainingInstances(of: credentialId) == 5)
        _ = try await terminalState(of: wallet.issuance.resumeDeferred(credentialId))
        #expect(try await terminalState(of: wallet.issuance.resumeDeferred(credentialId)) == .completed(IssuanceResult(issued: [credentialId])))
        #expect(try await setup.storage.store.credential(id: credentialId)?.instances.count == 5)
        // A full renewal: the five old keys went with the old instances; five new ones and the DPoP key remain.
        #expect(try await setup.keyAliases().count == 6)

        let http: any HTTPClient = issuer
        let rng: any RandomSource = SystemRandom()
        let clock: any WalletClock = SystemClock()
        let client = Openid4VciClient(http: http, rng: rng, clock: clock, credentialEncryption: .preferred)
        _ = client
    }
}
