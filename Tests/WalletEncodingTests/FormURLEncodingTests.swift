import Testing
import WalletEncoding

@Suite("Form URL encoding")
struct FormURLEncodingTests {
    @Test("pairs encode in order with unreserved characters left alone, and decode back")
    func roundTrip() throws {
        let pairs = [("grant_type", "urn:ietf:params:oauth:grant-type:pre-authorized_code"),
                     ("tx_code", "49 3+/é"), ("empty", ""), ("a~b.c_d-e", "x")]
        let text = FormURLEncoding.encode(pairs)
        #expect(text == "grant_type=urn%3Aietf%3Aparams%3Aoauth%3Agrant-type%3Apre-authorized_code&tx_code=49%203%2B%2F%C3%A9&empty=&a~b.c_d-e=x")
        let decoded = try FormURLEncoding.decode(text)
        #expect(decoded.map(\.0) == pairs.map(\.0))
        #expect(decoded.map(\.1) == pairs.map(\.1))
    }

    @Test("plus is a space, bare names have empty values, empty pairs are skipped")
    func decodingRules() throws {
        let decoded = try FormURLEncoding.decode("a=1+2&&flag&b=%41%62")
        #expect(decoded.map(\.0) == ["a", "flag", "b"])
        #expect(decoded.map(\.1) == ["1 2", "", "Ab"])
        #expect(try FormURLEncoding.decode("").isEmpty)
    }

    @Test("bad percent escapes and non-UTF-8 bytes are typed errors", arguments: [
        ("a=%", FormURLEncoding.DecodingError.invalidPercentEscape(offset: 2)),
        ("a=%4", .invalidPercentEscape(offset: 2)),
        ("a=%4G", .invalidPercentEscape(offset: 2)),
        ("a=%C3", .invalidUTF8),
        ("%FF=1", .invalidUTF8),
    ])
    func malformed(text: String, error: FormURLEncoding.DecodingError) {
        #expect(throws: error) { try FormURLEncoding.decode(text) }
    }
}
