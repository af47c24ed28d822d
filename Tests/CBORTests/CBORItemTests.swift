import Testing
@testable import CBOR

@Suite("Decoded items give back the exact bytes received")
struct CBORItemTests {
    @Test("a non-preferred integer inside an array keeps its two-byte encoding")
    func nonPreferredInteger() throws {
        let item = try CBOR.decodeItem(hex("8218016161"))
        let first = try #require(item[0])
        #expect(Array(first.encodedBytes) == [0x18, 0x01])
        #expect(first.value == 1)
        #expect(first.value.encoded() == [0x01])     // a re-encoding would differ
        #expect(first.byteRange == 1..<3)
        #expect(item[1]?.contentBytes.map(Array.init) == [0x61])
        #expect(item[2] == nil)
        #expect(item[-1] == nil)
    }

    @Test("a map with unsorted keys keeps its order and its bytes")
    func unsortedMap() throws {
        let bytes = try hex("a2616202616101")
        let item = try CBOR.decodeItem(bytes)
        #expect(Array(item.encodedBytes) == bytes)
        #expect(item.value.mapValue?.keys == ["b", "a"])
        #expect(item["a"].map { Array($0.encodedBytes) } == [0x01])
        #expect(try item.mapEntries.map { Array($0.key.encodedBytes) } == [hex("6162"), hex("6161")])
        #expect(try item.value.encoded(options: .deterministic) == hex("a2616101616202"))
        #expect(item.count == 2)
    }

    @Test("an indefinite-length string keeps its chunks and break")
    func indefiniteString() throws {
        let item = try CBOR.decodeItem(hex("825f41014102ff01"))
        let string = try #require(item[0])
        #expect(string.isIndefiniteLength)
        #expect(try Array(string.encodedBytes) == hex("5f41014102ff"))
        #expect(string.value == .byteString([1, 2]))
        #expect(try string.children.map { Array($0.encodedBytes) } == [hex("4101"), hex("4102")])
        #expect(string.contentBytes == nil)
        #expect(Array(try #require(item[1]).encodedBytes) == [0x01])
    }

    @Test("integer keys reach map values, and tags expose their content")
    func integerKeysAndTags() throws {
        let item = try CBOR.decodeItem(hex("a2012603c11a514b67b0"))
        #expect(item[1].map { Array($0.encodedBytes) } == [0x26])
        let tagged = try #require(item[3])
        #expect(tagged.tag == 1)
        #expect(try tagged.content.map { Array($0.encodedBytes) } == hex("1a514b67b0"))
        #expect(tagged.majorType == 6)
    }

    @Test("tag 24 content decodes in place, with offsets into the outer buffer")
    func embeddedItem() throws {
        // [24(<< {"a": 1 encoded as 0x1801} >>), 7]
        let inner = try hex("a161611801")
        let bytes = [0x82, 0xD8, 0x18, 0x45] + inner + [0x07]
        let item = try CBOR.decodeItem(bytes)
        let embedded = try #require(item[0]).embeddedItem()
        #expect(Array(embedded.encodedBytes) == inner)
        #expect(embedded.byteRange == 4..<9)
        #expect(embedded["a"].map { Array($0.encodedBytes) } == [0x18, 0x01])
        #expect(embedded.value == ["a": 1])
        #expect(throws: CBORError.typeMismatch(expected: "tag 24 with a byte string", path: "")) {
            try item[1]?.embeddedItem()
        }
        // Bad embedded bytes report offsets inside the outer buffer.
        let broken = try CBOR.decodeItem(hex("d81842 61ff"))
        #expect(throws: CBORError.invalidUTF8(offset: 4)) { try broken.embeddedItem() }
        let trailing = try CBOR.decodeItem(hex("d818420101"))
        #expect(throws: CBORError.trailingBytes(offset: 4)) { try trailing.embeddedItem() }
    }

    @Test("tag 24 helpers round-trip values and keep encoded bytes")
    func embeddedHelpers() throws {
        let value: CBOR = ["docType": "org.iso.18013.5.1.mDL", "n": [1, 2]]
        let wrapped = CBOR.embedded(value)
        #expect(wrapped.tag == 24)
        #expect(wrapped.tagContent == .byteString(value.encoded()))
        #expect(try wrapped.embeddedValue() == value)
        let raw = CBOR.embedded(encodedBytes: try hex("1801"))
        #expect(try raw.embeddedValue() == 1)
        let item = try CBOR.decodeItem(raw.encoded())
        #expect(try Array(try item.embeddedItem().encodedBytes) == hex("1801"))
        #expect(throws: CBORError.typeMismatch(expected: "tag 24 with a byte string", path: "")) {
            try CBOR.textString("x").embeddedValue()
        }
    }

    @Test("decodeItemPrefix reports the bytes used and decodeItem rejects trailing bytes")
    func prefixes() throws {
        let item = try CBOR.decodeItemPrefix(hex("83010203ff"))
        #expect(item.byteRange == 0..<4)
        #expect(throws: CBORError.trailingBytes(offset: 4)) { try CBOR.decodeItem(hex("83010203ff")) }
    }
}
