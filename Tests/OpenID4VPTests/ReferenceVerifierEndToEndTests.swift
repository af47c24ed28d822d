import CBOR
import Foundation
import JOSE
import Mdoc
import OpenID4VP
import ReferenceParties
import SDJWT
import Testing
import WalletCrypto
import WalletEncoding
import WalletRuntime
import WalletStorage

/// The client against the reference verifier (ReferenceParties, written independently of
/// this module) over loopback HTTP (issue 14 acceptance 1 and 2): the verifier signs the
/// requests, checks what comes back with its own code, and gives a verdict.
@Suite("End to end: the reference verifier over loopback HTTP")
struct ReferenceVerifierEndToEndTests {
    static let pid = TestWallet.pidType
    static let mDL = TestWallet.mDL
    static let nameSpace = TestWallet.mDLNameSpace

    /// A wallet with a PID SD-JWT VC and an mDL, and a verifier on a free loopback port
    /// that trusts their issuers.
    struct Setup {
        let wallet: TestWallet
        let served: LoopbackVerifier
        var verifier: ReferenceVerifier { served.verifier }

        static func make(pidUse: KeyUse = .rotate, pidInstances: Int = 1, unboundPid: Bool = false) async throws -> Setup {
            let clock = ManualClock(testNow)
            let wallet = try await TestWallet.make(clock: clock)
            try await wallet.addSdJwt(id: "pid-1", instances: pidInstances, use: pidUse, bound: !unboundPid)
            try await wallet.addMdl(id: "mdl-1", keyAuthorizations: KeyAuthorizations(nameSpaces: [MdocTransactionDataBinding.defaultNameSpace]))
            let issuerKey = wallet.sdJwtIssuerKey, iaca = wallet.iaca
            let served = try LoopbackVerifier(clock: clock) { baseURL in
                VerifierConfiguration(baseURL: baseURL, sdJwtIssuerTrust: .keys([issuerKey]), mdocIssuerAnchors: [iaca])
            }
            return Setup(wallet: wallet, served: served)
        }

        /// The client with the verifier's reader anchors and the binder that agrees with
        /// the verifier's mdoc transaction data rule.
        func client(anchors: Bool = true) -> Openid4VpClient {
            Openid4VpClient(
                store: wallet.store,
                config: PresentationConfig(readerAnchorsDer: anchors ? verifier.pki.anchorsDER : [],
                                           mdocTransactionDataBinder: { .digest(of: $0) }, allowHTTP: true),
                httpClient: PatientHTTPClient(), clock: ManualClock(testNow))
        }
    }

    static let pidQuery = VerifierQuery(credentials: [
        .sdJwt(id: "pid", vct: [pid], claims: [.init(path: ["family_name"]), .init(path: ["address", "locality"])]),
    ])
    static let mdlQuery = VerifierQuery(credentials: [
        .mdoc(id: "mdl", docType: mDL, claims: [.init(path: [.key(nameSpace), "family_name"]), .init(path: [.key(nameSpace), "age_over_18"])]),
    ])

    /// Runs a session for `uri`, answering the resolved request with `selection` (auto by default).
    static func present(_ client: Openid4VpClient, _ uri: String,
                        selection: ((PresentationRequest) -> PresentationSelection?)? = nil) async throws -> (PresentationRequest?, PresentationState) {
        let session = client.start(uri)
        let first = try await waitFor(session, resolved: true)
        guard let request = first.request else { return (nil, first) }
        if let choice = selection?(request) ?? (selection == nil ? .auto(request) : nil) {
            session.respond(choice)
        } else {
            session.decline()
        }
        return (request, try await waitFor(session))
    }

    static func accepted(_ verdict: PresentationVerdict?, sourceLocation: SourceLocation = #_sourceLocation) -> Bool {
        guard let verdict else { return false }
        if verdict.outcome != .accepted { Issue.record("verdict \(verdict.outcome)", sourceLocation: sourceLocation) }
        return verdict.outcome == .accepted
    }

