import Testing
@testable import CBOR

/// ``CBORPrefixScanner`` against the decoder: fed any prefix of an item, byte by byte or
/// all at once, it reports the decoder's byte count exactly when the item is whole, and
/// it refuses only what the decoder refuses.
@Suite("The prefix scanner finds the decoder's item boundary")
struct PrefixScannerTests {
    /// Scans `bytes` as chunks of `chunk` bytes arriving in order; the outcome after each.
    private static func feed(_ bytes: [UInt8], chunk: Int, limit: Int = 1 << 20) -> [CBORPrefixScanner.Outcome] {
        var scanner = CBORPrefixScanner(limit: limit)
        var outcomes: [CBORPrefixScanner.Outcome] = []
        var end = 0
        repeat {
            end = min(end + chunk, bytes.count)
            outcomes.append(bytes.withUnsafeBufferPointer { scanner.scan(UnsafeBufferPointer(rebasing: $0[..<end])) })
        } while end < bytes.count
        return outcomes
    }

    @Test("every RFC 8949 Appendix A vector, whole, with a trailing item, and one byte at a time")
    func appendixA() throws {
        let vectors = AppendixAVector.all
        #expect(vectors.count > 50)
        var decoded = 0
        for vector in vectors {
            let bytes = try hex(vector.hex)
            // A few vectors are simple values the default options refuse; each vector is
            // one whole item all the same.
            var count = bytes.count
            if let prefix = try? CBOR.decodePrefix(bytes) {
                count = prefix.byteCount
                decoded += 1
            }
            #expect(Self.feed(bytes, chunk: bytes.count) == [.complete(byteCount: count)], "\(vector.hex)")
            #expect(Self.feed(bytes + [0x01, 0x02], chunk: bytes.count + 2) == [.complete(byteCount: count)], "\(vector.hex)")
            let stepwise = Self.feed(bytes, chunk: 1)
            #expect(stepwise.last == .complete(byteCount: count), "\(vector.hex)")
            #expect(stepwise.dropLast().allSatisfy { $0 == .needMore }, "\(vector.hex)")
        }
        #expect(decoded > 60)
    }

    @Test("every truncation of a nested item needs more; every byte change is refused only where the decoder refuses")
    func truncationsAndChanges() throws {
        let item: CBOR = .map(CBORMap([
            ("data", .byteString([UInt8](repeating: 7, count: 300))),
            ("list", .array([1, -2, "three", .tagged(24, .byteString([0xA1, 0x01, 0x02])), .double(1.5), .null])),
            (7, .map(CBORMap([("a", .array([])), ("b", .map(CBORMap()))]))),
        ]))
        let encoded = item.encoded()
        #expect(encoded.first == 0xA3)
        // One more entry, an indefinite array holding an indefinite text string (as a peer
        // may send) as the key of 2.
        let document = [0xA4] + encoded.dropFirst() + [0x9F, 0x01, 0x7F, 0x61, 0x61, 0x62, 0x62, 0x63, 0xFF, 0xFF, 0x02]
        let count = try CBOR.decodePrefix(document).byteCount
        #expect(count == document.count)
        for length in 0..<document.count {
            #expect(Self.feed(Array(document[..<length]), chunk: max(length, 1)) == [.needMore], "length \(length)")
        }
        #expect(Self.feed(document, chunk: 3).last == .complete(byteCount: count))
        for offset in document.indices {
            for value: UInt8 in [0x00, 0x1C, 0x3F, 0x5F, 0x7F, 0x9F, 0xBF, 0xDF, 0xFF, document[offset] ^ 0x01] {
                var mutated = document
                mutated[offset] = value
                let outcome = Self.feed(mutated, chunk: mutated.count).last
                switch outcome {
                case .malformed:
                    #expect(throws: CBORError.self, "offset \(offset) value \(value)") { try CBOR.decodePrefix(mutated) }
                case .complete(let byteCount):
                    // Whole by structure: the decoder reads the same item, or refuses what
                    // the scanner does not check (UTF-8, simple values, keys).
                    if let decoded = try? CBOR.decodePrefix(mutated) { #expect(decoded.byteCount == byteCount) }
                default:
                    // Still open: the decoder cannot have a whole item either.
                    if let decoded = try? CBOR.decodePrefix(mutated) {
                        Issue.record("offset \(offset) value \(value): the decoder read \(decoded.byteCount) bytes, the scanner \(String(describing: outcome))")
                    }
                }
            }
        }
    }

    @Test("reserved heads, stray breaks and indefinite integers or tags are malformed; past the limit is too large")
    func refusals() {
        for bytes: [UInt8] in [[0x1C], [0x3D], [0x5E], [0xFF], [0x1F], [0x3F], [0xDF], [0x81, 0xFF], [0xA1, 0x01, 0xFF]] {
            #expect(Self.feed(bytes, chunk: bytes.count) == [.malformed], "\(hexString(bytes))")
        }
        // Once malformed, it stays so whatever follows (until reset).
        #expect(Self.feed([0x82, 0x3F, 0xFA, 0xFD, 0x4F, 0xC0, 0x24], chunk: 2) == [.malformed, .malformed, .malformed, .malformed])
        // A string, array or map declaring more than the limit, and one item crossing it.
        #expect(Self.feed([0x59, 0x01, 0x00], chunk: 3, limit: 100) == [.tooLarge(byteCount: 101)])
        #expect(Self.feed([0x99, 0x01, 0x00], chunk: 3, limit: 100) == [.tooLarge(byteCount: 101)])
        #expect(Self.feed([0x5B, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF], chunk: 9) == [.tooLarge(byteCount: (1 << 20) + 1)])
        #expect(Self.feed([0x82, 0x58, 0x60], chunk: 3, limit: 100) == [.needMore])
        #expect(Self.feed([0x82, 0x58, 0x60], chunk: 3, limit: 98) == [.tooLarge(byteCount: 99)])
        // Nesting past the decoder's greatest depth.
        let deep = [UInt8](repeating: 0x81, count: CBORDecodingOptions.maxSupportedDepth + 2)
        #expect(Self.feed(deep, chunk: deep.count) == [.malformed])
        #expect(throws: CBORError.self) { try CBOR.decodePrefix(deep + [0x00]) }
    }

    @Test("an unlimited scanner (limit Int.max) reads the largest declared lengths without overflow")
    func hugeDeclaredLengths() {
        for head in [[0x5b], [0x7b], [0x9b], [0xbb]] as [[UInt8]] {
            let bytes = head + [0x7f, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff]
            let outcome = Self.feed(bytes, chunk: bytes.count, limit: .max).last
            // The limit is clamped to Int.max / 4, past which the scan's arithmetic would overflow.
            #expect(outcome == .tooLarge(byteCount: Int.max / 4 + 1), "\(head)")
        }
    }

    @Test("a message of 20,000 items arriving one byte at a time: every head is read once")
    func linearWork() throws {
        let message = CBOR.array((0..<20_000).map { CBOR.unsigned(UInt64($0 % 1000)) }).encoded()
        var scanner = CBORPrefixScanner(limit: 1 << 20)
        var outcome = CBORPrefixScanner.Outcome.needMore
        for end in 1...message.count {
            outcome = message.withUnsafeBufferPointer { scanner.scan(UnsafeBufferPointer(rebasing: $0[..<end])) }
            if end < message.count { #expect(outcome == .needMore) }
        }
        #expect(outcome == .complete(byteCount: message.count))
        #expect(scanner.headsRead == 20_001)
        scanner.reset()
        #expect(scanner.headsRead == 0)
    }
}
