import CBOR
import COSE
import Foundation
import FuzzFlowSupport
import JOSE
import Mdoc
import OpenID4VP
import ReferenceParties
import SDJWT
import WalletCrypto
import WalletEncoding
import WalletRuntime
import WalletStorage

// libFuzzer entry for a hostile verifier, end to end (OpenID4VP 1.0). A fresh reference
// verifier (ReferenceParties) answers a fresh wallet in-process; the input replaces one of
// the verifier's answers, in the order the wallet asks:
//   byte 0, low nibble: which exchange (0-based); one past the last replaces nothing;
//   byte 0, bits 4-5: the replacement's Content-Type (the verifier's own, JSON, JWT, none);
//   byte 0, bit 6: the rest edits the verifier's own answer instead of replacing it: two
//     bytes of offset counted back from the answer's end (the end of a request object is
//     its signature, at the same place in every run), then bytes XORed into the answer
//     from there (it grows where they run past its end), so that a signed request object
//     keeps the chain and the signature of this run's verifier, whose keys are new in
//     every run;
//   byte 1: the setup (see `Setup`) and the replacement's status;
//   the rest: the replacement's body (or the edit).
// Whatever arrives, the session must reach a terminal state and leave the store as it
// was (the credentials rotate their keys, so a presentation spends nothing). A request
// object that is signed and was replaced by other bytes (white space at its ends aside,
// which the wallet drops) is never answered with a presentation; an answer from the
// response URI that is not a success never ends the session `.completed`; and a session
// never ends the way the user did not choose (a decline ends `.declined` whatever the
// verifier answers it). With nothing replaced (an index past the last exchange), every
// setup ends as the user chose and the verifier's verdict agrees. A breach aborts, which
// libFuzzer reports.
//
// Seeds: `FUZZ_PRESENTATION_FLOW_SEEDS=<dir> FuzzPresentationFlow <any input>` runs each
// seeded setup unchanged, checks that the verifier accepts (or records the decline), and
// writes one input per exchange (its real answer) into <dir>; libFuzzer then reports that
// the target exited, as it does for any `exit`. Fuzz/Corpus/FuzzPresentationFlow holds
// seeds made so.

/// The instant every party runs at (certificates and credentials are valid around it).
let now = Date(timeIntervalSince1970: 1_780_000_000)
let pidType = "https://credentials.example.com/identity_credential"
let mDL = "org.iso.18013.5.1.mDL"
let mDLNameSpace = "org.iso.18013.5.1"

/// The request and the user's answer, from bits of the second input byte.
struct Setup {
    let form: Int              // bits 0-1: x509_san_dns by reference (GET), x509_hash by reference (POST),
                               //           redirect_uri by value, x509_san_dns by value
    let encrypted: Bool        // bit 2: direct_post.jwt instead of direct_post
    let mdoc: Bool             // bit 3: the mDL instead of the PID
    let transactionData: Bool  // bit 4: one transaction_data entry for the credential
    let declines: Bool         // bit 5: the user declines instead of answering
    let status: Int?           // bits 6-7: the replacement's status (nil keeps the verifier's)

    init(_ byte: UInt8) {
        form = Int(byte & 3)
        encrypted = byte & 4 != 0
        mdoc = byte & 8 != 0
        transactionData = byte & 16 != 0
        declines = byte & 32 != 0
        status = [nil, 200, 400, 500][Int(byte >> 6)]
    }

    /// Whether the first exchange is the fetch of a signed request object.
    var fetchesSignedRequest: Bool { form < 2 }

    var options: PresentationRequestOptions {
        let credentialId = mdoc ? "mdl" : "pid"
        let query = VerifierQuery(credentials: [
            mdoc ? .mdoc(id: credentialId, docType: mDL, claims: [.init(path: [.key(mDLNameSpace), "family_name"]),
                                                                  .init(path: [.key(mDLNameSpace), "age_over_18"])])
                 : .sdJwt(id: credentialId, vct: [pidType], claims: [.init(path: ["family_name"]), .init(path: ["address", "locality"])]),
        ])
        let (prefix, delivery): (VerifierClientIdPrefix, RequestDelivery) = switch form {
        case 0: (.x509SanDns, .byReference(method: .get))
        case 1: (.x509Hash, .byReference(method: .post))
        case 2: (.redirectUri, .byValue)
        default: (.x509SanDns, .byValue)
        }
        return PresentationRequestOptions(
            query: query,
            transactionData: transactionData
                ? [VerifierTransactionData(type: "payment", credentialIds: [credentialId], details: ["amount": "42.00"])] : [],
            responseMode: encrypted ? .directPostJwt : .directPost, clientIdPrefix: prefix, delivery: delivery)
    }
}

