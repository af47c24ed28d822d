import CBOR
import Foundation
import Mdoc
import MdocProximity
import OpenID4VCI
import OpenID4VP
import ReferenceParties
import WalletCrypto
import WalletEncoding
import WalletKit
import WalletRuntime
import WalletStorage

/// `wallet demo`: the whole SDK in one run, on loopback only. The reference issuer and
/// verifier listen on free loopback ports and a reference mdoc reader sits on a
/// simulated BLE link; a `Wallet` receives a PID and an mDL, presents the PID remotely
/// and over the Digital Credentials API and the mDL in proximity, then the command
/// prints what each relying party verified and the wallet's transaction log.
///
/// The mdoc reader is `MdocProximity`'s `MdocReader` (the verifier's role in ISO
/// 18013-5), driven from here: `ReferenceParties` does not import the protocol modules.
enum DemoCommand {
    static let usage = """
      demo [--store DIR] [--no-qr] [--json]
                                 the SDK end to end on loopback, no setup: the reference
                                 issuer and verifier on free ports and a reference mdoc
                                 reader on a simulated BLE link; issues a PID (SD-JWT VC,
                                 pre-authorized code + tx_code) and an mDL (mdoc, auth code +
                                 PAR + PKCE + DPoP, 3 one-time instances), presents the PID
                                 over OpenID4VP (DCQL, direct_post.jwt) and the DC API and the
                                 mDL in proximity, then prints what each party verified and
                                 the transaction log. A fresh temporary store unless --store
                                 (an existing store is repaired first if a run was killed).
    """

    /// The transaction code the PID offer asks for: what the issuer would send by e-mail.
    static let txCode = "493536"
    static let pidType = "urn:eudi:pid:1"
    static let mDLType = "org.iso.18013.5.1.mDL"
    static let mDLNameSpace = IssuerCredentialConfiguration.mDLNameSpace

    /// `wallet demo [--store DIR] [--no-qr] [--json]`. For crash-consistency tests,
    /// `WALLET_DEMO_CHECKPOINTS=1` prints each checkpoint (`pid: POST /credential`, one
    /// before every request the wallet sends) as it passes, and `WALLET_DEMO_HALT_AT`
    /// names one where the run stops and waits to be killed.
    static func run(_ arguments: [String], environment: [String: String] = ProcessInfo.processInfo.environment)
        async throws(CLIError) -> String {
        let options = try CommandLineOptions(arguments, valued: ["--store"], flags: ["--no-qr", "--json"])
        guard options.positional.isEmpty else { throw .usage("demo takes no arguments") }
        let narrator = DemoNarrator(drawsQR: !options.has("--no-qr"), haltAt: environment["WALLET_DEMO_HALT_AT"],
                                    tracesCheckpoints: environment["WALLET_DEMO_CHECKPOINTS"] == "1")
        let folder: URL
        let temporary = options["--store"] == nil
        if let path = options["--store"] {
            guard !path.isEmpty else { throw .usage("--store needs a directory") }
            folder = URL(fileURLWithPath: path, isDirectory: true)
        } else {
            folder = FileManager.default.temporaryDirectory.appendingPathComponent("wallet-demo-\(UUID().uuidString.lowercased())",
                                                                                   isDirectory: true)
        }
        defer { if temporary { try? FileManager.default.removeItem(at: folder) } }
        let parties = try await DemoParties.start(narrator: narrator)
        defer { parties.stop() }
        let report = try await DemoRun(parties: parties, narrator: narrator, folder: folder, temporary: temporary).run()
        return options.has("--json") ? report.json : report.text
    }
}

// MARK: - The parties

/// The reference issuer and verifier on loopback ports, and the reader.
struct DemoParties: Sendable {
    let issuer: ReferenceIssuer
    let issuerServer: LoopbackHTTPServer
    let verifier: LoopbackVerifier
    let reader: DemoReader

