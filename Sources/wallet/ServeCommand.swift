/// `wallet serve <party>`: runs a reference party on loopback until interrupted.
enum ServeCommand {
    static func run(_ arguments: [String]) async throws(CLIError) -> String {
        switch arguments.first {
        case "verifier": return try await VerifierServeCommand.run(Array(arguments.dropFirst()))
        case nil: throw .usage("serve what? (verifier)")
        case let other?: throw .usage("unknown party '\(other)' (serve verifier)")
        }
    }
}
