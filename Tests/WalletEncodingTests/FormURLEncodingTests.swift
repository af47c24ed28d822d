import Foundation
import Testing
import WalletEncoding

@Suite("FormURLEncoding")
struct FormURLEncodingTests {
    @Test("encoding keeps only the unreserved characters and percent-encodes the UTF-8 of the rest in upper case")
    func encodesUnreservedOnly() {
        let parameters: FormParameters = [
            "grant_type": "urn:ietf:params:oauth:grant-type:pre-authorized_code",
            "tx_code": "a b+c&d=e/f?g~h.i_j-k",
            "näme": "€",
        ]
        #expect(parameters.encoded == "grant_type=urn%3Aietf%3Aparams%3Aoauth%3Agrant-type%3Apre-authorized_code"
            + "&tx_code=a%20b%2Bc%26d%3De%2Ff%3Fg~h.i_j-k"
            + "&n%C3%A4me=%E2%82%AC")
        #expect(FormURLEncoding.percentEncode("") == "")
        #expect(FormParameters().encoded == "")
    }

    @Test("decoding takes + as a space and %XX in either case as a byte, and keeps order and repeats")
    func decodesPlusAndEscapes() throws {
        let decoded = try FormURLEncoding.decode("b=1+2&a=%e2%82%AC&b=x%2By&empty=&c=a=b")
        #expect(decoded.fields.map(\.name) == ["b", "a", "b", "empty", "c"])
        #expect(decoded.values(for: "b") == ["1 2", "x+y"])
        #expect(decoded["a"] == "€")
        #expect(decoded["empty"] == "")
        #expect(decoded["c"] == "a=b")
        #expect(decoded.duplicatedNames == ["b"])
    }

    @Test("every string survives an encode/decode round trip")
    func roundTrip() throws {
        let samples = ["", " ", "+", "%", "%25", "&=&=", "a\u{0}b", "line\r\nbreak", "emoji 🦊", "ü/ß?#[]@!$'()*,;",
                       String(repeating: "x", count: 5000)]
        var parameters = FormParameters()
        for (index, sample) in samples.enumerated() { parameters.add(name: "k\(index)\(sample)", value: sample) }
        #expect(try FormURLEncoding.decode(parameters.encoded) == parameters)
        #expect(try FormURLEncoding.decode(Array(parameters.encoded.utf8)) == parameters)
    }

    @Test("an empty input is no fields")
    func emptyInput() throws {
        #expect(try FormURLEncoding.decode("").isEmpty)
        #expect(try FormURLEncoding.decode([UInt8]()).isEmpty)
    }

    @Test("malformed percent escapes are refused at their offset",
          arguments: [("a=%", 2), ("a=%4", 2), ("a=%G1", 2), ("a=%1G", 2), ("x%=1", 1), ("a=b%2", 3)])
    func malformedEscapes(input: String, offset: Int) {
        #expect(throws: FormURLEncodingError.invalidPercentEscape(offset: offset)) {
            try FormURLEncoding.decode(input)
        }
    }

    @Test("characters a query may not hold raw are refused at their offset",
          arguments: [("a=b c", 3), ("a=\"x\"", 2), ("a=<", 2), ("a=#", 2), ("a=é", 2), ("a=\t", 2), ("a{=1", 1),
                       ("a=|", 2), ("a=\\", 2), ("a=^", 2), ("a=`", 2)])
    func invalidCharacters(input: String, offset: Int) {
        #expect(throws: FormURLEncodingError.invalidCharacter(offset: offset)) {
            try FormURLEncoding.decode(input)
        }
    }

    @Test("the RFC 3986 query characters other than & + % are accepted raw")
    func rawQueryCharacters() throws {
        let decoded = try FormURLEncoding.decode("a=!$'()*,;=:@/?-._~")
        #expect(decoded["a"] == "!$'()*,;=:@/?-._~")
    }

    @Test("decoded bytes that are not UTF-8 are refused at the start of their name or value")
    func invalidUTF8() {
        #expect(throws: FormURLEncodingError.invalidUTF8(offset: 7)) { try FormURLEncoding.decode("ok=1&a=%FF") }
        #expect(throws: FormURLEncodingError.invalidUTF8(offset: 0)) { try FormURLEncoding.decode("%C3=1") }
        #expect(throws: FormURLEncodingError.invalidUTF8(offset: 2)) { try FormURLEncoding.decode("a=%ED%A0%80") }  // a lone surrogate
    }

    @Test("empty fields, fields without '=' and empty names are refused")
    func structure() {
        #expect(throws: FormURLEncodingError.emptyField(offset: 0)) { try FormURLEncoding.decode("&a=1") }
        #expect(throws: FormURLEncodingError.emptyField(offset: 4)) { try FormURLEncoding.decode("a=1&&b=2") }
        #expect(throws: FormURLEncodingError.emptyField(offset: 4)) { try FormURLEncoding.decode("a=1&") }
        #expect(throws: FormURLEncodingError.emptyField(offset: 0)) { try FormURLEncoding.decode("&") }
        #expect(throws: FormURLEncodingError.missingSeparator(offset: 4)) { try FormURLEncoding.decode("a=1&flag") }
        #expect(throws: FormURLEncodingError.emptyName(offset: 0)) { try FormURLEncoding.decode("=1") }
    }

    @Test("the field limit is checked before any field is decoded")
    func fieldLimit() throws {
        #expect(try FormURLEncoding.decode("a=1&b=2&c=3", maxFields: 3).count == 3)
        #expect(throws: FormURLEncodingError.tooManyFields(limit: 2)) {
            // The third field is malformed: the limit must be reported, not the escape.
            try FormURLEncoding.decode("a=1&b=2&c=%", maxFields: 2)
        }
        let many = Array(repeating: "a=1", count: FormURLEncoding.defaultMaxFields + 1).joined(separator: "&")
        #expect(throws: FormURLEncodingError.tooManyFields(limit: FormURLEncoding.defaultMaxFields)) {
            try FormURLEncoding.decode(many)
        }
    }

    @Test("a query is appended after an existing one, before the fragment")
    func appendingQuery() throws {
        let base = try #require(URL(string: "https://wallet.example/cb?x=1#frag"))
        let url = FormURLEncoding.url(base, appendingQuery: ["code": "a b", "state": "s/1"])
        #expect(url?.absoluteString == "https://wallet.example/cb?x=1&code=a%20b&state=s%2F1#frag")
        let bare = try #require(URL(string: "https://wallet.example/cb"))
        #expect(FormURLEncoding.url(bare, appendingQuery: ["error": "access_denied"])?.absoluteString
            == "https://wallet.example/cb?error=access_denied")
        #expect(FormURLEncoding.url(bare, appendingQuery: FormParameters()) == bare)
    }

    @Test("the subscript setter replaces every pair of the name")
    func subscriptSetter() {
        var parameters: FormParameters = ["a": "1", "b": "2"]
        parameters.add(name: "a", value: "3")
        parameters["a"] = "4"
        #expect(parameters.fields.map(\.name) == ["b", "a"])
        #expect(parameters["a"] == "4")
        parameters["b"] = nil
        #expect(parameters.encoded == "a=4")
    }

    @Test("the query of a URI: after the first ?, up to the next #; nil without a ?; found on the bytes")
    func queryOfURI() {
        #expect(FormURLEncoding.query(of: "openid4vp://?client_id=a&request=b") == "client_id=a&request=b")
        #expect(FormURLEncoding.query(of: "https://w.example/cb?a=1#frag?x") == "a=1")
        #expect(FormURLEncoding.query(of: "https://w.example/cb?") == "")
        #expect(FormURLEncoding.query(of: "https://w.example/cb?#") == "")
        #expect(FormURLEncoding.query(of: "https://w.example/cb?a=1?b=2") == "a=1?b=2")
        #expect(FormURLEncoding.query(of: "https://w.example/cb") == nil)
        #expect(FormURLEncoding.query(of: "") == nil)
        // A combining mark after a delimiter does not merge with it.
        #expect(FormURLEncoding.query(of: "x://?\u{301}a=1#\u{301}") == "\u{301}a=1")
        #expect(FormURLEncoding.query(of: "x://é€?ü=1") == "ü=1")
    }
}
