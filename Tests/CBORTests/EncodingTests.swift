import Testing
@testable import CBOR

@Suite("Encoding: preferred heads, float widths and deterministic maps")
struct EncodingTests {
    @Test("integer arguments and lengths use the shortest head", arguments: [
        (CBOR.unsigned(23), "17"), (.unsigned(24), "1818"), (.unsigned(255), "18ff"),
        (.unsigned(256), "190100"), (.unsigned(65535), "19ffff"), (.unsigned(65536), "1a00010000"),
        (.unsigned(0xFFFF_FFFF), "1affffffff"), (.unsigned(1 << 32), "1b0000000100000000"),
        (.negative(0), "20"), (.negative(UInt64.max), "3bffffffffffffffff"),
        (CBOR(Int.min), "3b7fffffffffffffff"), (.byteString([UInt8](repeating: 0, count: 24)), "5818" + String(repeating: "00", count: 24)),
        (.tagged(1004, "x"), "d903ec6178"), (.simple(16), "f0"), (.simple(255), "f8ff"),
    ])
    func shortestHeads(_ value: CBOR, _ expected: String) {
        #expect(hexString(value.encoded()) == expected)
    }

    @Test("floats keep their width by default, so decoded floats re-encode unchanged")
    func floatWidthsByDefault() {
        #expect(hexString(CBOR.double(1.5).encoded()) == "fb3ff8000000000000")
        #expect(hexString(CBOR.float(1.5).encoded()) == "fa3fc00000")
        #expect(hexString(CBOR.half(0x3E00).encoded()) == "f93e00")
        #expect(hexString(CBOR.double(.infinity).encoded()) == "fb7ff0000000000000")
        #expect(hexString(CBOR.double(-.infinity).encoded()) == "fbfff0000000000000")
        #expect(hexString(CBOR.double(.nan).encoded()) == "fb7ff8000000000000")
        #expect(hexString(CBOR.float(.nan).encoded()) == "fa7fc00000")
    }

    @Test("shortest floats pick the narrowest exact width (RFC 8949 §4.1)", arguments: [
        (1.5, "f93e00"), (100000.0, "fa47c35000"), (1.1, "fb3ff199999999999a"),
        (5.960464477539063e-8, "f90001"), (6.103515625e-05, "f90400"), (65504.0, "f97bff"),
        (-0.0, "f98000"), (0.0, "f90000"), (.infinity, "f97c00"), (-.infinity, "f9fc00"),
        (.nan, "f97e00"), (3.4028234663852886e+38, "fa7f7fffff"), (1.0e+300, "fb7e37e43c8800759c"),
        (65505.0, "fa477fe100"), (2.9802322387695312e-8, "fa33000000"),
    ])
    func shortestFloats(_ value: Double, _ expected: String) throws {
        let options = CBOREncodingOptions(shortestFloats: true)
        let bytes = CBOR.double(value).encoded(options: options)
        #expect(hexString(bytes) == expected)
        let decoded = try #require(try CBOR.decode(bytes).doubleValue)
        #expect(decoded.bitPattern == value.bitPattern || (decoded.isNaN && value.isNaN))
    }

    @Test("NaN payloads survive shortest encoding only when a narrower width holds them")
    func nanPayloads() {
        let options = CBOREncodingOptions(shortestFloats: true)
        let payload = Double(bitPattern: 0x7FF8_0000_0000_0001)
        #expect(hexString(CBOR.double(payload).encoded(options: options)) == "fb7ff8000000000001")
        let halfPayload = Double(bitPattern: 0x7FF8_0400_0000_0000)
        #expect(hexString(CBOR.double(halfPayload).encoded(options: options)) == "f97e01")
        #expect(CBOR.half(exactly: 1.5) == .half(0x3E00))
        #expect(CBOR.half(exactly: 1.1) == nil)
        #expect(CBOR.half(0x7BFF).halfValue == 65504)
    }

    @Test("deterministic encoding sorts keys bytewise: 10, 100, -1, \"z\", \"aa\", [100], [-1], false")
    func deterministicKeyOrder() throws {
        // RFC 8949 §4.2.1 example, inserted in scrambled order.
        let map = CBORMap([
            (false, 7), ("aa", 4), (-1, 2), ([100], 5), (100, 1), ("z", 3), ([-1], 6), (10, 0),
        ])
        let bytes = CBOR.map(map).encoded(options: .deterministic)
        #expect(hexString(bytes) == "a8" + "0a00" + "186401" + "2002" + "617a03" + "62616104"
                + "81186405" + "812006" + "f407")
        let decoded = try CBOR.decode(bytes, options: .deterministic)
        #expect(decoded.mapValue?.values == [0, 1, 2, 3, 4, 5, 6, 7])
        // Default encoding keeps insertion order.
        #expect(CBOR.map(map).encoded().prefix(2) == [0xA8, 0xF4])
    }

    @Test("deterministic encoding sorts nested maps and narrows floats")
    func deterministicNested() {
        let value: CBOR = ["b": ["y": 1.5, "x": 2], "a": 0]
        #expect(hexString(value.encoded(options: .deterministic))
                == "a26161006162a26178026179f93e00")
    }

    @Test("text is encoded as its UTF-8 bytes with its byte length")
    func text() throws {
        #expect(hexString(CBOR.textString("水").encoded()) == "63e6b0b4")
        #expect(hexString(CBOR.textString("").encoded()) == "60")
        #expect(try CBOR.encode("IETF") == hex("6449455446"))
    }
}