    @Test("SD-JWT VC by direct_post to an x509_san_dns verifier (request_uri GET): accepted, only the asked claims")
    func sdJwtDirectPost() async throws {
        let setup = try await Setup.make()
        defer { setup.served.stop() }
        let transaction = try await setup.verifier.createTransaction(PresentationRequestOptions(query: Self.pidQuery))
        let (request, done) = try await Self.present(setup.client(), transaction.authorizationRequestURI)
        #expect(request?.verifier == VerifierIdentity(clientId: transaction.clientId, clientIdScheme: .x509SanDns,
                                                      commonName: "Reference Verifier", trusted: true))
        guard case .completed(let redirect?, nil) = done else { Issue.record("\(done)"); return }
        #expect(redirect.absoluteString.hasPrefix(setup.verifier.configuration.baseURL.absoluteString))
        let verdict = await setup.verifier.verdict(for: transaction.id)
        #expect(Self.accepted(verdict))
        #expect(verdict?.presentations(for: "pid").first?.disclosedPaths.sorted { $0.description < $1.description }
            == [["address", "locality"], ["address"], ["family_name"]], "address is itself disclosable: its disclosure comes along")
        #expect(verdict?.presentations(for: "pid").first?.value(at: ["address", "street_address"]) == nil)
        #expect(verdict?.presentations(for: "pid").first?.holderBound == true)
    }

    @Test("mdoc by direct_post.jwt to an x509_hash verifier with request_uri_method=post")
    func mdocDirectPostJwt() async throws {
        let setup = try await Setup.make()
        defer { setup.served.stop() }
        let transaction = try await setup.verifier.createTransaction(PresentationRequestOptions(
            query: Self.mdlQuery, responseMode: .directPostJwt, clientIdPrefix: .x509Hash, delivery: .byReference(method: .post)))
        let (request, done) = try await Self.present(setup.client(), transaction.authorizationRequestURI)
        #expect(request?.verifier.clientIdScheme == .x509Hash && request?.verifier.trusted == true)
        #expect(done.failure == nil)
        let verdict = await setup.verifier.verdict(for: transaction.id)
        #expect(Self.accepted(verdict))
        #expect(verdict?.walletNonce != nil && verdict?.walletMetadata?["vp_formats_supported"] != nil)
        #expect(verdict?.presentations(for: "mdl").first?.value(at: [.key(Self.nameSpace), "family_name"]) == "Doe")
        #expect(verdict?.presentations(for: "mdl").first?.value(at: [.key(Self.nameSpace), "given_name"]) == nil)
    }

    @Test("redirect_uri by value, and x509_san_dns by value: both answered")
    func byValue() async throws {
        let setup = try await Setup.make()
        defer { setup.served.stop() }
        for prefix in [VerifierClientIdPrefix.redirectUri, .x509SanDns] {
            let transaction = try await setup.verifier.createTransaction(PresentationRequestOptions(
                query: Self.pidQuery, clientIdPrefix: prefix, delivery: .byValue))
            let (request, _) = try await Self.present(setup.client(), transaction.authorizationRequestURI)
            #expect(request?.verifier.trusted == (prefix != .redirectUri))
            #expect(Self.accepted(await setup.verifier.verdict(for: transaction.id)), "\(prefix)")
        }
    }

    @Test("credential_sets: the first answerable option; claim_sets: the first satisfiable set")
    func credentialAndClaimSets() async throws {
        let setup = try await Setup.make()
        defer { setup.served.stop() }
        let query = VerifierQuery(credentials: [
            .sdJwt(id: "other", vct: ["https://other.example/vct"]),
            .sdJwt(id: "pid", vct: [Self.pid], claims: [
                .init(id: "a", path: ["nickname"]), .init(id: "b", path: ["family_name"]), .init(id: "c", path: ["birthdate"]),
            ], claimSets: [["a", "c"], ["b", "c"]]),
            .mdoc(id: "mdl", docType: Self.mDL, claims: [.init(path: [.key(Self.nameSpace), "given_name"])]),
        ], credentialSets: [.init(options: [["other"], ["pid"]]), .init(options: [["mdl"]], required: false)])
        let transaction = try await setup.verifier.createTransaction(PresentationRequestOptions(query: query))
        let (request, _) = try await Self.present(setup.client(), transaction.authorizationRequestURI)
        #expect(request?.queries.map(\.required) == [false, false, false])
        #expect(request?.query("pid")?.candidates.first?.claimSetIndex == 1)
        let verdict = await setup.verifier.verdict(for: transaction.id)
        #expect(Self.accepted(verdict))
        #expect(verdict?.presentations(for: "pid").first?.claimSet == ["b", "c"])
        #expect(verdict?.presentations(for: "mdl").isEmpty == true, "the optional set is left out by auto")
        // The user may add the optional set explicitly.
        let second = try await setup.verifier.createTransaction(PresentationRequestOptions(query: query))
        _ = try await Self.present(setup.client(), second.authorizationRequestURI) { _ in
            PresentationSelection(chosen: ["pid": ["pid-1"], "mdl": ["mdl-1"]])
        }
        let both = await setup.verifier.verdict(for: second.id)
        #expect(Self.accepted(both))
        #expect(both?.presentations(for: "mdl").count == 1)
    }

    @Test("multiple: both credentials of the type are presented")
    func multiple() async throws {
        let setup = try await Setup.make()
        defer { setup.served.stop() }
        try await setup.wallet.addSdJwt(id: "pid-2")
        let query = VerifierQuery(credentials: [.sdJwt(id: "pid", vct: [Self.pid], claims: [.init(path: ["given_name"])], multiple: true)])
        let transaction = try await setup.verifier.createTransaction(PresentationRequestOptions(query: query))
        _ = try await Self.present(setup.client(), transaction.authorizationRequestURI)
        let verdict = await setup.verifier.verdict(for: transaction.id)
        #expect(Self.accepted(verdict))
        #expect(verdict?.presentations(for: "pid").count == 2)
    }

    @Test("an unbound SD-JWT VC answers a query that waives holder binding")
    func unbound() async throws {
        let setup = try await Setup.make(unboundPid: true)
        defer { setup.served.stop() }
        let query = VerifierQuery(credentials: [
            .sdJwt(id: "pid", vct: [Self.pid], claims: [.init(path: ["family_name"])], requireCryptographicHolderBinding: false),
        ])
        let transaction = try await setup.verifier.createTransaction(PresentationRequestOptions(query: query))
        _ = try await Self.present(setup.client(), transaction.authorizationRequestURI)
        let verdict = await setup.verifier.verdict(for: transaction.id)
        #expect(Self.accepted(verdict))
        #expect(verdict?.presentations(for: "pid").first?.holderBound == false)
    }

    @Test("transaction data for both formats: hashed into the KB-JWT, device-signed in the mdoc")
    func transactionData() async throws {
        let setup = try await Setup.make()
        defer { setup.served.stop() }
        let query = VerifierQuery(credentials: Self.pidQuery.credentials + Self.mdlQuery.credentials)
        let transaction = try await setup.verifier.createTransaction(PresentationRequestOptions(
            query: query, transactionData: [
                VerifierTransactionData(type: "payment", credentialIds: ["pid"], details: ["amount": "42.00"]),
                VerifierTransactionData(type: "signature", credentialIds: ["mdl"], details: ["document": "contract.pdf"]),
            ], responseMode: .directPostJwt))
        let (request, done) = try await Self.present(setup.client(), transaction.authorizationRequestURI)
        #expect(request?.transactionData?.map(\.type) == ["payment", "signature"])
        #expect(done.failure == nil)
        let verdict = await setup.verifier.verdict(for: transaction.id)
        #expect(Self.accepted(verdict))
        #expect(verdict?.presentations(for: "pid").first?.transactionData == [0])
        #expect(verdict?.presentations(for: "mdl").first?.transactionData == [1])
    }

    @Test("decline: the verifier records access_denied, and its redirect comes back")
    func decline() async throws {
        let setup = try await Setup.make()
        defer { setup.served.stop() }
        let transaction = try await setup.verifier.createTransaction(PresentationRequestOptions(query: Self.pidQuery))
        let (_, done) = try await Self.present(setup.client(), transaction.authorizationRequestURI) { _ in nil }
        guard case .declined(let redirect?) = done else { Issue.record("\(done)"); return }
        #expect(redirect.host == "localhost")
        #expect(await setup.verifier.verdict(for: transaction.id)?.outcome == .declined(error: "access_denied", description: "the user declined"))
    }

    @Test("a oneTime credential: each presentation spends an instance; the verifier sees two holder keys")
    func oneTime() async throws {
        let setup = try await Setup.make(pidUse: .oneTime, pidInstances: 2)
        defer { setup.served.stop() }
        #expect(try await setup.wallet.store.remainingInstances(of: "pid-1") == 2)
        let walletKeys = try await setup.wallet.area.listKeys().map(\.publicKey)   // before the spent ones are deleted
        var holderKeys: [PublicKey] = []
        for remaining in [1, 0] {
            let transaction = try await setup.verifier.createTransaction(PresentationRequestOptions(query: Self.pidQuery))
            _ = try await Self.present(setup.client(), transaction.authorizationRequestURI)
            let verdict = await setup.verifier.verdict(for: transaction.id)
            #expect(Self.accepted(verdict))
            // The key the verifier checked the KB-JWT with (the presented instance's cnf).
            holderKeys.append(try #require(verdict?.presentations(for: "pid").first?.holderKey))
            #expect(try await setup.wallet.store.remainingInstances(of: "pid-1") == remaining, "one instance spent per presentation")
        }
        #expect(holderKeys.count == 2 && holderKeys[0] != holderKeys[1], "each presentation used another holder key")
        #expect(holderKeys.allSatisfy(walletKeys.contains), "both were keys of the wallet's secure area")
        let third = try await setup.verifier.createTransaction(PresentationRequestOptions(query: Self.pidQuery))
        let (request, done) = try await Self.present(setup.client(), third.authorizationRequestURI)
        #expect(request?.satisfiable == false)
        #expect(done == .failed(.queryNotSatisfiable(queryIds: ["pid"])))
        #expect(await setup.verifier.verdict(for: third.id)?.responsesReceived == 0)
    }

    // MARK: DC API

    static let origin = "https://shop.example"

    static func dcApi(_ setup: Setup, _ options: DcApiRequestOptions) async throws -> PresentationVerdict {
        let transaction = try await setup.verifier.createDcApiRequest(options)
        let session = setup.client().startDcApi(transaction.requestJSON.serialized, origin: origin)
        let request = try #require(try await waitFor(session, resolved: true).request)
        session.respond(.auto(request))
        guard case .completed(nil, let response?) = try await waitFor(session) else {
            throw VPTestSupport.Failure(description: "the DC API session did not complete")
        }
        return try await setup.verifier.verifyDcApiResponse(try JSONValue.parse(response), transactionId: transaction.id, origin: origin)
    }

    @Test("DC API, unsigned and signed, both formats, plain and encrypted: accepted with the origin-bound audience and handover")
    func dcApi() async throws {
        let setup = try await Setup.make()
        defer { setup.served.stop() }
        for query in [Self.pidQuery, Self.mdlQuery] {
            for signed in [false, true] {
                for encrypted in [false, true] {
                    let verdict = try await Self.dcApi(setup, DcApiRequestOptions(
                        query: query, signed: signed, clientIdPrefix: .x509SanDns, expectedOrigins: [Self.origin],
                        encrypted: encrypted))
                    #expect(Self.accepted(verdict), "\(query.credentials[0].id) signed \(signed) encrypted \(encrypted)")
                }
            }
        }
    }

    @Test("DC API transaction data for both formats")
    func dcApiTransactionData() async throws {
        let setup = try await Setup.make()
        defer { setup.served.stop() }
        let verdict = try await Self.dcApi(setup, DcApiRequestOptions(
            query: VerifierQuery(credentials: Self.pidQuery.credentials + Self.mdlQuery.credentials),
            transactionData: [VerifierTransactionData(type: "payment", credentialIds: ["pid"]),
                              VerifierTransactionData(type: "signature", credentialIds: ["mdl"])],
            signed: true, expectedOrigins: [Self.origin]))
        #expect(Self.accepted(verdict))
    }

    // MARK: Acceptance 2, with the reference verifier's faults

    @Test("every request fault the reference verifier can build is refused before consent, nothing sent", arguments: [
        (RequestFault.untrustedChain, VerifierClientIdPrefix.x509SanDns, ReferenceParties.RequestUriMethod.get),
        (.badSignature, .x509SanDns, .get), (.sanMismatch, .x509SanDns, .get), (.x509HashMismatch, .x509Hash, .get),
        (.wrongType, .x509SanDns, .get), (.clientIdMismatch, .x509SanDns, .get), (.expired, .x509Hash, .get),
        (.responseUriHostMismatch, .x509SanDns, .get), (.missingWalletNonce, .x509SanDns, .post), (.wrongWalletNonce, .x509Hash, .post),
    ])
    func faults(fault: RequestFault, prefix: VerifierClientIdPrefix, method: ReferenceParties.RequestUriMethod) async throws {
        let setup = try await Setup.make()
        defer { setup.served.stop() }
        let transaction = try await setup.verifier.createTransaction(PresentationRequestOptions(
            query: Self.pidQuery, clientIdPrefix: prefix, delivery: .byReference(method: method), faults: [fault]))
        let states = try await RequestCheckTests.run(setup.client().start(transaction.authorizationRequestURI))
        let error = try #require(states.last?.failure, "\(fault): \(String(describing: states.last))")
        #expect(!states.contains { $0.request != nil }, "\(fault) reached consent")
        switch fault {
        case .untrustedChain, .badSignature, .sanMismatch, .x509HashMismatch:
            guard case .verifierNotTrusted = error else { Issue.record("\(fault): \(error)"); break }
        default:
            guard case .invalidRequest = error else { Issue.record("\(fault): \(error)"); break }
        }
        let verdict = await setup.verifier.verdict(for: transaction.id)
        #expect(verdict?.responsesReceived == 0 && verdict?.outcome == .pending, "\(fault)")
    }

    @Test("a signed DC API request for another origin is refused before consent")
    func unexpectedOrigin() async throws {
        let setup = try await Setup.make()
        defer { setup.served.stop() }
        let transaction = try await setup.verifier.createDcApiRequest(DcApiRequestOptions(
            query: Self.pidQuery, signed: true, expectedOrigins: [Self.origin], faults: [.unexpectedOrigin]))
        let states = try await RequestCheckTests.run(setup.client().startDcApi(transaction.requestJSON.serialized, origin: Self.origin))
        #expect(states.last == .failed(.invalidRequest(.originNotExpected(Self.origin))))
    }
}