    static func start(narrator: DemoNarrator) async throws(CLIError) -> DemoParties {
        let issuer: ReferenceIssuer
        let server: LoopbackHTTPServer
        do {
            issuer = try ReferenceIssuer(configuration: ReferenceIssuerConfiguration(
                par: .required, dpop: DPoPPolicy(mode: .required, requireNonce: true)))
            server = try LoopbackHTTPServer(handler: issuer)
        } catch {
            throw .failed("demo: cannot start the reference issuer (\(error))")
        }
        do {
            try await issuer.setOrigin(server.baseURL)
            let anchors = issuer.trustAnchors
            let verifier = try LoopbackVerifier { baseURL in
                VerifierConfiguration(baseURL: baseURL, readerCommonName: "Demo Verifier",
                                      sdJwtIssuerTrust: .anchors([anchors.issuerRoot]), mdocIssuerAnchors: [anchors.iaca])
            }
            let reader = try DemoReader.make()
            progress("wallet demo: the reference parties on loopback, a wallet in a store of its own")
            narrator.line("issuer   \(await issuer.credentialIssuer)  (reference OpenID4VCI issuer: PAR required, DPoP with nonces)")
            narrator.line("verifier \(verifier.server.baseURL.absoluteString)  (reference OpenID4VP verifier, x509_san_dns)")
            narrator.line("reader   \(reader.certificate.subject.rfc4514String)  (ISO 18013-5 reader on a simulated BLE link)")
            return DemoParties(issuer: issuer, issuerServer: server, verifier: verifier, reader: reader)
        } catch {
            server.stop()
            throw .failed("demo: cannot start the reference parties (\(error))")
        }
    }

    func stop() {
        issuerServer.stop()
        verifier.stop()
    }
}

/// The reference mdoc reader: its own authentication PKI (a root the wallet trusts and a
/// reader certificate), reaching holders over a simulated BLE air.
struct DemoReader: Sendable {
    let air: SimulatedBLEAir
    let root: X509Certificate
    let certificate: X509Certificate
    let key: ECPrivateKey

    static func make(now: Date = Date()) throws -> DemoReader {
        let rootKey = try ECPrivateKey.generate(curve: .p256)
        let root = try CertificateBuilder.certificateAuthority(
            subject: DistinguishedName([(.commonName, "Demo Reader Root"), (.country, "DE")]),
            notBefore: now.addingTimeInterval(-3600), notAfter: now.addingTimeInterval(86_400)).selfSigned(with: .ec(rootKey))
        let key = try ECPrivateKey.generate(curve: .p256)
        let certificate = try CertificateBuilder.mdocReaderAuthentication(
            subject: DistinguishedName([(.commonName, "Demo Reader"), (.country, "DE")]),
            subjectPublicKeyInfoDER: try key.publicKey.spkiDER,
            notBefore: now.addingTimeInterval(-3600), notAfter: now.addingTimeInterval(86_400)).signed(by: root, key: .ec(rootKey))
        return DemoReader(air: SimulatedBLEAir(), root: root, certificate: certificate, key: key)
    }

    /// The holder's side of the link (the mdoc is the GATT server and advertises).
    var holderConnector: BLEConnector { BLEConnector(party: .mdoc, modes: [.peripheralServer]) { [air] in air.makeRadio() } }

    /// A reader session trusting `issuerAnchors` (IACA roots).
    func session(issuerAnchors: [X509Certificate]) throws(ProximityError) -> MdocReader {
        try MdocReader(connector: BLEConnector(party: .reader, modes: [.peripheralServer]) { [air] in air.makeRadio() },
                       trustAnchors: issuerAnchors)
    }

    var authenticationKey: ReaderAuthenticationKey {
        ReaderAuthenticationKey(signer: SoftwareSigner(key), certificateChain: [certificate])
    }
}

// MARK: - Narration and checkpoints

/// Prints the run's progress on standard error (numbered steps, indented details, QR
/// codes where a person would scan), and stops at the checkpoint `haltAt` names.
final class DemoNarrator: Sendable {
    static let steps = 6
    let drawsQR: Bool
    let haltAt: String?
    let tracesCheckpoints: Bool
    private let state = LockedBox((step: 0, phase: "setup", seen: [String: Int]()))

