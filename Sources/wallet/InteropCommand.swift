/// `wallet interop <area> ...`: the machine-readable entry points the scripts in
/// `Tests/Interop` drive to cross-check the SDK with independent implementations.
enum InteropCommand {
    static func run(_ arguments: [String]) throws(CLIError) -> String {
        guard let area = arguments.first else { throw .usage("interop needs an area") }
        switch area {
        default: throw .usage("unknown interop area '\(area)'")
        }
    }
}
