/// Hexadecimal text, lower case on output, either case on input: the SDK's one
/// home for hex (test vectors, CLI input and output, diagnostics, percent-escapes).
public enum Hex {
    private static let digits = Array("0123456789abcdef".utf8)

    /// Lower-case hex of `bytes`.
    public static func encode(_ bytes: some Sequence<UInt8>) -> String {
        var out: [UInt8] = []
        append(Array(bytes)[...], to: &out)
        return String(decoding: out, as: UTF8.self)
    }

    /// Appends the lower-case hex digits (UTF-8) of `bytes` to `output`, for writers that
    /// build their text as bytes (no intermediate string). Concrete types and buffer
    /// pointers: this is the hot loop of printing large byte strings, and generic code is
    /// not specialised across modules in debug builds.
    public static func append(_ bytes: ArraySlice<UInt8>, to output: inout [UInt8]) {
        // Nothing to add; and `Array(unsafeUninitializedCapacity: 0)` writes the count of
        // the shared empty-array storage, which ThreadSanitizer reports as a race between
        // two threads printing empty byte strings.
        guard !bytes.isEmpty else { return }
        let digits = [UInt8](unsafeUninitializedCapacity: 2 * bytes.count) { buffer, initialized in
            bytes.withUnsafeBufferPointer { source in
                Self.digits.withUnsafeBufferPointer { table in
                    var index = 0
                    for byte in source {
                        buffer[index] = table[Int(byte >> 4)]
                        buffer[index + 1] = table[Int(byte & 0x0f)]
                        index += 2
                    }
                }
            }
            initialized = 2 * bytes.count
        }
        output.append(contentsOf: digits)
    }

    /// The bytes of an even-length hex string (an optional `0x` prefix is allowed; an
    /// empty string is zero bytes), or nil for an odd length or any non-hex character.
    public static func decode(_ text: some StringProtocol) -> [UInt8]? {
        var digits = Substring(text)
        if digits.hasPrefix("0x") || digits.hasPrefix("0X") { digits = digits.dropFirst(2) }
        guard digits.utf8.count % 2 == 0 else { return nil }
        var out: [UInt8] = []
        out.reserveCapacity(digits.utf8.count / 2)
        var high: UInt8?
        for character in digits.utf8 {
            guard let value = digitValue(character) else { return nil }
            if let pending = high {
                out.append(pending << 4 | value)
                high = nil
            } else {
                high = value
            }
        }
        return out
    }

    /// The value of one hex digit (either case), or nil. Also used by percent-decoding.
    package static func digitValue(_ character: UInt8) -> UInt8? {
        switch character {
        case UInt8(ascii: "0")...UInt8(ascii: "9"): return character - UInt8(ascii: "0")
        case UInt8(ascii: "a")...UInt8(ascii: "f"): return character - UInt8(ascii: "a") + 10
        case UInt8(ascii: "A")...UInt8(ascii: "F"): return character - UInt8(ascii: "A") + 10
        default: return nil
        }
    }
}
