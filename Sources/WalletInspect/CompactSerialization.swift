import CBOR
import Foundation
import WalletEncoding

/// A JOSE compact serialization recognised by shape, for display only (nothing is
/// verified here): a JWS/JWT (3 parts), a JWE (5 parts), or an SD-JWT
/// (`<JWS>~<disclosure>~...~[<KB-JWT>]`).
struct CompactSerialization {
    enum Kind { case jws, jwe, sdJWT }

    let kind: Kind
    let parts: [Substring]
    let disclosures: [Substring]
    let keyBinding: Substring?

    init?(_ text: String) {
        let allowed = CharacterSet(charactersIn: "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_.~")
        guard text.unicodeScalars.allSatisfy({ allowed.contains($0) }), text.contains(".") else { return nil }
        if text.contains("~") {
            let segments = text.split(separator: "~", omittingEmptySubsequences: false)
            guard let issuerJWT = segments.first else { return nil }
            parts = issuerJWT.split(separator: ".", omittingEmptySubsequences: false)
            guard parts.count == 3 else { return nil }
            let rest = segments.dropFirst()
            let last = rest.last ?? ""
            keyBinding = last.isEmpty ? nil : last
            // The last segment is the KB-JWT, or empty when there is none.
            disclosures = Array(rest.dropLast().filter { !$0.isEmpty })
            kind = .sdJWT
        } else {
            parts = text.split(separator: ".", omittingEmptySubsequences: false)
            disclosures = []
            keyBinding = nil
            switch parts.count {
            case 3: kind = .jws
            case 5: kind = .jwe
            default: return nil
            }
            // The header must at least be base64url JSON, or this is not JOSE.
            guard Self.json(parts[0]) != nil else { return nil }
        }
    }

    func render(diagnostic: CBORDiagnosticOptions) -> String {
        var lines: [String] = []
        switch kind {
        case .jws:
            lines.append("JWS (compact)")
            lines += jwsLines(parts, diagnostic: diagnostic)
        case .jwe:
            lines.append("JWE (compact)")
            lines.append("header: \(Self.json(parts[0]) ?? "(not JSON)")")
            let names = ["encrypted key", "initialization vector", "ciphertext", "authentication tag"]
            for (name, part) in zip(names, parts.dropFirst()) {
                lines.append("\(name): \(Base64URL.decode(part)?.count ?? 0) bytes")
            }
        case .sdJWT:
            lines.append("SD-JWT with \(disclosures.count) disclosure(s)\(keyBinding == nil ? "" : " and a key-binding JWT")")
            lines.append("issuer-signed JWT:")
            lines += jwsLines(parts, diagnostic: diagnostic).map { "  " + $0 }
            for (index, disclosure) in disclosures.enumerated() {
                lines.append("disclosure \(index + 1): \(Self.json(disclosure, pretty: false) ?? "(not base64url JSON)")")
            }
            if let keyBinding {
                let kbParts = keyBinding.split(separator: ".", omittingEmptySubsequences: false)
                lines.append("key-binding JWT:")
                lines += (kbParts.count == 3 ? jwsLines(kbParts, diagnostic: diagnostic) : ["(malformed)"]).map { "  " + $0 }
            }
        }
        return lines.joined(separator: "\n")
    }

    private func jwsLines(_ parts: [Substring], diagnostic: CBORDiagnosticOptions) -> [String] {
        var lines = ["header: \(Self.json(parts[0]) ?? "(not base64url JSON)")"]
        if let payload = Self.json(parts[1]) {
            lines.append("payload: \(payload)")
        } else if let bytes = Base64URL.decode(parts[1]), let item = try? CBOR.decodeItem(bytes) {
            lines.append("payload (CBOR): \(item.diagnostic(options: diagnostic))")
        } else {
            lines.append("payload: \(Base64URL.decode(parts[1])?.count ?? 0) bytes")
        }
        lines.append("signature: \(Base64URL.decode(parts[2])?.count ?? 0) bytes")
        return lines
    }

    /// The base64url-encoded JSON in `part`, pretty-printed with sorted keys and
    /// terminal-safe escaping.
    static func json(_ part: Substring, pretty: Bool = true) -> String? {
        guard let bytes = Base64URL.decode(part), let value = try? JSONValue.parse(bytes), !value.isNull else { return nil }
        return JSONWriter(sortingMembers: true, escaping: .printable, indent: pretty ? "  " : nil).string(value)
    }
}
