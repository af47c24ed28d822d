import Foundation
import OpenID4VP
import SDJWT
import WalletCrypto
import WalletEncoding
import WalletRuntime
import WalletStorage

/// `wallet present <openid4vp URI | request URL> [--auto | --decline | --select QUERY=ID[,ID]...] [--reader-anchor PEM]...
/// [--mdoc-transaction-data digest[:NAMESPACE]] [--transaction-data-types TYPE[,TYPE]...]`
/// and `wallet present --dc-api <request JSON file> --origin <origin> [...]`: answers an
/// OpenID4VP request from the wallet's store, after showing who asks and what each query
/// would disclose, and asking for consent unless an option decides.
enum PresentCommand {
    static let valued: Set<String> = WalletHome.valuedOptions.union([
        "--select", "--reader-anchor", "--dc-api", "--origin", "--mdoc-transaction-data",
        "--transaction-data-types",
    ])
    static let flags: Set<String> = WalletHome.flagOptions.union(["--auto", "--decline"])

    /// How the user's decision is made.
    enum Decision {
        case ask
        case auto
        case decline
        case select([String: [CredentialId]])
    }

    static func run(_ arguments: [String]) async throws(CLIError) -> String {
        let options = try CommandLineOptions(arguments, valued: valued, flags: flags)
        let home = try WalletHome(options)
        let decision = try decision(options)
        let binder = try mdocTransactionDataBinder(options["--mdoc-transaction-data"])
        var anchors: [[UInt8]] = []
        for path in options.all("--reader-anchor") { anchors += try readAnchors(path) }

        let dcApiFile = options["--dc-api"]
        let origin = options["--origin"]
        switch (options.positional.count, dcApiFile, origin) {
        case (1, nil, nil), (0, .some, .some): break
        case (_, .some, nil): throw .usage("--dc-api needs --origin")
        case (_, nil, .some): throw .usage("--origin goes with --dc-api")
        default: throw .usage("present takes one openid4vp URI or request URL, or --dc-api <file> --origin <origin>")
        }

        let (_, store) = try await home.open()
        // The types this terminal can show: the entry is printed as JSON, so any type an
        // operator names.
        let transactionDataTypes = options["--transaction-data-types"].map { list in
            Set(list.split(separator: ",").map { String($0) })
        }
        let config = PresentationConfig(readerAnchorsDer: anchors, mdocTransactionDataBinder: binder,
                                        transactionDataTypes: transactionDataTypes,
                                        allowHTTP: home.allowHTTP, requestTimeout: home.requestTimeout)
        let client = Openid4VpClient(store: store, config: config,
                                     httpClient: URLSessionHTTPClient(allowInsecureHTTP: home.allowHTTP))
        let session: PresentationSession
        if let dcApiFile, let origin {
            let text: String
            do { text = try String(contentsOfFile: dcApiFile, encoding: .utf8) } catch {
                throw .input("cannot read the DC API request \(dcApiFile)")
            }
            session = client.startDcApi(text, origin: origin)
        } else {
            session = client.start(options.positional[0])
        }

        var resolved: PresentationRequest?
        for await state in session.states {
            if case .requestResolved(let request) = state { resolved = request; break }
            if state.isTerminal { break }
        }
        var disclosed: [(queryId: String, candidate: PresentationCandidate)] = []
        if let request = resolved {
            progress(summary(request))
            let selection: PresentationSelection?
            switch decision {
            case .auto: selection = .auto(request)
            case .decline: selection = nil
            case .select(let chosen): selection = PresentationSelection(chosen: chosen)
            case .ask: selection = askConsent(request) ? .auto(request) : nil
            }
            if let selection {
                for query in request.queries {
                    for id in selection.chosen[query.queryId] ?? [] {
                        if let candidate = query.candidates.first(where: { $0.credentialId == id }) {
                            disclosed.append((query.queryId, candidate))
                        }
                    }
                }
                session.respond(selection)
            } else {
                session.decline()
            }
        }
        var final = session.currentState
        for await state in session.states where state.isTerminal { final = state }
        return try output(final, request: resolved, disclosed: disclosed, json: home.json, dcApi: dcApiFile != nil)
    }

