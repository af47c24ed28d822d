/// A strict RFC 8259 parser over UTF-8 bytes producing `JSONValue`. It rejects
/// duplicate member names, trailing data, invalid UTF-8 and lone surrogates, and
/// bounds nesting depth so that hostile input cannot exhaust the stack.
struct JSONParser {
    private let bytes: [UInt8]
    private let maxDepth: Int
    private var index = 0
    private var depth = 0

    init(bytes: [UInt8], maxDepth: Int) {
        self.bytes = bytes
        self.maxDepth = maxDepth
    }

    mutating func parseDocument() throws(JOSEError) -> JSONValue {
        skipWhitespace()
        let value = try parseValue()
        skipWhitespace()
        guard index == bytes.count else { throw fail("trailing data") }
        return value
    }

    private func fail(_ reason: String) -> JOSEError { .malformed("JSON: \(reason) at offset \(index)") }

    private var current: UInt8? { index < bytes.count ? bytes[index] : nil }

    private mutating func skipWhitespace() {
        while let byte = current, byte == 0x20 || byte == 0x09 || byte == 0x0A || byte == 0x0D { index += 1 }
    }

    private mutating func expect(_ literal: String, _ value: JSONValue) throws(JOSEError) -> JSONValue {
        for byte in literal.utf8 {
            guard current == byte else { throw fail("invalid literal") }
            index += 1
        }
        return value
    }

    private mutating func parseValue() throws(JOSEError) -> JSONValue {
        guard let byte = current else { throw fail("unexpected end") }
        switch byte {
        case UInt8(ascii: "{"): return try parseObject()
        case UInt8(ascii: "["): return try parseArray()
        case UInt8(ascii: "\""): return .string(try parseString())
        case UInt8(ascii: "t"): return try expect("true", .bool(true))
        case UInt8(ascii: "f"): return try expect("false", .bool(false))
        case UInt8(ascii: "n"): return try expect("null", .null)
        case UInt8(ascii: "-"), UInt8(ascii: "0")...UInt8(ascii: "9"): return try parseNumber()
        default: throw fail("unexpected character")
        }
    }

    private mutating func enter() throws(JOSEError) {
        depth += 1
        guard depth <= maxDepth else { throw fail("nesting deeper than \(maxDepth)") }
    }

    private mutating func parseObject() throws(JOSEError) -> JSONValue {
        try enter()
        defer { depth -= 1 }
        index += 1
        var members: [String: JSONValue] = [:]
        skipWhitespace()
        if current == UInt8(ascii: "}") { index += 1; return .object(members) }
        while true {
            skipWhitespace()
            guard current == UInt8(ascii: "\"") else { throw fail("expected a member name") }
            let key = try parseString()
            skipWhitespace()
            guard current == UInt8(ascii: ":") else { throw fail("expected ':'") }
            index += 1
            skipWhitespace()
            let value = try parseValue()
            guard members.updateValue(value, forKey: key) == nil else {
                throw .malformed("JSON: duplicate member name \"\(key)\"")
            }
            skipWhitespace()
            guard let separator = current else { throw fail("unterminated object") }
            index += 1
            if separator == UInt8(ascii: "}") { return .object(members) }
            guard separator == UInt8(ascii: ",") else { throw fail("expected ',' or '}'") }
        }
    }

    private mutating func parseArray() throws(JOSEError) -> JSONValue {
        try enter()
        defer { depth -= 1 }
        index += 1
        var elements: [JSONValue] = []
        skipWhitespace()
        if current == UInt8(ascii: "]") { index += 1; return .array(elements) }
        while true {
            skipWhitespace()
            elements.append(try parseValue())
            skipWhitespace()
            guard let separator = current else { throw fail("unterminated array") }
            index += 1
            if separator == UInt8(ascii: "]") { return .array(elements) }
            guard separator == UInt8(ascii: ",") else { throw fail("expected ',' or ']'") }
        }
    }

