import Foundation
import Testing
@testable import CBOR

struct Address: Codable, Equatable {
    var street: String
    var number: Int
}

enum Shape: Codable, Equatable {
    case circle(radius: Double)
    case square(side: Int)
}

struct Person: Codable, Equatable {
    var name: String
    var age: UInt8
    var nickname: String?
    var portrait: [UInt8]
    var signature: Data
    var born: Date
    var address: Address
    var tags: [String]
    var shape: Shape
    var extra: CBOR
    var small: Int8
    var big: UInt64
    var low: Int64
    var ratio: Float
}

final class Base: Codable {
    var id: Int
    init(id: Int) { self.id = id }
}

struct Wrapper: Codable, Equatable {
    var base: Int
    var own: String

    enum CodingKeys: String, CodingKey { case own }

    init(base: Int, own: String) {
        self.base = base
        self.own = own
    }

    init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        own = try container.decode(String.self, forKey: .own)
        base = try Base(from: container.superDecoder()).id
    }

    func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(own, forKey: .own)
        try Base(id: base).encode(to: container.superEncoder())
    }
}

struct Small: Codable, Equatable { var age: UInt8 }
struct Signed: Codable, Equatable { var value: Int8 }
struct Unsigned: Codable, Equatable { var value: UInt }
struct Header: Codable, Equatable {
    var alg: Int
    enum CodingKeys: Int, CodingKey { case alg = 1 }
}

@Suite("Codable through CBOREncoder and CBORDecoder")
struct CodableTests {
    static let person = Person(
        name: "Erika", age: 42, nickname: nil, portrait: [0xFF, 0xD8], signature: Data([1, 2, 3]),
        born: Date(timeIntervalSince1970: 1_363_896_240), address: Address(street: "Heidestraße", number: 17),
        tags: ["a", "b"], shape: .circle(radius: 1.5), extra: .tagged(1004, "1985-04-12"),
        small: -128, big: .max, low: .min, ratio: 0.25)

    @Test("large maps are looked up through an index: a 20,000-key dictionary, and int and text keys among other entries, decode exactly")
    func largeMaps() throws {
        let dictionary = Dictionary(uniqueKeysWithValues: (0..<20_000).map { ("k\($0)", $0) })
        let bytes = try CBOREncoder().encode(dictionary)
        #expect(try CBORDecoder().decode([String: Int].self, from: bytes) == dictionary)
        // A Header (int key 1) and a Small (text key) in maps of 40 entries, the wanted one last.
        var padding = (0..<39).map { (CBOR.textString("pad\($0)"), CBOR.unsigned(UInt64($0))) }
        let header = CBOR.map(CBORMap(padding + [(CBOR.unsigned(1), CBOR.negative(6))]))
        #expect(try CBORDecoder().decode(Header.self, from: header.encoded()) == Header(alg: -7))
        padding.append((.textString("age"), .unsigned(200)))
        #expect(try CBORDecoder().decode(Small.self, from: CBOR.map(CBORMap(padding)).encoded()) == Small(age: 200))
        #expect(throws: CBORError.self) { try CBORDecoder().decode(Small.self, from: CBOR.map(CBORMap(padding.dropLast())).encoded()) }
    }

    @Test("a struct with nested types, optionals, bytes and dates round-trips")
    func roundTrip() throws {
        let bytes = try CBOREncoder().encode(Self.person)
        let decoded = try CBORDecoder().decode(Person.self, from: bytes)
        #expect(decoded == Self.person)
    }

