import CBOR
import Foundation
import Testing
import WalletInspect

/// Issue 12, acceptance 4: any input of n bytes is decoded and printed by `wallet inspect`
/// in O(n) work and memory. `Inspection.inspect` counts, through one budget, the bytes
/// every step reads and allocates (decoding, diagnostic rendering, the COSE_Sign1 and
/// certificate summaries, the output); these tests assert the counted figures (never a
/// time) against the input size, or the typed work-limit error.
@Suite("wallet inspect does linear, counted work")
struct InspectionWorkTests {
    /// What `wallet inspect` uses by default: pretty, tag 24 expanded.
    static let pretty = CBORDiagnosticOptions(expandEmbeddedCBOR: true, pretty: true, maxWork: .max)
    static let compact = CBORDiagnosticOptions(expandEmbeddedCBOR: true, pretty: false, maxWork: .max)

    static func bigEndian(_ value: Int) -> [UInt8] {
        [UInt8(value >> 24 & 0xff), UInt8(value >> 16 & 0xff), UInt8(value >> 8 & 0xff), UInt8(value & 0xff)]
    }

    /// `levels` nested tag-24 byte strings around `payload` bytes: `d8 18 5a <len> (...)`,
    /// written in one pass, outermost head first (lengths computed from the inside out).
    static func nestedTag24(levels: Int, payload: Int) -> [UInt8] {
        var lengths = [5 + payload]
        for _ in 0..<levels { lengths.append(7 + lengths[lengths.count - 1]) }
        var bytes: [UInt8] = []
        bytes.reserveCapacity(lengths[levels])
        for level in stride(from: levels, to: 0, by: -1) {
            bytes += [0xd8, 0x18, 0x5a] + bigEndian(lengths[level - 1])
        }
        bytes += [0x5a] + bigEndian(payload)
        bytes += repeatElement(0xab, count: payload)
        return bytes
    }

    /// `levels` COSE_Sign1 messages, each carrying the next as its payload the way an mdoc
    /// issuerAuth carries its MSO (`bstr .cbor 24(bstr .cbor next)`), around `payload`
    /// bytes: `18([h'a10126', {4: h'6b6964'}, h'<24(<<next>>)>', h'<64 bytes>'])`.
    /// One pass: heads outermost first, the payload, then the signatures innermost first.
    static func nestedSign1(levels: Int, payload: Int) -> [UInt8] {
        let head: [UInt8] = [0xd2, 0x84, 0x43, 0xa1, 0x01, 0x26, 0xa1, 0x04, 0x43, 0x6b, 0x69, 0x64]
        let signature: [UInt8] = [0x58, 0x40] + [UInt8](repeating: 0x5e, count: 64)
        // payloadLengths[k]: the payload content of level k; level k is 83 bytes plus it.
        var payloadLengths = [Int](repeating: payload, count: levels)
        for level in stride(from: levels - 2, through: 0, by: -1) {
            payloadLengths[level] = 7 + 83 + payloadLengths[level + 1]
        }
        var bytes: [UInt8] = []
        bytes.reserveCapacity(83 + payloadLengths[0])
        for level in 0..<levels {
            bytes += head + [0x5a] + bigEndian(payloadLengths[level])
            if level < levels - 1 { bytes += [0xd8, 0x18, 0x5a] + bigEndian(83 + payloadLengths[level + 1]) }
        }
        bytes += repeatElement(0xab, count: payload)
        for _ in 0..<levels { bytes += signature }
        return bytes
    }

    /// `levels` untagged four-element arrays shaped like COSE_Sign1 but refused by their
    /// headers (the protected bucket `h'01'` is not a map), each holding the next in its
    /// unprotected map, around a byte string of `payload` bytes:
    /// `[h'01', {-65537: [h'01', {-65537: ...}, h'', h'']}, h'', h'']`. The summary search
    /// looks at every level it may (16), so each refused shape must cost no copy of what it holds.
    static func nestedLookalikes(levels: Int, payload: Int) -> [UInt8] {
        var bytes: [UInt8] = []
        bytes.reserveCapacity(levels * 11 + payload + 5)
        for _ in 0..<levels { bytes += [0x84, 0x41, 0x01, 0xa1, 0x3a, 0x00, 0x01, 0x00, 0x00] }
        bytes += [0x5a] + bigEndian(payload)
        bytes += repeatElement(0xab, count: payload)
        for _ in 0..<levels { bytes += [0x40, 0x40] }
        return bytes
    }