    static func decision(_ options: CommandLineOptions) throws(CLIError) -> Decision {
        let selects = options.all("--select")
        let count = (options.has("--auto") ? 1 : 0) + (options.has("--decline") ? 1 : 0) + (selects.isEmpty ? 0 : 1)
        guard count <= 1 else { throw .usage("give at most one of --auto, --decline and --select") }
        if options.has("--auto") { return .auto }
        if options.has("--decline") { return .decline }
        guard !selects.isEmpty else { return .ask }
        var chosen: [String: [CredentialId]] = [:]
        for select in selects {
            let parts = select.split(separator: "=", maxSplits: 1).map(String.init)
            guard parts.count == 2, !parts[0].isEmpty, !parts[1].isEmpty else {
                throw .usage("--select takes QUERY=ID[,ID], e.g. --select pid=cred-1")
            }
            chosen[parts[0], default: []] += parts[1].split(separator: ",").map(String.init)
        }
        return .select(chosen)
    }

    /// `--mdoc-transaction-data digest[:NAMESPACE]`: how an mdoc presentation carries the
    /// request's transaction data. Without it, an entry bound to an mdoc query is refused.
    static func mdocTransactionDataBinder(_ argument: String?) throws(CLIError) -> MdocTransactionDataBinder? {
        guard let argument else { return nil }
        let parts = argument.split(separator: ":", maxSplits: 1, omittingEmptySubsequences: false).map(String.init)
        guard parts[0] == "digest", parts.count == 1 || !parts[1].isEmpty else {
            throw .usage("--mdoc-transaction-data takes digest or digest:NAMESPACE")
        }
        let nameSpace = parts.count == 2 ? parts[1] : MdocTransactionDataElement.digestNameSpace
        return { .digest(of: $0, nameSpace: nameSpace) }
    }

    /// The PEM certificates in a file (or the PEM text itself).
    static func readAnchors(_ argument: String) throws(CLIError) -> [[UInt8]] {
        let text = (try? String(contentsOfFile: argument, encoding: .utf8)) ?? argument
        do {
            let certificates = try X509Certificate.parsePEM(text)
            guard !certificates.isEmpty else { throw CLIError.input("no certificate in \(argument)") }
            return certificates.map(\.derEncoded)
        } catch let error as CLIError {
            throw error
        } catch {
            throw .input("--reader-anchor \(argument) is not a PEM certificate")
        }
    }

    /// Who asks, and what each query would disclose from which stored credential.
    static func summary(_ request: PresentationRequest) -> String {
        let verifier = request.verifier
        var lines = ["Verifier: \(verifier.commonName ?? verifier.clientId)",
                     "  client_id: \(verifier.clientId) (\(verifier.clientIdScheme.rawValue))",
                     "  trusted:   \(verifier.trusted ? "yes, the certificate chains to a reader anchor" : "NO")"]
        if let origin = request.origin { lines.append("  origin:    \(origin)") }
        for query in request.queries {
            lines.append("Query \(query.queryId) (\(query.format)\(query.required ? ", required" : ", optional")\(query.multiple ? ", multiple" : "")):")
            if !query.holderBinding {
                lines.append("  sent without proof of your key: whoever receives it can present it again")
            }
            if !query.retainedPaths.isEmpty {
                lines.append("  the verifier intends to keep: \(query.retainedPaths.map(\.description).joined(separator: ", "))")
            }
            if query.candidates.isEmpty { lines.append("  no stored credential answers it") }
            for candidate in query.candidates {
                // What the verifier will read, which for SD-JWT VC may be more than it asked for.
                let paths = candidate.revealedPaths.map(\.description).joined(separator: ", ")
                lines.append("  \(candidate.credentialId) [\(candidate.type)] would disclose: \(paths.isEmpty ? "no claim about you" : paths)")
            }
        }
        for transaction in request.transactionData ?? [] {
            lines.append("Transaction \(transaction.type) for \(transaction.credentialIds.joined(separator: ", ")): \(JSONValue.object(transaction.members).serialized)")
        }
        if !request.satisfiable { lines.append("The wallet cannot answer every required query.") }
        return lines.joined(separator: "\n")
    }

