import Testing
@testable import CBOR

@Suite("Diagnostic notation (RFC 8949 §8)")
struct DiagnosticTests {
    static let cases: [(CBOR, String)] = [
        (.unsigned(0), "0"), (CBOR(-1), "-1"), (.negative(UInt64.max), "-18446744073709551616"),
        (.byteString([1, 2]), "h'0102'"), (.byteString([]), "h''"), (.textString("text"), "\"text\""),
        (.array([.unsigned(1), .array([.unsigned(2), .unsigned(3)])]), "[1, [2, 3]]"),
        (.map(CBORMap([(.textString("a"), .unsigned(1)), (.textString("b"), .array([.unsigned(2), .unsigned(3)]))])),
         "{\"a\": 1, \"b\": [2, 3]}"),
        (.tagged(1, .unsigned(1363896240)), "1(1363896240)"), (.simple(16), "simple(16)"), (.boolean(true), "true"),
        (.null, "null"), (.undefined, "undefined"), (.double(1.5), "1.5"), (.double(1.0e+300), "1.0e+300"),
        (.double(.infinity), "Infinity"), (.double(-.infinity), "-Infinity"), (.double(.nan), "NaN"),
        (.double(-0.0), "-0.0"), (.half(0x0001), "5.960464477539063e-8"), (.float(100000), "100000.0"),
        (.half(0x7BFF), "65504.0"), (.double(-4.1), "-4.1"), (.double(1.0e-7), "1.0e-7"),
        (.tagged(2, .byteString([0x01, 0, 0, 0, 0, 0, 0, 0, 0])), "2(h'010000000000000000')"),
        (.map(CBORMap()), "{}"), (.array([]), "[]"),
    ]

    @Test("values print as in RFC 8949 Appendix A", arguments: cases)
    func values(_ value: CBOR, _ expected: String) {
        #expect(value.diagnostic() == expected)
        #expect(value.description == expected)
    }

    @Test("text uses JSON-style escapes")
    func escapes() {
        #expect(CBOR.textString("a\"b\\c\nd\te\u{01}ü").diagnostic() == #""a\"b\\c\nd\te\u0001ü""#)
    }

    @Test("items print indefinite lengths as received")
    func indefinite() throws {
        #expect(try CBOR.decodeItem(hex("5f42010243030405ff")).diagnostic() == "(_ h'0102', h'030405')")
        #expect(try CBOR.decodeItem(hex("7f657374726561646d696e67ff")).diagnostic() == #"(_ "strea", "ming")"#)
        #expect(try CBOR.decodeItem(hex("9f018202039f0405ffff")).diagnostic() == "[_ 1, [2, 3], [_ 4, 5]]")
        #expect(try CBOR.decodeItem(hex("bf61610161629f0203ffff")).diagnostic() == #"{_ "a": 1, "b": [_ 2, 3]}"#)
        #expect(try CBOR.decodeItem(hex("9fff")).diagnostic() == "[_ ]")
        #expect(try CBOR.decodeItem(hex("5fff")).diagnostic() == "''_")
        #expect(try CBOR.decode(hex("5f42010243030405ff")).diagnostic() == "h'0102030405'")
    }

    @Test("tag 24 content is shown decoded when asked, recursively, and as bytes when not CBOR")
    func embeddedExpansion() throws {
        let expand = CBORDiagnosticOptions(expandEmbeddedCBOR: true)
        let inner = CBOR.embedded(["a": 1])
        #expect(inner.diagnostic() == "24(h'a1616101')")
        #expect(inner.diagnostic(options: expand) == #"24(<< {"a": 1} >>)"#)
        let nested = CBOR.embedded([inner, CBOR.embedded(.byteString([0xFF]))])
        #expect(nested.diagnostic(options: expand) == #"24(<< [24(<< {"a": 1} >>), 24(<< h'ff' >>)] >>)"#)
        #expect(CBOR.tagged(24, .byteString([0xFF])).diagnostic(options: expand) == "24(h'ff')")
        #expect(CBOR.tagged(24, .byteString([0x01, 0x02])).diagnostic(options: expand) == "24(h'0102')")
        // Items keep the embedded bytes' own encoding details.
        let item = try CBOR.decodeItem(hex("d818449f1801ff"))
        #expect(item.diagnostic(options: expand) == "24(<< [_ 1] >>)")
    }

    @Test("pretty output puts one element per line with indentation")
    func pretty() {
        let value: CBOR = ["a": 1, "b": [2, 3], "c": [:], "d": CBOR.embedded([true])]
        let options = CBORDiagnosticOptions(expandEmbeddedCBOR: true, pretty: true)
        #expect(value.diagnostic(options: options) == """
        {
          "a": 1,
          "b": [
            2,
            3
          ],
          "c": {},
          "d": 24(<< [
            true
          ] >>)
        }
        """)
    }
}
