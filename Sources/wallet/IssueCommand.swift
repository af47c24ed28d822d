import Foundation
import OpenID4VCI
import WalletCrypto
import WalletEncoding
import WalletRuntime
import WalletStorage

/// Where an issuance command asks the user (a transaction code, the browser redirect):
/// the terminal, or a script in tests.
protocol IssuanceTerminal: Sendable {
    /// Shows `prompt` (on standard error) and reads one line; nil at end of input.
    func ask(_ prompt: String) -> String?
}

/// The terminal: prompts on standard error, answers from standard input.
struct StandardTerminal: IssuanceTerminal {
    func ask(_ prompt: String) -> String? {
        FileHandle.standardError.write(Data(prompt.utf8))
        return readLine(strippingNewline: true)?.trimmingCharacters(in: .whitespaces)
    }
}

/// `wallet issue`, `wallet resume` and `wallet reissue`: run a real OpenID4VCI issuance
/// into the wallet store and report how it ended.
enum IssueCommand {
    /// The options every issuing command (`issue`, `resume`, `reissue`) takes with a value.
    static let sessionValued: Set<String> = WalletHome.valuedOptions.union([
        "--encryption", "--issuer-anchor", "--key-attestation-key", "--key-attestation-chain",
    ])
    static let valued: Set<String> = sessionValued.union(["--config", "--tx-code", "--batch"])
    static let flags: Set<String> = WalletHome.flagOptions.union(["--one-time", "--auto-authorize"])

    /// The seams a run uses; the defaults are the real network and terminal.
    struct Environment: Sendable {
        var http: (@Sendable (_ allowHTTP: Bool) -> any HTTPClient) = { URLSessionHTTPClient(allowInsecureHTTP: $0) }
        var terminal: any IssuanceTerminal = StandardTerminal()
        var variables: [String: String] = ProcessInfo.processInfo.environment
    }

    /// `wallet issue <offer URI | offer JSON | issuer URL> [options]`.
    static func issue(_ arguments: [String], environment: Environment = Environment()) async throws(CLIError) -> String {
        let options = try CommandLineOptions(arguments, valued: valued, flags: flags)
        guard options.positional.count == 1, let input = options.positional.first else {
            throw .usage("issue takes one offer URI, offer JSON or issuer URL")
        }
        let home = try WalletHome(options, environment: environment.variables)
        var policy = CredentialPolicy()
        if let batch = options["--batch"] {
            guard let size = Int(batch), size >= 1 else { throw .usage("--batch takes a whole number of at least 1") }
            policy = CredentialPolicy(batchSize: size, use: options.has("--one-time") ? .oneTime : .rotate)
        } else if options.has("--one-time") {
            policy = CredentialPolicy(batchSize: 1, use: .oneTime)
        }
        let encryption = try encryptionPolicy(options["--encryption"])
        let anchors = try readAnchors(options.all("--issuer-anchor"))
        let attestations = try keyAttestationProvider(options)
        let (client, _) = try await openClient(home, environment: environment, encryption: encryption, anchors: anchors,
                                               keyAttestations: attestations)

        let request: IssuanceRequest
        if isOffer(input) {
            progress("resolving the offer")
            let offer: CredentialOffer
            do { offer = try await client.resolveOffer(input) } catch {
                return try report(.failed(error), home: home)
            }
            let configuration = options["--config"] ?? offer.credentialConfigurationIds.first ?? ""
            guard offer.credentialConfigurationIds.contains(configuration) else {
                throw .usage("the offer has no configuration \(configuration); it offers \(offer.credentialConfigurationIds.joined(separator: ", "))")
            }
            if options["--config"] == nil, offer.credentialConfigurationIds.count > 1 {
                progress("the offer has \(offer.credentialConfigurationIds.count) configurations; issuing \(configuration) (choose with --config)")
            }
            request = .fromOffer(offer, configurationId: configuration, txCode: options["--tx-code"], policy: policy)
        } else {
            guard let configuration = options["--config"] else { throw .usage("issuing from an issuer URL needs --config ID") }
            request = .fromIssuer(input, configurationId: configuration, policy: policy)
        }
        progress("issuing")
        let session = client.start(request)
        let terminal = await drive(session, autoAuthorize: options.has("--auto-authorize"), http: environment.http(home.allowHTTP),
                                   terminal: environment.terminal)
        return try report(terminal, home: home)
    }

    /// `wallet resume <credential-id>`: asks the issuer again for a deferred credential.
    static func resume(_ arguments: [String], environment: Environment = Environment()) async throws(CLIError) -> String {
        try await rerun(arguments, what: "resume", environment: environment) { client, id in client.resumeDeferred(id) }
    }

