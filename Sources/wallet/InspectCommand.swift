import CBOR
import Foundation
import WalletInspect

/// `wallet inspect <input>`: recognises what the input is and prints it readably.
enum InspectCommand {
    static func run(_ arguments: [String]) throws(CLIError) -> String {
        var compact = false
        var expand = true
        var inputs: [String] = []
        for argument in arguments {
            switch argument {
            case "--compact": compact = true
            case "--no-expand": expand = false
            case let flag where flag.hasPrefix("--") && !flag.hasPrefix("---"): throw .usage("unknown option \(flag)")
            default: inputs.append(argument)
            }
        }
        guard inputs.count == 1 else { throw .usage("inspect takes exactly one input") }
        let source = try InputSource.read(inputs[0])
        let bytes = source.binary
        // Work linear in the input: Inspection holds the whole inspection (decoding, rendering,
        // summaries) to `Inspection.workLimit(forInputSize:)`, beyond which it stops with a
        // typed error (issue 12).
        let options = CBORDiagnosticOptions(expandEmbeddedCBOR: expand, pretty: !compact, maxWork: .max)
        do {
            return try Inspection.render(text: source.text, bytes: bytes, options: options)
        } catch {
            switch error {
            case .notRecognized: throw .rejected("\(source.origin) is not CBOR, a JWT/JWE, PEM or an X.509 certificate", error)
            case .unreadablePEM: throw .rejected("unreadable PEM", error)
            case .workLimitExceeded: throw .rejected("\(source.origin) cannot be shown within its work limit", error)
            }
        }
    }
}
