import Foundation
import FuzzFlowSupport
import OpenID4VCI
import ReferenceParties
import WalletCrypto
import WalletRuntime
import WalletStorage

// libFuzzer entry for a hostile issuer, end to end (OpenID4VCI 1.0). A fresh reference
// issuer (ReferenceParties) answers a fresh wallet in-process; the input replaces one of
// the issuer's answers, in the order the wallet and its browser step ask:
//   byte 0, low nibble: which exchange (0-based); one past the last replaces nothing;
//   byte 0, high nibble: the replacement's Content-Type (the issuer's own, JSON, JWT, none);
//   byte 1: the setup (see `Setup`) and the replacement's status;
//   the rest: the replacement's body. For the browser step (the authorization endpoint)
//   the body is instead the redirect URI the wallet is handed.
// Whatever arrives, the session must reach a terminal state, and the state must be
// true of the storage: `.failed` leaves no credential and no key (IssuanceState's
// contract), `.completed` stores every credential it names, and a deferred credential
// that fails on its resumption gains nothing. A breach aborts, which libFuzzer reports.
//
// Seeds: `FUZZ_ISSUANCE_FLOW_SEEDS=<dir> FuzzIssuanceFlow <any input>` runs each seeded
// setup unchanged, checks that it issues, and writes one input per exchange (its real
// answer) into <dir>; libFuzzer then reports that the target exited, as it does for any
// `exit`. Fuzz/Corpus/FuzzIssuanceFlow holds seeds made so.

/// The issuer and the wallet, from bits of the second input byte.
struct Setup {
    let mdoc: Bool             // bit 0: the mDL (mso_mdoc) instead of the PID (SD-JWT VC)
    let encryption: Bool       // bit 1: encrypted credential requests and responses
    let deferred: Bool         // bit 2: the issuer defers; the wallet resumes once
    let authorizationCode: Bool  // bit 3: authorization code with PAR and PKCE, instead of pre-authorized
    let dpopNonce: Bool        // bit 4: DPoP required, with server nonces
    let status: Int?           // bits 5-7: the replacement's status (nil keeps the issuer's)

    init(_ byte: UInt8) {
        mdoc = byte & 1 != 0
        encryption = byte & 2 != 0
        deferred = byte & 4 != 0
        authorizationCode = byte & 8 != 0
        dpopNonce = byte & 16 != 0
        status = [nil, 200, 400, 401, 500, 202, 204, 429][Int(byte >> 5)]
    }

    var configurationId: String { mdoc ? IssuerCredentialConfiguration.mDLId : IssuerCredentialConfiguration.pidId }

    var issuer: ReferenceIssuerConfiguration {
        ReferenceIssuerConfiguration(
            dpop: dpopNonce ? .requiredWithNonce : DPoPPolicy(),
            batchSize: 2,
            deferral: deferred ? DeferredIssuance() : nil,
            requestEncryption: encryption ? EncryptionSupport() : nil,
            responseEncryption: encryption ? EncryptionSupport() : nil)
    }
}

/// One replaced answer.
struct Replacement: Sendable {
    let index: Int
    let contentType: Int
    let status: Int?
    let body: [UInt8]
}

/// One exchange: the path the wallet asked for and what the issuer really answered.
struct Exchange: Sendable {
    let path: String
    let response: HTTPResponse
}

/// The issuer, with the one exchange the input names answered from the input.
struct HostileIssuer: HTTPHandler {
    let issuer: ReferenceIssuer
    let replacement: Replacement?
    let exchanges: ExchangeLog<Exchange>

    func respond(to request: HTTPRequest) async throws(HTTPHandlerError) -> HTTPResponse {
        let real = await issuer.respond(to: request)
        let index = exchanges.append(Exchange(path: request.url.path, response: real))
        guard let replacement, replacement.index == index else { return real }
        return FuzzFlowSupport.replacement(for: real, contentType: replacement.contentType, jwtMediaType: "application/jwt",
                                           status: replacement.status, body: replacement.body)
    }
}

/// A wallet over fresh in-memory storage.
struct Wallet {
    let storage: IssuanceStorage
    let client: Openid4VciClient

    init(http: any HTTPClient, anchors: [X509Certificate], encryption: Bool) throws {
        storage = try IssuanceStorage.inMemory()
        client = Openid4VciClient(http: http, credentialEncryption: encryption ? .preferred : .whenRequired,
                                  config: IssuanceConfig(issuerTrustAnchors: anchors),
                                  storage: storage)
    }

    /// The stored credentials; an in-memory store that cannot be read is a breach, not an
    /// empty store (which would pass the checks below vacuously).
    func credentials() async -> [StoredCredential] {
        do { return try await storage.store.list() } catch { breach("the store cannot be read: \(error)") }
    }

    /// How many keys the secure area holds (unreadable is a breach, as above).
    func keyCount() async -> Int {
        do { return try await storage.secureArea.listKeys().count } catch { breach("the secure area cannot be read: \(error)") }
    }
}

/// Follows `session` to its terminal state, answering a tx_code prompt and the browser step.
func terminal(_ session: IssuanceSession, txCode: String?,
              redirect: @escaping @Sendable (String) async -> String?) async -> IssuanceState {
    for await state in session.states {
        switch state {
        case .txCodeRequired:
            session.submitTxCode(txCode ?? "000000")
        case .authorizationRequired(let url):
            Task {
                guard let location = await redirect(url) else { session.cancel(); return }
                session.completeAuthorization(location)
            }
        default:
            if state.isTerminal { return state }
        }
    }
    return session.currentState
}

