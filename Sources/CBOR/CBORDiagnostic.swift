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
    /// The most work one rendering may do, in bytes: input read by every decoding pass,
    /// plus bytes allocated (node tables, copies, the output). Rendering is linear in the
    /// input, but pretty-printing deep nesting repeats the indentation on every line; this
    /// bounds the total, whatever the input.
    public var maxWork: Int

    /// Creates options; by default output is one line and tag 24 content stays bytes.
    public init(expandEmbeddedCBOR: Bool = false, pretty: Bool = false, indent: String = "  ",
                embeddedDecodingOptions: CBORDecodingOptions = .default, maxWork: Int = 256 << 20) {
        self.expandEmbeddedCBOR = expandEmbeddedCBOR
        self.pretty = pretty
        self.indent = indent
        self.embeddedDecodingOptions = embeddedDecodingOptions
        self.maxWork = maxWork
    }
}

/// The work a diagnostic rendering did, counted as it went (never timed).
public struct CBORWork: Sendable, Hashable {
    /// Input bytes examined: every head and string byte each decoding pass read, and every
    /// byte printed from the input.
    public var bytesRead: Int = 0
    /// Bytes allocated: decoded node tables, copies of string content, and the output.
    public var bytesAllocated: Int = 0

    /// No work yet.
    public init() {}

    /// Bytes read plus bytes allocated.
    public var total: Int { bytesRead + bytesAllocated }

    /// Adds the counts of `other` to these.
    public mutating func add(_ other: CBORWork) {
        bytesRead += other.bytesRead
        bytesAllocated += other.bytesAllocated
    }

    /// Adds what a parse cost: the bytes it examined; its node table, string copies and
    /// container storage.
    mutating func add(parsing parser: CBORParser) {
        bytesRead += parser.bytesRead
        bytesAllocated += parser.bytesCopied + parser.bytesStructure + parser.nodes.capacity * MemoryLayout<CBORNode>.stride
    }
}

/// A diagnostic rendering and what it cost.
public struct CBORDiagnosticRendering: Sendable, Hashable {
    /// The diagnostic notation.
    public let text: String
    /// The work it took.
    public let work: CBORWork
}

extension CBOR {
    /// Renders the value in diagnostic notation, e.g. `{"a": 1, "b": [2, 3]}`. When the
    /// rendering would exceed ``CBORDiagnosticOptions/maxWork`` the text ends with a
    /// `/ output truncated ... /` comment; ``renderDiagnostic(options:)`` throws instead.
    public func diagnostic(options: CBORDiagnosticOptions = .init()) -> String {
        var printer = DiagnosticPrinter(options: options)
        printer.printValue(self, depth: 0)
        return printer.finishedOutput
    }

    /// Renders the value in diagnostic notation and reports the work it took.
    /// - Throws: `workLimitExceeded` when the rendering would exceed `options.maxWork`.
    public func renderDiagnostic(options: CBORDiagnosticOptions = .init()) throws(CBORError) -> CBORDiagnosticRendering {
        var printer = DiagnosticPrinter(options: options)
        printer.printValue(self, depth: 0)
        return try printer.rendering()
    }
}

extension CBOR {
    /// Renders the one data item that spans `bytes` as ``CBORItem/renderDiagnostic(options:)``
    /// does, without building its values: the item is decoded in place (its strings are
    /// never copied), with `options.embeddedDecodingOptions`. What decoding and rendering
    /// cost is added to `work`, also when either fails, and bounded by `options.maxWork`
    /// (counted from zero, whatever `work` held before).
    /// - Throws: the decoder's error when `bytes` are not exactly one well-formed item;
    ///   `workLimitExceeded` when decoding and rendering would exceed `options.maxWork`.
    public static func renderDiagnostic(encoded bytes: [UInt8], options: CBORDiagnosticOptions = .init(),
                                        work: inout CBORWork) throws(CBORError) -> String {
        let decoding = options.embeddedDecodingOptions
        guard bytes.count <= decoding.maxInputSize else { throw .inputTooLarge(size: bytes.count) }
        var cost = CBORWork()
        let item: CBORItem
        do {
            item = try CBORItem.parse(bytes, start: 0, end: bytes.count, options: decoding, work: &cost)
        } catch {
            work.add(cost)
            throw error
        }
        var printer = DiagnosticPrinter(options: options)
        printer.charge(cost)
        defer { work.add(printer.work) }
        guard item.byteRange.upperBound == bytes.count else { throw .trailingBytes(offset: item.byteRange.upperBound) }
        printer.printNode(item.storage, item.index, depth: 0)
        return try printer.rendering().text
    }
}

