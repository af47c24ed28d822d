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
