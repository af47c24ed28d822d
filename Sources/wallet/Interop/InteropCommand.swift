/// `wallet interop <area> ...`: the machine-readable entry points that the scripts
/// in `Tests/Interop` drive to cross-check the SDK with independent
/// implementations. Each area prints its own output and returns the exit status.
enum InteropCommand {
    static func run(_ arguments: [String]) async -> Int32 {
        let rest = Array(arguments.dropFirst())
        switch arguments.first {
        case "cose": return await COSEInteropCommand.run(rest)
        case "jose": return await JOSEInteropCommand.run(rest)
        case "storage": return await StorageInteropCommand.run(rest)
        case "sdjwt": return await SDJWTInteropCommand.run(rest)
        case "mdoc": return await MdocInteropCommand.run(rest)
        case "vp": return await PresentationInteropCommand.run(rest)
        default:
            print("usage: wallet interop cose|jose|mdoc|sdjwt|storage|vp <subcommand> ...")
            return 2
        }
    }
}