    /// Asks on the terminal; anything but yes (or no terminal at all) declines.
    static func askConsent(_ request: PresentationRequest) -> Bool {
        FileHandle.standardError.write(Data("Present the first matching credentials? [y/N] ".utf8))
        guard let answer = readLine() else { return false }
        return ["y", "yes"].contains(answer.trimmingCharacters(in: .whitespaces).lowercased())
    }

    static func output(_ state: PresentationState, request: PresentationRequest?,
                       disclosed: [(queryId: String, candidate: PresentationCandidate)], json: Bool, dcApi: Bool) throws(CLIError) -> String {
        var members: JSONObject = [:]
        var redirect: URL?
        var dcApiResponse: String?
        switch state {
        case .completed(let uri, let response):
            members["state"] = "completed"
            redirect = uri
            dcApiResponse = response
        case .declined(let uri):
            members["state"] = "declined"
            redirect = uri
        case .failed(let error):
            members["state"] = "failed"
            members["error"] = .string(describe(error))
        default:
            members["state"] = "failed"
            members["error"] = "the session ended unexpectedly"
        }
        members["redirectUri"] = redirect.map { .string($0.absoluteString) } ?? .null
        if let verifier = request?.verifier {
            members["verifier"] = [
                "clientId": .string(verifier.clientId), "clientIdScheme": .string(verifier.clientIdScheme.rawValue),
                "commonName": verifier.commonName.map(JSONValue.string) ?? .null, "trusted": .bool(verifier.trusted),
            ]
        } else {
            members["verifier"] = .null
        }
        let completed = members["state"] == "completed"
        members["disclosed"] = .array(completed ? disclosed.map { entry in
            ["queryId": .string(entry.queryId), "credentialId": .string(entry.candidate.credentialId),
             "paths": .array(entry.candidate.disclosedPaths.map(\.jsonValue)),
             "revealed": .array(entry.candidate.revealedPaths.map(\.jsonValue))]
        } : [])
        if let dcApiResponse, let data = try? JSONValue.parse(dcApiResponse) { members["dcApiResponse"] = data }
        if case .failed = state, !json { throw .failed("presentation failed: \(describe(state.failureOrNil))") }
        if json {
            let text = JSONWriter(indent: "  ").string(.object(members))
            if case .failed = state { FileHandle.standardOutput.write(Data((text + "\n").utf8)); throw .failed("presentation failed") }
            return text
        }
        if dcApi, let dcApiResponse { return dcApiResponse }
        switch state {
        case .completed: return "completed" + (redirect.map { "; continue at \($0.absoluteString)" } ?? "")
        case .declined: return "declined" + (redirect.map { "; continue at \($0.absoluteString)" } ?? "")
        default: return ""
        }
    }

    /// One line for a failure.
    static func describe(_ error: PresentationError?) -> String {
        switch error {
        case .invalidRequest(let reason)?: "invalid request (\(reason.vpErrorCode.rawValue)): \(reason)"
        case .verifierNotTrusted(let failure)?: "the verifier is not trusted: \(failure)"
        case .queryNotSatisfiable(let ids)?: "no stored credential answers \(ids.joined(separator: ", "))"
        case .selectionIncomplete(let missing)?: "the selection leaves out \(missing.joined(separator: ", "))"
        case .responseRejected(let status, let code)?: "the verifier rejected the response (HTTP \(status)\(code.map { ", \($0)" } ?? ""))"
        case .unexpected(let cause)?: "\(cause)"
        case nil: "the session ended unexpectedly"
        }
    }
}

extension PresentationState {
    var failureOrNil: PresentationError? {
        if case .failed(let error) = self { return error }
        return nil
    }
}