/// What one run saw: every exchange the issuer answered, and whether credentials were issued.
struct Outcome {
    let exchanges: [Exchange]
    let issued: Bool
}

/// One run: the wallet issues from a fresh issuer, one answer replaced; the storage is
/// checked against the terminal state.
func run(_ setup: Setup, _ replacement: Replacement?) async -> Outcome {
    guard let issuer = try? ReferenceIssuer(configuration: setup.issuer) else { breach("the reference issuer does not start") }
    let exchanges = ExchangeLog<Exchange>()
    // Timeouts on a clock that nothing advances: no exchange times out, and none leaves a
    // sleeping timer task behind (a real-time timeout does, until its deadline).
    let http = InProcessHTTPClient(handler: HostileIssuer(issuer: issuer, replacement: replacement, exchanges: exchanges),
                                   clock: ManualClock(Date()))
    let anchors = [issuer.trustAnchors.iaca, issuer.trustAnchors.issuerRoot]
    guard let wallet = try? Wallet(http: http, anchors: anchors, encryption: setup.encryption) else { breach("no wallet") }

    let txCode = "493536"
    let request: IssuanceRequest
    if setup.authorizationCode {
        guard let offer = try? await issuer.createOffer(.authorizationCode([setup.configurationId])),
              let resolved = try? await wallet.client.resolveOffer(offer.byValue) else { return Outcome(exchanges: exchanges.all, issued: false) }
        request = .fromOffer(resolved, configurationId: setup.configurationId, policy: CredentialPolicy(batchSize: 2, use: .oneTime))
    } else {
        guard let offer = try? await issuer.createOffer(.preAuthorized([setup.configurationId], txCode: .init(value: txCode))),
              let resolved = try? await wallet.client.resolveOffer(offer.byValue) else { return Outcome(exchanges: exchanges.all, issued: false) }
        request = .fromOffer(resolved, configurationId: setup.configurationId, txCode: txCode,
                             policy: CredentialPolicy(batchSize: 2, use: .oneTime))
    }
    // The browser step: the authorization endpoint's redirect, or the input in its place.
    let redirect: @Sendable (String) async -> String? = { url in
        guard let target = URL(string: url), let response = try? await http.send(HTTPRequest(url: target)) else { return nil }
        let index = exchanges.count - 1
        if let replacement, replacement.index == index { return String(decoding: replacement.body, as: UTF8.self) }
        return response.headers["Location"]
    }

    let state = await settled({ wallet.client.start(request) }) { await terminal($0, txCode: txCode, redirect: redirect) }
    let stored = await wallet.credentials()
    var issued = false
    switch state {
    case .failed:
        if !stored.isEmpty { breach("a failed session left \(stored.count) credentials") }
        let keys = await wallet.keyCount()
        if keys != 0 { breach("a failed session left \(keys) keys") }
    case .completed(let result):
        let ids = Set(stored.map(\.id))
        for id in result.issued + result.deferred where !ids.contains(id) { breach("a completed session names \(id), not stored") }
        issued = !result.issued.isEmpty
    case .deferred(let credentialId, _):
        guard stored.contains(where: { $0.id == credentialId }) else { breach("a deferred credential is not stored") }
        let before = stored.filter { $0.state == .issued }.count
        let resumed = await settled({ wallet.client.resumeDeferred(credentialId) }) { await terminal($0, txCode: nil, redirect: { _ in nil }) }
        let after = await wallet.credentials().filter { $0.state == .issued }.count
        if case .failed = resumed, after != before { breach("a failed resumption stored a credential") }
        if case .completed = resumed { issued = after > before }
    default:
        breach("the session stopped at \(state)")
    }
    return Outcome(exchanges: exchanges.all, issued: issued)
}

/// Writes one input per exchange of each seeded setup into `directory`.
func writeSeeds(to directory: String) {
    let setups: [UInt8] = [0, 1, 2, 4, 8, 16, 9]
    for setupByte in setups {
        blocking {
            let outcome = await run(Setup(setupByte), nil)
            // Unchanged, every seeded setup issues: the seeds start from working flows.
            if !outcome.issued { breach("setup \(setupByte) issues nothing with the issuer's own answers") }
            for (index, exchange) in outcome.exchanges.enumerated() {
                // The browser step's input is the redirect URI, not the (empty) body.
                let body = exchange.path.hasSuffix("/authorize") ? Array((exchange.response.headers["Location"] ?? "").utf8)
                    : exchange.response.body
                let input = [UInt8(index), setupByte] + body
                let name = "\(directory)/setup\(setupByte)-\(index)\(exchange.path.replacingOccurrences(of: "/", with: "_"))"
                if !FileManager.default.createFile(atPath: name, contents: Data(input)) { breach("cannot write \(name)") }
            }
        }
    }
}

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzz(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    if let directory = ProcessInfo.processInfo.environment["FUZZ_ISSUANCE_FLOW_SEEDS"] {
        writeSeeds(to: directory)
        exit(0)
    }
    guard size >= 2 else { return 0 }
    let setup = Setup(data[1])
    let replacement = Replacement(index: Int(data[0] & 0x0F), contentType: Int(data[0] >> 4) & 3, status: setup.status,
                                  body: Array(UnsafeBufferPointer(start: data + 2, count: size - 2)))
    blocking { _ = await run(setup, replacement) }
    return 0
}
