import Foundation
import JOSE
import ReferenceParties
import SDJWT
import WalletCrypto
import WalletEncoding
import WalletRuntime

/// `wallet serve verifier`: the reference OpenID4VP verifier on 127.0.0.1. It prints a
/// request link (and the reader trust anchor a wallet must configure), shows each verdict
/// as it arrives, opens a fresh request after each, and runs until SIGINT or SIGTERM.
enum VerifierServeCommand {
    static let usage = """
      serve verifier --port N [options]
                                 run the reference OpenID4VP verifier on 127.0.0.1:N (0: a
                                 free port); prints an openid4vp:// request and the reader
                                 trust anchor, then each verdict; stops on SIGINT/SIGTERM
          --host H               the host wallets use (default localhost; the reader
                                 certificate's DNS name and the x509_san_dns client id)
          --dcql <json|path>     the DCQL query, or build one with:
          --vct T                  an SD-JWT VC query for type T (repeatable types)
          --doctype D              an mdoc query for docType D
          --claim P                a claim: name, JSON path ["a","b"], or ns/element (mdoc)
          --unbound                require_cryptographic_holder_binding false
          --multiple               multiple true
          --response-mode M      direct_post (default) or direct_post.jwt
          --client-id-prefix P   x509_san_dns (default), x509_hash or redirect_uri
          --request-uri-method M get (default), post, or value (the request in the link)
          --transaction-data J   a transaction_data object (JSON; type, credential_ids ...)
          --issuer-key K         a trusted SD-JWT VC issuer key (JWK or PEM), repeatable
          --issuer-anchor PEM    trusted SD-JWT VC issuer roots (x5c), instead of keys
          --mdoc-anchor PEM      trusted mdoc IACA roots
          --fault F              build a defect into requests (wrongType, clientIdMismatch,
                                 expired, badSignature, sanMismatch, x509HashMismatch,
                                 untrustedChain, responseUriHostMismatch,
                                 missingWalletNonce, wrongWalletNonce)
          --anchor-out FILE      also write the reader anchor PEM to FILE
          --no-redirect          answer responses without a redirect_uri
          --once                 stop after the first verdict (exit 1 unless accepted)
          --qr                   also draw each request link as a QR code
          --json                 print each verdict as one JSON line
    """

    static let valued: Set<String> = [
        "--port", "--host", "--dcql", "--vct", "--doctype", "--claim", "--response-mode", "--client-id-prefix",
        "--request-uri-method", "--transaction-data", "--issuer-key", "--issuer-anchor", "--mdoc-anchor", "--fault",
        "--anchor-out",
    ]
    static let flags: Set<String> = ["--unbound", "--multiple", "--no-redirect", "--once", "--qr", "--json"]

    /// What one command line asks for.
    struct Setup {
        var host: String
        var port: UInt16
        var configuration: VerifierConfiguration
        var request: PresentationRequestOptions
        var anchorOut: String?
        var once: Bool
        var qr: Bool
        var json: Bool
    }

    /// Reads the command line (no I/O but reading the files it names).
    static func setup(_ arguments: [String]) throws(CLIError) -> Setup {
        let options = try CommandLineOptions(arguments, valued: valued, flags: flags)
        guard options.positional.isEmpty else { throw .usage("unexpected argument \(options.positional[0])") }
        guard let portText = options["--port"], let port = UInt16(portText) else { throw .usage("--port N is required") }
        let host = options["--host"] ?? "localhost"
        guard let baseURL = URL(string: "http://\(host):\(port)"), baseURL.host == host else {
            throw .usage("--host \(host) is not a host name")
        }

        var trust = SDJWTIssuerTrust.keys(try options.all("--issuer-key").map { argument throws(CLIError) in
            try SDJWTCommand.readKey(argument)
        })
        var issuerAnchors: [X509Certificate] = []
        for argument in options.all("--issuer-anchor") { issuerAnchors += try SDJWTCommand.readAnchors(argument) }
        if !issuerAnchors.isEmpty {
            guard options.all("--issuer-key").isEmpty else { throw .usage("give --issuer-key or --issuer-anchor, not both") }
            trust = .anchors(issuerAnchors)
        }
        var mdocAnchors: [X509Certificate] = []
        for argument in options.all("--mdoc-anchor") { mdocAnchors += try SDJWTCommand.readAnchors(argument) }
        let configuration = VerifierConfiguration(baseURL: baseURL, sdJwtIssuerTrust: trust, mdocIssuerAnchors: mdocAnchors,
                                                  answersWithRedirect: !options.has("--no-redirect"))

        let query = try query(options)
        var request = PresentationRequestOptions(query: query)
        if let mode = options["--response-mode"] {
            guard let value = VerifierResponseMode(rawValue: mode) else { throw .usage("unknown --response-mode \(mode)") }
            request.responseMode = value
        }
        if let prefix = options["--client-id-prefix"] {
            guard let value = VerifierClientIdPrefix(rawValue: prefix) else { throw .usage("unknown --client-id-prefix \(prefix)") }
            request.clientIdPrefix = value
            if value == .redirectUri { request.delivery = .byValue }
        }
        switch options["--request-uri-method"] {
        case nil: break
        case "get": request.delivery = .byReference(method: .get)
        case "post": request.delivery = .byReference(method: .post)
        case "value": request.delivery = .byValue
        case let other?: throw .usage("unknown --request-uri-method \(other)")
        }
        request.transactionData = try options.all("--transaction-data").map { argument throws(CLIError) in
            try transactionData(argument)
        }
        for name in options.all("--fault") {
            guard let fault = RequestFault(rawValue: name) else { throw .usage("unknown --fault \(name)") }
            request.faults.insert(fault)
        }
        return Setup(host: host, port: port, configuration: configuration, request: request, anchorOut: options["--anchor-out"],
                     once: options.has("--once"), qr: options.has("--qr"), json: options.has("--json"))
    }

