import WalletRuntime
import WalletEncoding

/// The argument shape of the `wallet interop` subcommands: `--name value`
/// options, bare `--flag`s, and positional arguments; values in hex.
struct InteropOptions {
    /// A command line that does not fit the subcommand (exit status 2).
    struct UsageError: Error, CustomStringConvertible {
        let description: String
    }

    var values: [String: String] = [:]
    var flags: Set<String> = []
    var positional: [String] = []

    /// Parses `args`; names in `flags` take no value.
    init(_ args: [String], flags flagNames: Set<String> = []) throws {
        var index = 0
        while index < args.count {
            let arg = args[index]
            if flagNames.contains(arg) {
                flags.insert(arg)
            } else if arg.hasPrefix("--") {
                guard index + 1 < args.count else { throw UsageError(description: "\(arg) needs a value") }
                values[arg] = args[index + 1]
                index += 1
            } else {
                positional.append(arg)
            }
            index += 1
        }
    }

    /// The required option `name`, decoded from hex (an empty value is zero bytes).
    func hexValue(_ name: String) throws -> [UInt8] {
        guard let value = values[name] else { throw UsageError(description: "missing \(name)") }
        return try Self.bytes(fromHex: value)
    }

    /// The optional option `name`, decoded from hex.
    func optionalHex(_ name: String) throws -> [UInt8]? {
        try values[name].map(Self.bytes(fromHex:))
    }

    /// The one positional argument, decoded from hex.
    func positionalHex() throws -> [UInt8] {
        guard positional.count == 1, let value = positional.first else {
            throw UsageError(description: "expected one hex argument")
        }
        return try Self.bytes(fromHex: value)
    }

    /// The required option `name` as text.
    func string(_ name: String) throws -> String {
        guard let value = values[name] else { throw UsageError(description: "missing \(name)") }
        return value
    }

    private static func bytes(fromHex text: String) throws -> [UInt8] {
        if text.isEmpty { return [] }
        guard let bytes = Hex.decode(text) else { throw UsageError(description: "invalid hex") }
        return bytes
    }
}
