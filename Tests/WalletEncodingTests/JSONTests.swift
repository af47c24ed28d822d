import Testing
@testable import WalletEncoding

@Suite("JSON: strict parsing, member order, writing")
struct JSONTests {
    @Test("objects keep the member order received and written; equality ignores order")
    func memberOrder() throws {
        let value = try JSONValue.parse(#"{"z":1,"a":[true,null],"m":{"y":"é","b":2.5}}"#)
        #expect(value.objectValue?.keys == ["z", "a", "m"])
        #expect(value.serialized == #"{"z":1,"a":[true,null],"m":{"y":"é","b":2.5}}"#)
        #expect(value.canonicalSerialized == #"{"a":[true,null],"m":{"b":2.5,"y":"é"},"z":1}"#)
        let reordered = try JSONValue.parse(#"{"a":[true,null],"m":{"b":2.5,"y":"é"},"z":1}"#)
        #expect(value == reordered)
        #expect(value.hashValue == reordered.hashValue)
    }

    @Test("building an object appends new members, replaces in place, removes with nil")
    func building() {
        var object: JSONObject = ["b": 1, "a": 2]
        object["c"] = 3
        object["b"] = "two"
        object["a"] = nil
        #expect(object.keys == ["b", "c"])
        #expect(JSONValue.object(object).serialized == #"{"b":"two","c":3}"#)
        #expect(object.insertNew("b", 9) == false)
        #expect(object["b"] == "two")
        // A dictionary has no order of its own: members are sorted so output is stable.
        #expect(JSONValue.object(["y": 1, "x": 2] as [String: JSONValue]).serialized == #"{"x":2,"y":1}"#)
    }

    @Test("objects below, at and past the indexed size behave alike: order, replace, remove, duplicates, equality, hash")
    func objectSizes() throws {
        for size in [0, 1, JSONObject.indexThreshold, JSONObject.indexThreshold + 1, 40] {
            let names = (0..<size).map { "member_\(($0 * 7) % max(size, 1))_\($0)" }
            var object = JSONObject()
            for (offset, name) in names.enumerated() {
                let inserted = object.insertNew(name, .integer(Int64(offset)))
                #expect(inserted)
            }
            #expect(object.keys == names)
            #expect(object.count == size)
            for (offset, name) in names.enumerated() {
                #expect(object[name] == .integer(Int64(offset)))
                let duplicate = object.insertNew(name, .null)                     // a duplicate changes nothing
                #expect(!duplicate)
                #expect(object[name] == .integer(Int64(offset)))
            }
            #expect(object["absent"] == nil)
            #expect(object.dictionary.count == size)
            // The same members in reverse order: equal, same hash.
            let reversed = JSONObject(names.enumerated().reversed().map { ($0.element, JSONValue.integer(Int64($0.offset))) })
            #expect(reversed == object)
            #expect(reversed.hashValue == object.hashValue)
            #expect(Set([reversed, object]).count == 1)
            guard size > 2 else { continue }
            // Replacing keeps the position; removing closes the gap; the rest is still found.
            object[names[1]] = .string("replaced")
            #expect(object.keys == names)
            #expect(object != reversed)
            let removed = object.removeValue(forKey: names[0])
            #expect(removed == .integer(0))
            #expect(object.keys == Array(names.dropFirst()))
            for name in names.dropFirst(2) { #expect(object[name] != nil) }
            object[names[0]] = .bool(true)
            #expect(object.keys.last == names[0])
            #expect(object[names[0]] == .bool(true))
            // The parser refuses a duplicate at the end of an object of this size.
            let text = "{" + names.map { "\"\($0)\":1" }.joined(separator: ",") + ",\"\(names[size - 2])\":2}"
            #expect(throws: JSONError.self) { try JSONValue.parse(text) }
        }
    }

    @Test("canonical order sorts by UTF-16 code units, as RFC 8785 §3.2.3 does")
    func canonicalOrder() throws {
        // U+10000 is D800 DC00 in UTF-16 and sorts before U+FFFD (FFFD) there, though not by scalar value.
        let value = try JSONValue.parse("{\"\u{FFFD}\":1,\"\u{10000}\":2,\"a\":3}")
        #expect(value.canonicalSerialized == "{\"a\":3,\"\u{10000}\":2,\"\u{FFFD}\":1}")
    }

    @Test("malformed JSON fails with the reason and the offset", arguments: [
        ("", JSONError.Reason.unexpectedEnd, 0),
        ("{\"a\":1,\"a\":2}", .duplicateMember("a"), 12),
        ("[1,2", .unexpectedEnd, 4),
        ("[1 2]", .unexpectedCharacter(UInt8(ascii: "2")), 3),
        ("1 x", .trailingData, 2),
        ("tru", .invalidLiteral, 3),
        ("01", .trailingData, 1),
        ("-", .invalidNumber, 1),
        ("1e999", .numberOutOfRange, 5),
        ("\"\\x\"", .invalidEscape, 3),
        ("\"\\ud800\"", .invalidSurrogate, 7),
        ("\"\\udc00\"", .invalidSurrogate, 7),
        ("\"a\u{01}\"", .controlCharacterInString, 2),
        ("\"abc", .unexpectedEnd, 4),
        ("\"abc\\n\u{1F}\"", .controlCharacterInString, 6),
        ("\"abc\\", .unexpectedEnd, 5),
        ("[\"ok\",\"a\\q\"]", .invalidEscape, 10),
    ])
    func malformed(text: String, reason: JSONError.Reason, offset: Int) {
        #expect(throws: JSONError(reason, at: offset)) { try JSONValue.parse(text) }
    }

    @Test("invalid UTF-8 inside a string is rejected")
    func invalidUTF8() throws {
        #expect(throws: JSONError(.invalidUTF8, at: 1)) { try JSONValue.parse([0x22, 0xC0, 0x80, 0x22]) }
        #expect(throws: JSONError(.invalidUTF8, at: 1)) { try JSONValue.parse([0x22, 0xED, 0xA0, 0x80, 0x22]) }
        // Before an escape, after one, and unterminated (the end is reported: a run is
        // checked when its string or escape ends).
        #expect(throws: JSONError(.invalidUTF8, at: 2)) { try JSONValue.parse([0x22, 0x61, 0xC0, 0x80, 0x5C, 0x6E, 0x22]) }
        #expect(throws: JSONError(.invalidUTF8, at: 3)) { try JSONValue.parse([0x22, 0x5C, 0x6E, 0xC0, 0x80, 0x22]) }
        #expect(throws: JSONError(.unexpectedEnd, at: 3)) { try JSONValue.parse([0x22, 0xC0, 0x80]) }
        // Escapes and multi-byte text in one string, with runs on both sides.
        #expect(try JSONValue.parse("\"é\\n€\\u00e9x\"") == .string("é\n€éx"))
    }

    @Test("nesting and size limits are enforced before the work is done")
    func limits() {
        let deep = String(repeating: "[", count: 65) + String(repeating: "]", count: 65)
        #expect(throws: JSONError(.nestingTooDeep(limit: 64), at: 64)) { try JSONValue.parse(deep) }
        let veryDeep = String(repeating: "[", count: 100_000)
        #expect(throws: JSONError.self) { try JSONValue.parse(veryDeep) }
        #expect(throws: JSONError(.documentTooLarge(limit: 4), at: 0)) {
            try JSONValue.parse("[1,2]", limits: JSONLimits(maxBytes: 4))
        }
    }

    @Test("integers stay exact; other numbers are doubles")
    func numbers() throws {
        #expect(try JSONValue.parse("9007199254740993") == .integer(9_007_199_254_740_993))
        #expect(try JSONValue.parse("-0") == .integer(0))
        #expect(try JSONValue.parse("1.5e2") == .number(150))
        #expect(try JSONValue.parse("9223372036854775808") == .number(9.223372036854775808e18))
        #expect(JSONValue.number(.nan).serialized == "null")
    }

    @Test("typed member access: missing, wrong type and null are told apart")
    func typedAccess() throws {
        let object = try JSONValue.parseObject(#"{"s":"x","n":3,"f":1.5,"b":true,"o":{},"a":["p","q"],"z":null,"m":[1]}"#)
        #expect(try object.string("s") == "x")
        #expect(try object.int("n") == 3)
        #expect(try object.bool("b"))
        #expect(try object.stringArray("a") == ["p", "q"])
        #expect(try object.optionalString("absent") == nil)
        #expect(try object.optionalString("z") == nil)
        #expect(throws: JSONError(.missingMember("absent"))) { try object.string("absent") }
        #expect(throws: JSONError(.wrongType(member: "n", expected: .string, actual: .number))) { try object.optionalString("n") }
        #expect(throws: JSONError(.invalidValue(member: "f"))) { try object.int("f") }
        #expect(throws: JSONError(.invalidValue(member: "m"))) { try object.stringArray("m") }
        #expect(throws: JSONError(.wrongType(member: nil, expected: .object, actual: .array))) { try JSONValue.parseObject("[]") }
    }

    @Test("minimal escaping leaves DEL and C1 as they are; printable escaping escapes them")
    func escaping() {
        let text = JSONValue.string("a\"\\\n\u{1B}\u{7F}\u{9B}é/")
        #expect(text.serialized == "\"a\\\"\\\\\\n\\u001b\u{7F}\u{9B}é/\"")
        #expect(text.serialized(sortingMembers: false, escaping: .printable) == "\"a\\\"\\\\\\n\\u001b\\u007f\\u009bé/\"")
    }

    @Test("the byte writer escapes exactly as a scalar-at-a-time reference, for every scalar below U+0800 and beyond")
    func escapingMatchesScalarReference() {
        // The reference is the rule itself, one scalar at a time (RFC 8259 §7; `.printable`
        // adds DEL and C1), so the writer's byte runs and its C2 xx look-ahead are checked at
        // every boundary: alone, between ASCII, at the start and at the end of a string.
        func reference(_ text: String, _ escaping: JSONStringEscaping) -> String {
            var out = "\""
            for scalar in text.unicodeScalars {
                switch scalar.value {
                case 0x22: out += "\\\""
                case 0x5C: out += "\\\\"
                case 0x0A: out += "\\n"
                case 0x0D: out += "\\r"
                case 0x09: out += "\\t"
                case 0x08: out += "\\b"
                case 0x0C: out += "\\f"
                case let value where value < 0x20 || (escaping == .printable && (0x7F...0x9F).contains(value)):
                    out += "\\u00" + (value < 0x10 ? "0" : "") + String(value, radix: 16)
                default: out.unicodeScalars.append(scalar)
                }
            }
            return out + "\""
        }
        var samples = (0..<0x800).compactMap { Unicode.Scalar(UInt32($0)) }
        samples += [0xFFFD, 0x2028, 0xFEFF, 0x10000, 0x1F600, 0x10FFFF].compactMap { Unicode.Scalar(UInt32($0)) }
        for escaping in [JSONStringEscaping.minimal, .printable] {
            let writer = JSONWriter(escaping: escaping)
            var all = ""
            var mismatches: [UInt32] = []
            for scalar in samples {
                var one = ""
                one.unicodeScalars.append(scalar)
                for text in [one, "a" + one, one + "z", "ab" + one + one + "yz"] where writer.string(.string(text)) != reference(text, escaping) {
                    mismatches.append(scalar.value)
                }
                all.unicodeScalars.append(scalar)
            }
            // The same scalars at every offset of an 8-byte word and across two words, so that
            // the word-at-a-time scan stops exactly where the byte loop must take over.
            for value in [0x00, 0x1F, 0x20, 0x21, 0x22, 0x5B, 0x5C, 0x5D, 0x7E, 0x7F, 0x80, 0x9F, 0xA0, 0x100, 0x7FF, 0xFFFD, 0x1F600] {
                let one = String(Character(Unicode.Scalar(UInt32(value))!))
                for offset in 0..<17 {
                    let text = String(repeating: "x", count: offset) + one + String(repeating: "y", count: 9) + one
                    if writer.string(.string(text)) != reference(text, escaping) { mismatches.append(UInt32(value)) }
                }
            }
            #expect(mismatches.isEmpty, "escaped differently: \(mismatches.prefix(8).map { String($0, radix: 16) })")
            let expected = reference(all, escaping)
            #expect(writer.utf8(.string(all)) == Array(expected.utf8))
            var appended = "x"
            JSONWriter.appendString(all, escaping: escaping, to: &appended)
            #expect(appended == "x" + expected)
        }
    }

    @Test("written bytes and written text agree; sorted members, nesting and numbers")
    func bytesMatchText() throws {
        let value: JSONValue = ["z": ["é\u{0}", 1.5, -3, .null, true], "a": ["k": "v", "b": [[:], []]], "m": 1e300, "n": .number(.infinity)]
        for writer in [JSONWriter(), JSONWriter(sortingMembers: true), JSONWriter(indent: "  "), JSONWriter(sortingMembers: true, escaping: .printable, indent: "\t")] {
            let text = writer.string(value)
            #expect(writer.utf8(value) == Array(text.utf8))
            var prefixed = "["
            writer.write(value, into: &prefixed)
            #expect(prefixed == "[" + text)
        }
        #expect(value.serializedBytes == Array(value.serialized.utf8))
        #expect(JSONWriter(sortingMembers: true).string(value) == #"{"a":{"b":[{},[]],"k":"v"},"m":1e+300,"n":null,"z":["é\u0000",1.5,-3,null,true]}"#)
        #expect(value.serialized == #"{"z":["é\u0000",1.5,-3,null,true],"a":{"k":"v","b":[{},[]]},"m":1e+300,"n":null}"#)
    }

    @Test("pretty output indents and round-trips")
    func pretty() throws {
        let value: JSONValue = ["a": [1, 2], "b": [:], "c": []]
        let text = JSONWriter(indent: "  ").string(value)
        #expect(text == "{\n  \"a\": [\n    1,\n    2\n  ],\n  \"b\": {},\n  \"c\": []\n}")
        #expect(try JSONValue.parse(text) == value)
    }

    @Test("every escaped string round-trips through the writer and the parser")
    func roundTrip() throws {
        var scalars = ""
        for value in [0, 1, 0x1F, 0x20, 0x22, 0x5C, 0x7F, 0x80, 0x9F, 0xA0, 0x2028, 0xFFFF, 0x10000, 0x10FFFF] {
            scalars.unicodeScalars.append(Unicode.Scalar(UInt32(value))!)
        }
        for escaping in [JSONStringEscaping.minimal, .printable] {
            let written = JSONValue.string(scalars).serialized(sortingMembers: false, escaping: escaping)
            #expect(try JSONValue.parse(written) == .string(scalars))
        }
    }
}
