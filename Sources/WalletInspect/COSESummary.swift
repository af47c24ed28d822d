import CBOR
import COSE
import WalletCrypto
import WalletEncoding

/// What `wallet inspect` adds under the diagnostic notation of a COSE_Sign1
/// (tagged 18, or the untagged four-element form of an mdoc `issuerAuth` or
/// `readerAuth`): its algorithm, key id, payload size and x5chain certificates.
/// Nothing is verified here.
enum COSESummary {
    /// Every COSE_Sign1 in `item` (itself or nested, e.g. a DeviceRequest's
    /// `readerAuth`), with a path such as `docRequests[0].readerAuth`.
    static func find(in item: CBORItem, diagnostic: CBORDiagnosticOptions, path: String = "",
                     depth: Int = 0) -> [(path: String, lines: [String])] {
        let own = lines(for: item, diagnostic: diagnostic)
        if !own.isEmpty { return [(path, own)] }
        guard depth < 16 else { return [] }
        var found: [(path: String, lines: [String])] = []
        if item.value.mapValue != nil {
            for (index, (key, value)) in item.mapEntries.enumerated() {
                let name = Self.name(of: key.value, index: index)
                found += find(in: value, diagnostic: diagnostic, path: path.isEmpty ? name : "\(path).\(name)", depth: depth + 1)
            }
        } else if item.value.arrayValue != nil {
            for (index, child) in item.children.enumerated() {
                found += find(in: child, diagnostic: diagnostic, path: "\(path)[\(index)]", depth: depth + 1)
            }
        }
        return found
    }

    /// A short name for a map key in a path: the key when it is a short text or an
    /// integer, else its position (a key can be as large as the input, and the path is
    /// repeated for every summary below it).
    static func name(of key: CBOR, index: Int) -> String {
        if let text = key.stringValue, text.utf8.count <= 64 { return text }
        if let number = key.intValue { return String(number) }
        return "{key \(index)}"
    }

    static func lines(for item: CBORItem, diagnostic: CBORDiagnosticOptions) -> [String] {
        guard item.tag == COSESign1.tag || (item.tag == nil && item.value.arrayValue?.count == 4),
              let message = try? COSESign1(item: item)
        else { return [] }
        var lines = ["COSE_Sign1\(message.isTagged ? "" : " (untagged)")"]
        if let algorithm = try? message.headers.algorithm() { lines.append("  algorithm: \(algorithm)") }
        if let keyID = message.headers.keyID { lines.append("  kid: \(Hex.encode(keyID))") }
        if let payload = message.payload {
            // An mdoc issuerAuth carries the MSO as tag-24 CBOR inside the payload bstr.
            if let decoded = try? CBOR.decodeItem(payload) {
                let text = decoded.diagnostic(options: diagnostic).split(separator: "\n").joined(separator: "\n    ")
                lines.append("  payload: \(payload.count) bytes of CBOR:\n    \(text)")
            } else {
                lines.append("  payload: \(payload.count) bytes")
            }
        } else {
            lines.append("  payload: detached")
        }
        lines.append("  signature: \(message.signature.count) bytes")
        if let chain = try? message.x5chain(), !chain.isEmpty {
            lines.append("  x5chain: \(chain.count) certificate(s)")
            for (index, certificate) in chain.enumerated() {
                lines.append("  [\(index)] " + CertificateSummary.lines(for: certificate, indent: "      ")
                    .joined(separator: "\n").dropFirst(6))
            }
        }
        return lines
    }
}
