import Foundation

/// The ordered name/value pairs of an `application/x-www-form-urlencoded` body or of
/// a URL query. Names are compared exactly (case matters), and a name may occur more
/// than once: ``duplicatedNames`` lets a protocol refuse that where it must
/// (RFC 6749 §3.1: OAuth parameters must not be repeated).
public struct FormParameters: Sendable, Equatable, Sequence, ExpressibleByDictionaryLiteral {
    /// The pairs in order.
    public private(set) var fields: [(name: String, value: String)]

    /// Creates parameters from name/value pairs, kept in the order given.
    public init(_ fields: [(name: String, value: String)] = []) { self.fields = fields }

    /// Creates parameters from a dictionary literal, kept in the order written.
    public init(dictionaryLiteral elements: (String, String)...) {
        self.fields = elements.map { (name: $0.0, value: $0.1) }
    }

    /// The first value of `name`; setting replaces every pair of that name (or removes
    /// them when `nil`), appending the new pair at the end.
    public subscript(name: String) -> String? {
        get { fields.first { $0.name == name }?.value }
        set {
            fields.removeAll { $0.name == name }
            if let newValue { fields.append((name: name, value: newValue)) }
        }
    }

    /// Every value of `name`, in order.
    public func values(for name: String) -> [String] {
        fields.filter { $0.name == name }.map(\.value)
    }

    /// Appends a pair, keeping earlier pairs of the same name.
    public mutating func add(name: String, value: String) { fields.append((name: name, value: value)) }

    /// The number of pairs.
    public var count: Int { fields.count }

    /// Whether there are no pairs.
    public var isEmpty: Bool { fields.isEmpty }

    /// The names that occur more than once, each once, in the order they first occur.
    public var duplicatedNames: [String] {
        var seen = Set<String>()
        var reported = Set<String>()
        var result: [String] = []
        for field in fields where !seen.insert(field.name).inserted {
            if reported.insert(field.name).inserted { result.append(field.name) }
        }
        return result
    }

    /// The form encoding of the pairs (see ``FormURLEncoding/encode(_:)``).
    public var encoded: String { FormURLEncoding.encode(self) }

    /// Iterates the pairs in order.
    public func makeIterator() -> IndexingIterator<[(name: String, value: String)]> { fields.makeIterator() }

    /// Parameters are equal when they hold the same pairs in the same order.
    public static func == (lhs: FormParameters, rhs: FormParameters) -> Bool {
        lhs.fields.count == rhs.fields.count
            && zip(lhs.fields, rhs.fields).allSatisfy { $0.name == $1.name && $0.value == $1.value }
    }
}

/// Why a form body or a query could not be decoded. Offsets count bytes from the
/// start of the input.
public enum FormURLEncodingError: Error, Equatable, Sendable {
    /// A byte that RFC 3986 does not allow in a query (a space, a control character,
    /// a non-ASCII byte, `#`, `"`, `<`, ...) appears unescaped.
    case invalidCharacter(offset: Int)
    /// A `%` is not followed by two hexadecimal digits.
    case invalidPercentEscape(offset: Int)
    /// A decoded name or value is not UTF-8; the offset is where that name or value starts.
    case invalidUTF8(offset: Int)
    /// Two `&` in a row, or one at the start or the end.
    case emptyField(offset: Int)
    /// A field without `=`.
    case missingSeparator(offset: Int)
    /// A field whose name is empty (`=value`).
    case emptyName(offset: Int)
    /// More fields than the decoder was allowed to return.
    case tooManyFields(limit: Int)
}

/// `application/x-www-form-urlencoded`, the encoding of OAuth request bodies and of
/// the parameters in URL queries (redirects, authorization requests).
///
/// Encoding is RFC 3986 percent-encoding of every byte of the UTF-8 form except the
/// unreserved characters (`A-Z a-z 0-9 - . _ ~`); a space becomes `%20`, which every
/// form decoder accepts. Decoding is strict: it takes `+` as a space and `%XX` as a
/// byte, and refuses anything RFC 3986 does not allow in a query, malformed escapes,
/// decoded bytes that are not UTF-8, empty fields, fields without `=` and empty names.
/// Both directions are linear in the input.
public enum FormURLEncoding {
    /// How many fields `decode` returns at most unless told otherwise.
    public static let defaultMaxFields = 1000

    /// Encodes name/value pairs in order (see ``encode(_:)-(FormParameters)``).
    public static func encode(_ pairs: [(String, String)]) -> String {
        encode(FormParameters(pairs.map { (name: $0.0, value: $0.1) }))
    }

    /// Encodes the pairs as `name=value` joined with `&`, names and values percent-encoded.
    public static func encode(_ parameters: FormParameters) -> String {
        var output: [UInt8] = []
        for (index, field) in parameters.fields.enumerated() {
            if index > 0 { output.append(UInt8(ascii: "&")) }
            appendPercentEncoded(field.name, to: &output)
            output.append(UInt8(ascii: "="))
            appendPercentEncoded(field.value, to: &output)
        }
        return String(decoding: output, as: UTF8.self)
    }

    /// Percent-encodes every byte of the UTF-8 form of `text` except the unreserved characters.
    public static func percentEncode(_ text: String) -> String {
        var output: [UInt8] = []
        appendPercentEncoded(text, to: &output)
        return String(decoding: output, as: UTF8.self)
    }

    /// Decodes a form body (the bytes as received).
    public static func decode(_ bytes: [UInt8], maxFields: Int = defaultMaxFields) throws(FormURLEncodingError) -> FormParameters {
        try bytes.withUnsafeBufferPointer { buffer throws(FormURLEncodingError) in
            try decode(buffer, maxFields: maxFields)
        }
    }