    init(drawsQR: Bool, haltAt: String?, tracesCheckpoints: Bool = false) {
        self.drawsQR = drawsQR
        self.haltAt = haltAt
        self.tracesCheckpoints = tracesCheckpoints
    }

    /// Begins step `phase` with a title line.
    func step(_ phase: String, _ title: String) {
        let number = state.withLock { state -> Int in
            state.step += 1
            state.phase = phase
            return state.step
        }
        progress("[\(number)/\(Self.steps)] \(title)")
    }

    /// A detail line of the current step.
    func line(_ text: String) { progress("      " + text) }

    /// Shows `text` as a QR code (and as text) for a person to scan.
    func qr(_ text: String, caption: String) {
        line(caption + ":")
        line(text)
        if drawsQR, let symbol = QRCode(text) { progress(symbol.terminalString()) }
    }

    /// A point of the run (`pid: POST /credential`; `#2` and on for repeats within a
    /// step): when it is the one to halt at, says so and waits to be killed.
    func checkpoint(_ name: String) async {
        let full = state.withLock { state -> String in
            let base = state.phase + ": " + name
            let count = (state.seen[base] ?? 0) + 1
            state.seen[base] = count
            return count == 1 ? base : base + " #\(count)"
        }
        if tracesCheckpoints { progress("checkpoint \(full)") }
        guard full == haltAt else { return }
        progress("halted at \(full)")
        // Waits for the test that asked to kill the process; bounded, in case it never does.
        for _ in 0..<600 { try? await Task.sleep(for: .seconds(1)) }
        exit(3)
    }
}

/// The wallet's network, with a checkpoint before every request (`METHOD /path`).
struct CheckpointHTTPClient: HTTPClient {
    let inner: any HTTPClient
    let narrator: DemoNarrator

    func send(_ request: HTTPRequest) async throws(HTTPError) -> HTTPResponse {
        // Identifiers in paths (offers, transactions) are random: one name for all of them.
        let path = request.url.path.split(separator: "/", omittingEmptySubsequences: false)
            .map { $0.count >= 16 && $0.contains(where: { $0.isUppercase || $0.isNumber }) ? "*" : String($0) }
            .joined(separator: "/")
        await narrator.checkpoint("\(request.method.rawValue) \(path)")
        return try await inner.send(request)
    }
}

// MARK: - The run

/// One run of the demo against `parties`, with the store in `folder`.
struct DemoRun {
    let parties: DemoParties
    let narrator: DemoNarrator
    let folder: URL
    let temporary: Bool

    func run() async throws(CLIError) -> DemoReport {
        let anchors = parties.issuer.trustAnchors
        let http = CheckpointHTTPClient(inner: URLSessionHTTPClient(allowInsecureHTTP: true), narrator: narrator)
        let wallet: Wallet
        do {
            wallet = try await Wallet(config: WalletConfig(
                storage: .sqlite(at: folder),
                trust: TrustConfig(issuerAnchors: [anchors.iaca, anchors.issuerRoot],
                                   readerAnchorsDer: parties.verifier.verifier.pki.anchorsDER + [parties.reader.root.derEncoded]),
                issuance: IssuanceConfig(allowHTTP: true),
                presentation: PresentationConfig(allowHTTP: true),
                proximity: ProximityConfig(connector: parties.reader.holderConnector),
                httpClient: http))
        } catch {
            throw .failed("demo: cannot open the wallet store in \(folder.path) (\(error))")
        }
        narrator.line("wallet   \(folder.path)\(temporary ? " (temporary)" : "")")
        if wallet.recovery.repairedAnything {
            narrator.line("         repaired after an interrupted run: \(wallet.recovery.removedOrphanKeys.count) orphan keys removed, "
                          + "\(wallet.recovery.finishedKeyDeletions) key deletions finished")
        }
        var report = DemoReport(store: folder.path, temporary: temporary, recovery: wallet.recovery,
                                issuer: await parties.issuer.credentialIssuer)
        report.pid = try await issuePid(wallet)
        report.mdl = try await issueMdl(wallet)
        report.remote = try await presentRemotely(wallet, pid: report.pid)
        report.dcApi = try await presentOverDcApi(wallet, pid: report.pid)
        report.proximity = try await presentInProximity(wallet, mdl: report.mdl)

        narrator.step("summary", "Summary: what each party verified, the transaction log")
        do {
            report.log = try await wallet.transactionLog.entries()
            for credential in try await wallet.credentials.list() {
                report.credentials.append((credential, try await wallet.credentials.remainingInstances(of: credential.id)))
            }
            report.storage = try await wallet.verifyStorage()
        } catch {
            throw .failed("demo: cannot read the wallet store (\(error))")
        }
        await wallet.close()   // nothing writes into the folder once it is removed
        return report
    }

