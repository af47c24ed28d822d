/// A strict RFC 8259 parser over UTF-8 bytes producing `JSONValue`. It rejects
/// duplicate member names, trailing data, invalid UTF-8 and lone surrogates, and
/// bounds nesting depth so that hostile input cannot exhaust the stack.
///
/// It reads the document through an unsafe buffer that lives for one `parse` call: every
/// read is guarded by an `index < bytes.count` test of its own, so the array's bounds
/// check would be a second one per byte.
struct JSONParser {
    private let bytes: UnsafeBufferPointer<UInt8>
    private let maxDepth: Int
    private var index = 0
    private var depth = 0

    private init(bytes: UnsafeBufferPointer<UInt8>, maxDepth: Int) {
        self.bytes = bytes
        self.maxDepth = maxDepth
    }

    /// Parses `document` as one JSON value.
    static func parse(_ document: [UInt8], maxDepth: Int) throws(JSONError) -> JSONValue {
        try document.withUnsafeBufferPointer { (buffer) throws(JSONError) -> JSONValue in
            var parser = JSONParser(bytes: buffer, maxDepth: maxDepth)
            return try parser.parseDocument()
        }
    }

    private mutating func parseDocument() throws(JSONError) -> JSONValue {
        skipWhitespace()
        let value = try parseValue()
        skipWhitespace()
        guard index == bytes.count else { throw fail(.trailingData) }
        return value
    }

    private func fail(_ reason: JSONError.Reason) -> JSONError { JSONError(reason, at: index) }

    private var current: UInt8? { index < bytes.count ? bytes[index] : nil }

    private mutating func skipWhitespace() {
        while let byte = current, byte == 0x20 || byte == 0x09 || byte == 0x0A || byte == 0x0D { index += 1 }
    }

    private mutating func expect(_ literal: String, _ value: JSONValue) throws(JSONError) -> JSONValue {
        for byte in literal.utf8 {
            guard current == byte else { throw fail(.invalidLiteral) }
            index += 1
        }
        return value
    }

    private mutating func parseValue() throws(JSONError) -> JSONValue {
        guard let byte = current else { throw fail(.unexpectedEnd) }
        switch byte {
        case UInt8(ascii: "{"): return try parseObject()
        case UInt8(ascii: "["): return try parseArray()
        case UInt8(ascii: "\""): return .string(try parseString())
        case UInt8(ascii: "t"): return try expect("true", .bool(true))
        case UInt8(ascii: "f"): return try expect("false", .bool(false))
        case UInt8(ascii: "n"): return try expect("null", .null)
        case UInt8(ascii: "-"), UInt8(ascii: "0")...UInt8(ascii: "9"): return try parseNumber()
        default: throw fail(.unexpectedCharacter(byte))
        }
    }

    private mutating func enter() throws(JSONError) {
        depth += 1
        guard depth <= maxDepth else { throw fail(.nestingTooDeep(limit: maxDepth)) }
    }

    private mutating func parseObject() throws(JSONError) -> JSONValue {
        try enter()
        defer { depth -= 1 }
        index += 1
        var members = JSONObject()
        skipWhitespace()
        if current == UInt8(ascii: "}") { index += 1; return .object(members) }
        while true {
            skipWhitespace()
            guard current == UInt8(ascii: "\"") else { throw fail(current.map { .unexpectedCharacter($0) } ?? .unexpectedEnd) }
            let key = try parseString()
            skipWhitespace()
            guard current == UInt8(ascii: ":") else { throw fail(current.map { .unexpectedCharacter($0) } ?? .unexpectedEnd) }
            index += 1
            skipWhitespace()
            let value = try parseValue()
            guard members.insertNew(key, value) else { throw JSONError(.duplicateMember(key), at: index) }
            skipWhitespace()
            guard let separator = current else { throw fail(.unexpectedEnd) }
            index += 1
            if separator == UInt8(ascii: "}") { return .object(members) }
            guard separator == UInt8(ascii: ",") else { throw JSONError(.unexpectedCharacter(separator), at: index - 1) }
        }
    }

    private mutating func parseArray() throws(JSONError) -> JSONValue {
        try enter()
        defer { depth -= 1 }
        index += 1
        var elements: [JSONValue] = []
        // Room for a disclosure's three elements in the first allocation.
        elements.reserveCapacity(4)
        skipWhitespace()
        if current == UInt8(ascii: "]") { index += 1; return .array(elements) }
        while true {
            skipWhitespace()
            elements.append(try parseValue())
            skipWhitespace()
            guard let separator = current else { throw fail(.unexpectedEnd) }
            index += 1
            if separator == UInt8(ascii: "]") { return .array(elements) }
            guard separator == UInt8(ascii: ",") else { throw JSONError(.unexpectedCharacter(separator), at: index - 1) }
        }
    }