    /// `wallet reissue <credential-id>`: renews a credential with its refresh token.
    static func reissue(_ arguments: [String], environment: Environment = Environment()) async throws(CLIError) -> String {
        try await rerun(arguments, what: "reissue", environment: environment) { client, id in client.reissue(id) }
    }

    private static func rerun(_ arguments: [String], what: String, environment: Environment,
                              start: (Openid4VciClient, CredentialId) -> IssuanceSession) async throws(CLIError) -> String {
        let options = try CommandLineOptions(arguments, valued: sessionValued, flags: WalletHome.flagOptions)
        guard options.positional.count == 1, let id = options.positional.first else { throw .usage("\(what) takes one credential id") }
        let home = try WalletHome(options, environment: environment.variables)
        let anchors = try readAnchors(options.all("--issuer-anchor"))
        let (client, _) = try await openClient(home, environment: environment, encryption: try encryptionPolicy(options["--encryption"]),
                                               anchors: anchors, keyAttestations: try keyAttestationProvider(options))
        let terminal = await drive(start(client, id), autoAuthorize: false, http: environment.http(home.allowHTTP),
                                   terminal: environment.terminal)
        return try report(terminal, home: home)
    }

    /// The certificates of every `--issuer-anchor` PEM file.
    static func readAnchors(_ paths: [String]) throws(CLIError) -> [X509Certificate] {
        var anchors: [X509Certificate] = []
        for path in paths { anchors += try SDJWTCommand.readAnchors(path) }
        return anchors
    }

    /// The SDK's software key-attestation provider signing as the wallet provider whose key
    /// and certificate chain `--key-attestation-key` and `--key-attestation-chain` name
    /// (both or neither; nil when neither is given). The attestations claim
    /// `key_storage` `iso_18045_basic`, what the CLI's software secure area gives, and no
    /// `user_authentication` (its keys are used without one).
    static func keyAttestationProvider(_ options: CommandLineOptions) throws(CLIError) -> (any KeyAttestationProvider)? {
        switch (options["--key-attestation-key"], options["--key-attestation-chain"]) {
        case (nil, nil):
            return nil
        case (.some, nil):
            throw .usage("--key-attestation-key needs --key-attestation-chain (the certificates of the wallet provider's key)")
        case (nil, .some):
            throw .usage("--key-attestation-chain needs --key-attestation-key (the wallet provider's signing key)")
        case (let keyArgument?, let chainArgument?):
            let signer = try readSigningKey(keyArgument)
            let chain: [X509Certificate]
            guard let chainText = try InputSource.read(chainArgument).text else { throw .input("--key-attestation-chain is not text") }
            do { chain = try X509Certificate.parsePEM(chainText) } catch {
                throw .input("--key-attestation-chain holds no PEM certificate: \(error)")
            }
            // The verifier checks the signature with the x5c leaf: a mismatched pair would
            // only fail at the issuer, after holder keys were made.
            guard let leaf = chain.first, (try? leaf.publicKey) == signer.publicKey else {
                throw .input("the first certificate of --key-attestation-chain does not certify --key-attestation-key")
            }
            return SoftwareKeyAttestationProvider(issuer: KeyAttestationIssuer(
                signer: signer, certificateChain: chain, keyStorage: [.iso18045Basic], userAuthentication: []))
        }
    }

    /// A PEM private key (EC on P-256/384/521, or Ed25519) from a file, as a signer. The
    /// message never shows the key.
    static func readSigningKey(_ argument: String) throws(CLIError) -> SoftwareSigner {
        guard let text = try InputSource.read(argument).text, text.contains("-----BEGIN") else {
            throw .input("--key-attestation-key is not a readable PEM file")
        }
        if let key = try? ECPrivateKey(pem: text) { return SoftwareSigner(key) }
        if let key = try? Ed25519PrivateKey(pem: text) { return SoftwareSigner(key) }
        throw .input("--key-attestation-key holds no unencrypted PEM EC or Ed25519 private key")
    }

    static func encryptionPolicy(_ value: String?) throws(CLIError) -> CredentialEncryption {
        switch value {
        case nil, "when-required": .whenRequired
        case "preferred": .preferred
        case "required": .required
        case let other?: throw .usage("--encryption takes when-required, preferred or required, not \(other)")
        }
    }

    /// Whether `input` is an offer (JSON, or a URI carrying one) rather than an issuer URL.
    static func isOffer(_ input: String) -> Bool {
        let text = input.trimmingWhitespace()
        return text.hasPrefix("{") || text.contains("credential_offer=") || text.contains("credential_offer_uri=")
            || text.lowercased().hasPrefix("openid-credential-offer:")
    }