    // MARK: Issuance

    private func issuePid(_ wallet: Wallet) async throws(CLIError) -> CredentialId {
        narrator.step("pid", "Issuance of a PID (SD-JWT VC): pre-authorized code with a transaction code")
        let offer: IssuedCredentialOffer
        let resolved: CredentialOffer
        do {
            offer = try await parties.issuer.createOffer(.preAuthorized([IssuerCredentialConfiguration.pidId],
                                                                        txCode: .init(value: DemoCommand.txCode)))
            narrator.qr(offer.byReference, caption: "issuer: credential offer (scan with a wallet)")
            resolved = try await wallet.issuance.resolveOffer(offer.byReference)
        } catch {
            throw .failed("demo: the PID offer could not be resolved (\(error))")
        }
        narrator.line("wallet: offer from \(resolved.credentialIssuer) for \(resolved.credentialConfigurationIds.joined(separator: ", ")); "
                      + "transaction code required: \(resolved.requiresTxCode)")
        let session = wallet.issuance.start(.fromOffer(resolved, configurationId: IssuerCredentialConfiguration.pidId))
        for await state in session.states {
            switch state {
            case .txCodeRequired(let spec):
                let length = spec?.length.map { "\($0) digits" } ?? "a code"
                narrator.line("wallet: paused for the transaction code (\(length), sent out of band); the user types \(DemoCommand.txCode)")
                session.submitTxCode(DemoCommand.txCode)
            case .processing:
                narrator.line("wallet: token (DPoP-bound), nonce, proof of a fresh holder key, credential request")
            default:
                break
            }
            if state.isTerminal { break }
        }
        return try completed(session.currentState, what: "PID")
    }

    private func issueMdl(_ wallet: Wallet) async throws(CLIError) -> CredentialId {
        narrator.step("mdl", "Issuance of an mDL (mdoc): authorization code with PAR, PKCE and DPoP, a batch of 3 one-time instances")
        let issuer = await parties.issuer.credentialIssuer
        let session = wallet.issuance.start(.fromIssuer(issuer, configurationId: IssuerCredentialConfiguration.mDLId,
                                                        policy: CredentialPolicy(batchSize: 3, use: .oneTime)))
        let browser = URLSessionHTTPClient(allowInsecureHTTP: true)
        for await state in session.states {
            switch state {
            case .authorizationRequired(let url):
                narrator.line("wallet: pushed the authorization request (PAR, PKCE S256, DPoP); opening the browser at")
                narrator.line("        \(Self.withoutQuery(url))?client_id=…&request_uri=…")
                guard let location = await IssueCommand.follow(url, http: browser) else {
                    narrator.line("browser: the authorization endpoint did not redirect")
                    session.cancel()
                    continue
                }
                narrator.line("browser: the user approved; redirected to \(Self.withoutQuery(location))?code=…&state=…&iss=…")
                session.completeAuthorization(location)
            case .processing:
                narrator.line("wallet: code + PKCE verifier for a DPoP-bound token, 3 key proofs, one batch credential request")
            default:
                break
            }
            if state.isTerminal { break }
        }
        return try completed(session.currentState, what: "mDL")
    }