    @Test("keys are text in declaration order; bytes are byte strings; nil is omitted; CBOR passes through")
    func shape() throws {
        let value = try CBOREncoder().encodeToCBOR(Self.person)
        let keys = try #require(value.mapValue).keys.compactMap(\.stringValue)
        #expect(keys == ["name", "age", "portrait", "signature", "born", "address", "tags", "shape",
                         "extra", "small", "big", "low", "ratio"])
        #expect(value["portrait"] == .byteString([0xFF, 0xD8]))
        #expect(value["signature"] == .byteString([1, 2, 3]))
        #expect(value["born"] == .tagged(0, "2013-03-21T20:04:00Z"))
        #expect(value["extra"] == .tagged(1004, "1985-04-12"))
        #expect(value["low"] == .negative(UInt64(Int64.max)))
        #expect(value["ratio"] == .float(0.25))
    }

    @Test("explicit nil is null, and null decodes to nil")
    func nulls() throws {
        struct Explicit: Codable, Equatable {
            var a: Int?
            func encode(to encoder: any Encoder) throws {
                var container = encoder.container(keyedBy: CodingKeys.self)
                try container.encode(a, forKey: .a)
            }
        }
        #expect(try CBOREncoder().encodeToCBOR(Explicit(a: nil)) == ["a": nil])
        #expect(try CBORDecoder().decode(Explicit.self, from: ["a": nil]) == Explicit(a: nil))
        #expect(try CBORDecoder().decode(Explicit.self, from: [:]) == Explicit(a: nil))
        #expect(try CBORDecoder().decode([Int?].self, from: [1, nil]) == [1, nil])
    }

    @Test("dates can be written as tag 1 epoch seconds, and both tags decode")
    func dateStrategies() throws {
        var encoder = CBOREncoder()
        encoder.dateEncodingStrategy = .epochSeconds
        let date = Date(timeIntervalSince1970: 1_363_896_240)
        #expect(try encoder.encodeToCBOR(date) == .tagged(1, 1_363_896_240))
        #expect(try encoder.encodeToCBOR(Date(timeIntervalSince1970: 1.5)) == .tagged(1, 1.5))
        #expect(try CBORDecoder().decode(Date.self, from: .tagged(1, 1_363_896_240)) == date)
        #expect(try CBORDecoder().decode(Date.self, from: .tagged(0, "2013-03-21T20:04:00Z")) == date)
        #expect(throws: CBORError.dataCorrupted(description: "not an RFC 3339 date-time: yesterday", path: "")) {
            try CBORDecoder().decode(Date.self, from: .tagged(0, "yesterday"))
        }
    }

    @Test("integers out of the target type's range throw integerOutOfRange with the path")
    func integerRanges() throws {
        #expect(throws: CBORError.integerOutOfRange(path: "age")) {
            try CBORDecoder().decode(Small.self, from: ["age": 300])
        }
        #expect(throws: CBORError.integerOutOfRange(path: "value")) {
            try CBORDecoder().decode(Signed.self, from: ["value": -129])
        }
        #expect(try CBORDecoder().decode(Signed.self, from: ["value": -128]) == Signed(value: -128))
        #expect(throws: CBORError.integerOutOfRange(path: "value")) {
            try CBORDecoder().decode(Unsigned.self, from: ["value": -1])
        }
        #expect(throws: CBORError.integerOutOfRange(path: "[1]")) {
            try CBORDecoder().decode([Int64].self, from: [0, .negative(UInt64(Int64.max) + 1)])
        }
        #expect(try CBORDecoder().decode([Int64].self, from: [.negative(UInt64(Int64.max))]) == [.min])
    }

    @Test("type mismatches, missing keys and missing values name the path")
    func errors() {
        #expect(throws: CBORError.typeMismatch(expected: "a text string", path: "address.street")) {
            try CBORDecoder().decode([String: Address].self, from: ["address": ["street": 1, "number": 2]])
        }
        #expect(throws: CBORError.keyNotFound(key: "number", path: "")) {
            try CBORDecoder().decode(Address.self, from: ["street": "x"])
        }
        #expect(throws: CBORError.valueNotFound(expected: "a text string", path: "street")) {
            try CBORDecoder().decode(Address.self, from: ["street": nil, "number": 1])
        }
        #expect(throws: CBORError.typeMismatch(expected: "a map", path: "")) {
            try CBORDecoder().decode(Address.self, from: [1])
        }
        #expect(throws: CBORError.trailingBytes(offset: 1)) {
            try CBORDecoder().decode(Int.self, from: [0x01, 0x02])
        }
    }

    @Test("superEncoder and superDecoder nest the parent under \"super\"")
    func superCoders() throws {
        let value = try CBOREncoder().encodeToCBOR(Wrapper(base: 7, own: "x"))
        #expect(value == ["own": "x", "super": ["id": 7]])
        #expect(try CBORDecoder().decode(Wrapper.self, from: value) == Wrapper(base: 7, own: "x"))
    }

    @Test("integer coding keys can become integer map keys, and are found either way")
    func integerKeys() throws {
        var encoder = CBOREncoder()
        encoder.useIntegerKeys = true
        #expect(try encoder.encodeToCBOR(Header(alg: -7)) == [1: -7])
        #expect(try CBORDecoder().decode(Header.self, from: [1: -7]) == Header(alg: -7))
        #expect(try CBOREncoder().encodeToCBOR(Header(alg: -7)) == ["alg": -7])
    }

    @Test("CBOR values decode as themselves and map to other coders")
    func cborIsCodable() throws {
        let value: CBOR = ["a": [1, "two", 3.5, true, nil]]
        #expect(try CBORDecoder().decode(CBOR.self, from: value.encoded()) == value)
        let json = try JSONEncoder().encode(value)
        #expect(String(decoding: json, as: UTF8.self) == #"{"a":[1,"two",3.5,true,null]}"#)
        let back = try JSONDecoder().decode(CBOR.self, from: json)
        #expect(back == ["a": [1, "two", 3.5, true, nil]])
    }
}
