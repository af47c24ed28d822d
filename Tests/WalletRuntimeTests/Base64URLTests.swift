import Testing
import WalletRuntime

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
        #expect(Hex.decode("") == nil)
        #expect(Hex.decode("zz") == nil)
        #expect(Hex.decode("0 1") == nil)
    }
}
