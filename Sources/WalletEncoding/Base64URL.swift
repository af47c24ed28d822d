/// Base64 and base64url (RFC 4648 §4 and §5): the SDK's one home for both.
///
/// Both directions work on bytes with lookup tables: SD-JWT presentation and
/// verification encode and decode many small values, and going through
/// Foundation's base64 plus string replacement cost a measurable share of them.
///
/// Decoding comes in two strengths. `strict` is what JOSE (RFC 7515 §2), SD-JWT and
/// OpenID parameters demand: no padding for base64url, exact padding for base64, and
/// the unused trailing bits zero, so every byte string has exactly one accepted
/// encoding. The lenient form accepts optional padding and ignores trailing bits, for
/// input typed or pasted by people.
public enum Base64URL {
    /// Encodes bytes as unpadded base64url.
    public static func encode<Bytes: Sequence>(_ bytes: Bytes) -> String where Bytes.Element == UInt8 {
        Base64Engine.encode(Array(bytes), alphabet: Base64Engine.urlAlphabet, pad: false)
    }

    /// Decodes base64url leniently: with or without padding, unused trailing bits ignored.
    /// Returns `nil` for any character outside the base64url alphabet (standard `+` and
    /// `/` too), for a length that no encoding produces, or for misplaced padding.
    public static func decode(_ text: some StringProtocol) -> [UInt8]? {
        Base64Engine.decode(text, values: Base64Engine.urlValues, padding: .optional, canonical: false)
    }

    /// Decodes base64url strictly: no padding, and unused trailing bits must be zero
    /// (the one canonical encoding of the bytes), as RFC 7515 §2 requires of JOSE.
    public static func decodeStrict(_ text: some StringProtocol) -> [UInt8]? {
        Base64Engine.decode(text, values: Base64Engine.urlValues, padding: .forbidden, canonical: true)
    }
}

/// Standard base64 with padding (RFC 4648 §4), as X.509 `x5c` members (RFC 7515
/// §4.1.6), PEM bodies and some HTTP fields carry it.
public enum Base64 {
    /// Encodes bytes as padded base64.
    public static func encode<Bytes: Sequence>(_ bytes: Bytes) -> String where Bytes.Element == UInt8 {
        Base64Engine.encode(Array(bytes), alphabet: Base64Engine.standardAlphabet, pad: true)
    }

    /// Decodes padded base64 strictly: padding exact, unused bits zero, no whitespace.
    public static func decodeStrict(_ text: some StringProtocol) -> [UInt8]? {
        Base64Engine.decode(text, values: Base64Engine.standardValues, padding: .required, canonical: true)
    }

    /// Decodes base64 leniently: padding optional, trailing bits ignored, and ASCII
    /// whitespace (line breaks of PEM bodies) skipped.
    public static func decode(_ text: some StringProtocol) -> [UInt8]? {
        let compact = text.utf8.filter { $0 != 0x20 && $0 != 0x09 && $0 != 0x0A && $0 != 0x0D }
        return Base64Engine.decode(compact, values: Base64Engine.standardValues, padding: .optional, canonical: false)
    }
}

/// The shared table-driven codec behind `Base64URL` and `Base64`.
enum Base64Engine {
    enum Padding { case forbidden, optional, required }

    static let urlAlphabet = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_".utf8)
    static let standardAlphabet = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/".utf8)
    /// 0...63 for each character of the alphabet, 0xFF for every other byte.
    static let urlValues = table(urlAlphabet)
    static let standardValues = table(standardAlphabet)

    private static func table(_ alphabet: [UInt8]) -> [UInt8] {
        var table = [UInt8](repeating: 0xFF, count: 256)
        for (index, character) in alphabet.enumerated() { table[Int(character)] = UInt8(index) }
        return table
    }

    /// Encodes three bytes at a time straight into the string's storage.
    static func encode(_ input: [UInt8], alphabet: [UInt8], pad: Bool) -> String {
        let remainder = input.count % 3
        let count = input.count / 3 * 4 + (remainder == 0 ? 0 : pad ? 4 : remainder + 1)
        return input.withUnsafeBufferPointer { bytes in
            alphabet.withUnsafeBufferPointer { symbols in
                String(unsafeUninitializedCapacity: count) { output in
                    var read = 0, written = 0
                    while read + 3 <= bytes.count {
                        let chunk = UInt32(bytes[read]) << 16 | UInt32(bytes[read + 1]) << 8 | UInt32(bytes[read + 2])
                        output[written] = symbols[Int(chunk >> 18 & 63)]
                        output[written + 1] = symbols[Int(chunk >> 12 & 63)]
                        output[written + 2] = symbols[Int(chunk >> 6 & 63)]
                        output[written + 3] = symbols[Int(chunk & 63)]
                        read += 3
                        written += 4
                    }
                    if remainder > 0 {
                        let chunk = UInt32(bytes[read]) << 16 | (remainder == 2 ? UInt32(bytes[read + 1]) << 8 : 0)
                        output[written] = symbols[Int(chunk >> 18 & 63)]
                        output[written + 1] = symbols[Int(chunk >> 12 & 63)]
                        written += 2
                        if remainder == 2 {
                            output[written] = symbols[Int(chunk >> 6 & 63)]
                            written += 1
                        }
                        if pad {
                            while written % 4 != 0 {
                                output[written] = UInt8(ascii: "=")
                                written += 1
                            }
                        }
                    }
                    return written
                }
            }
        }
    }