    /// An array of `count` valid COSE_Sign1 (untagged), each with a payload of 60 nested
    /// arrays: 61 bytes that pretty-print to about 3.7 KB. Every summary renders its
    /// payload; with a budget per summary (as before) the output grew ~50 times the input.
    static func manyAmplifyingSign1(count: Int) -> [UInt8] {
        let payload = [UInt8](repeating: 0x81, count: 60) + [0x00]
        let message: [UInt8] = [0x84, 0x43, 0xa1, 0x01, 0x26, 0xa0, 0x58, UInt8(payload.count)] + payload + [0x40]
        var bytes: [UInt8] = [0x9a] + bigEndian(count)
        bytes.reserveCapacity(5 + count * message.count)
        for _ in 0..<count { bytes += message }
        return bytes
    }

    /// Runs `body` on a thread of its own: seconds of synchronous work (a debug build
    /// rendering 8 MiB) on a thread of the cooperative pool (on Linux, dispatch's
    /// root-queue workers, two on a 2-core machine) would stall every other test's tasks
    /// and turn their request timeouts into failures.
    static func offPool<T: Sendable>(_ body: @escaping @Sendable () throws(InspectionError) -> T) async throws(InspectionError) -> T {
        let result = await withCheckedContinuation { (continuation: CheckedContinuation<Result<T, InspectionError>, Never>) in
            Thread {
                do throws(InspectionError) { continuation.resume(returning: .success(try body())) } catch {
                    continuation.resume(returning: .failure(error))
                }
            }.start()
        }
        return try result.get()
    }

    /// Inspects `input` (off the cooperative pool) and checks the counted figures against its size.
    static func inspect(_ input: [UInt8], options: CBORDiagnosticOptions = pretty, read: Int, allocated: Int,
                        sourceLocation: SourceLocation = #_sourceLocation) async throws -> InspectionRendering {
        let n = input.count
        let rendering = try await offPool { () throws(InspectionError) in try Inspection.inspect(text: nil, bytes: input, options: options) }
        print("inspect \(n) bytes: read \(rendering.work.bytesRead) (\(rendering.work.bytesRead / n)n),"
              + " allocated \(rendering.work.bytesAllocated) (\(rendering.work.bytesAllocated / n)n), limit \(rendering.limit)")
        #expect(rendering.work.bytesRead <= read * n, "bytes read", sourceLocation: sourceLocation)
        #expect(rendering.work.bytesAllocated <= allocated * n, "bytes allocated", sourceLocation: sourceLocation)
        #expect(rendering.work.total <= rendering.limit, sourceLocation: sourceLocation)
        #expect(rendering.limit == Inspection.workLimit(forInputSize: n), sourceLocation: sourceLocation)
        return rendering
    }

    @Test("8 MiB of nested tag-24 byte strings through Inspection.render: every level expanded, reading at most 3n and allocating at most 12n")
    func nestedTag24() async throws {
        let input = Self.nestedTag24(levels: 120, payload: 8 << 20)
        #expect(input.count > 8 << 20)
        let rendering = try await Self.inspect(input, read: 3, allocated: 12)
        // (Booleans first: a failed expectation would print the whole text.)
        let expandedEveryLevel = rendering.text.hasPrefix(String(repeating: "24(<< ", count: 120) + "h'abab")
            && rendering.text.hasSuffix("'" + String(repeating: " >>)", count: 120))
        #expect(expandedEveryLevel)
        // The same path as the command: render gives the same text.
        let same = try await Self.offPool { () throws(InspectionError) in try Inspection.render(text: nil, bytes: input, options: Self.pretty) }
            == rendering.text
        #expect(same)
    }