    /// The query of `uri`: what follows its first `?`, up to the first `#` after it (RFC
    /// 3986 §3.4); nil when there is no `?`. Both are found on the UTF-8 bytes: no
    /// grapheme breaking over a request or offer of several kilobytes, and a combining
    /// mark after a delimiter cannot hide it.
    public static func query(of uri: String) -> Substring? {
        let bytes = uri.utf8
        guard let question = bytes.firstIndex(of: UInt8(ascii: "?")) else { return nil }
        let start = bytes.index(after: question)
        let end = bytes[start...].firstIndex(of: UInt8(ascii: "#")) ?? bytes.endIndex
        return Substring(bytes[start..<end])
    }

    /// Decodes a query string (without the leading `?`) or a form body held as text.
    public static func decode(_ text: String, maxFields: Int = defaultMaxFields) throws(FormURLEncodingError) -> FormParameters {
        try decode(text.utf8Bytes, maxFields: maxFields)
    }

    /// `base` with `parameters` appended to its query (after any query it already has,
    /// joined with `&`); `base` itself when `parameters` is empty; `nil` if Foundation
    /// cannot take `base` apart.
    public static func url(_ base: URL, appendingQuery parameters: FormParameters) -> URL? {
        guard !parameters.isEmpty else { return base }
        guard var components = URLComponents(url: base, resolvingAgainstBaseURL: false) else { return nil }
        let addition = encode(parameters)
        if let existing = components.percentEncodedQuery, !existing.isEmpty {
            components.percentEncodedQuery = existing + "&" + addition
        } else {
            components.percentEncodedQuery = addition
        }
        return components.url
    }

    private static func decode(_ input: UnsafeBufferPointer<UInt8>, maxFields: Int) throws(FormURLEncodingError) -> FormParameters {
        guard !input.isEmpty else { return FormParameters() }
        // Count the fields before allocating any of them.
        var separators = 0
        for byte in input where byte == UInt8(ascii: "&") { separators += 1 }
        guard separators < max(maxFields, 0) else { throw .tooManyFields(limit: maxFields) }

        var fields: [(name: String, value: String)] = []
        fields.reserveCapacity(separators + 1)
        var start = 0
        while start <= input.count {
            var end = start
            while end < input.count, input[end] != UInt8(ascii: "&") { end += 1 }
            guard end > start else { throw .emptyField(offset: start) }
            var equals = start
            while equals < end, input[equals] != UInt8(ascii: "=") { equals += 1 }
            guard equals < end else { throw .missingSeparator(offset: start) }
            guard equals > start else { throw .emptyName(offset: start) }
            let name = try decodeComponent(input, start..<equals)
            let value = try decodeComponent(input, (equals + 1)..<end)
            fields.append((name: name, value: value))
            start = end + 1
        }
        return FormParameters(fields)
    }

    private static func decodeComponent(_ input: UnsafeBufferPointer<UInt8>, _ range: Range<Int>) throws(FormURLEncodingError) -> String {
        var bytes: [UInt8] = []
        bytes.reserveCapacity(range.count)
        var index = range.lowerBound
        while index < range.upperBound {
            let byte = input[index]
            if byte == UInt8(ascii: "%") {
                guard index + 2 < range.upperBound,
                      let high = Hex.digitValue(input[index + 1]), let low = Hex.digitValue(input[index + 2]) else {
                    throw .invalidPercentEscape(offset: index)
                }
                bytes.append(high << 4 | low)
                index += 3
            } else if byte == UInt8(ascii: "+") {
                bytes.append(0x20)
                index += 1
            } else if isQueryCharacter(byte) {
                bytes.append(byte)
                index += 1
            } else {
                throw .invalidCharacter(offset: index)
            }
        }
        guard let text = UTF8Validation.string(bytes) else { throw .invalidUTF8(offset: range.lowerBound) }
        return text
    }

    private static func appendPercentEncoded(_ text: String, to output: inout [UInt8]) {
        let digits = Array("0123456789ABCDEF".utf8)
        for byte in text.utf8 {
            if isUnreserved(byte) {
                output.append(byte)
            } else {
                output.append(UInt8(ascii: "%"))
                output.append(digits[Int(byte >> 4)])
                output.append(digits[Int(byte & 0x0F)])
            }
        }
    }

    // RFC 3986 §2.3.
    private static func isUnreserved(_ byte: UInt8) -> Bool {
        switch byte {
        case UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "a")...UInt8(ascii: "z"),
             UInt8(ascii: "0")...UInt8(ascii: "9"),
             UInt8(ascii: "-"), UInt8(ascii: "."), UInt8(ascii: "_"), UInt8(ascii: "~"):
            return true
        default:
            return false
        }
    }

    // RFC 3986 §3.4: query = *( pchar / "/" / "?" ), pchar = unreserved / pct-encoded /
    // sub-delims / ":" / "@". `%`, `&` and `+` are handled by the caller.
    private static func isQueryCharacter(_ byte: UInt8) -> Bool {
        if isUnreserved(byte) { return true }
        switch byte {
        case UInt8(ascii: "!"), UInt8(ascii: "$"), UInt8(ascii: "'"), UInt8(ascii: "("), UInt8(ascii: ")"),
             UInt8(ascii: "*"), UInt8(ascii: ","), UInt8(ascii: ";"), UInt8(ascii: "="),
             UInt8(ascii: ":"), UInt8(ascii: "@"), UInt8(ascii: "/"), UInt8(ascii: "?"):
            return true
        default:
            return false
        }
    }
}
