import Testing
import WalletEncoding

@Suite("compactParts")
struct CompactPartsTests {
    /// The parts as a byte-by-byte split gives them, empty parts kept.
    private func naiveParts(_ text: String, _ separator: UInt8) -> [[UInt8]] {
        var parts: [[UInt8]] = [[]]
        for byte in text.utf8 {
            if byte == separator { parts.append([]) } else { parts[parts.count - 1].append(byte) }
        }
        return parts
    }

    @Test("splits exactly where a byte-by-byte scan does: separators at every offset from the word boundaries, runs, ends, multi-byte text")
    func matchesByteScan() {
        var generator = SystemRandomNumberGenerator()
        let alphabet: [String] = ["a", "b", "~", ".", "é", "€", "😀", "~~", "..", "Z"]
        var texts = ["", "~", ".", "~~~", "abc", "a~b", "~a~", "ab.cd.ef", "1234567~", "12345678~", "~12345678", "1234567.1234567."]
        for length in 1...40 {
            for _ in 0..<25 {
                texts.append((0..<length).map { _ in alphabet.randomElement(using: &generator)! }.joined())
            }
        }
        for text in texts {
            for separator in [UInt8(ascii: "~"), UInt8(ascii: ".")] {
                let parts = text.compactParts(separatedBy: separator)
                #expect(parts.map { Array($0.utf8) } == naiveParts(text, separator), "\(text)")
                #expect(parts.joined(separator: String(UnicodeScalar(separator))) == text)
            }
        }
    }
}