    private mutating func parseNumber() throws(JOSEError) -> JSONValue {
        let start = index
        var isInteger = true
        if current == UInt8(ascii: "-") { index += 1 }
        guard let first = current, first >= 0x30, first <= 0x39 else { throw fail("invalid number") }
        if first == 0x30 {
            index += 1
        } else {
            while let digit = current, digit >= 0x30, digit <= 0x39 { index += 1 }
        }
        if current == UInt8(ascii: ".") {
            isInteger = false
            index += 1
            guard let digit = current, digit >= 0x30, digit <= 0x39 else { throw fail("invalid fraction") }
            while let digit = current, digit >= 0x30, digit <= 0x39 { index += 1 }
        }
        if current == UInt8(ascii: "e") || current == UInt8(ascii: "E") {
            isInteger = false
            index += 1
            if current == UInt8(ascii: "+") || current == UInt8(ascii: "-") { index += 1 }
            guard let digit = current, digit >= 0x30, digit <= 0x39 else { throw fail("invalid exponent") }
            while let digit = current, digit >= 0x30, digit <= 0x39 { index += 1 }
        }
        let text = String(decoding: bytes[start..<index], as: UTF8.self)
        if isInteger, let exact = Int64(text) { return .integer(exact) }
        guard let number = Double(text), number.isFinite else { throw fail("number out of range") }
        return .number(number)
    }

    private mutating func parseHex4() throws(JOSEError) -> UInt32 {
        var value: UInt32 = 0
        for _ in 0..<4 {
            guard let byte = current else { throw fail("truncated \\u escape") }
            let digit: UInt32
            switch byte {
            case 0x30...0x39: digit = UInt32(byte - 0x30)
            case 0x41...0x46: digit = UInt32(byte - 0x41 + 10)
            case 0x61...0x66: digit = UInt32(byte - 0x61 + 10)
            default: throw fail("invalid \\u escape")
            }
            value = value << 4 | digit
            index += 1
        }
        return value
    }

    private mutating func parseString() throws(JOSEError) -> String {
        index += 1
        var runStart = index
        var text = ""
        func flushRun(_ end: Int) throws(JOSEError) {
            guard runStart < end else { return }
            // Validate UTF-8 of the unescaped run strictly.
            guard let run = String(validating: bytes[runStart..<end], as: UTF8.self) else {
                throw .malformed("JSON: invalid UTF-8 in string")
            }
            text += run
        }
        while true {
            guard let byte = current else { throw fail("unterminated string") }
            if byte == UInt8(ascii: "\"") {
                try flushRun(index)
                index += 1
                return text
            }
            if byte < 0x20 { throw fail("control character in string") }
            if byte != UInt8(ascii: "\\") { index += 1; continue }
            try flushRun(index)
            index += 1
            guard let escape = current else { throw fail("truncated escape") }
            index += 1
            switch escape {
            case UInt8(ascii: "\""): text.unicodeScalars.append("\"")
            case UInt8(ascii: "\\"): text.unicodeScalars.append("\\")
            case UInt8(ascii: "/"): text.unicodeScalars.append("/")
            case UInt8(ascii: "b"): text.unicodeScalars.append("\u{08}")
            case UInt8(ascii: "f"): text.unicodeScalars.append("\u{0C}")
            case UInt8(ascii: "n"): text.unicodeScalars.append("\n")
            case UInt8(ascii: "r"): text.unicodeScalars.append("\r")
            case UInt8(ascii: "t"): text.unicodeScalars.append("\t")
            case UInt8(ascii: "u"):
                let unit = try parseHex4()
                var value = unit
                if (0xD800...0xDBFF).contains(unit) {
                    guard current == UInt8(ascii: "\\") else { throw fail("lone high surrogate") }
                    index += 1
                    guard current == UInt8(ascii: "u") else { throw fail("lone high surrogate") }
                    index += 1
                    let low = try parseHex4()
                    guard (0xDC00...0xDFFF).contains(low) else { throw fail("invalid low surrogate") }
                    value = 0x10000 + ((unit - 0xD800) << 10) + (low - 0xDC00)
                } else if (0xDC00...0xDFFF).contains(unit) {
                    throw fail("lone low surrogate")
                }
                guard let scalar = Unicode.Scalar(value) else { throw fail("invalid code point") }
                text.unicodeScalars.append(scalar)
            default:
                throw fail("invalid escape")
            }
            runStart = index
        }
    }
}