    static func openClient(_ home: WalletHome, environment: Environment, encryption: CredentialEncryption,
                           anchors: [X509Certificate], keyAttestations: (any KeyAttestationProvider)? = nil)
        async throws(CLIError) -> (Openid4VciClient, IssuanceStorage) {
        let (area, store) = try await home.open()
        let storage = IssuanceStorage(secureArea: area, store: store)
        let client = Openid4VciClient(
            http: environment.http(home.allowHTTP), credentialEncryption: encryption,
            config: IssuanceConfig(issuerTrustAnchors: anchors, keyAttestationProvider: keyAttestations, allowHTTP: home.allowHTTP,
                                   requestTimeout: home.requestTimeout),
            storage: storage)
        return (client, storage)
    }

    /// Follows `session`, answering its pauses from the terminal (or, for the
    /// authorization step with `autoAuthorize`, by fetching the URL and using the
    /// redirect's `Location`), until it ends.
    static func drive(_ session: IssuanceSession, autoAuthorize: Bool, http: any HTTPClient,
                      terminal: any IssuanceTerminal) async -> IssuanceState {
        for await state in session.states {
            switch state {
            case .txCodeRequired(let spec):
                var prompt = "transaction code"
                if let description = spec?.description { prompt += " (\(description))" }
                if let length = spec?.length { prompt += ", \(length) \(spec?.inputMode == .text ? "characters" : "digits")" }
                guard let code = terminal.ask(prompt + ": "), !code.isEmpty else { session.cancel(); continue }
                session.submitTxCode(code)
            case .authorizationRequired(let url):
                if autoAuthorize {
                    progress("authorizing at \(url)")
                    guard let location = await follow(url, http: http) else {
                        progress("the authorization endpoint did not redirect")
                        session.cancel()
                        continue
                    }
                    session.completeAuthorization(location)
                } else {
                    progress("open this URL in a browser, then paste the redirect it ends at:\n\(url)")
                    guard let redirect = terminal.ask("redirect: "), !redirect.isEmpty else { session.cancel(); continue }
                    session.completeAuthorization(redirect)
                }
            case .processing:
                progress("requesting the credential")
            case .preparing, .deferred, .completed, .failed:
                break
            }
            if state.isTerminal { return state }
        }
        return session.currentState
    }

    /// GETs `url` without following redirects; returns the `Location` of a 3xx.
    static func follow(_ url: String, http: any HTTPClient) async -> String? {
        guard let target = URL(string: url),
              let response = try? await http.send(HTTPRequest(method: .get, url: target)),
              (300..<400).contains(response.status), let location = response.headers["Location"] else { return nil }
        return location
    }

    /// Prints how the session ended: a line per credential, or one JSON document.
    static func report(_ state: IssuanceState, home: WalletHome) throws(CLIError) -> String {
        switch state {
        case .completed(let result):
            if home.json {
                var object: JSONObject = ["state": "completed", "issued": .array(result.issued.map(JSONValue.string))]
                if !result.deferred.isEmpty { object["deferred"] = .array(result.deferred.map(JSONValue.string)) }
                return JSONValue.object(object).serialized
            }
            return (result.issued.map { "issued \($0)" } + result.deferred.map { "deferred \($0)" }).joined(separator: "\n")
        case .deferred(let id, let retryAfter):
            let retry = retryAfter.map { ISO8601DateFormatter().string(from: $0) }
            if home.json {
                return JSONValue.object(["state": "deferred", "credentialId": .string(id),
                                         "retryAfter": retry.map(JSONValue.string) ?? .null]).serialized
            }
            return "deferred \(id)" + (retry.map { " (retry after \($0); run wallet resume \(id))" } ?? " (run wallet resume \(id))")
        case .failed(let error):
            let (name, detail) = describe(error)
            if home.json {
                print(JSONValue.object(["state": "failed", "error": .string(name), "detail": .string(detail)]).serialized)
            }
            throw .failed("issuance failed: \(name): \(detail)")
        case .preparing, .authorizationRequired, .txCodeRequired, .processing:
            throw .failed("issuance stopped in state \(state)")
        }
    }

    /// The error's case name and a one-line description of its reason.
    static func describe(_ error: IssuanceError) -> (String, String) {
        switch error {
        case .invalidOffer(let reason): ("invalidOffer", "\(reason)")
        case .authorizationFailed(let code, let reason): ("authorizationFailed", (code.map { "\($0): " } ?? "") + "\(reason)")
        case .credentialRequestFailed(let code, let reason): ("credentialRequestFailed", (code.map { "\($0): " } ?? "") + "\(reason)")
        case .unexpected(let reason): ("unexpected", "\(reason)")
        }
    }
}
