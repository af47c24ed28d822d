/// `application/x-www-form-urlencoded` bodies and URL query strings (the WHATWG URL
/// standard's form serialization, as OAuth 2.0 (RFC 6749 Appendix B) uses it): the SDK's
/// one home for both directions.
///
/// Encoding percent-encodes every byte outside the RFC 3986 unreserved set
/// (`A-Z a-z 0-9 - . _ ~`) and writes spaces as `%20`, which every form parser reads.
/// Decoding is strict: `+` is a space, `%XX` needs two hex digits, and the decoded bytes
/// must be UTF-8.
public enum FormURLEncoding {
    /// Why a form body or query string did not decode.
    public enum DecodingError: Error, Hashable, Sendable {
        /// A `%` not followed by two hex digits, at this byte offset.
        case invalidPercentEscape(offset: Int)
        /// A decoded name or value is not UTF-8.
        case invalidUTF8
    }

    /// Encodes `pairs` in order as `name=value&...`.
    public static func encode(_ pairs: [(String, String)]) -> String {
        var output = ""
        for (index, pair) in pairs.enumerated() {
            if index > 0 { output += "&" }
            output += percentEncode(pair.0)
            output += "="
            output += percentEncode(pair.1)
        }
        return output
    }

    /// Decodes `name=value&...` into pairs, in order; a pair without `=` has an empty
    /// value, empty pairs (`a=1&&b=2`) are skipped. Names may repeat.
    public static func decode(_ text: some StringProtocol) throws(DecodingError) -> [(String, String)] {
        let bytes = Array(text.utf8)
        var pairs: [(String, String)] = []
        var start = 0
        while start <= bytes.count {
            var end = start
            while end < bytes.count, bytes[end] != UInt8(ascii: "&") { end += 1 }
            if end > start {
                var separator = start
                while separator < end, bytes[separator] != UInt8(ascii: "=") { separator += 1 }
                let name = try percentDecode(bytes, from: start, to: separator)
                let value = separator < end ? try percentDecode(bytes, from: separator + 1, to: end) : ""
                pairs.append((name, value))
            }
            start = end + 1
        }
        return pairs
    }

    /// Percent-encodes one name or value (everything but RFC 3986 unreserved characters).
    public static func percentEncode(_ text: String) -> String {
        var output: [UInt8] = []
        output.reserveCapacity(text.utf8.count)
        for byte in text.utf8 {
            if isUnreserved(byte) {
                output.append(byte)
            } else {
                output.append(UInt8(ascii: "%"))
                output += Array(Hex.encode([byte]).uppercased().utf8)
            }
        }
        return String(decoding: output, as: UTF8.self)
    }

    private static func isUnreserved(_ byte: UInt8) -> Bool {
        switch byte {
        case UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "0")...UInt8(ascii: "9"),
             UInt8(ascii: "-"), UInt8(ascii: "."), UInt8(ascii: "_"), UInt8(ascii: "~"):
            true
        default:
            false
        }
    }

    private static func percentDecode(_ bytes: [UInt8], from start: Int, to end: Int) throws(DecodingError) -> String {
        var output: [UInt8] = []
        output.reserveCapacity(end - start)
        var index = start
        while index < end {
            let byte = bytes[index]
            if byte == UInt8(ascii: "+") {
                output.append(0x20)
                index += 1
            } else if byte == UInt8(ascii: "%") {
                guard index + 3 <= end,
                      let decoded = Hex.decode(String(decoding: bytes[(index + 1)..<(index + 3)], as: UTF8.self)),
                      decoded.count == 1 else {
                    throw .invalidPercentEscape(offset: index)
                }
                output.append(decoded[0])
                index += 3
            } else {
                output.append(byte)
                index += 1
            }
        }
        guard let text = UTF8Validation.string(output) else { throw .invalidUTF8 }
        return text
    }
}