    private func completed(_ state: IssuanceState, what: String) throws(CLIError) -> CredentialId {
        guard case .completed(let result) = state, let id = result.issued.first else {
            if case .failed(let error) = state {
                let (name, detail) = IssueCommand.describe(error)
                throw .failed("demo: the \(what) issuance failed: \(name): \(detail)")
            }
            throw .failed("demo: the \(what) issuance ended \(state)")
        }
        narrator.line("wallet: \(what) verified against the issuer's root and stored as \(id)")
        return id
    }

    private static func withoutQuery(_ url: String) -> String { String(url.prefix { $0 != "?" }) }

    // MARK: Remote presentation

    static let pidQuery = VerifierQuery(credentials: [
        .sdJwt(id: "pid", vct: [DemoCommand.pidType],
               claims: [.init(path: ["given_name"]), .init(path: ["family_name"]), .init(path: ["age_equals_or_over", "18"])]),
    ])

    private func presentRemotely(_ wallet: Wallet, pid: CredentialId) async throws(CLIError) -> DemoReport.Verification {
        narrator.step("remote", "Presentation of the PID to the verifier: OpenID4VP, DCQL, direct_post.jwt")
        let verifier = parties.verifier.verifier
        let transaction: VerifierTransaction
        do {
            transaction = try await verifier.createTransaction(PresentationRequestOptions(
                query: Self.pidQuery, responseMode: .directPostJwt, clientIdPrefix: .x509SanDns, delivery: .byReference(method: .post)))
        } catch {
            throw .failed("demo: the verifier could not make a request (\(error))")
        }
        narrator.qr(transaction.authorizationRequestURI, caption: "verifier: authorization request (scan with a wallet)")
        let state = await answer(wallet.presentation.start(transaction.authorizationRequestURI), with: pid)
        guard case .completed = state else { throw .failed("demo: the remote presentation ended \(Self.describe(state))") }
        let verdict = await verifier.verdict(for: transaction.id)
        return DemoReport.Verification(party: transaction.clientId, channel: "OpenID4VP direct_post.jwt", verdict: verdict)
    }

    private func presentOverDcApi(_ wallet: Wallet, pid: CredentialId) async throws(CLIError) -> DemoReport.Verification {
        narrator.step("dcapi", "Presentation of the PID over the Digital Credentials API (signed request, dc_api.jwt)")
        let verifier = parties.verifier.verifier
        // The verifier's web page calls the API: its origin is the verifier's own.
        let base = verifier.configuration.baseURL.absoluteString
        let pageOrigin = base.hasSuffix("/") ? String(base.dropLast()) : base
        let transaction: DcApiTransaction
        do {
            transaction = try await verifier.createDcApiRequest(DcApiRequestOptions(
                query: Self.pidQuery, signed: true, expectedOrigins: [pageOrigin], encrypted: true))
        } catch {
            throw .failed("demo: the verifier could not make a DC API request (\(error))")
        }
        narrator.line("browser: \(pageOrigin) calls navigator.credentials.get(\(transaction.protocolIdentifier)); the platform hands the request to the wallet")
        let state = await answer(wallet.presentation.startDcApi(transaction.requestJSON.serialized, origin: pageOrigin), with: pid)
        guard case .completed(_, let response?) = state else { throw .failed("demo: the DC API presentation ended \(Self.describe(state))") }
        narrator.line("browser: returns the response data to the page, which posts it to its verifier")
        let verdict: PresentationVerdict
        do {
            verdict = try await verifier.verifyDcApiResponse(try JSONValue.parse(response), transactionId: transaction.id, origin: pageOrigin)
        } catch {
            throw .failed("demo: the verifier could not check the DC API response (\(error))")
        }
        return DemoReport.Verification(party: "origin " + pageOrigin, channel: "Digital Credentials API dc_api.jwt", verdict: verdict)
    }

