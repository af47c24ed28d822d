import Testing
@testable import CBOR

@Suite("The CBOR value type")
struct CBORValueTests {
    @Test("literals build the matching cases")
    func literals() {
        #expect(CBOR(integerLiteral: -10) == .negative(9))
        #expect(("a" as CBOR) == .textString("a"))
        #expect(([1, "x"] as CBOR) == .array([.unsigned(1), .textString("x")]))
        #expect((["k": true] as CBOR) == .map(CBORMap([(.textString("k"), .boolean(true))])))
        #expect((1.5 as CBOR) == .double(1.5))
        #expect((nil as CBOR) == .null)
        #expect(CBOR(Int.min) == .negative(UInt64(Int.max)))
        #expect(CBOR(exactly: UInt64.max) == .unsigned(.max))
        #expect(CBOR(exactly: Int8(-128)) == .negative(127))
    }

    @Test("accessors read the matching case and nothing else")
    func accessors() {
        #expect(CBOR(-5).intValue == -5)
        #expect(CBOR.unsigned(.max).intValue == nil)
        #expect(CBOR.negative(.max).intValue == nil)
        #expect(CBOR.unsigned(7).uint64Value == 7)
        #expect(CBOR.byteString([1]).bytesValue == [1])
        #expect(CBOR.textString("s").stringValue == "s")
        #expect(CBOR.textString("s").bytesValue == nil)
        #expect(CBOR.float(0.5).doubleValue == 0.5)
        #expect(CBOR.tagged(24, 1).tagContent == 1)
        let map: CBOR = ["a": 1, 2: "two", [1]: "array key"]
        #expect(map["a"] == 1)
        #expect(map[2] == "two")
        #expect(map[CBOR.array([1])] == "array key")
        #expect(map["missing"] == CBOR?.none)
        let array: CBOR = [10, 20]
        #expect(array[1] == 20)
        #expect(array[2] == CBOR?.none)
        #expect(array[-1] == CBOR?.none)
    }

    @Test("equality is exact: NaN equals NaN, zeros differ by sign, text compares by bytes")
    func equality() {
        #expect(CBOR.double(.nan) == CBOR.double(.nan))
        #expect(CBOR.double(0.0) != CBOR.double(-0.0))
        #expect(CBOR.double(1) != CBOR.float(1))
        #expect(CBOR.textString("\u{E9}") != CBOR.textString("e\u{301}"))
        #expect(Set<CBOR>([.textString("\u{E9}"), .textString("e\u{301}")]).count == 2)
        #expect((["a": 1, "b": 2] as CBOR) != (["b": 2, "a": 1] as CBOR))
    }

    @Test("maps keep order, replace in place, and remove by key")
    func mapEditing() {
        var map: CBORMap = ["b": 1, "a": 2]
        map["b"] = 3
        map["c"] = 4
        #expect(map.keys == ["b", "a", "c"])
        #expect(map.values == [3, 2, 4])
        map["a"] = nil
        #expect(map.keys == ["b", "c"])
        map.append(key: "b", value: 5)
        #expect(map.count == 3)
        #expect(map["b"] == 3)
        #expect(map.map(\.key) == ["b", "c", "b"])
    }
}
