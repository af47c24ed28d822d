import CBOR
import Foundation
import WalletCrypto
import WalletRuntime

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
        let options = CBORDiagnosticOptions(expandEmbeddedCBOR: expand, pretty: !compact)

        if let text = source.text {
            if text.hasPrefix("-----BEGIN") { return try pem(text) }
            if let compactForm = CompactSerialization(text) { return compactForm.render(diagnostic: options) }
        }
        let bytes = source.binary
        if bytes.first == 0x30, let certificate = try? X509Certificate(derEncoded: bytes) {
            return CertificateSummary.lines(for: certificate).joined(separator: "\n")
        }
        let item: CBORItem
        do {
            item = try CBOR.decodeItem(bytes)
        } catch {
            throw .rejected("\(source.origin) is not CBOR, a JWT/JWE, PEM or an X.509 certificate", error)
        }
        var output = item.diagnostic(options: options)
        for (path, lines) in COSESummary.find(in: item, diagnostic: options) {
            output += "\n\n" + (path.isEmpty ? "" : "at \(path): ") + lines.joined(separator: "\n")
        }
        return output
    }

    private static func pem(_ text: String) throws(CLIError) -> String {
        let certificates: [X509Certificate]
        do {
            certificates = try X509Certificate.parsePEM(text)
        } catch {
            throw .input("unreadable PEM: \(error)")
        }
        guard !certificates.isEmpty else { throw .input("no CERTIFICATE block in the PEM input") }
        return certificates.enumerated().map { index, certificate in
            (certificates.count > 1 ? "[\(index)] " : "") + CertificateSummary.lines(for: certificate).joined(separator: "\n")
        }.joined(separator: "\n\n")
    }
}