    /// Shows the resolved request, then answers it with the PID the demo issued: an
    /// explicit choice, as a consent screen would make it.
    private func answer(_ session: WalletPresentationSession, with pid: CredentialId) async -> PresentationState {
        for await state in session.states {
            switch state {
            case .requestResolved(let request):
                let verifier = request.verifier
                narrator.line("wallet: request from \(verifier.commonName ?? verifier.clientId) (\(verifier.clientId)), "
                              + "trusted: \(verifier.trusted)")
                for query in request.queries {
                    let paths = query.candidates.first { $0.credentialId == pid }?.revealedPaths.map(\.description) ?? []
                    narrator.line("        query \(query.queryId): \(query.candidates.count) candidate(s); "
                                  + "would disclose \(paths.joined(separator: ", "))")
                }
                narrator.line("user: shares the PID \(pid) for query pid")
                session.respond(PresentationSelection(chosen: ["pid": [pid]]))
            case .submitting:
                narrator.line("wallet: SD-JWT VC with only those disclosures and a KB-JWT, encrypted to the verifier")
            default:
                break
            }
            if state.isTerminal { break }
        }
        return session.currentState
    }

    private static func describe(_ state: PresentationState) -> String {
        switch state {
        case .failed(let error): "failed: \(error)"
        default: "\(state)"
        }
    }

    // MARK: Proximity

    static let requested = ["family_name", "given_name", "age_over_18", "portrait"]
    static let released: Set<String> = ["family_name", "given_name", "age_over_18"]

    private func presentInProximity(_ wallet: Wallet, mdl: CredentialId) async throws(CLIError) -> DemoReport.ProximityVerification {
        narrator.step("proximity", "Presentation of the mDL in proximity (ISO 18013-5, QR engagement, simulated BLE)")
        let recorded = wallet.transactionLog.recorded
        let states = wallet.proximity.eventHub.sessionState.values
        let narrator = self.narrator
        let holder = Task { () -> Bool in
            var shared = false
            for await ui in states {
                narrator.line("wallet ui: " + Self.describe(ui))
                if ui.userInteractionRequired, let bytes = ui.deviceRequest,
                   let transfer = wallet.proximity.activeEngagement.current?.transferManager {
                    shared = await Self.consent(bytes, transfer: transfer, wallet: wallet, mdl: mdl, narrator: narrator)
                }
                if ui.isTerminal { break }
            }
            return shared
        }
        let verified: VerifiedResponse
        do {
            let engagement = try await wallet.proximity.createEngagement(.qr, config: wallet.engagementConfig)
            narrator.qr(engagement.qrCodeUri ?? "", caption: "wallet: device engagement (the reader scans it)")
            let reader = try parties.reader.session(issuerAnchors: [parties.issuer.trustAnchors.iaca])
            try await reader.engage(qrCodeUri: engagement.qrCodeUri ?? "")
            let items = ItemsRequest(docType: DemoCommand.mDLType, nameSpaces: [
                NameSpaced(DemoCommand.mDLNameSpace, Self.requested.map { RequestedElement($0, false) })])
            verified = try await reader.request([items], readerKey: parties.reader.authenticationKey)
            await reader.end()
        } catch {
            holder.cancel()
            await wallet.proximity.closeAll()
            throw .failed("demo: the proximity presentation failed (\(error))")
        }
        _ = await holder.value
        // The wallet logs the session as its final event is handled.
        _ = await recorded.first { $0.kind == .proximityPresentation }
        await wallet.proximity.closeAll()
        return DemoReport.ProximityVerification(reader: parties.reader.certificate.subject.rfc4514String, response: verified)
    }

    /// The consent screen: shows what the reader asks, releases everything but the
    /// portrait, and answers through the wallet's store.
    private static func consent(_ bytes: [UInt8], transfer: TransferManager, wallet: Wallet, mdl: CredentialId,
                                narrator: DemoNarrator) async -> Bool {
        guard let request = try? DeviceRequest(encoded: bytes) else {
            try? await transfer.decline()
            return false
        }
        let reader = request.docRequests.compactMap(\.readerCertificate).first?.subject.commonName ?? "an unauthenticated reader"
        narrator.line("wallet: \(reader) asks for \(requested.joined(separator: ", ")) of the mDL")
        narrator.line("user: releases \(requested.filter(released.contains).joined(separator: ", ")); withholds portrait")
        let consent = ConsentSelection(elements: Set(released.map {
            ReleasedElement(docType: DemoCommand.mDLType, nameSpace: DemoCommand.mDLNameSpace, identifier: $0)
        }))
        do {
            let provider = try await wallet.documentProvider(for: request, consent: consent, credentials: [DemoCommand.mDLType: mdl])
            let response = try await transfer.createResponse(deviceRequest: request, documentProvider: provider)
            try await transfer.sendDeviceResponse(response)
            return true
        } catch {
            narrator.line("wallet: could not answer (\(error))")
            await transfer.close()
            return false
        }
    }

