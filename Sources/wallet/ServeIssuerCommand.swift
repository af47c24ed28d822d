import Foundation
import Mdoc
import ReferenceParties
import WalletCrypto
import WalletEncoding
import WalletRuntime
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// `wallet serve issuer`: the reference OpenID4VCI issuer on 127.0.0.1, until SIGINT or
/// SIGTERM. It prints its identifier, an offer per credential configuration (and one
/// authorization-code offer), the offer factory URL and the trust anchors; each request
/// it answers is logged to standard error.
enum ServeIssuerCommand {
    static let usage = """
      serve issuer [--port N] [options]
                                 the reference OpenID4VCI issuer on 127.0.0.1 (port 0:
                                 any free one) until SIGINT/SIGTERM; prints its offers
                                 and trust anchors (--json: one JSON document)
          --dpop | --dpop-nonce  require DPoP (with server nonces)
          --par required|optional|off
          --encryption none|optional|required   credential request/response encryption
          --defer N [--interval S] [--legacy-deferred]
                                 defer issuance, N pending polls before the credentials
          --tx-code CODE         pre-authorized offers require this transaction code
          --batch N              batch_size (0: no batch issuance)
          --issuer-path /PATH    an issuer identifier with a path
          --separate-as          the authorization server at /auth
          --signed-metadata      serve signed metadata too
          --jwt-vc-issuer        SD-JWT VCs name their key by kid (jwt-vc-issuer metadata)
          --wallet-provider-anchor PEM   require key attestations chaining to this root
          --mdoc-key-authorization NAMESPACE
                                 issued mdocs' MSOs let the device key sign the elements
                                 of NAMESPACE (repeatable; e.g. org.openid4vp.transaction_data
                                 for mdoc-bound transaction data)
          --qr                   draw the first offer as a QR code
          --quiet                do not log requests
    """

    static let valuedOptions: Set<String> = [
        "--port", "--par", "--encryption", "--defer", "--interval", "--tx-code", "--batch", "--issuer-path",
        "--wallet-provider-anchor", "--mdoc-key-authorization",
    ]
    static let flagOptions: Set<String> = [
        "--dpop", "--dpop-nonce", "--legacy-deferred", "--signed-metadata", "--separate-as", "--jwt-vc-issuer", "--json", "--qr",
        "--quiet",
    ]

    /// What the command line asks for.
    struct Settings {
        var port: UInt16 = 0
        var configuration = ReferenceIssuerConfiguration(offerFactory: true)
        var txCode: String?
        var json = false
        var qr = false
        var quiet = false
    }

    static func settings(_ arguments: [String]) throws(CLIError) -> Settings {
        let options = try CommandLineOptions(arguments, valued: valuedOptions, flags: flagOptions)
        guard options.positional.isEmpty else { throw .usage("unexpected argument \(options.positional[0])") }
        var settings = Settings()
        var configuration = settings.configuration
        if let port = options["--port"] {
            guard let value = UInt16(port) else { throw .usage("--port needs a port number") }
            settings.port = value
        }
        if options.has("--dpop-nonce") {
            configuration.dpop = .requiredWithNonce
        } else if options.has("--dpop") {
            configuration.dpop = DPoPPolicy(mode: .required)
        }
        switch options["--par"] {
        case nil, "optional": configuration.par = .optional
        case "required": configuration.par = .required
        case "off": configuration.par = .disabled
        default: throw .usage("--par is required, optional or off")
        }
        switch options["--encryption"] {
        case nil, "none": break
        case "optional":
            configuration.requestEncryption = EncryptionSupport()
            configuration.responseEncryption = EncryptionSupport()
        case "required":
            configuration.requestEncryption = EncryptionSupport(required: true)
            configuration.responseEncryption = EncryptionSupport(required: true)
        default: throw .usage("--encryption is none, optional or required")
        }
        if let pendingPolls = options["--defer"] {
            guard let polls = Int(pendingPolls), polls >= 0 else { throw .usage("--defer needs a number of pending polls") }
            var interval = 5
            if let text = options["--interval"] {
                guard let value = Int(text), value > 0 else { throw .usage("--interval needs a positive number of seconds") }
                interval = value
            }
            configuration.deferral = DeferredIssuance(interval: interval, pendingPolls: polls,
                                                      style: options.has("--legacy-deferred") ? .legacyIssuancePending : .accepted)
        } else if options["--interval"] != nil || options.has("--legacy-deferred") {
            throw .usage("--interval and --legacy-deferred go with --defer")
        }
        if let batch = options["--batch"] {
            guard let size = Int(batch), size == 0 || size >= 2 else { throw .usage("--batch is 0 or at least 2") }
            configuration.batchSize = size == 0 ? nil : size
        }
        if let path = options["--issuer-path"] { configuration.issuerPath = path }
        if options.has("--separate-as") { configuration.authorizationServerPath = "/auth" }
        if options.has("--signed-metadata") { configuration.signedMetadata = .both }
        if options.has("--jwt-vc-issuer") { configuration.sdJwtKeyResolution = .jwtVCIssuerMetadata }
        let anchors = options.all("--wallet-provider-anchor")
        if !anchors.isEmpty {
            for argument in anchors { configuration.keyAttestationTrustAnchors += try SDJWTCommand.readAnchors(argument) }
            configuration.credentialConfigurations = [
                .pid(keyAttestation: .init()), .mDL(keyAttestation: .init()),
            ]
        }
        let authorized = options.all("--mdoc-key-authorization")
        if !authorized.isEmpty {
            guard authorized.allSatisfy({ !$0.isEmpty }) else { throw .usage("--mdoc-key-authorization needs a namespace") }
            for index in configuration.credentialConfigurations.indices {
                guard case .msoMdoc = configuration.credentialConfigurations[index].format else { continue }
                configuration.credentialConfigurations[index].keyAuthorizations = KeyAuthorizations(nameSpaces: authorized)
            }
        }
        if let code = options["--tx-code"] {
            guard !code.isEmpty else { throw .usage("--tx-code needs a code") }
            settings.txCode = code
        }
        settings.json = options.has("--json")
        settings.qr = options.has("--qr")
        settings.quiet = options.has("--quiet")
        settings.configuration = configuration
        return settings
    }