    private mutating func parseNumber() throws(JSONError) -> JSONValue {
        let start = index
        var isInteger = true
        if current == UInt8(ascii: "-") { index += 1 }
        guard let first = current, first >= 0x30, first <= 0x39 else { throw fail(.invalidNumber) }
        if first == 0x30 {
            index += 1
        } else {
            while let digit = current, digit >= 0x30, digit <= 0x39 { index += 1 }
        }
        if current == UInt8(ascii: ".") {
            isInteger = false
            index += 1
            guard let digit = current, digit >= 0x30, digit <= 0x39 else { throw fail(.invalidNumber) }
            while let digit = current, digit >= 0x30, digit <= 0x39 { index += 1 }
        }
        if current == UInt8(ascii: "e") || current == UInt8(ascii: "E") {
            isInteger = false
            index += 1
            if current == UInt8(ascii: "+") || current == UInt8(ascii: "-") { index += 1 }
            guard let digit = current, digit >= 0x30, digit <= 0x39 else { throw fail(.invalidNumber) }
            while let digit = current, digit >= 0x30, digit <= 0x39 { index += 1 }
        }
        let text = String(decoding: UnsafeBufferPointer(rebasing: bytes[start..<index]), as: UTF8.self)
        if isInteger, let exact = Int64(text) { return .integer(exact) }
        guard let number = Double(text), number.isFinite else { throw fail(.numberOutOfRange) }
        return .number(number)
    }

    private mutating func parseHex4() throws(JSONError) -> UInt32 {
        var value: UInt32 = 0
        for _ in 0..<4 {
            guard let byte = current else { throw fail(.unexpectedEnd) }
            let digit: UInt32
            switch byte {
            case 0x30...0x39: digit = UInt32(byte - 0x30)
            case 0x41...0x46: digit = UInt32(byte - 0x41 + 10)
            case 0x61...0x66: digit = UInt32(byte - 0x61 + 10)
            default: throw fail(.invalidEscape)
            }
            value = value << 4 | digit
            index += 1
        }
        return value
    }

    private mutating func parseString() throws(JSONError) -> String {
        index += 1
        var runStart = index
        // Most strings have no escape: find the closing quote, check the run's UTF-8 and
        // make the string in one step. An escape, a control character or the end of the
        // input continue below from where this stopped, with the same checks and errors.
        while index < bytes.count {
            let byte = bytes[index]
            if byte == UInt8(ascii: "\"") {
                if let bad = UTF8Validation.firstInvalidOffset(in: bytes, from: runStart, to: index) {
                    throw JSONError(.invalidUTF8, at: bad)
                }
                defer { index += 1 }
                return String(decoding: UnsafeBufferPointer(rebasing: bytes[runStart..<index]), as: UTF8.self)
            }
            if byte == UInt8(ascii: "\\") || byte < 0x20 { break }
            index += 1
        }
        var text = ""
        func flushRun(_ end: Int) throws(JSONError) {
            guard runStart < end else { return }
            // Validate UTF-8 of the unescaped run strictly.
            if let bad = UTF8Validation.firstInvalidOffset(in: bytes, from: runStart, to: end) {
                throw JSONError(.invalidUTF8, at: bad)
            }
            text += String(decoding: UnsafeBufferPointer(rebasing: bytes[runStart..<end]), as: UTF8.self)
        }
        while true {
            guard let byte = current else { throw fail(.unexpectedEnd) }
            if byte == UInt8(ascii: "\"") {
                try flushRun(index)
                index += 1
                return text
            }
            if byte < 0x20 { throw fail(.controlCharacterInString) }
            if byte != UInt8(ascii: "\\") { index += 1; continue }
            try flushRun(index)
            index += 1
            guard let escape = current else { throw fail(.unexpectedEnd) }
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
                    guard current == UInt8(ascii: "\\") else { throw fail(.invalidSurrogate) }
                    index += 1
                    guard current == UInt8(ascii: "u") else { throw fail(.invalidSurrogate) }
                    index += 1
                    let low = try parseHex4()
                    guard (0xDC00...0xDFFF).contains(low) else { throw fail(.invalidSurrogate) }
                    value = 0x10000 + ((unit - 0xD800) << 10) + (low - 0xDC00)
                } else if (0xDC00...0xDFFF).contains(unit) {
                    throw fail(.invalidSurrogate)
                }
                guard let scalar = Unicode.Scalar(value) else { throw fail(.invalidSurrogate) }
                text.unicodeScalars.append(scalar)
            default:
                throw fail(.invalidEscape)
            }
            runStart = index
        }
    }
}