    /// The DCQL query of `--dcql`, or one credential query from `--vct`/`--doctype` and `--claim`.
    static func query(_ options: CommandLineOptions) throws(CLIError) -> VerifierQuery {
        if let argument = options["--dcql"] {
            guard options["--vct"] == nil, options["--doctype"] == nil else {
                throw .usage("give --dcql or --vct/--doctype, not both")
            }
            guard let text = try InputSource.read(argument).text else { throw .input("--dcql is not text") }
            do {
                return try VerifierQuery(json: try JSONValue.parse(text))
            } catch {
                throw .input("--dcql is not a DCQL query this verifier can send")
            }
        }
        let mdoc = options["--doctype"]
        let types = options.all("--vct")
        guard (mdoc == nil) != types.isEmpty else { throw .usage("give --dcql, --vct or --doctype") }
        var claims: [VerifierQuery.Claim] = []
        for text in options.all("--claim") {
            claims.append(VerifierQuery.Claim(path: try claimPath(text, mdoc: mdoc != nil)))
        }
        let credential: VerifierQuery.Credential
        if let mdoc {
            credential = .mdoc(id: "mdoc", docType: mdoc, claims: claims.isEmpty ? nil : claims,
                               multiple: options.has("--multiple"))
        } else {
            credential = .sdJwt(id: "sd_jwt", vct: types, claims: claims.isEmpty ? nil : claims,
                                multiple: options.has("--multiple"),
                                requireCryptographicHolderBinding: !options.has("--unbound"))
        }
        let query = VerifierQuery(credentials: [credential])
        do { try query.validate() } catch { throw .usage("the query is not valid: check --claim") }
        return query
    }

    /// `name`, a JSON claims path, or `namespace/element` for mdoc.
    static func claimPath(_ text: String, mdoc: Bool) throws(CLIError) -> ClaimPath {
        if text.hasPrefix("[") {
            do {
                return try ClaimPath(json: try JSONValue.parse(text))
            } catch {
                throw .usage("--claim \(text) is not a claims path")
            }
        }
        if mdoc {
            guard let slash = text.lastIndex(of: "/"), slash != text.startIndex, text.index(after: slash) != text.endIndex else {
                throw .usage("an mdoc --claim is namespace/element")
            }
            return ClaimPath([.key(String(text[..<slash])), .key(String(text[text.index(after: slash)...]))])
        }
        return ClaimPath([.key(text)])
    }

    static func transactionData(_ argument: String) throws(CLIError) -> VerifierTransactionData {
        guard let text = try InputSource.read(argument).text,
              let object = try? JSONValue.parseObject(Array(text.utf8)),
              let type = object["type"]?.stringValue,
              let ids = object["credential_ids"]?.stringArrayValue else {
            throw .input("--transaction-data is not a JSON object with type and credential_ids")
        }
        let details = object.filter { !["type", "credential_ids", "transaction_data_hashes_alg"].contains($0.key) }
        return VerifierTransactionData(type: type, credentialIds: ids,
                                       hashAlgorithms: object["transaction_data_hashes_alg"]?.stringArrayValue,
                                       details: details)
    }

