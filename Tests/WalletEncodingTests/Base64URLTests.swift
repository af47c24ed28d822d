import Foundation
import Testing
import WalletEncoding

@Suite("Base64URL")
struct Base64URLTests {
    @Test("RFC 4648 §10 vectors encode without padding and decode back")
    func rfc4648Vectors() {
        let cases: [(String, String)] = [("", ""), ("f", "Zg"), ("fo", "Zm8"), ("foo", "Zm9v"),
                                         ("foob", "Zm9vYg"), ("fooba", "Zm9vYmE"), ("foobar", "Zm9vYmFy")]
        for (plain, encoded) in cases {
            #expect(Base64URL.encode(Array(plain.utf8)) == encoded)
            #expect(Base64URL.decode(encoded) == Array(plain.utf8))
        }
    }

    @Test("the URL-safe alphabet is used and the standard one rejected")
    func alphabet() {
        #expect(Base64URL.encode([0xfb, 0xff]) == "-_8")
        #expect(Base64URL.decode("-_8") == [0xfb, 0xff])
        #expect(Base64URL.decode("+/8") == nil)
        #expect(Base64URL.decode("a") == nil)
        #expect(Base64URL.decode("Zg==") == [0x66])
        #expect(Base64URL.decode("Zg=") == nil)
        #expect(Base64URL.decode("Z g") == nil)
    }
}

@Suite("Hex")
struct HexTests {
    @Test("hex round-trips in lower case and accepts upper case and a 0x prefix")
    func roundTrip() {
        #expect(Hex.encode([0x00, 0xab, 0xff]) == "00abff")
        #expect(Hex.decode("00ABff") == [0x00, 0xab, 0xff])
        #expect(Hex.decode("0x0102") == [0x01, 0x02])
    }

    @Test("odd lengths, empty input and non-hex characters are rejected")
    func rejects() {
        #expect(Hex.decode("abc") == nil)
        #expect(Hex.decode("") == [])
        #expect(Hex.decode("zz") == nil)
        #expect(Hex.decode("0 1") == nil)
    }
}

@Suite("Base64URL against Foundation")
struct Base64URLFoundationTests {
    @Test("every length from 0 to 300 round-trips and matches Foundation's base64, padded and with the URL alphabet")
    func agreesWithFoundation() {
        var generator = SystemRandomNumberGenerator()
        for length in 0...300 {
            let bytes = (0..<length).map { _ in UInt8.random(in: 0...255, using: &generator) }
            let expected = Data(bytes).base64EncodedString()
                .replacingOccurrences(of: "+", with: "-").replacingOccurrences(of: "/", with: "_")
                .replacingOccurrences(of: "=", with: "")
            #expect(Base64URL.encode(bytes) == expected)
            #expect(Base64URL.decode(expected) == bytes)
            // Padded standard base64 is Foundation's exactly.
            #expect(Base64.encode(bytes) == Data(bytes).base64EncodedString())
            #expect(Base64.decodeStrict(Base64.encode(bytes)) == bytes)
        }
    }

    /// A bit-at-a-time reference: what each decoder must accept, refuse and produce.
    private static func referenceDecode(_ text: String, alphabet: String, padding: String, canonical: Bool) -> [UInt8]? {
        var input = Array(text.utf8)
        var padCount = 0
        while input.last == UInt8(ascii: "=") { input.removeLast(); padCount += 1 }
        let remainder = input.count % 4
        guard padCount <= 2, remainder != 1 else { return nil }
        switch padding {
        case "forbidden": guard padCount == 0 else { return nil }
        case "required": guard padCount == (remainder == 0 ? 0 : 4 - remainder) else { return nil }
        default: if padCount > 0 && (input.count + padCount) % 4 != 0 { return nil }
        }
        let symbols = Array(alphabet.utf8)
        var output: [UInt8] = [], accumulator: UInt32 = 0, bits = 0
        for byte in input {
            guard let value = symbols.firstIndex(of: byte) else { return nil }
            accumulator = accumulator << 6 | UInt32(value)
            bits += 6
            if bits >= 8 {
                bits -= 8
                output.append(UInt8(truncatingIfNeeded: accumulator >> UInt32(bits)))
                accumulator &= (1 << UInt32(bits)) - 1
            }
        }
        if canonical && accumulator != 0 { return nil }
        return output
    }