    static func describe(_ ui: SessionUiState) -> String {
        var parts = ["\(ui.phase.rawValue)", ui.substateLabel, "qr \(ui.qrMode.rawValue)", "nfc \(ui.nfcMode.rawValue)"]
        if ui.isSuspended { parts.append("suspended") }
        if let progress = ui.progressHint { parts.append("progress \(progress)") }
        if ui.userInteractionRequired { parts.append("consent required") }
        if let outcome = ui.terminalOutcome { parts.append("outcome \(outcome.rawValue)") }
        return parts.joined(separator: " · ")
    }
}

// MARK: - The report

/// What the run did, printed at the end.
struct DemoReport {
    /// What a verifier (remote or DC API) concluded.
    struct Verification {
        let party: String
        let channel: String
        let verdict: PresentationVerdict?
    }

    /// What the reader concluded.
    struct ProximityVerification {
        let reader: String
        let response: VerifiedResponse
    }

    let store: String
    let temporary: Bool
    let recovery: StorageRecovery
    let issuer: String
    var pid: CredentialId = ""
    var mdl: CredentialId = ""
    var remote: Verification?
    var dcApi: Verification?
    var proximity: ProximityVerification?
    var log: [TransactionLogEntry] = []
    var credentials: [(StoredCredential, remaining: Int)] = []
    var storage: StorageReport?

    init(store: String, temporary: Bool, recovery: StorageRecovery, issuer: String) {
        self.store = store
        self.temporary = temporary
        self.recovery = recovery
        self.issuer = issuer
    }

    private static func value(_ cbor: CBOR?) -> String {
        guard let cbor else { return "—" }
        return cbor.diagnostic()
    }

    private func verificationLines(_ verification: Verification?, name: String) -> [String] {
        guard let verification else { return [] }
        let outcome = verification.verdict.map { "\($0.outcome)" } ?? "no verdict"
        var lines = ["  \(name)  \(verification.party) over \(verification.channel): \(outcome)"]
        for presentation in verification.verdict?.presentations(for: "pid") ?? [] {
            lines.append("            checked: issuer chain (\(presentation.issuerCertificateSubjects.first ?? "key")), "
                         + "disclosure digests, \(presentation.holderBound ? "KB-JWT (nonce, audience, sd_hash)" : "no holder binding")")
            lines.append("            received: " + presentation.disclosedClaims.map { "\($0.path) = \($0.value.serialized)" }
                .joined(separator: ", "))
        }
        return lines
    }