    @Test("8 MiB of COSE_Sign1 nested through their payloads (as issuerAuth carries the MSO): summarised, reading at most 8n and allocating at most 28n")
    func nestedSign1() async throws {
        let input = Self.nestedSign1(levels: 120, payload: 8 << 20)
        #expect(input.count > 8 << 20)
        let rendering = try await Self.inspect(input, read: 8, allocated: 28)
        // The outermost message is summarised, with its payload (the next message) rendered under it.
        let text = rendering.text
        let summarised = text.hasPrefix("18([") && text.contains("\n\nCOSE_Sign1\n  algorithm: es256\n  kid: 6b6964\n  payload: ")
            && text.contains("bytes of CBOR:\n    24(<< 18([\n") && text.hasSuffix("  signature: 64 bytes")
        #expect(summarised)
    }

    @Test("8 MiB under 120 levels of COSE_Sign1 look-alikes refused by their headers: searched, never copied, at most 3n read and 12n allocated")
    func nestedLookalikes() async throws {
        let input = Self.nestedLookalikes(levels: 120, payload: 8 << 20)
        #expect(input.count > 8 << 20)
        let rendering = try await Self.inspect(input, read: 3, allocated: 12)
        let shownUnsummarised = !rendering.text.contains("COSE_Sign1") && rendering.text.contains("h'abab")
        #expect(shownUnsummarised)
    }

    /// 8 MiB of COSE_Sign1 messages whose payloads pretty-print 50 times larger, made once
    /// for the three tests below (which the runner spreads over the cores).
    static let amplifying = manyAmplifyingSign1(count: (8 << 20) / 70)

    @Test("8 MiB of COSE_Sign1 whose payloads pretty-print 50 times larger: inspecting them pretty exhausts the one budget all summaries share (workLimitExceeded)")
    func amplifyingSummariesInspect() async throws {
        let input = Self.amplifying
        #expect(input.count > 8_000_000)
        let limit = InspectionError.workLimitExceeded(limit: Inspection.workLimit(forInputSize: input.count))
        await #expect(throws: limit) {
            try await Self.offPool { () throws(InspectionError) in try Inspection.inspect(text: nil, bytes: input, options: Self.pretty) }
        }
    }

    @Test("8 MiB of COSE_Sign1 whose payloads pretty-print 50 times larger: rendering them pretty exhausts the same budget (workLimitExceeded)")
    func amplifyingSummariesRender() async throws {
        let input = Self.amplifying
        let limit = InspectionError.workLimitExceeded(limit: Inspection.workLimit(forInputSize: input.count))
        await #expect(throws: limit) {
            try await Self.offPool { () throws(InspectionError) in try Inspection.render(text: nil, bytes: input, options: Self.pretty) }
        }
    }

    @Test("8 MiB of COSE_Sign1 whose payloads pretty-print 50 times larger: on one line every one is summarised within 8n read and 120n allocated")
    func amplifyingSummariesCompact() async throws {
        // Most of it is node tables: every one-byte item of every payload decoded costs a
        // 64-byte node (the doubling table up to twice that), the real price of CBORItem.
        let rendering = try await Self.inspect(Self.amplifying, options: Self.compact, read: 8, allocated: 120)
        let lastSummarised = rendering.text.contains("at [119836]: COSE_Sign1 (untagged)")
        #expect(lastSummarised)
    }

    @Test("a caller's lower maxWork is the limit, and small inputs get the minimum limit")
    func limits() throws {
        #expect(Inspection.workLimit(forInputSize: 10) == Inspection.minimumWorkLimit)
        #expect(Inspection.workLimit(forInputSize: 1 << 20) == Inspection.workPerInputByte << 20)
        #expect(Inspection.workLimit(forInputSize: .max) == .max)
        let input = Self.nestedTag24(levels: 8, payload: 1 << 16)
        var options = Self.pretty
        options.maxWork = 64 << 10
        #expect(throws: InspectionError.workLimitExceeded(limit: 64 << 10)) {
            try Inspection.inspect(text: nil, bytes: input, options: options)
        }
        options.maxWork = 4 << 20
        #expect(try Inspection.inspect(text: nil, bytes: input, options: options).limit == 4 << 20)
    }
}