    static func decode(_ input: [UInt8], values: [UInt8], padding: Padding, canonical: Bool) -> [UInt8]? {
        input.withUnsafeBufferPointer { decode($0, values: values, padding: padding, canonical: canonical) }
    }

    /// Decodes a string's UTF-8 in place when it is contiguous (a native string), else a copy.
    static func decode(_ text: some StringProtocol, values: [UInt8], padding: Padding, canonical: Bool) -> [UInt8]? {
        if let decoded = text.utf8.withContiguousStorageIfAvailable({ decode($0, values: values, padding: padding, canonical: canonical) }) {
            return decoded
        }
        return decode(Array(text.utf8), values: values, padding: padding, canonical: canonical)
    }

    /// Decodes `input` four characters (three bytes) at a time into an output written in
    /// place: one table lookup per character and no per-byte append.
    static func decode(_ input: UnsafeBufferPointer<UInt8>, values: [UInt8], padding: Padding, canonical: Bool) -> [UInt8]? {
        var end = input.count
        var padCount = 0
        while end > 0, input[end - 1] == UInt8(ascii: "=") {
            end -= 1
            padCount += 1
        }
        let remainder = end % 4
        guard padCount <= 2, remainder != 1 else { return nil }
        switch padding {
        case .forbidden:
            guard padCount == 0 else { return nil }
        case .required:
            guard (end + padCount) % 4 == 0, padCount == (remainder == 0 ? 0 : 4 - remainder) else { return nil }
        case .optional:
            if padCount > 0 && (end + padCount) % 4 != 0 { return nil }
        }
        // Nothing to decode; and `Array(unsafeUninitializedCapacity: 0)` writes the count of
        // the shared empty-array storage, which ThreadSanitizer reports as a race (see Hex).
        guard end > 0 else { return [] }
        let outputCount = end / 4 * 3 + (remainder == 0 ? 0 : remainder - 1)
        return values.withUnsafeBufferPointer { table -> [UInt8]? in
            var valid = true
            let output = [UInt8](unsafeUninitializedCapacity: outputCount) { buffer, initialized in
                var read = 0, written = 0
                while read + 4 <= end {
                    let a = table[Int(input[read])], b = table[Int(input[read + 1])]
                    let c = table[Int(input[read + 2])], d = table[Int(input[read + 3])]
                    // Every valid value is below 64; 0xFF marks a byte outside the alphabet.
                    guard (a | b | c | d) < 64 else { valid = false; break }
                    let chunk = UInt32(a) << 18 | UInt32(b) << 12 | UInt32(c) << 6 | UInt32(d)
                    buffer[written] = UInt8(truncatingIfNeeded: chunk >> 16)
                    buffer[written + 1] = UInt8(truncatingIfNeeded: chunk >> 8)
                    buffer[written + 2] = UInt8(truncatingIfNeeded: chunk)
                    read += 4
                    written += 3
                }
                if valid, remainder > 0 {
                    // Two or three characters left: one or two bytes, and 4 or 2 unused bits.
                    var chunk: UInt32 = 0
                    for position in read..<end {
                        let value = table[Int(input[position])]
                        guard value < 64 else { valid = false; break }
                        chunk = chunk << 6 | UInt32(value)
                    }
                    if valid {
                        let unusedBits = remainder == 2 ? 4 : 2
                        // Left-over bits belong to no byte; a canonical encoding has them zero.
                        if canonical && chunk & (1 << UInt32(unusedBits) - 1) != 0 { valid = false }
                        chunk >>= UInt32(unusedBits)
                        if remainder == 3 {
                            buffer[written] = UInt8(truncatingIfNeeded: chunk >> 8)
                            buffer[written + 1] = UInt8(truncatingIfNeeded: chunk)
                            written += 2
                        } else {
                            buffer[written] = UInt8(truncatingIfNeeded: chunk)
                            written += 1
                        }
                    }
                }
                // Bytes are plain values: a partly written buffer on failure needs no cleanup.
                initialized = valid ? written : 0
            }
            return valid ? output : nil
        }
    }
}
