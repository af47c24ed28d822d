/// How strings are escaped when JSON is written.
public enum JSONStringEscaping: Sendable, Hashable {
    /// RFC 8259 §7 / RFC 8785 §3.2.2.2: `"`, `\` and C0 controls only; everything else
    /// is written as itself. What the SDK sends and signs.
    case minimal
    /// `.minimal` plus DEL and the C1 controls (U+007F-U+009F) as `\u` escapes: still
    /// JSON, and safe to print on a terminal. What the CLI and diagnostics print.
    case printable
}

extension JSONValue {
    /// The compact serialization with members in object order, no whitespace, strings
    /// escaped minimally. Non-finite numbers (which JSON cannot carry) become `null`.
    public var serialized: String { serialized(sortingMembers: false, escaping: .minimal) }

    /// The UTF-8 bytes of ``serialized``.
    public var serializedBytes: [UInt8] { serialized.utf8Bytes }

    /// The compact serialization with members sorted by UTF-16 code units at every
    /// level: the order RFC 7638 thumbprints and RFC 8785 use, stable across runs.
    public var canonicalSerialized: String { serialized(sortingMembers: true, escaping: .minimal) }

    /// The compact serialization with explicit member order and escaping.
    public func serialized(sortingMembers: Bool, escaping: JSONStringEscaping) -> String {
        var output = ""
        JSONWriter(sortingMembers: sortingMembers, escaping: escaping).write(self, into: &output)
        return output
    }
}

/// Writes JSON text; the SDK's one JSON writer (CBOR diagnostic notation uses its
/// string escaping too).
public struct JSONWriter: Sendable {
    /// Whether object members are sorted (UTF-16 order) rather than kept in order.
    public var sortingMembers: Bool
    /// How strings are escaped.
    public var escaping: JSONStringEscaping
    /// The indentation of one level for multi-line output (people, not machines), or
    /// nil for the compact form.
    public var indent: String?

    /// A writer; the default keeps member order, escapes minimally and writes compactly.
    public init(sortingMembers: Bool = false, escaping: JSONStringEscaping = .minimal, indent: String? = nil) {
        self.sortingMembers = sortingMembers
        self.escaping = escaping
        self.indent = indent
    }

    /// The text of `value`.
    public func string(_ value: JSONValue) -> String {
        var output = ""
        write(value, into: &output)
        return output
    }

    /// Appends `value` to `output`.
    public func write(_ value: JSONValue, into output: inout String) {
        write(value, into: &output, level: 0)
    }

    private func newline(_ output: inout String, level: Int) {
        guard let indent else { return }
        output += "\n"
        for _ in 0..<level { output += indent }
    }

    private func write(_ value: JSONValue, into output: inout String, level: Int) {
        switch value {
        case .null: output += "null"
        case .bool(let flag): output += flag ? "true" : "false"
        case .integer(let number): output += String(number)
        case .number(let number):
            if !number.isFinite {
                output += "null"
            } else if number.rounded() == number, abs(number) < 1e15 {
                output += String(Int64(number))
            } else {
                output += "\(number)"
            }
        case .string(let text): Self.appendString(text, escaping: escaping, to: &output)
        case .array(let elements):
            output += "["
            for (index, element) in elements.enumerated() {
                if index > 0 { output += "," }
                newline(&output, level: level + 1)
                write(element, into: &output, level: level + 1)
            }
            if !elements.isEmpty { newline(&output, level: level) }
            output += "]"
        case .object(let members):
            output += "{"
            let names = sortingMembers ? members.keys.sorted(by: JSONObject.canonicalOrder) : members.keys
            for (index, name) in names.enumerated() {
                if index > 0 { output += "," }
                newline(&output, level: level + 1)
                Self.appendString(name, escaping: escaping, to: &output)
                output += indent == nil ? ":" : ": "
                if let member = members[name] { write(member, into: &output, level: level + 1) }
            }
            if !names.isEmpty { newline(&output, level: level) }
            output += "}"
        }
    }

    /// Appends `text` as a quoted JSON string.
    public static func appendString(_ text: String, escaping: JSONStringEscaping, to output: inout String) {
        output += "\""
        for scalar in text.unicodeScalars {
            switch scalar {
            case "\"": output += "\\\""
            case "\\": output += "\\\\"
            case "\n": output += "\\n"
            case "\r": output += "\\r"
            case "\t": output += "\\t"
            case "\u{08}": output += "\\b"
            case "\u{0C}": output += "\\f"
            default:
                let value = scalar.value
                if value < 0x20 || (escaping == .printable && (0x7F...0x9F).contains(value)) {
                    output += "\\u00" + Hex.encode([UInt8(value)])
                } else {
                    output.unicodeScalars.append(scalar)
                }
            }
        }
        output += "\""
    }
}