    // MARK: Serving

    /// Serves until SIGINT/SIGTERM (or the first verdict with `--once`).
    static func run(_ arguments: [String]) async throws(CLIError) -> String {
        let setup = try setup(arguments)
        let served: LoopbackVerifier
        do {
            served = try LoopbackVerifier(host: setup.host, port: setup.port) { baseURL in
                var configuration = setup.configuration
                configuration.baseURL = baseURL
                return configuration
            }
        } catch {
            throw .failed("cannot listen on 127.0.0.1:\(setup.port) (is the port in use?)")
        }
        defer { served.stop() }
        let verifier = served.verifier
        let server = served.server
        if let path = setup.anchorOut {
            do {
                try Data(verifier.pki.anchorPEM.utf8).write(to: URL(fileURLWithPath: path))
            } catch {
                throw .input("cannot write \(path)")
            }
        }
        progress("verifier listening on \(server.baseURL), serving \(verifier.configuration.baseURL)")
        emit("reader trust anchor (configure it in the wallet):\n" + verifier.pki.anchorPEM)

        let stop = AsyncStream<Void>.makeStream()
        let signals = [SIGINT, SIGTERM].map { number -> DispatchSourceSignal in
            signal(number, SIG_IGN)
            let source = DispatchSource.makeSignalSource(signal: number, queue: .global())
            source.setEventHandler { stop.continuation.yield() }
            source.resume()
            return source
        }
        defer { signals.forEach { $0.cancel() } }

        let first: VerifierTransaction
        do {
            first = try await verifier.createTransaction(setup.request)
        } catch {
            throw .failed("the options do not make a valid request")
        }
        announce(first, qr: setup.qr)
        let updates = verifier.verdictUpdates.states
        let finalOutcome = await withTaskGroup(of: PresentationVerdict.Outcome?.self) { group in
            group.addTask {
                for await _ in stop.stream { return nil }
                return nil
            }
            group.addTask {
                var reported = Set<String>()
                var currentId = first.id
                for await update in updates {
                    guard let verdict = update, verdict.isDecided, reported.insert(verdict.transactionId).inserted else {
                        continue
                    }
                    emit(setup.json ? verdict.jsonValue.serialized : describe(verdict))
                    if setup.once { return verdict.outcome }
                    if verdict.transactionId == currentId, let next = try? await verifier.createTransaction(setup.request) {
                        currentId = next.id
                        announce(next, qr: setup.qr)
                    }
                }
                return nil
            }
            let first = await group.next() ?? nil
            group.cancelAll()
            stop.continuation.finish()
            return first
        }
        if setup.once {
            // The verdict is recorded just before its HTTP answer is written: give the
            // server a moment to send it before stopping.
            try? await Task.sleep(for: .milliseconds(300))
        }
        if setup.once, let outcome = finalOutcome, outcome != .accepted { throw .failed("the presentation was not accepted") }
        return ""
    }

    private static func announce(_ transaction: VerifierTransaction, qr: Bool) {
        emit("request (\(transaction.clientId)):\n" + transaction.authorizationRequestURI)
        if qr, let code = QRCode(transaction.authorizationRequestURI) { emit(code.terminalString()) }
    }

    /// One line (or a few) about a verdict.
    static func describe(_ verdict: PresentationVerdict) -> String {
        let id = String(verdict.transactionId.prefix(8))
        switch verdict.outcome {
        case .pending: return "[\(id)] pending"
        case .accepted:
            var lines = ["[\(id)] accepted"]
            for presentation in verdict.presentations {
                let claims = presentation.disclosedClaims.map { "\($0.path.description)=\($0.value.serialized)" }
                lines.append("  \(presentation.queryId): \(presentation.format.rawValue) \(presentation.credentialType)"
                             + (presentation.holderBound ? " (holder-bound)" : " (unbound)")
                             + (claims.isEmpty ? "" : " " + claims.joined(separator: " ")))
            }
            return lines.joined(separator: "\n")
        case .rejected(let failure): return "[\(id)] rejected: \(failure.summary)"
        case .declined(let error, let description): return "[\(id)] declined: \(error)" + (description.map { " (\($0))" } ?? "")
        }
    }

    /// Writes a line to standard output at once (a person or a script is waiting for it).
    private static func emit(_ text: String) {
        FileHandle.standardOutput.write(Data((text + "\n").utf8))
    }
}
