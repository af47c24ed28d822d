extension String {
    /// The text without the white space at either end: the scalars with the Unicode
    /// White_Space property and U+200B ZERO WIDTH SPACE, the set that
    /// `CharacterSet.whitespacesAndNewlines` holds (general category Z of the Unicode
    /// version Foundation's data follows, where U+200B was a space; U+0009 to U+000D;
    /// U+0085).
    ///
    /// It looks at the scalars at the ends only and trims scalar by scalar, as
    /// `trimmingCharacters(in: .whitespacesAndNewlines)` does. That Foundation call
    /// converts the whole text to UTF-16 and back on Linux, which cost a presentation
    /// session about 50 µs for its 3 KB request URI (issue 16).
    public func trimmingWhitespace() -> String {
        let scalars = unicodeScalars
        var start = scalars.startIndex
        var end = scalars.endIndex
        while start < end, Self.isTrimmed(scalars[start]) { start = scalars.index(after: start) }
        while start < end {
            let last = scalars.index(before: end)
            guard Self.isTrimmed(scalars[last]) else { break }
            end = last
        }
        if start == scalars.startIndex, end == scalars.endIndex { return self }
        return String(scalars[start..<end])
    }

    private static func isTrimmed(_ scalar: Unicode.Scalar) -> Bool {
        scalar.properties.isWhitespace || scalar.value == 0x200B
    }
}
