extension String {
    /// The parts between occurrences of the ASCII byte `separator`, empty parts kept (the
    /// shape of JWS, JWE and SD-JWT compact serializations).
    ///
    /// The scan runs over the UTF-8 bytes: it costs one pass, with no grapheme breaking,
    /// and no grapheme clustering can merge a separator with a combining mark after it
    /// (which a `Character` split would do, so that `a.\u{301}b` would not split).
    public func compactParts(separatedBy separator: UInt8) -> [Substring] {
        precondition(separator < 0x80, "the separator must be an ASCII byte")
        let bytes = utf8
        // Offsets of the separators, found over contiguous storage when the string has it.
        let offsets: [Int] = bytes.withContiguousStorageIfAvailable { Self.offsets(of: separator, in: $0) }
            ?? bytes.enumerated().compactMap { $0.element == separator ? $0.offset : nil }
        var parts: [Substring] = []
        parts.reserveCapacity(offsets.count + 1)
        var start = bytes.startIndex
        var startOffset = 0
        for offset in offsets {
            let end = bytes.index(start, offsetBy: offset - startOffset)
            parts.append(Substring(bytes[start..<end]))
            start = bytes.index(after: end)
            startOffset = offset + 1
        }
        parts.append(Substring(bytes[start..<bytes.endIndex]))
        return parts
    }

    /// The offsets of `separator` in `buffer`, eight bytes at a time: a word with no
    /// separator (most of a compact serialization) costs one test.
    private static func offsets(of separator: UInt8, in buffer: UnsafeBufferPointer<UInt8>) -> [Int] {
        var found: [Int] = []
        guard let base = buffer.baseAddress else { return found }
        let ones: UInt64 = 0x0101_0101_0101_0101
        let pattern = UInt64(separator) &* ones
        var offset = 0
        while buffer.count - offset >= 8 {
            // A byte of `word` is zero where the separator is; the test below is non-zero
            // exactly when some byte is.
            let word = UnsafeRawPointer(base + offset).loadUnaligned(as: UInt64.self) ^ pattern
            if (word &- ones) & ~word & 0x8080_8080_8080_8080 != 0 {
                for index in offset..<(offset + 8) where buffer[index] == separator { found.append(index) }
            }
            offset += 8
        }
        for index in offset..<buffer.count where buffer[index] == separator { found.append(index) }
        return found
    }

    /// Whether every UTF-8 byte lies in `range` (printable ASCII checks of compact forms).
    public func utf8BytesAll(in range: ClosedRange<UInt8>) -> Bool {
        // One unsigned comparison per byte: below `lower` wraps around past the width.
        let lower = range.lowerBound, width = range.upperBound &- range.lowerBound
        let contiguous = utf8.withContiguousStorageIfAvailable { buffer -> Bool in
            var outside: UInt8 = 0
            for byte in buffer { outside |= byte &- lower > width ? 1 : 0 }
            return outside == 0
        }
        return contiguous ?? utf8.allSatisfy { range.contains($0) }
    }

}

extension StringProtocol {
    /// The UTF-8 bytes as an array, copied in one block when the string's storage is
    /// contiguous (native strings and their substrings are); `Array(utf8)` copies them one
    /// at a time.
    public var utf8Bytes: [UInt8] {
        utf8.withContiguousStorageIfAvailable { Array($0) } ?? Array(utf8)
    }
}
