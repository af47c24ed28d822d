import CBOR
import COSE
import WalletCrypto
import WalletEncoding

/// What `wallet inspect` adds under the diagnostic notation of a COSE_Sign1
/// (tagged 18, or the untagged four-element form of an mdoc `issuerAuth` or
/// `readerAuth`): its algorithm, key id, payload size and x5chain certificates.
/// Nothing is verified here.
///
/// Every step is charged to the inspection's budget: each node looked at, the headers
/// decoded, the payload rendered, the certificates parsed, the lines made. A structure
/// that only looks like a COSE_Sign1 is refused from its shape and headers, without a
/// copy of what it holds; one that is a COSE_Sign1 is summarised and not searched further.
enum COSESummary {
    /// How deep into maps and arrays COSE_Sign1 structures are looked for.
    static let maxDepth = 16

    /// Every COSE_Sign1 in `item` (itself or nested, e.g. a DeviceRequest's
    /// `readerAuth`), with a path such as `docRequests[0].readerAuth`.
    static func find(in item: CBORItem, diagnostic: CBORDiagnosticOptions,
                     budget: inout InspectionBudget) throws(InspectionError) -> [(path: String, lines: [String])] {
        var found: [(path: String, lines: [String])] = []
        var trail: [String] = []
        try visit(item, diagnostic: diagnostic, budget: &budget, trail: &trail, depth: 0, found: &found)
        return found
    }

    /// Looks at one item; `trail` holds the path components leading to it (the path is
    /// only made when a summary is found, so deep or wide searches do not build paths).
    private static func visit(_ item: CBORItem, diagnostic: CBORDiagnosticOptions, budget: inout InspectionBudget,
                              trail: inout [String], depth: Int,
                              found: inout [(path: String, lines: [String])]) throws(InspectionError) {
        try budget.spend(read: 1)
        if let lines = try lines(for: item, diagnostic: diagnostic, budget: &budget) {
            let path = trail.joined()
            try budget.output(path)
            found.append((path, lines))
            return
        }
        guard depth < maxDepth, item.majorType == 4 || item.majorType == 5 else { return }
        let children = item.children
        try budget.spend(allocated: children.count * MemoryLayout<CBORItem>.stride)
        let isMap = item.majorType == 5
        let step = isMap ? 2 : 1
        for position in stride(from: isMap ? 1 : 0, to: children.count, by: step) {
            let child = children[position]
            // Only a tag-18 item, an array or a map can be or hold a COSE_Sign1.
            guard child.majorType == 4 || child.majorType == 5 || child.tag == COSESign1.tag else { continue }
            let index = position / step
            let component: String
            if isMap {
                let name = Self.name(of: children[position - 1].value, index: index)
                component = trail.isEmpty ? name : "." + name
            } else {
                component = "[\(index)]"
            }
            try budget.spend(allocated: component.utf8.count)
            trail.append(component)
            try visit(child, diagnostic: diagnostic, budget: &budget, trail: &trail, depth: depth + 1, found: &found)
            trail.removeLast()
        }
    }

    /// A short name for a map key in a path: the key when it is a short text or an
    /// integer, else its position (a key can be as large as the input, and the path is
    /// repeated for every summary below it).
    static func name(of key: CBOR, index: Int) -> String {
        if let text = key.stringValue, text.utf8.count <= 64 { return text }
        if let number = key.intValue { return String(number) }
        return "{key \(index)}"
    }

    /// The summary of `item` when it is a COSE_Sign1 (its shape, then its headers, checked
    /// as `COSESign1` parsing checks them), else nil.
    static func lines(for item: CBORItem, diagnostic: CBORDiagnosticOptions,
                      budget: inout InspectionBudget) throws(InspectionError) -> [String]? {
        var content = item.value
        let isTagged = item.tag != nil
        if isTagged {
            guard item.tag == COSESign1.tag, case .tagged(_, let inner) = content else { return nil }
            content = inner
        }
        // RFC 9052 §4.2: [protected: bstr, unprotected: map, payload: bstr / nil, signature: bstr].
        guard case .array(let elements) = content, elements.count == 4,
              case .byteString(let protectedBytes) = elements[0],
              case .map(let unprotected) = elements[1],
              case .byteString(let signature) = elements[3] else { return nil }
        let payload: [UInt8]?
        switch elements[2] {
        case .byteString(let bytes): payload = bytes
        case .null: payload = nil
        default: return nil
        }
        guard let headers = try Self.headers(protectedBytes, unprotected: elements[1], entries: unprotected.count,
                                             budget: &budget) else { return nil }

        var lines = ["COSE_Sign1\(isTagged ? "" : " (untagged)")"]
        if let algorithm = try? headers.algorithm() { lines.append("  algorithm: \(algorithm)") }
        if let keyID = headers.keyID {
            try budget.spend(read: keyID.count, allocated: 2 * keyID.count)
            lines.append("  kid: \(Hex.encode(keyID))")
        }
        if let payload {
            // An mdoc issuerAuth carries the MSO as tag-24 CBOR inside the payload bstr.
            if let text = try budget.render(encoded: payload, options: diagnostic) {
                let nested = try budget.indenting(text, by: "    ")
                lines.append("  payload: \(payload.count) bytes of CBOR:\n    \(nested)")
            } else {
                lines.append("  payload: \(payload.count) bytes")
            }
        } else {
            lines.append("  payload: detached")
        }
        lines.append("  signature: \(signature.count) bytes")
        let chainDER = headers.x5chainDER
        if !chainDER.isEmpty {
            var chain: [X509Certificate] = []
            for der in chainDER {
                try budget.spend(read: der.count, allocated: InspectionBudget.certificateAllocationPerByte * der.count)
                guard let certificate = try? X509Certificate(derEncoded: der) else { break }
                chain.append(certificate)
            }
            if chain.count == chainDER.count {
                lines.append("  x5chain: \(chain.count) certificate(s)")
                for (index, certificate) in chain.enumerated() {
                    let summary = try CertificateSummary.text(for: certificate, indent: "      ", budget: &budget)
                    lines.append("  [\(index)] " + summary.dropFirst(6))
                }
            }
        }
        for line in lines { try budget.output(line) }
        return lines
    }

    /// The headers as `COSESign1` parsing reads them, or nil when they break its rules.
    /// Decoding the protected bucket is measured by decoding it once with a counter (the
    /// headers decode it again: twice the measure is charged); each unprotected entry is
    /// read into a header map.
    private static func headers(_ protectedBytes: [UInt8], unprotected: CBOR, entries: Int,
                                budget: inout InspectionBudget) throws(InspectionError) -> COSEHeaders? {
        try budget.spend(read: entries, allocated: entries * 2 * MemoryLayout<CBORMap.Entry>.stride)
        if !protectedBytes.isEmpty {
            var cost = CBORWork()
            let decoded = try? CBOR.decodeItem(protectedBytes, work: &cost)
            try budget.spend(cost)
            guard decoded != nil else { return nil }
            // The second decoding, by COSEHeaders, costs no more than the first.
            try budget.spend(cost)
        }
        return try? COSEHeaders(protectedBytes: protectedBytes, unprotected: unprotected)
    }
}