/// One replaced answer.
struct Replacement: Sendable {
    let index: Int
    let contentType: Int
    let edits: Bool
    let status: Int?
    let body: [UInt8]

    /// The body served in place of `real`'s: the input's, or `real`'s edited by it.
    func body(replacing real: [UInt8]) -> [UInt8] {
        guard edits else { return body }
        guard body.count >= 2 else { return real }
        var edited = real
        var position = max(0, edited.count - (Int(body[0]) << 8 | Int(body[1])))
        for byte in body.dropFirst(2) {
            if position < edited.count { edited[position] ^= byte } else { edited.append(byte) }
            position += 1
        }
        return edited
    }
}

/// One exchange: what the wallet sent, what the verifier really answered, and the body
/// the wallet was served (the real one unless the input replaced it).
struct Exchange: Sendable {
    let request: HTTPRequest
    let response: HTTPResponse
    var served: [UInt8]
}

/// The verifier, with the one exchange the input names answered from the input.
struct HostileVerifier: HTTPHandler {
    let verifier: ReferenceVerifier
    let replacement: Replacement?
    let exchanges: ExchangeLog<Exchange>

    func respond(to request: HTTPRequest) async throws(HTTPHandlerError) -> HTTPResponse {
        let real = await verifier.respond(to: request)
        let index = exchanges.append(Exchange(request: request, response: real, served: real.body))
        guard let replacement, replacement.index == index else { return real }
        let body = replacement.body(replacing: real.body)
        exchanges.update(index) { $0.served = body }
        return FuzzFlowSupport.replacement(for: real, contentType: replacement.contentType,
                                           jwtMediaType: "application/oauth-authz-req+jwt", status: replacement.status, body: body)
    }
}

/// The issuers the wallet's credentials come from (made once: their keys are not what
/// the input reaches).
struct Issuers: Sendable {
    let sdJwt: SDJWTIssuer
    let sdJwtKey: JWK
    let iaca: X509Certificate
    let mdoc: MdocIssuer

    static let shared: Issuers = {
        do {
            let issuerKey = try ECPrivateKey.generate(curve: .p256)
            let iacaKey = try ECPrivateKey.generate(curve: .p256), dsKey = try ECPrivateKey.generate(curve: .p256)
            let notBefore = now.addingTimeInterval(-86_400), notAfter = now.addingTimeInterval(365 * 86_400)
            let iaca = try CertificateBuilder.iaca(subject: try DistinguishedName([(.commonName, "Fuzz IACA"), (.country, "UT")]),
                                                   notBefore: notBefore, notAfter: notAfter).selfSigned(with: .ec(iacaKey))
            let ds = try CertificateBuilder.mdocDocumentSigner(
                subject: try DistinguishedName([(.commonName, "Fuzz DS"), (.country, "UT")]),
                subjectPublicKeyInfoDER: dsKey.publicKey.spkiDER, notBefore: notBefore, notAfter: notAfter
            ).signed(by: iaca, key: .ec(iacaKey))
            return Issuers(sdJwt: SDJWTIssuer(signer: SoftwareSigner(issuerKey)), sdJwtKey: JWK(publicKey: issuerKey.publicKey),
                           iaca: iaca, mdoc: MdocIssuer(signer: SoftwareSigner(dsKey), certificateChain: [ds]))
        } catch {
            breach("the issuers cannot be made: \(error)")
        }
    }()
}

/// A wallet over fresh in-memory storage holding a PID (SD-JWT VC) and an mDL, each bound
/// to a key that rotates (a presentation spends nothing).
struct Wallet {
    let store: CredentialStore

