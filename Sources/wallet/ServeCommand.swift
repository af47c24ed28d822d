/// `wallet serve <party>`: a reference party on 127.0.0.1 until SIGINT/SIGTERM.
enum ServeCommand {
    static func run(_ arguments: [String]) async throws(CLIError) -> String {
        guard let party = arguments.first else { throw .usage("serve needs a party: issuer") }
        switch party {
        case "issuer": return try await ServeIssuerCommand.run(Array(arguments.dropFirst()))
        default: throw .usage("unknown party '\(party)' (serve issuer)")
        }
    }
}
