import Foundation
import Testing
import WalletEncoding

@Suite("Whitespace trimming")
struct WhitespaceTrimmingTests {
    /// Every scalar of the Basic Multilingual Plane, and a few above (U+1F600, U+E0020),
    /// at each end, at both, and in the middle: the result is Foundation's
    /// `trimmingCharacters(in: .whitespacesAndNewlines)`, scalar for scalar.
    @Test("trims exactly what Foundation's whitespacesAndNewlines trims, for every scalar of the BMP")
    func matchesFoundation() {
        var scalars = (0...0xFFFF).compactMap(Unicode.Scalar.init(_:))
        scalars += [0x1F600, 0xE0020].compactMap(Unicode.Scalar.init(_:))
        var trimmed = 0
        for scalar in scalars {
            let s = String(scalar)
            for text in [s + "a", "a" + s, s + "a" + s, "a" + s + "b", s + s, s, s + "\u{301}a"] {
                let ours = text.trimmingWhitespace()
                let theirs = text.trimmingCharacters(in: .whitespacesAndNewlines)
                #expect(Array(ours.unicodeScalars) == Array(theirs.unicodeScalars), "U+\(String(scalar.value, radix: 16)) in \(Array(text.unicodeScalars))")
            }
            if ("a" + s).trimmingWhitespace() == "a" { trimmed += 1 }
        }
        // White_Space (U+0009-000D, 0020, 0085, 00A0, 1680, 2000-200A, 2028, 2029, 202F, 205F,
        // 3000) and U+200B.
        #expect(trimmed == 26)
    }

    @Test("the common cases: nothing to trim returns the text, all white space gives empty, inner space stays")
    func commonCases() {
        #expect("openid4vp://?client_id=x".trimmingWhitespace() == "openid4vp://?client_id=x")
        #expect(" \t\r\n\u{3000}".trimmingWhitespace() == "")
        #expect("".trimmingWhitespace() == "")
        #expect("\n eyJ.a b.c \n".trimmingWhitespace() == "eyJ.a b.c")
        // A combining mark after a space: the space goes, the mark stays (scalars, not characters).
        #expect(Array(" \u{301}x".trimmingWhitespace().unicodeScalars) == ["\u{301}", "x"])
    }
}
