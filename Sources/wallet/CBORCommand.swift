import CBOR
import WalletRuntime
import WalletEncoding

/// `wallet cbor diag|canonical <input>`.
enum CBORCommand {
    static func run(_ arguments: [String]) throws(CLIError) -> String {
        guard arguments.count == 2 else { throw .usage("cbor takes a subcommand and one input") }
        let bytes = try InputSource.read(arguments[1]).binary
        let item: CBORItem
        do {
            item = try CBOR.decodeItem(bytes)
        } catch {
            throw .rejected("not CBOR", error)
        }
        switch arguments[0] {
        case "diag":
            do {
                return try item.renderDiagnostic(options: CBORDiagnosticOptions(expandEmbeddedCBOR: true, pretty: true)).text
            } catch {
                throw .rejected("cannot print the CBOR", error)
            }
        case "canonical":
            return Hex.encode(item.value.encoded(options: .deterministic))
        default:
            throw .usage("unknown cbor subcommand '\(arguments[0])'")
        }
    }
}