extension CBORItem {
    /// Renders the item in diagnostic notation as received: indefinite-length items keep
    /// their `_` markers and chunks, e.g. `(_ h'0102', h'030405')`. When the rendering
    /// would exceed ``CBORDiagnosticOptions/maxWork`` the text ends with a
    /// `/ output truncated ... /` comment; ``renderDiagnostic(options:)`` throws instead.
    public func diagnostic(options: CBORDiagnosticOptions = .init()) -> String {
        var printer = DiagnosticPrinter(options: options)
        printer.printNode(storage, index, depth: 0)
        return printer.finishedOutput
    }

    /// Renders the item in diagnostic notation and reports the work it took: linear in
    /// the item's size, tag-24 expansion included (each embedded level is decoded in
    /// place, its byte strings never copied).
    /// - Throws: `workLimitExceeded` when the rendering would exceed `options.maxWork`.
    public func renderDiagnostic(options: CBORDiagnosticOptions = .init()) throws(CBORError) -> CBORDiagnosticRendering {
        var printer = DiagnosticPrinter(options: options)
        printer.printNode(storage, index, depth: 0)
        return try printer.rendering()
    }
}

struct DiagnosticPrinter {
    let options: CBORDiagnosticOptions
    /// The UTF-8 output; made a `String` once, at the end.
    private var output: [UInt8] = []
    private(set) var work = CBORWork()
    /// Set once the work limit is reached: nothing more is printed or decoded.
    private var exhausted = false
    /// Container nesting for indentation; tags and embedding do not indent.
    private var indentLevel = 0
    /// `options.indent` repeated for the deepest level printed so far: a level's
    /// indentation is a prefix of it, copied without making a string per container.
    private var indentation: [UInt8] = []
    /// True while printing an item decoded from joined indefinite-length content.
    private var insideJoinedContent = false

    init(options: CBORDiagnosticOptions) {
        self.options = options
    }

    /// The output, with a closing comment when the work limit cut it short.
    var finishedOutput: String {
        let text = String(decoding: output, as: UTF8.self)
        return exhausted ? text + " / output truncated: work limit of \(options.maxWork) bytes reached /" : text
    }

    /// The output and its cost (the final `String` counts as one more copy of the output).
    mutating func rendering() throws(CBORError) -> CBORDiagnosticRendering {
        guard !exhausted else { throw .workLimitExceeded(limit: options.maxWork) }
        work.bytesAllocated += output.count
        return CBORDiagnosticRendering(text: String(decoding: output, as: UTF8.self), work: work)
    }

    /// Appends `text` unless the work limit is reached (the output counts as allocated).
    private mutating func emit(_ text: String) {
        guard !exhausted, spend(allocated: text.utf8.count) else { return }
        output.append(contentsOf: text.utf8)
    }

    /// Counts work done before printing (decoding the item printed).
    mutating func charge(_ cost: CBORWork) {
        _ = spend(read: cost.bytesRead, allocated: cost.bytesAllocated)
    }

    /// Counts work; false (and nothing more to do) once the limit is passed.
    private mutating func spend(read: Int = 0, allocated: Int = 0) -> Bool {
        work.bytesRead += read
        work.bytesAllocated += allocated
        if work.total > options.maxWork { exhausted = true }
        return !exhausted
    }