    init() async throws {
        let wrapping = try EphemeralWrappingProvider()
        let clock = ManualClock(now)
        let area = try SoftwareSecureArea(location: .inMemory, wrapping: wrapping, clock: clock)
        store = try CredentialStore(location: .inMemory, secureArea: area, wrapping: wrapping, clock: clock)
        let issuers = Issuers.shared
        let pidKey = try await area.createKey(alias: "pid-key")
        var plan = DisclosurePlan()
        for name in ["given_name", "family_name", "birthdate"] { plan.members[name] = .disclosable }
        plan.members["address"] = DisclosurePlan.object(["locality": .disclosable, "street_address": .disclosable]).disclosable
        let pid = try await issuers.sdJwt.issue(
            claims: ["vct": .string(pidType), "iss": "https://issuer.example", "given_name": "John", "family_name": "Doe",
                     "birthdate": "1940-01-01", "address": ["street_address": "42 Market Street", "locality": "Milliways"]],
            plan: plan, holderKey: JWK(publicKey: pidKey.publicKey))
        try await store.save(StoredCredential(
            id: "pid-1", format: .sdJwtVc, type: pidType, issuer: IssuerInfo(identifier: "https://issuer.example"),
            instances: [CredentialInstance(index: 0, keyAlias: pidKey.alias, raw: Array(pid.serialization.utf8))],
            policy: CredentialPolicy(batchSize: 1, use: .rotate)))
        let mdlKey = try await area.createKey(alias: "mdl-key")
        let mdl = try await issuers.mdoc.issue(
            docType: mDL, nameSpaces: [NameSpaced(mDLNameSpace, [DataElement("family_name", "Doe"), DataElement("age_over_18", true)])],
            deviceKey: COSEKey(publicKey: mdlKey.publicKey),
            validity: ValidityInfo(signed: now, validFrom: now.addingTimeInterval(-3600), validUntil: now.addingTimeInterval(30 * 86_400)),
            keyAuthorizations: KeyAuthorizations(nameSpaces: [MdocTransactionDataBinding.defaultNameSpace]))
        try await store.save(StoredCredential(
            id: "mdl-1", format: .msoMdoc, type: mDL, issuer: IssuerInfo(identifier: "https://issuer.example"),
            instances: [CredentialInstance(index: 0, keyAlias: mdlKey.alias, raw: mdl.encodedBytes)],
            policy: CredentialPolicy(batchSize: 1, use: .rotate)))
    }

    /// The stored credentials (an in-memory store that cannot be read is a breach).
    func credentials() async -> [StoredCredential] {
        do { return try await store.list() } catch { breach("the store cannot be read: \(error)") }
    }
}

/// Follows `session` to its terminal state, answering (or declining) the resolved request.
func terminal(_ session: PresentationSession, declines: Bool) async -> PresentationState {
    for await state in session.states {
        switch state {
        case .requestResolved(let request):
            if declines { session.decline() } else { session.respond(.auto(request)) }
        default:
            if state.isTerminal { return state }
        }
    }
    breach("the session's states ended at \(session.currentState), not in a terminal state")
}

/// Whether `served` is the verifier's request object `real` as the wallet reads a request
/// URI's body (OpenID4VP 1.0 §5.10.1): UTF-8 text with the white space at its ends dropped,
/// which a server may add (a trailing line end) without touching the signed bytes.
func sameRequestObject(_ served: [UInt8], _ real: [UInt8]) -> Bool {
    guard served != real else { return true }
    guard let text = UTF8Validation.string(served), let realText = UTF8Validation.string(real) else {
        return false
    }
    return text.trimmingWhitespace() == realText
}

/// Whether the wallet sent a presentation in `request` (a form with `vp_token`, or an
/// encrypted `response`, which carries one).
func carriesPresentation(_ request: HTTPRequest) -> Bool {
    guard request.method == .post, let fields = try? request.formParameters() else { return false }
    return fields.contains { name, _ in name == "vp_token" || name == "response" }
}