    @Test("the block decoder agrees with a bit-at-a-time reference on 20,000 seeded strings, valid and not")
    func blockDecoderAgreesWithReference() {
        let url = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_"
        let standard = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/"
        let pool = Array(url + "+/=.~ \u{7F}")
        var seed: UInt64 = 0x2545F4914F6CDD1D
        func next() -> Int { seed ^= seed << 13; seed ^= seed >> 7; seed ^= seed << 17; return Int(seed % 1_000_003) }
        for round in 0..<20_000 {
            let length = next() % 41
            // Mostly alphabet characters, so that many strings decode; sometimes anything in the pool.
            var text = String((0..<length).map { _ in next() % 8 == 0 ? pool[next() % pool.count] : Array(url)[next() % 64] })
            if round % 5 == 0 { text += String(repeating: "=", count: next() % 3) }
            #expect(Base64URL.decode(text) == Self.referenceDecode(text, alphabet: url, padding: "optional", canonical: false), "\(text)")
            #expect(Base64URL.decodeStrict(text) == Self.referenceDecode(text, alphabet: url, padding: "forbidden", canonical: true), "\(text)")
            let standardText = String(text.map { $0 == "-" ? "+" : $0 == "_" ? "/" : $0 })
            #expect(Base64.decodeStrict(standardText)
                    == Self.referenceDecode(standardText, alphabet: standard, padding: "required", canonical: true), "\(standardText)")
            // The same text as a substring (a different string form) decodes alike.
            let embedded = "<" + text + ">"
            let inner = embedded.dropFirst().dropLast()
            #expect(Base64URL.decode(inner) == Base64URL.decode(text))
        }
    }

    @Test("non-ASCII and control characters are rejected")
    func rejectsOtherBytes() {
        #expect(Base64URL.decode("Zm9v\u{00e9}") == nil)
        #expect(Base64URL.decode("Zm9v\n") == nil)
        #expect(Base64URL.decode("Zm=9") == nil)
    }
}

@Suite("Base64 strictness")
struct Base64StrictnessTests {
    @Test("strict base64url refuses padding and non-zero trailing bits; lenient accepts both")
    func strictURL() {
        #expect(Base64URL.decodeStrict("Zg") == [0x66])
        #expect(Base64URL.decodeStrict("Zg==") == nil)
        #expect(Base64URL.decode("Zg==") == [0x66])
        // "Zh" carries the same byte with a non-zero unused bit: one byte, two spellings.
        #expect(Base64URL.decode("Zh") == [0x66])
        #expect(Base64URL.decodeStrict("Zh") == nil)
        #expect(Base64URL.decodeStrict("Zm8") == [0x66, 0x6F])
        #expect(Base64URL.decodeStrict("Zm9") == nil)
        #expect(Base64URL.decodeStrict("") == [])
        #expect(Base64URL.decodeStrict("+/8") == nil)
    }

    @Test("strict base64 needs exact padding; the lenient form skips line breaks")
    func standard() {
        #expect(Base64.encode([0xfb, 0xff]) == "+/8=")
        #expect(Base64.decodeStrict("+/8=") == [0xfb, 0xff])
        #expect(Base64.decodeStrict("+/8") == nil)
        #expect(Base64.decodeStrict("+/9=") == nil)
        #expect(Base64.decodeStrict("-_8=") == nil)
        #expect(Base64.decodeStrict("Zg===") == nil)
        #expect(Base64.decode("Zm9v\nYmFy\r\n") == Array("foobar".utf8))
        for length in 0..<40 {
            let bytes = (0..<length).map { UInt8(truncatingIfNeeded: $0 &* 37 &+ 11) }
            #expect(Base64.decodeStrict(Base64.encode(bytes)) == bytes)
            #expect(Base64URL.decodeStrict(Base64URL.encode(bytes)) == bytes)
        }
    }

    @Test("utf8Bytes equals Array(utf8) for native, small, bridged-free and substring forms; utf8BytesAll checks every byte against both bounds")
    func utf8Helpers() {
        let samples = ["", "a", "short ascii", String(repeating: "é~x", count: 300), "日本語テキスト", "tab\there"]
        for text in samples {
            #expect(text.utf8Bytes == Array(text.utf8))
            let sub = text.dropFirst()
            #expect(sub.utf8Bytes == Array(sub.utf8))
        }
        let printable = 0x21...0x7E as ClosedRange<UInt8>
        #expect("abc~XYZ.-_".utf8BytesAll(in: printable))
        #expect("".utf8BytesAll(in: printable))
        #expect(!"a b".utf8BytesAll(in: printable))                 // 0x20, just below
        #expect(!"a\u{7F}b".utf8BytesAll(in: printable))           // 0x7F, just above
        #expect(!"aé".utf8BytesAll(in: printable))                  // a non-ASCII byte
        #expect(!(String(repeating: "x", count: 999) + "\u{0}").utf8BytesAll(in: printable))
        #expect("!~".utf8BytesAll(in: printable))                   // both bounds themselves
        #expect("AZ".utf8BytesAll(in: 0x41...0x5A))
        #expect(!"@[".utf8BytesAll(in: 0x41...0x5A))
    }
}
