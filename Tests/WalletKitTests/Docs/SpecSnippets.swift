import Foundation
import MdocProximity
import OpenID4VCI
import OpenID4VP
import ReferenceParties
import Testing
import WalletCrypto
import WalletKit
import WalletRuntime
import WalletStorage

/// Every Swift example of ../shared/spec, as written there, compiled against the facade
/// (`wallet` is a `Wallet`; the host app's own functions are defined around them) and run
/// against the reference issuer and verifier. `DocSnippetSyncTests` checks that each
/// region marked `// spec:` below is a verbatim run of lines of its specification file.
@Suite("The specification's Swift examples, against Wallet", .timeLimit(.minutes(15)))
struct SpecSnippets {
    final class Failures: Sendable {
        let errors = LockedBox<[IssuanceError]>([])
    }

    @Test("issuance: pre-authorized with a known code, then the terminal idiom")
    func preAuthorized() async throws {
        let parties = try Parties.make()
        let wallet = try await Wallet(config: parties.config())
        let offerUri = try await parties.issuer.createOffer(.preAuthorized([IssuerCredentialConfiguration.pidId],
                                                                           txCode: .init(value: "1234"))).byValue
        let failures = Failures()
        func handle(_ error: IssuanceError) { failures.errors.withLock { $0.append(error) } }
        // spec: issuance.txt
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
            }
            if case .failed(let error) = state {
                handle(error)
            }
            if state.isTerminal { break }
        }
        // end spec
        // spec: issuance.txt
        for await state in session.states {
            if case .completed(let result) = state {
                let ids = result.issued   // [CredentialId]
            }
            if case .failed(let error) = state {
                handle(error)
            }
            if state.isTerminal { break }
        }
        // end spec
        guard case .completed(let result) = session.currentState else { Issue.record("\(session.currentState)"); return }
        #expect(result.issued.count == 1)
        #expect(failures.errors.withLock { $0 }.isEmpty)
    }

    @Test("issuance: the code typed when the session pauses for it; the key policy request")
    func interactiveTxCode() async throws {
        let parties = try Parties.make()
        let wallet = try await Wallet(config: parties.config())
        let offer = try await wallet.issuance.resolveOffer(
            try await parties.issuer.createOffer(.preAuthorized([IssuerCredentialConfiguration.pidId], txCode: .init(value: "493536"))).byValue)
        let userEnteredCode = "493536"
        // spec: issuance.txt
        let session = wallet.issuance.start(
            IssuanceRequest.fromOffer(offer, configurationId: offer.credentialConfigurationIds.first!)  // no txCode
        )

        for await state in session.states {
            if case .txCodeRequired = state {
                session.submitTxCode(userEnteredCode)   // e.g. from SMS / email
            }
            if state.isTerminal { break }   // .completed | .failed
        }
        // end spec
        guard case .completed = session.currentState else { Issue.record("\(session.currentState)"); return }
        let request =
            // spec: issuance.txt
            IssuanceRequest.fromOffer(
                offer,
                configurationId: offer.credentialConfigurationIds.first!,
                policy: CredentialPolicy(batchSize: 5, use: .oneTime)
            )
            // end spec
        #expect(request.policy == CredentialPolicy(batchSize: 5, use: .oneTime))
    }

    @Test("issuance: the authorization code flow, the browser's redirect fed back")
    func authorizationCode() async throws {
        let issuer = try ReferenceIssuer(configuration: ReferenceIssuerConfiguration(
            origin: URL(string: "https://issuer.example.org")!,
            credentialConfigurations: [.pid(id: "eu.europa.ec.eudi.pid_jwt_vc_json")], dpop: DPoPPolicy(mode: .required)))
        let http = HostRouter(handlers: ["issuer.example.org": issuer])
        let wallet = try await Wallet(config: WalletConfig(
            storage: .inMemory, trust: TrustConfig(issuerAnchors: [issuer.trustAnchors.issuerRoot]), httpClient: http))
        @Sendable func follow(_ url: String) async -> String {
            let response = try? await http.send(HTTPRequest(method: .get, url: URL(string: url)!))
            return response?.headers["Location"] ?? ""
        }
        func openInBrowser(_ url: String) {
            Task { onRedirect(await follow(url)) }
        }
        // spec: issuance.txt
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
            if state.isTerminal { break }   // .completed | .failed
        }

        // From your redirect (deep-link) handler, feed the full redirect back in:
        func onRedirect(_ redirectUri: String) {
            session.completeAuthorization(redirectUri)   // "eudi-wallet://authorize?code=…&state=…"
        }
        // end spec
        guard case .completed = session.currentState else { Issue.record("\(session.currentState)"); return }
    }

    @Test("issuance: deferred, resumed, reissued; a client made with an encryption policy")
    func deferredAndReissue() async throws {
        let parties = try Parties.make(issuer: ReferenceIssuerConfiguration(deferral: DeferredIssuance(interval: 1)))
        let wallet = try await Wallet(config: parties.config())
        let created = try await parties.issuer.createOffer(.preAuthorized([IssuerCredentialConfiguration.pidId]))
        let first = await terminalState(of: wallet.issuance.start(.fromOffer(try await wallet.issuance.resolveOffer(created.byValue),
                                                                             configurationId: IssuerCredentialConfiguration.pidId)))
        guard case .deferred(let credentialId, _) = first else { Issue.record("\(first)"); return }
        // spec: issuance.txt
        // Deferred — resume a not-yet-ready credential:
        let deferred = wallet.issuance.resumeDeferred(credentialId)
        for await state in deferred.states where state.isTerminal { break }

        // Reissue — renew an existing credential via its stored refresh token:
        let renewed = wallet.issuance.reissue(credentialId)
        for await state in renewed.states where state.isTerminal { break }
        // end spec
        #expect(deferred.currentState == .completed(IssuanceResult(issued: [credentialId])))
        #expect(renewed.currentState.isTerminal)
        let http: any HTTPClient = parties.http
        let rng: any RandomSource = SystemRandom()
        let clock: any WalletClock = SystemClock()
        let client =
            // spec: issuance.txt
            Openid4VciClient(http: http, rng: rng, clock: clock, credentialEncryption: .preferred)
            // end spec
        _ = client
    }

    @Test("presentation: start, await the resolved request, inspect it, respond, await the outcome")
    func remote() async throws {
        let parties = try Parties.make()
        let wallet = try await Wallet(config: parties.config())
        _ = try await parties.issuePid(into: wallet)
        let requestUri = try await parties.verifier.createTransaction(PresentationRequestOptions(query: TransactionLogTests.pidQuery))
            .authorizationRequestURI
            // spec: presentation.txt
            let session = wallet.presentation.start(requestUri)   // openid4vp://… or a request_uri

            var request: PresentationRequest?
            for await state in session.states {
                if case let .requestResolved(resolved) = state { request = resolved; break }
                if state.isTerminal { break }   // .failed before it ever resolved
            }
            guard let request else { return }
            // end spec
            // spec: presentation.txt
            let v = request.verifier
            // v.clientId, v.clientIdScheme, v.commonName (from the certificate), v.trusted
            print("\(v.commonName ?? v.clientId) · trusted=\(v.trusted)")

            for query in request.queries {
                // query.queryId, query.required
                for candidate in query.candidates {
                    // candidate.credentialId — a stored credential that satisfies this query
                    // candidate.disclosedPaths — the claims that would be revealed if chosen
                }
            }

            request.satisfiable        // true if every required query has at least one candidate
            request.transactionData    // optional transaction data to confirm (e.g. payment), or nil
            // end spec
            // spec: presentation.txt
            session.respond(PresentationSelection.auto(request))   // or a user-chosen selection
            // session.decline() instead, if the user refuses

            for await state in session.states {
                switch state {
                case let .completed(redirectUri, _): _ = redirectUri   // optional redirect after success
                case let .declined(redirectUri): _ = redirectUri       // verifier told `access_denied`; follow its redirect
                case let .failed(error): _ = error
                default: break
                }
                if state.isTerminal { break }
            }
            // end spec
        guard case .completed = session.currentState else { Issue.record("\(session.currentState)"); return }
    }

    @Test("presentation: an explicit selection, one credential per query")
    func explicitSelection() async throws {
        let parties = try Parties.make()
        let wallet = try await Wallet(config: parties.config())
        _ = try await parties.issuePid(into: wallet)
        let transaction = try await parties.verifier.createTransaction(PresentationRequestOptions(query: TransactionLogTests.pidQuery))
        let requestUri = transaction.authorizationRequestURI
        // spec: presentation.txt
        let session = wallet.presentation.start(requestUri)   // openid4vp://… or a request_uri

        var request: PresentationRequest?
        for await state in session.states {
            if case let .requestResolved(resolved) = state { request = resolved; break }
            if state.isTerminal { break }   // .failed before it ever resolved
        }
        guard let request else { return }
        // end spec
        // spec: presentation.txt
        // Automatic: all candidates for a `multiple` query, first otherwise
        session.respond(PresentationSelection.auto(request))

        // Explicit: map each query to the chosen credential(s)
        var chosen: [String: [CredentialId]] = [:]
        for query in request.queries {
            chosen[query.queryId] = [query.candidates.first!.credentialId]
        }
        session.respond(PresentationSelection(chosen: chosen))
        // end spec
        for await state in session.states where state.isTerminal { break }
        #expect(await parties.verifier.verdict(for: transaction.id)?.outcome == .accepted)
    }

    @Test("presentation: the DC API session (here a request for another origin, which ends before consent)")
    func dcApi() async throws {
        let parties = try Parties.make()
        let wallet = try await Wallet(config: parties.config())
        _ = try await parties.issuePid(into: wallet)
        let requestObject = try await parties.verifier.createDcApiRequest(DcApiRequestOptions(
            query: TransactionLogTests.pidQuery, signed: true, expectedOrigins: ["https://other.example"])).requestJSON.serialized
        let origin = Parties.verifierOrigin
        // spec: presentation.txt
        let session = wallet.presentation.startDcApi(requestObject, origin: origin)
        // resolve → inspect → respond, exactly as above
        var response: String?
        for await state in session.states {
            if case let .completed(_, dcApiResponse) = state { response = dcApiResponse; break }
            if state.isTerminal { break }
        }
        // end spec
        #expect(response == nil)
        guard case .failed(.invalidRequest(.originNotExpected)) = session.currentState else { Issue.record("\(session.currentState)"); return }
    }
}