    /// A running issuer, and what to tell the person who started it.
    struct Running {
        let issuer: ReferenceIssuer
        let server: LoopbackHTTPServer
        let announcement: String
    }

    /// Starts the issuer and its server and makes the offers to announce.
    static func start(_ settings: Settings) async throws(CLIError) -> Running {
        let issuer: ReferenceIssuer
        do {
            issuer = try ReferenceIssuer(configuration: settings.configuration,
                                         logger: settings.quiet ? SilentLogger() : StandardErrorLogger())
        } catch {
            throw .usage("this combination of options makes no issuer: \(error)")
        }
        let server: LoopbackHTTPServer
        do {
            server = try LoopbackHTTPServer(handler: issuer, port: settings.port)
        } catch {
            throw .failed("cannot listen on 127.0.0.1 port \(settings.port)")
        }
        do {
            try await issuer.setOrigin(server.baseURL)
            var offers: [(String, IssuedCredentialOffer)] = []
            let txCode = settings.txCode.map { CredentialOfferRequest.TxCode(value: $0) }
            for configuration in settings.configuration.credentialConfigurations {
                offers.append(("pre-authorized_code",
                               try await issuer.createOffer(.preAuthorized([configuration.id], txCode: txCode))))
            }
            offers.append(("authorization_code", try await issuer.createOffer(
                .authorizationCode(settings.configuration.credentialConfigurations.map(\.id)))))
            let announcement = await announce(issuer, offers: offers, json: settings.json, qr: settings.qr)
            return Running(issuer: issuer, server: server, announcement: announcement)
        } catch {
            server.stop()
            throw .failed("cannot set up the issuer: \(error)")
        }
    }

    static func announce(_ issuer: ReferenceIssuer, offers: [(grant: String, offer: IssuedCredentialOffer)], json: Bool,
                         qr: Bool) async -> String {
        let credentialIssuer = await issuer.credentialIssuer
        let anchors = issuer.trustAnchors
        if json {
            let entries: [JSONValue] = offers.map { grant, offer in
                var entry: JSONObject = [
                    "grant": .string(grant),
                    "credential_configuration_ids": offer.offer["credential_configuration_ids"] ?? [],
                    "offer_uri": .string(offer.byReference),
                    "offer_by_value": .string(offer.byValue),
                ]
                if let code = offer.txCode { entry["tx_code"] = .string(code) }
                return .object(entry)
            }
            let document: JSONObject = [
                "credential_issuer": .string(credentialIssuer),
                "metadata": .string(await issuer.metadataURL),
                "offers": .array(entries),
                "offer_factory": .string(credentialIssuer + "/offers"),
                "trust_anchors": ["iaca": .string(anchors.iaca.pemEncoded), "issuer_root": .string(anchors.issuerRoot.pemEncoded)],
            ]
            return JSONWriter(escaping: .printable).string(.object(document))
        }
        var lines = ["Reference issuer at \(credentialIssuer)", "  metadata: \(await issuer.metadataURL)", ""]
        for (grant, offer) in offers {
            let ids = offer.offer["credential_configuration_ids"]?.stringArrayValue?.joined(separator: ", ") ?? ""
            let code = offer.txCode.map { ", tx_code \($0)" } ?? ""
            lines.append("Offer (\(grant == "authorization_code" ? "authorization code" : "pre-authorized"): \(ids)\(code)):")
            lines.append("  \(offer.byReference)")
        }
        if qr, let first = offers.first, let symbol = QRCode(first.offer.byReference) {
            lines.append("")
            lines.append(symbol.terminalString())
        }
        lines.append("")
        lines.append("More offers: POST \(credentialIssuer)/offers {\"credential_configuration_ids\": [...]}")
        lines.append("")
        lines.append("Trust anchors (mdoc IACA, then the SD-JWT VC issuer root):")
        lines.append(anchors.pem)
        return lines.joined(separator: "\n")
    }

    static func run(_ arguments: [String]) async throws(CLIError) -> String {
        let running = try await start(try settings(arguments))
        FileHandle.standardOutput.write(Data((running.announcement + "\n").utf8))
        await TerminationSignal.wait()
        running.server.stop()
        progress("stopped")
        return ""
    }
}

/// Waits for SIGINT or SIGTERM (their default actions are turned off meanwhile).
final class TerminationSignal: @unchecked Sendable {
    private let lock = NSLock()
    private var sources: [any DispatchSourceSignal] = []
    private var continuation: CheckedContinuation<Void, Never>?

    static func wait() async {
        let watcher = TerminationSignal()
        await withCheckedContinuation { continuation in watcher.arm(continuation) }
    }

    private func arm(_ continuation: CheckedContinuation<Void, Never>) {
        lock.lock()
        defer { lock.unlock() }
        self.continuation = continuation
        for number in [SIGINT, SIGTERM] {
            signal(number, SIG_IGN)
            let source = DispatchSource.makeSignalSource(signal: number, queue: .global())
            source.setEventHandler { [self] in fire() }
            source.resume()
            sources.append(source)
        }
    }

    private func fire() {
        lock.lock()
        let pending = continuation
        continuation = nil
        for source in sources { source.cancel() }
        sources = []
        lock.unlock()
        pending?.resume()
    }
}
