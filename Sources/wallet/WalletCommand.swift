import Foundation

/// `wallet`: the SDK's command-line tool.
@main
struct WalletCommand {
    static let usage = """
    usage: wallet <command> [arguments]

    commands:
    \(DemoCommand.usage)
      inspect <input>            show what <input> is: CBOR as diagnostic notation (tag-24
                                 items expanded), a JWT/JWS/JWE/SD-JWT header and payload,
                                 an X.509 certificate summary, a COSE_Sign1 with its x5chain
          --compact              one-line diagnostic notation
          --no-expand            leave tag-24 embedded CBOR as bytes
      cbor diag <input>          CBOR diagnostic notation (tag-24 items expanded)
      cbor canonical <input>     re-encode CBOR deterministically (RFC 8949 §4.2.1), as hex
      sdjwt verify <input>       verify an SD-JWT (VC) presentation, print the disclosed claims
          --issuer-key <jwk|pem> the issuer's key (JWK, PEM public key or certificate), or
          --anchor <pem>         trust anchors for the issuer's x5c chain
          --aud A --nonce N      require a KB-JWT for this audience and nonce
          --at <RFC 3339>        check at this time instead of now
          --profile sd-jwt-vc|sd-jwt
                                 the checks to apply: SD-JWT VC (the default: typ
                                 dc+sd-jwt, vct, iss bound to an x5c leaf) or plain SD-JWT
          --legacy-type          accept typ vc+sd-jwt
      mdoc verify --response <hex|path> --transcript <hex|path> --anchor <pem>...
          [--reader-key <hex d>] [--at <RFC 3339>]
                                 verify an ISO 18013-5 DeviceResponse as a reader (issuer
                                 chain, digests, validity, device signature or MAC with the
                                 reader's ephemeral key) and print the elements as JSON
      issue <offer | issuer URL> run an OpenID4VCI issuance into the wallet store
          [--config ID] [--tx-code CODE] [--batch N] [--one-time]
          [--encryption when-required|preferred|required] [--issuer-anchor PEM]...
          [--auto-authorize]     (authorize by following the redirect without a browser)
          [--key-attestation-key PEM --key-attestation-chain PEM]
                                 attest the new holder keys (OpenID4VCI App. D) as the
                                 wallet provider with this signing key and its
                                 certificate chain (leaf first), for issuers that
                                 require key_attestations
      resume <credential-id>     ask the issuer again for a deferred credential
      reissue <credential-id>    renew a credential with its refresh token
          resume and reissue take --encryption, --issuer-anchor and the key-attestation
          options too
      credentials [list]         the stored credentials
      credentials show <id>      one credential with its claims
      credentials delete <id>    delete it (and tell the issuer)
          these take --store DIR (or WALLET_STORE), --allow-http (loopback only), --json,
          --timeout SECONDS (requests to issuers and verifiers; 30 by default)
      present <openid4vp URI | request URL> [--auto | --decline | --select QUERY=ID[,ID]...]
          [--reader-anchor PEM]... [--mdoc-transaction-data digest[:NAMESPACE]]
          [--transaction-data-types TYPE[,TYPE]...] [--store DIR] [--allow-http] [--json]
                                 answer an OpenID4VP request from the store: shows the
                                 verifier and what each query would disclose, then asks
                                 (or --auto / --decline / --select decide); mdoc-bound
                                 transaction data is signed as its SHA-256 in NAMESPACE
                                 (org.openid4vp.transaction_data) with that option;
                                 transaction data of a type not listed is refused
      present --dc-api <request JSON file> --origin <origin> [...]
                                 the same for a Digital Credentials API request; prints
                                 the response data object
    \(ServeIssuerCommand.usage)
    \(VerifierServeCommand.usage)
      interop <area> ...         entry points for the scripts in Tests/Interop
      help                       this text

    <input> is a file path, - for standard input, or the data itself as hex, base64url,
    a compact JWS/JWE, or PEM.
    exit codes: 0 success, 1 bad input or a failed check, 2 wrong usage; a refusal by the
    SDK names its typed error in brackets, e.g. [MdocError.untrustedIssuer.leafIsCA]
    """

    static func main() async {
        let arguments = Array(CommandLine.arguments.dropFirst())
        if arguments.first == "interop" {
            exit(await InteropCommand.run(Array(arguments.dropFirst())))
        }
        do {
            let output = try await run(arguments)
            if !output.isEmpty { print(output) }
            exit(0)
        } catch {
            FileHandle.standardError.write(Data("wallet: \(error.message)\n".utf8))
            if case .usage = error { FileHandle.standardError.write(Data("\n\(usage)\n".utf8)) }
            exit(error.exitCode)
        }
    }

    /// Runs one command line and returns what to print.
    static func run(_ arguments: [String]) async throws(CLIError) -> String {
        guard let command = arguments.first else { throw .usage("no command given") }
        let rest = Array(arguments.dropFirst())
        switch command {
        case "inspect": return try InspectCommand.run(rest)
        case "cbor": return try CBORCommand.run(rest)
        case "sdjwt": return try SDJWTCommand.run(rest)
        case "mdoc": return try await MdocCommand.run(rest)
        case "issue": return try await IssueCommand.issue(rest)
        case "resume": return try await IssueCommand.resume(rest)
        case "reissue": return try await IssueCommand.reissue(rest)
        case "credentials": return try await CredentialsCommand.run(rest)
        case "present": return try await PresentCommand.run(rest)
        case "demo": return try await DemoCommand.run(rest)
        case "serve": return try await ServeCommand.run(rest)
        case "help", "-h", "--help": return usage
        default: throw .usage("unknown command '\(command)'")
        }
    }
}
