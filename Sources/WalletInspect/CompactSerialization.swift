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
        if let first = text.firstIndex(of: "~"), let last = text.lastIndex(of: "~") {
            parts = text[..<first].split(separator: ".", omittingEmptySubsequences: false)
            guard parts.count == 3 else { return nil }
            // The last segment is the KB-JWT, or empty when there is none; empty segments
            // between are skipped without being listed.
            let tail = text[text.index(after: last)...]
            keyBinding = tail.isEmpty ? nil : tail
            disclosures = first == last ? [] : text[text.index(after: first)..<last].split(separator: "~")
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
        }
    }

    /// Whether this is JOSE: a JWS or JWE header must at least be base64url JSON.
    func isJOSE(budget: inout InspectionBudget) throws(InspectionError) -> Bool {
        if kind == .sdJWT { return true }
        return try Self.json(parts[0], budget: &budget) != nil
    }

    /// How many parts were split out (for the inspection's budget).
    var partCount: Int { parts.count + disclosures.count + 1 }

    /// The parts, one per line, every step charged to `budget`.
    func render(diagnostic: CBORDiagnosticOptions, budget: inout InspectionBudget) throws(InspectionError) -> String {
        var lines: [String] = []
        switch kind {
        case .jws:
            lines.append("JWS (compact)")
            lines += try jwsLines(parts, diagnostic: diagnostic, budget: &budget)
        case .jwe:
            lines.append("JWE (compact)")
            lines.append("header: \(try Self.json(parts[0], budget: &budget) ?? "(not JSON)")")
            let names = ["encrypted key", "initialization vector", "ciphertext", "authentication tag"]
            for (name, part) in zip(names, parts.dropFirst()) {
                lines.append("\(name): \(try Self.decode(part, budget: &budget)?.count ?? 0) bytes")
            }
        case .sdJWT:
            lines.append("SD-JWT with \(disclosures.count) disclosure(s)\(keyBinding == nil ? "" : " and a key-binding JWT")")
            lines.append("issuer-signed JWT:")
            lines += try jwsLines(parts, diagnostic: diagnostic, budget: &budget).map { "  " + $0 }
            for (index, disclosure) in disclosures.enumerated() {
                let json = try Self.json(disclosure, pretty: false, budget: &budget)
                lines.append("disclosure \(index + 1): \(json ?? "(not base64url JSON)")")
            }
            if let keyBinding {
                let kbParts = keyBinding.split(separator: ".", omittingEmptySubsequences: false)
                try budget.spend(allocated: kbParts.count * MemoryLayout<Substring>.stride)
                lines.append("key-binding JWT:")
                var kbLines = ["(malformed)"]
                if kbParts.count == 3 { kbLines = try jwsLines(kbParts, diagnostic: diagnostic, budget: &budget) }
                lines += kbLines.map { "  " + $0 }
            }
        }
        for line in lines { try budget.output(line) }
        let text = lines.joined(separator: "\n")
        try budget.output(text)
        return text
    }

    private func jwsLines(_ parts: [Substring], diagnostic: CBORDiagnosticOptions,
                          budget: inout InspectionBudget) throws(InspectionError) -> [String] {
        var lines = ["header: \(try Self.json(parts[0], budget: &budget) ?? "(not base64url JSON)")"]
        let payloadBytes = try Self.decode(parts[1], budget: &budget)
        if let payloadBytes, let payload = try Self.json(payloadBytes, budget: &budget) {
            lines.append("payload: \(payload)")
        } else if let payloadBytes, let text = try budget.render(encoded: payloadBytes, options: diagnostic) {
            lines.append("payload (CBOR): \(text)")
        } else {
            lines.append("payload: \(payloadBytes?.count ?? 0) bytes")
        }
        lines.append("signature: \(try Self.decode(parts[2], budget: &budget)?.count ?? 0) bytes")
        return lines
    }

    /// The bytes of a base64url part, the decoding charged.
    private static func decode(_ part: Substring, budget: inout InspectionBudget) throws(InspectionError) -> [UInt8]? {
        try budget.spend(read: part.utf8.count, allocated: part.utf8.count)
        return Base64URL.decode(part)
    }

    /// The base64url-encoded JSON in `part`, pretty-printed, every step charged to `budget`.
    private static func json(_ part: Substring, pretty: Bool = true,
                             budget: inout InspectionBudget) throws(InspectionError) -> String? {
        guard let bytes = try decode(part, budget: &budget) else { return nil }
        return try json(bytes, pretty: pretty, budget: &budget)
    }

    private static func json(_ bytes: [UInt8], pretty: Bool = true,
                             budget: inout InspectionBudget) throws(InspectionError) -> String? {
        // The parser copies its input, then builds the value tree.
        try budget.require((1 + InspectionBudget.jsonAllocationPerByte) * bytes.count)
        try budget.spend(read: bytes.count, allocated: (1 + InspectionBudget.jsonAllocationPerByte) * bytes.count)
        guard let value = try? JSONValue.parse(bytes), !value.isNull else { return nil }
        let text = writer(pretty: pretty).string(value)
        try budget.spend(read: bytes.count, allocated: text.utf8.count)
        return text
    }

    /// Pretty-printing with members in the order received (sorting would make printing
    /// superlinear) and terminal-safe escaping.
    private static func writer(pretty: Bool) -> JSONWriter {
        JSONWriter(sortingMembers: false, escaping: .printable, indent: pretty ? "  " : nil)
    }
}
