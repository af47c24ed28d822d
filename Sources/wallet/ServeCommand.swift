/// `wallet serve <party>`: a reference party on 127.0.0.1 until SIGINT/SIGTERM.
enum ServeCommand {
    static func run(_ arguments: [String]) async throws(CLIError) -> String {
        switch arguments.first {
        case "issuer": return try await ServeIssuerCommand.run(Array(arguments.dropFirst()))
        case "verifier": return try await VerifierServeCommand.run(Array(arguments.dropFirst()))
        case nil: throw .usage("serve needs a party: issuer or verifier")
        case let other?: throw .usage("unknown party '\(other)' (serve issuer|verifier)")
        }
    }
}
