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

    /// The UTF-8 bytes of ``serialized``, written as bytes (no intermediate string).
    public var serializedBytes: [UInt8] { JSONWriter().utf8(self) }

    /// The compact serialization with members sorted by UTF-16 code units at every
    /// level: the order RFC 7638 thumbprints and RFC 8785 use, stable across runs.
    public var canonicalSerialized: String { serialized(sortingMembers: true, escaping: .minimal) }

    /// The compact serialization with explicit member order and escaping.
    public func serialized(sortingMembers: Bool, escaping: JSONStringEscaping) -> String {
        JSONWriter(sortingMembers: sortingMembers, escaping: escaping).string(self)
    }
}

/// Writes JSON text; the SDK's one JSON writer (CBOR diagnostic notation uses its
/// string escaping too).
///
/// It writes UTF-8 bytes: a string's unescaped runs are copied whole from the string's own
/// UTF-8, so the cost is one pass over the input and one copy, whatever the text.
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
        // The bytes are valid UTF-8: every string's own UTF-8 and ASCII around it.
        String(decoding: utf8(value), as: UTF8.self)
    }

    /// The UTF-8 bytes of the text of `value`.
    public func utf8(_ value: JSONValue) -> [UInt8] {
        var output: [UInt8] = []
        output.reserveCapacity(128)
        write(value, into: &output)
        return output
    }

    /// Appends `value` to `output`.
    public func write(_ value: JSONValue, into output: inout String) {
        output += string(value)
    }

    /// Appends the UTF-8 bytes of `value` to `output`.
    public func write(_ value: JSONValue, into output: inout [UInt8]) {
        write(value, into: &output, level: 0)
    }

    private func newline(_ output: inout [UInt8], level: Int) {
        guard let indent else { return }
        output.append(0x0A)
        for _ in 0..<level { output.append(contentsOf: indent.utf8) }
    }

    private func write(_ value: JSONValue, into output: inout [UInt8], level: Int) {
        switch value {
        case .null: Self.append("null", to: &output)
        case .bool(let flag): Self.append(flag ? "true" : "false", to: &output)
        case .integer(let number): Self.append(String(number), to: &output)
        case .number(let number):
            if !number.isFinite {
                Self.append("null", to: &output)
            } else if number.rounded() == number, abs(number) < 1e15 {
                Self.append(String(Int64(number)), to: &output)
            } else {
                Self.append("\(number)", to: &output)
            }
        case .string(let text): Self.appendString(text, escaping: escaping, to: &output)
        case .array(let elements):
            output.append(UInt8(ascii: "["))
            for (index, element) in elements.enumerated() {
                if index > 0 { output.append(UInt8(ascii: ",")) }
                newline(&output, level: level + 1)
                write(element, into: &output, level: level + 1)
            }
            if !elements.isEmpty { newline(&output, level: level) }
            output.append(UInt8(ascii: "]"))
        case .object(let members):
            output.append(UInt8(ascii: "{"))
            var first = true
            func member(_ name: String, _ member: JSONValue) {
                if !first { output.append(UInt8(ascii: ",")) }
                first = false
                newline(&output, level: level + 1)
                Self.appendString(name, escaping: escaping, to: &output)
                output.append(UInt8(ascii: ":"))
                if indent != nil { output.append(UInt8(ascii: " ")) }
                write(member, into: &output, level: level + 1)
            }
            if sortingMembers {
                for (name, value) in members.sorted(by: { JSONObject.canonicalOrder($0.key, $1.key) }) { member(name, value) }
            } else {
                for (name, value) in members { member(name, value) }
            }
            if !members.isEmpty { newline(&output, level: level) }
            output.append(UInt8(ascii: "}"))
        }
    }

    /// Appends the UTF-8 of ASCII text that needs no escaping.
    private static func append(_ text: String, to output: inout [UInt8]) {
        output.append(contentsOf: text.utf8)
    }

    /// Nonzero when some byte of `word` is zero (exact for the zero test: a borrow only
    /// propagates past a byte that is itself zero).
    private static func hasZeroByte(_ word: UInt64) -> UInt64 {
        (word &- 0x0101_0101_0101_0101) & ~word & 0x8080_8080_8080_8080
    }

    /// Nonzero when some byte of `word` is below 0x20 (bytes at or above 0x80 never count).
    private static func hasByteBelow0x20(_ word: UInt64) -> UInt64 {
        (word &- 0x2020_2020_2020_2020) & ~word & 0x8080_8080_8080_8080
    }

    /// Appends `text` as a quoted JSON string.
    public static func appendString(_ text: String, escaping: JSONStringEscaping, to output: inout String) {
        var bytes: [UInt8] = []
        appendString(text, escaping: escaping, to: &bytes)
        output += String(decoding: bytes, as: UTF8.self)
    }

    /// Appends the UTF-8 of `text` as a quoted JSON string.
    public static func appendString(_ text: String, escaping: JSONStringEscaping, to output: inout [UInt8]) {
        output.append(UInt8(ascii: "\""))
        var text = text
        text.withUTF8 { bytes in
            // Bytes are copied in runs; only an escaped character ends one. RFC 8259 §7:
            // '"', '\\' and C0 controls; `.printable` adds DEL (0x7F) and the C1 controls
            // U+0080-U+009F, whose UTF-8 is C2 80 ... C2 9F.
            let printable = escaping == .printable
            var run = 0
            var index = 0
            while index < bytes.count {
                // Eight bytes at a time while none can need an escape: no byte below 0x20, no
                // '"' or '\\', and (for `.printable`) none at or above 0x7F, whose DEL and C2 xx
                // the byte loop below decides.
                while bytes.count - index >= 8 {
                    let word = UnsafeRawPointer(bytes.baseAddress! + index).loadUnaligned(as: UInt64.self)
                    let suspect = Self.hasByteBelow0x20(word) | Self.hasZeroByte(word ^ 0x2222_2222_2222_2222)
                        | Self.hasZeroByte(word ^ 0x5C5C_5C5C_5C5C_5C5C)
                        | (printable ? (word | (word &+ 0x0101_0101_0101_0101)) & 0x8080_8080_8080_8080 : 0)
                    guard suspect == 0 else { break }
                    index += 8
                }
                guard index < bytes.count else { break }
                let byte = bytes[index]
                var escapedLength = 0
                if byte == 0x22 || byte == 0x5C || byte < 0x20 || (printable && byte == 0x7F) {
                    escapedLength = 1
                } else if printable, byte == 0xC2, index + 1 < bytes.count, (0x80...0x9F).contains(bytes[index + 1]) {
                    escapedLength = 2
                }
                guard escapedLength > 0 else {
                    index += 1
                    continue
                }
                output.append(contentsOf: UnsafeBufferPointer(rebasing: bytes[run..<index]))
                let scalar = escapedLength == 1 ? byte : bytes[index + 1]
                switch scalar {
                case 0x22: append("\\\"", to: &output)
                case 0x5C: append("\\\\", to: &output)
                case 0x0A: append("\\n", to: &output)
                case 0x0D: append("\\r", to: &output)
                case 0x09: append("\\t", to: &output)
                case 0x08: append("\\b", to: &output)
                case 0x0C: append("\\f", to: &output)
                default:
                    append("\\u00", to: &output)
                    Hex.append([scalar][...], to: &output)
                }
                index += escapedLength
                run = index
            }
            output.append(contentsOf: UnsafeBufferPointer(rebasing: bytes[run..<bytes.count]))
        }
        output.append(UInt8(ascii: "\""))
    }
}