    var text: String {
        var lines = ["What each relying party verified",
                     "  issuer    \(issuer) issued the PID \(pid) (dc+sd-jwt) and the mDL \(mdl) (mso_mdoc, 3 one-time instances)"]
        lines += verificationLines(remote, name: "verifier")
        lines += verificationLines(dcApi, name: "verifier")
        if let proximity {
            lines.append("  reader    \(proximity.reader) over ISO 18013-5 (simulated BLE): \(proximity.response.status == .ok ? "accepted" : "status \(proximity.response.status.rawValue)")")
            for document in proximity.response.documents {
                lines.append("            checked: issuer chain (IACA), MSO digests and validity, device \(document.deviceAuthentication.rawValue)")
                let received = DemoRun.requested.compactMap { name -> String? in
                    document.value(nameSpace: DemoCommand.mDLNameSpace, identifier: name).map { "\(name) = \(Self.value($0))" }
                }
                let withheld = DemoRun.requested.filter { document.value(nameSpace: DemoCommand.mDLNameSpace, identifier: $0) == nil }
                lines.append("            received: " + received.joined(separator: ", "))
                if !withheld.isEmpty { lines.append("            not released: " + withheld.joined(separator: ", ")) }
            }
        }
        lines.append("")
        lines.append("Transaction log (newest first; claim paths, no values)")
        let formatter = ISO8601DateFormatter()
        for entry in log {
            let trust = entry.counterparty.trusted.map { $0 ? "trusted" : "not trusted" } ?? "trust not checked"
            lines.append("  \(formatter.string(from: entry.time))  \(entry.kind.rawValue)  \(entry.counterparty.identifier) (\(trust))  \(entry.outcome)")
            for credential in entry.credentials {
                let paths = credential.claimPaths.map { JSONValue.array($0).serialized }.joined(separator: " ")
                lines.append("      \(credential.type) \(credential.credentialId): \(paths)")
            }
        }
        lines.append("")
        lines.append("Credentials in the store")
        for (credential, remaining) in credentials {
            let instances = credential.policy.use == .oneTime
                ? "\(remaining) of \(credential.instances.count) one-time instances left" : "\(credential.instances.count) instance(s), reused"
            lines.append("  \(credential.type)  \(credential.id)  \(instances)")
        }
        if let storage {
            lines.append("")
            lines.append("Store \(store)\(temporary ? " (temporary, removed now)" : ""): integrity \(storage.integrity.joined(separator: ", ")), "
                         + "\(storage.orphanKeys.count) orphan keys, \(storage.missingKeys.count) missing keys")
        }
        return lines.joined(separator: "\n")
    }

    var json: String {
        func verification(_ value: Verification?) -> JSONValue {
            guard let value else { return .null }
            var object: JSONObject = ["party": .string(value.party), "channel": .string(value.channel),
                                      "accepted": .bool(value.verdict?.outcome == .accepted)]
            object["disclosed"] = .array((value.verdict?.presentations(for: "pid") ?? []).flatMap(\.disclosedClaims).map {
                ["path": $0.path.jsonValue, "value": $0.value]
            })
            return .object(object)
        }
        var reader: JSONValue = .null
        if let proximity {
            let documents: [JSONValue] = proximity.response.documents.map { document in
                ["docType": .string(document.docType),
                 "received": .array(DemoRun.requested.filter { document.value(nameSpace: DemoCommand.mDLNameSpace, identifier: $0) != nil }
                    .map(JSONValue.string))]
            }
            reader = ["reader": .string(proximity.reader), "documents": .array(documents)]
        }
        let log: [JSONValue] = self.log.map { entry in
            ["kind": .string(entry.kind.rawValue), "counterparty": .string(entry.counterparty.identifier),
             "trusted": entry.counterparty.trusted.map(JSONValue.bool) ?? .null, "outcome": .string("\(entry.outcome)"),
             "credentials": .array(entry.credentials.map { ["id": .string($0.credentialId), "type": .string($0.type),
                                                            "paths": .array($0.claimPaths.map(JSONValue.array))] })]
        }
        let document: JSONObject = [
            "store": .string(store), "temporary": .bool(temporary),
            "recovered": ["removedOrphanKeys": .integer(Int64(recovery.removedOrphanKeys.count)),
                          "finishedKeyDeletions": .integer(Int64(recovery.finishedKeyDeletions))],
            "issuer": .string(issuer), "pid": .string(pid), "mdl": .string(mdl),
            "remote": verification(remote), "dcApi": verification(dcApi), "proximity": reader,
            "transactionLog": .array(log),
            "credentials": .array(credentials.map { ["id": .string($0.0.id), "type": .string($0.0.type), "remaining": .integer(Int64($0.remaining))] }),
            "storage": ["integrity": .array((storage?.integrity ?? []).map(JSONValue.string)),
                        "orphanKeys": .integer(Int64(storage?.orphanKeys.count ?? -1)),
                        "missingKeys": .integer(Int64(storage?.missingKeys.count ?? -1)),
                        "consistent": .bool(storage?.isConsistent ?? false)],
        ]
        return JSONValue.object(document).serialized
    }
}
