import WalletEncoding
/// How to render diagnostic notation (RFC 8949 §8, RFC 8610 Appendix G).
public struct CBORDiagnosticOptions: Sendable, Hashable {
    /// Show the content of tag 24 (embedded CBOR) decoded, as `24(<< ... >>)`, recursively;
    /// content that is not exactly one well-formed item stays `24(h'...')`.
    public var expandEmbeddedCBOR: Bool
    /// Spread arrays and maps over several lines, one element per line.
    public var pretty: Bool
    /// The indentation per level when ``pretty`` is on.
    public var indent: String
    /// Limits for decoding embedded CBOR; its ``CBORDecodingOptions/maxDepth`` also bounds
    /// the total nesting shown through all embedding levels.
    public var embeddedDecodingOptions: CBORDecodingOptions

    /// Creates options; by default output is one line and tag 24 content stays bytes.
    public init(expandEmbeddedCBOR: Bool = false, pretty: Bool = false, indent: String = "  ",
                embeddedDecodingOptions: CBORDecodingOptions = .default) {
        self.expandEmbeddedCBOR = expandEmbeddedCBOR
        self.pretty = pretty
        self.indent = indent
        self.embeddedDecodingOptions = embeddedDecodingOptions
    }
}

extension CBOR {
    /// Renders the item in diagnostic notation, e.g. `{"a": 1, "b": [2, 3]}`.
    public func diagnostic(options: CBORDiagnosticOptions = .init()) -> String {
        var printer = DiagnosticPrinter(options: options)
        printer.printValue(self, depth: 0)
        return printer.output
    }
}

extension CBORItem {
    /// Renders the item in diagnostic notation as received: indefinite-length items keep
    /// their `_` markers and chunks, e.g. `(_ h'0102', h'030405')`.
    public func diagnostic(options: CBORDiagnosticOptions = .init()) -> String {
        var printer = DiagnosticPrinter(options: options)
        printer.printNode(storage, index, depth: 0)
        return printer.output
    }
}

struct DiagnosticPrinter {
    let options: CBORDiagnosticOptions
    var output = ""
    /// Container nesting for indentation; tags and embedding do not indent.
    private var indentLevel = 0

    init(options: CBORDiagnosticOptions) {
        self.options = options
    }


    // MARK: Values

    mutating func printValue(_ value: CBOR, depth: Int) {
        switch value {
        case .unsigned(let n):
            output += String(n)
        case .negative(let n):
            output += Self.negativeDecimal(n)
        case .byteString(let bytes):
            printBytes(bytes[...])
        case .textString(let string):
            printText(string)
        case .array(let elements):
            printSequence(open: "[", close: "]", count: elements.count, depth: depth) { printer, i in
                printer.printValue(elements[i], depth: depth + 1)
            }
        case .map(let map):
            let entries = map.entries
            printSequence(open: "{", close: "}", count: entries.count, depth: depth) { printer, i in
                printer.printValue(entries[i].key, depth: depth + 1)
                printer.output += ": "
                printer.printValue(entries[i].value, depth: depth + 1)
            }
        case .tagged(let tag, let content):
            output += String(tag)
            output += "("
            if tag == 24, options.expandEmbeddedCBOR, case .byteString(let bytes) = content,
               let item = embedded(bytes, start: 0, end: bytes.count, depth: depth) {
                printEmbedded(item, depth: depth)
            } else {
                printValue(content, depth: depth + 1)
            }
            output += ")"
        case .simple(let simple):
            output += "simple(\(simple))"
        case .boolean(let bool):
            output += bool ? "true" : "false"
        case .null:
            output += "null"
        case .undefined:
            output += "undefined"
        case .half(let bits):
            output += Self.formatFloat(FloatBits.double(fromHalf: bits))
        case .float(let single):
            output += Self.formatFloat(Double(single))
        case .double(let double):
            output += Self.formatFloat(double)
        }
    }

    // MARK: Items as received