/// One run: the wallet answers a fresh verifier, one answer replaced; the store and the
/// state are checked against what the verifier sent. Returns every exchange.
func run(_ setup: Setup, _ replacement: Replacement?) async -> [Exchange] {
    let clock = ManualClock(now)
    guard let wallet = try? await Wallet() else { breach("no wallet") }
    let before = await wallet.credentials()
    let issuers = Issuers.shared
    guard let verifier = try? ReferenceVerifier(
        configuration: VerifierConfiguration(baseURL: URL(string: "http://localhost:8080")!, sdJwtIssuerTrust: .keys([issuers.sdJwtKey]),
                                             mdocIssuerAnchors: [issuers.iaca]),
        clock: clock) else { breach("the reference verifier does not start") }
    guard let transaction = try? await verifier.createTransaction(setup.options) else { breach("no transaction") }
    let exchanges = ExchangeLog<Exchange>()
    // Timeouts on a clock that nothing advances: no exchange times out, and none leaves a
    // sleeping timer task behind.
    let http = InProcessHTTPClient(handler: HostileVerifier(verifier: verifier, replacement: replacement, exchanges: exchanges),
                                   clock: clock)
    let client = Openid4VpClient(
        store: wallet.store,
        config: PresentationConfig(readerAnchorsDer: verifier.pki.anchorsDER, mdocTransactionDataBinder: { .digest(of: $0) }, allowHTTP: true),
        httpClient: http, clock: clock)

    let state = await settled({ client.start(transaction.authorizationRequestURI) }) { await terminal($0, declines: setup.declines) }
    let seen = exchanges.all

    // The store: a presentation reads and rotates, it never adds, removes or changes a credential.
    let after = await wallet.credentials()
    if after.map(\.id) != before.map(\.id) { breach("the store held \(before.map(\.id)), now \(after.map(\.id))") }
    for (old, new) in zip(before, after) where old.instances.map(\.raw) != new.instances.map(\.raw) {
        breach("\(old.id)'s instances changed")
    }

    if let replacement, replacement.index < seen.count {
        let replaced = seen[replacement.index]
        // A signed request object that is not the verifier's is never answered with a presentation.
        if setup.fetchesSignedRequest, replacement.index == 0, !sameRequestObject(replaced.served, replaced.response.body) {
            if let sent = seen.dropFirst().first(where: { carriesPresentation($0.request) }) {
                breach("a replaced request object was answered with a presentation to \(sent.request.url)")
            }
            if case .completed = state { breach("a replaced request object ended the session completed") }
        }
        // The response URI's answer: only a success completes the session.
        let isAnswer = replaced.request.url.path.contains("/response/")
        let status = replacement.status ?? replaced.response.status
        if isAnswer, !(200..<300).contains(status), case .completed = state {
            breach("the response URI answered \(status) and the session ended \(state)")
        }
    }
    // The session ends the way the user chose, or fails; a decline ends `.declined`
    // whatever the verifier answers it.
    switch state {
    case .completed where setup.declines: breach("a declined request ended \(state)")
    case .declined where !setup.declines: breach("an answered request ended \(state)")
    default: break
    }
    let verdict = await verifier.verdict(for: transaction.id)?.outcome
    // Nothing replaced: every setup ends as the user chose, and the verifier agrees.
    if replacement.map({ $0.index >= seen.count }) ?? true {
        switch (state, verdict) {
        case (.completed, .accepted?) where !setup.declines: break
        case (.declined, .declined?) where setup.declines: break
        default: breach("with the verifier's own answers the session ended \(state), the verdict \(String(describing: verdict))")
        }
    }
    return seen
}

/// Writes one input per exchange of each seeded setup into `directory`.
func writeSeeds(to directory: String) {
    // Each form, plain and encrypted; the mDL with transaction data; a decline.
    let setups: [UInt8] = [0, 1, 2, 3, 4, 5, 8 | 16, 1 | 8 | 16 | 4, 16, 32, 1 | 32]
    for setupByte in setups {
        blocking {
            let setup = Setup(setupByte)
            // `run` checks that the session ends as the user chose and the verifier agrees.
            let exchanges = await run(setup, nil)
            for (index, exchange) in exchanges.enumerated() {
                let input = [UInt8(index), setupByte] + exchange.response.body
                // The endpoint's name without the transaction's (random) identifier.
                let endpoint = exchange.request.url.pathComponents.dropFirst().first ?? "exchange"
                let name = "\(directory)/setup\(setupByte)-\(index)-\(endpoint)"
                if !FileManager.default.createFile(atPath: name, contents: Data(input)) { breach("cannot write \(name)") }
                // An edit that changes nothing yet, 43 bytes from the end (in a request
                // object's signature), for the fuzzer to change.
                let offset = 43
                let edit = [UInt8(index) | 0x40, setupByte, UInt8(offset >> 8), UInt8(offset & 0xFF), 0]
                if !FileManager.default.createFile(atPath: name + "-edit", contents: Data(edit)) { breach("cannot write \(name)-edit") }
            }
        }
    }
}

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzz(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    if let directory = ProcessInfo.processInfo.environment["FUZZ_PRESENTATION_FLOW_SEEDS"] {
        writeSeeds(to: directory)
        exit(0)
    }
    guard size >= 2 else { return 0 }
    let setup = Setup(data[1])
    let replacement = Replacement(index: Int(data[0] & 0x0F), contentType: Int(data[0] >> 4) & 3, edits: data[0] & 0x40 != 0,
                                  status: setup.status,
                                  body: Array(UnsafeBufferPointer(start: data + 2, count: size - 2)))
    blocking { _ = await run(setup, replacement) }
    return 0
}