    // MARK: Values

    mutating func printValue(_ value: CBOR, depth: Int) {
        guard !exhausted else { return }
        switch value {
        case .unsigned(let n):
            emit(String(n))
        case .negative(let n):
            emit(Self.negativeDecimal(n))
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
                printer.emit(": ")
                printer.printValue(entries[i].value, depth: depth + 1)
            }
        case .tagged(let tag, let content):
            emit(String(tag))
            emit("(")
            if tag == 24, options.expandEmbeddedCBOR, case .byteString(let bytes) = content,
               let item = embedded(bytes, start: 0, end: bytes.count, depth: depth) {
                printEmbedded(item, depth: depth)
            } else {
                printValue(content, depth: depth + 1)
            }
            emit(")")
        case .simple(let simple):
            emit("simple(\(simple))")
        case .boolean(let bool):
            emit(bool ? "true" : "false")
        case .null:
            emit("null")
        case .undefined:
            emit("undefined")
        case .half(let bits):
            emit(Self.formatFloat(FloatBits.double(fromHalf: bits)))
        case .float(let single):
            emit(Self.formatFloat(Double(single)))
        case .double(let double):
            emit(Self.formatFloat(double))
        }
    }

    // MARK: Items as received

    /// Prints a node of `storage`. Strings and containers are read from the nodes and the
    /// bytes, never from node values: the printer decodes embedded items without values.
    mutating func printNode(_ storage: CBORItem.Storage, _ index: Int, depth: Int) {
        guard !exhausted else { return }
        let node = storage.nodes[index]
        let item = CBORItem(storage: storage, index: index)
        switch node.major {
        case 2 where node.indefinite, 3 where node.indefinite:
            let chunks = item.children
            if chunks.isEmpty {
                emit(node.major == 2 ? "''_" : "\"\"_")
                return
            }
            emit("(_ ")
            for (i, chunk) in chunks.enumerated() {
                if i > 0 { emit(", ") }
                printNode(storage, chunk.index, depth: depth + 1)
            }
            emit(")")
        case 2:
            printBytes(storage.bytes[node.headEnd..<node.end])
        case 3:
            guard spend(read: node.end - node.headEnd, allocated: node.end - node.headEnd) else { return }
            printText(String(decoding: storage.bytes[node.headEnd..<node.end], as: UTF8.self))
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
                printer.emit(": ")
                printer.printNode(storage, parts[2 * i + 1].index, depth: depth + 1)
            }
        case 6:
            let tag = node.argument
            emit(String(tag))
            emit("(")
            let contentIndex = index + 1
            let content = storage.nodes[contentIndex]
            // Indefinite-length content must be joined (copied) to be decoded; inside content
            // joined already it is shown as chunks, so that no byte is copied twice.
            if tag == 24, options.expandEmbeddedCBOR, content.major == 2, !(content.indefinite && insideJoinedContent) {
                var embeddedItem: CBORItem?
                if content.indefinite {
                    let joined = joinedChunks(storage, contentIndex)
                    embeddedItem = embedded(joined, start: 0, end: joined.count, depth: depth)
                } else {
                    embeddedItem = embedded(storage.bytes, start: content.headEnd, end: content.end, depth: depth)
                }
                if let embeddedItem {
                    let wasInside = insideJoinedContent
                    insideJoinedContent = wasInside || content.indefinite
                    printEmbedded(embeddedItem, depth: depth)
                    insideJoinedContent = wasInside
                    emit(")")
                    return
                }
            }
            printNode(storage, contentIndex, depth: depth + 1)
            emit(")")
        default:
            printValue(item.value, depth: depth)
        }
    }

    // MARK: Helpers

    /// The content of an indefinite-length byte string, its chunks joined (a copy, counted).
    private mutating func joinedChunks(_ storage: CBORItem.Storage, _ index: Int) -> [UInt8] {
        var joined: [UInt8] = []
        for chunk in CBORItem(storage: storage, index: index).children {
            let node = storage.nodes[chunk.index]
            guard spend(read: node.end - node.headEnd, allocated: node.end - node.headEnd) else { return [] }
            joined.append(contentsOf: storage.bytes[node.headEnd..<node.end])
        }
        return joined
    }

    /// Decodes embedded CBOR within the remaining depth budget, or nil.
    private mutating func embedded(_ bytes: [UInt8], start: Int, end: Int, depth: Int) -> CBORItem? {
        guard !exhausted else { return nil }
        var decoding = options.embeddedDecodingOptions
        decoding.maxDepth = min(decoding.effectiveMaxDepth, decoding.effectiveMaxDepth - depth - 1)
        guard decoding.maxDepth >= 0, end - start <= decoding.maxInputSize else { return nil }
        var cost = CBORWork()
        let item = try? CBORItem.parse(bytes, start: start, end: end, options: decoding, work: &cost)
        guard spend(read: cost.bytesRead, allocated: cost.bytesAllocated),
              let item, item.byteRange.upperBound == end else { return nil }
        return item
    }

    private mutating func printEmbedded(_ item: CBORItem, depth: Int) {
        emit("<< ")
        printNode(item.storage, item.index, depth: depth + 1)
        emit(" >>")
    }

    private mutating func printSequence(open: String, close: String, count: Int, depth: Int,
                                        element: (inout DiagnosticPrinter, Int) -> Void) {
        emit(open)
        guard count > 0 else {
            emit(close)
            return
        }
        if options.pretty {
            indentLevel += 1
            if open.hasSuffix(" ") { emitRemovingTrailingSpace() }
            for i in 0..<count {
                guard !exhausted else { break }
                emit(i == 0 ? "\n" : ",\n")
                emitIndentation(indentLevel)
                element(&self, i)
            }
            indentLevel -= 1
            emit("\n")
            emitIndentation(indentLevel)
        } else {
            for i in 0..<count {
                guard !exhausted else { break }
                if i > 0 { emit(", ") }
                element(&self, i)
            }
        }
        emit(close)
    }

    /// Appends `level` copies of `options.indent`, counted as `emit` counts the same text.
    private mutating func emitIndentation(_ level: Int) {
        let count = options.indent.utf8.count * level
        guard !exhausted, spend(allocated: count) else { return }
        // Grown to the level asked, never beyond it: bounded by the output this same call
        // writes, so the counted work stays an honest bound.
        while indentation.count < count { indentation.append(contentsOf: options.indent.utf8) }
        output.append(contentsOf: indentation[0..<count])
    }

    private mutating func emitRemovingTrailingSpace() {
        guard !exhausted, output.last == UInt8(ascii: " ") else { return }
        output.removeLast()
    }

    /// `h'…'`, the hex digits written straight into the output.
    private mutating func printBytes(_ bytes: ArraySlice<UInt8>) {
        // The digits are made in a buffer of their own, then appended: 4 bytes per byte. No
        // reserveCapacity here: it reserves exactly what is asked, so one call per byte string
        // would reallocate the whole output again and again (quadratic in the item count).
        guard !exhausted, spend(read: bytes.count, allocated: 4 * bytes.count + 3) else { return }
        output.append(contentsOf: "h'".utf8)
        Hex.append(bytes, to: &output)
        output.append(UInt8(ascii: "'"))
    }

    // JSON-style escapes (RFC 8259 §7), as RFC 8949 §8 prescribes for text strings, written
    // by the one JSON string writer; DEL and the C1 controls are escaped too, so that
    // printed text cannot carry terminal control sequences.
    private mutating func printText(_ string: String) {
        var text = ""
        JSONWriter.appendString(string, escaping: .printable, to: &text)
        emit(text)
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