    mutating func printNode(_ storage: CBORItem.Storage, _ index: Int, depth: Int) {
        let node = storage.nodes[index]
        let item = CBORItem(storage: storage, index: index)
        switch node.major {
        case 2 where node.indefinite, 3 where node.indefinite:
            let chunks = item.children
            if chunks.isEmpty {
                output += node.major == 2 ? "''_" : "\"\"_"
                return
            }
            output += "(_ "
            for (i, chunk) in chunks.enumerated() {
                if i > 0 { output += ", " }
                printValue(chunk.value, depth: depth + 1)
            }
            output += ")"
        case 4:
            let elements = item.children
            printSequence(open: node.indefinite ? "[_ " : "[", close: "]", count: elements.count,
                          depth: depth) { printer, i in
                printer.printNode(storage, elements[i].index, depth: depth + 1)
            }
        case 5:
            let parts = item.children
            printSequence(open: node.indefinite ? "{_ " : "{", close: "}", count: parts.count / 2,
                          depth: depth) { printer, i in
                printer.printNode(storage, parts[2 * i].index, depth: depth + 1)
                printer.output += ": "
                printer.printNode(storage, parts[2 * i + 1].index, depth: depth + 1)
            }
        case 6:
            let tag = node.value.tag ?? 0
            output += String(tag)
            output += "("
            let contentIndex = index + 1
            let content = storage.nodes[contentIndex]
            if tag == 24, options.expandEmbeddedCBOR, content.major == 2 {
                var embeddedItem: CBORItem?
                if content.indefinite, case .byteString(let joined) = content.value {
                    embeddedItem = embedded(joined, start: 0, end: joined.count, depth: depth)
                } else if !content.indefinite {
                    embeddedItem = embedded(storage.bytes, start: content.headEnd, end: content.end, depth: depth)
                }
                if let embeddedItem {
                    printEmbedded(embeddedItem, depth: depth)
                    output += ")"
                    return
                }
            }
            printNode(storage, contentIndex, depth: depth + 1)
            output += ")"
        default:
            printValue(node.value, depth: depth)
        }
    }

    // MARK: Helpers

    /// Decodes embedded CBOR within the remaining depth budget, or nil.
    private func embedded(_ bytes: [UInt8], start: Int, end: Int, depth: Int) -> CBORItem? {
        var decoding = options.embeddedDecodingOptions
        decoding.maxDepth = min(decoding.effectiveMaxDepth, decoding.effectiveMaxDepth - depth - 1)
        guard decoding.maxDepth >= 0, end - start <= decoding.maxInputSize,
              let item = try? CBORItem.parse(bytes, start: start, end: end, options: decoding),
              item.byteRange.upperBound == end else { return nil }
        return item
    }

    private mutating func printEmbedded(_ item: CBORItem, depth: Int) {
        output += "<< "
        printNode(item.storage, item.index, depth: depth + 1)
        output += " >>"
    }

    private mutating func printSequence(open: String, close: String, count: Int, depth: Int,
                                        element: (inout DiagnosticPrinter, Int) -> Void) {
        output += open
        guard count > 0 else {
            output += close
            return
        }
        if options.pretty {
            indentLevel += 1
            let inner = String(repeating: options.indent, count: indentLevel)
            if open.hasSuffix(" ") { output.removeLast() }
            for i in 0..<count {
                output += i == 0 ? "\n" : ",\n"
                output += inner
                element(&self, i)
            }
            indentLevel -= 1
            output += "\n"
            output += String(repeating: options.indent, count: indentLevel)
        } else {
            for i in 0..<count {
                if i > 0 { output += ", " }
                element(&self, i)
            }
        }
        output += close
    }

    private mutating func printBytes(_ bytes: ArraySlice<UInt8>) {
        output += "h'" + Hex.encode(bytes) + "'"
    }

    // JSON-style escapes (RFC 8259 §7), as RFC 8949 §8 prescribes for text strings;
    // printable escaping so that hostile text cannot drive the terminal.
    private mutating func printText(_ string: String) {
        JSONWriter.appendString(string, escaping: .printable, to: &output)
    }

    /// -1 - n in decimal, including -18446744073709551616.
    static func negativeDecimal(_ n: UInt64) -> String {
        if n < UInt64.max { return "-" + String(n + 1) }
        return "-18446744073709551616"
    }

    /// Formats a float as RFC 8949 Appendix A does: `1.5`, `1.0e+300`, `5.960464477539063e-8`,
    /// `Infinity`, `-Infinity`, `NaN`, `-0.0`.
    static func formatFloat(_ value: Double) -> String {
        if value.isNaN { return "NaN" }
        if value.isInfinite { return value < 0 ? "-Infinity" : "Infinity" }
        let text = value.description    // shortest round-tripping digits
        guard let e = text.firstIndex(where: { $0 == "e" || $0 == "E" }) else {
            return text.contains(".") ? text : text + ".0"
        }
        var mantissa = String(text[..<e])
        if !mantissa.contains(".") { mantissa += ".0" }
        var exponent = text[text.index(after: e)...]
        var sign = "+"
        if let first = exponent.first, first == "-" || first == "+" {
            sign = first == "-" ? "-" : "+"
            exponent = exponent.dropFirst()
        }
        let digits = exponent.drop { $0 == "0" }
        return mantissa + "e" + sign + (digits.isEmpty ? "0" : String(digits))
    }
}
