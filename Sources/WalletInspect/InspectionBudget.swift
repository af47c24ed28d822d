import CBOR
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// The one work counter of an inspection (issue 12): everything `Inspection.render` does
/// (decoding, diagnostic rendering, the COSE, certificate and JOSE summaries, the output)
/// is charged here, in bytes read and bytes allocated, against one limit. Work is counted,
/// never timed, so the bound holds on any machine and under any load.
///
/// What the SDK's own decoders and the diagnostic printer do is counted exactly as they go
/// (`CBORWork`); calls whose inside is not instrumented (JSON parsing, X.509 parsing in
/// OpenSSL, base64url) are charged from their input and output sizes with the per-byte
/// factors below, which bound what they allocate.
struct InspectionBudget {
    /// The most work allowed, in bytes.
    let limit: Int
    /// The work charged so far.
    private(set) var work = CBORWork()

    /// An X.509 certificate parsed (OpenSSL's structures and the DER kept beside them):
    /// bytes allocated per DER byte.
    static let certificateAllocationPerByte = 4
    /// A JSON document parsed: bytes allocated per input byte for its value tree (a
    /// `JSONValue` per element of at least two input bytes, members with their keys).
    static let jsonAllocationPerByte = 16

    init(limit: Int) {
        self.limit = limit
    }

    /// What is left to spend, never negative.
    var remaining: Int { max(0, limit - work.total) }

    /// Charges work; throws once the total passes the limit.
    mutating func spend(read: Int = 0, allocated: Int = 0) throws(InspectionError) {
        work.bytesRead += read
        work.bytesAllocated += allocated
        guard work.total <= limit else { throw .workLimitExceeded(limit: limit) }
    }

    /// Charges work counted elsewhere.
    mutating func spend(_ cost: CBORWork) throws(InspectionError) {
        try spend(read: cost.bytesRead, allocated: cost.bytesAllocated)
    }

    /// Checks, before work of about `size` bytes is started, that it can fit.
    func require(_ size: Int) throws(InspectionError) {
        guard size <= remaining else { throw .workLimitExceeded(limit: limit) }
    }

    /// Renders `item` in diagnostic notation within what remains.
    mutating func render(_ item: CBORItem, options: CBORDiagnosticOptions) throws(InspectionError) -> String {
        var bounded = options
        bounded.maxWork = remaining
        let rendering: CBORDiagnosticRendering
        do { rendering = try item.renderDiagnostic(options: bounded) } catch { throw .workLimitExceeded(limit: limit) }
        try spend(rendering.work)
        return rendering.text
    }

    /// Renders encoded CBOR in diagnostic notation within what remains, decoding it in
    /// place (no copies of its strings); nil (with the decoding charged) when the bytes
    /// are not one CBOR item.
    mutating func render(encoded bytes: [UInt8], options: CBORDiagnosticOptions) throws(InspectionError) -> String? {
        var bounded = options
        bounded.maxWork = remaining
        var cost = CBORWork()
        let text: String?
        do {
            text = try CBOR.renderDiagnostic(encoded: bytes, options: bounded, work: &cost)
        } catch {
            if case .workLimitExceeded = error { throw .workLimitExceeded(limit: limit) }
            text = nil
        }
        try spend(cost)
        return text
    }

    /// `text` with `indent` after every line break (the nested rendering of a COSE
    /// payload under its summary line): one `memchr` pass counts the breaks so that the
    /// budget is charged before anything is allocated, a second writes one output buffer.
    mutating func indenting(_ text: String, by indent: String) throws(InspectionError) -> String {
        var text = text
        var indent = indent
        // memchr over the contiguous UTF-8 (summaries are megabytes; a byte-by-byte walk of
        // `String.UTF8View` was most of an inspection's time).
        let breaks = text.withUTF8 { bytes -> Int in
            guard var cursor = bytes.baseAddress else { return 0 }
            let end = cursor + bytes.count
            var breaks = 0
            while cursor < end, let found = memchr(cursor, 0x0A, end - cursor) {
                breaks += 1
                cursor = UnsafePointer(found.assumingMemoryBound(to: UInt8.self)) + 1
            }
            return breaks
        }
        let indentCount = indent.utf8.count
        let size = text.utf8.count + breaks * indentCount
        try require(size)
        try spend(read: 2 * text.utf8.count, allocated: size)
        guard breaks > 0 else { return text }
        return text.withUTF8 { bytes in
            indent.withUTF8 { indentBytes in
                String(unsafeUninitializedCapacity: size) { output -> Int in
                    guard var cursor = bytes.baseAddress, let start = output.baseAddress else { return 0 }
                    var write = start
                    let end = cursor + bytes.count
                    while cursor < end {
                        let found = memchr(cursor, 0x0A, end - cursor).map { UnsafePointer($0.assumingMemoryBound(to: UInt8.self)) + 1 } ?? end
                        let length = found - cursor
                        write.update(from: cursor, count: length)
                        write += length
                        cursor = found
                        if found[-1] == 0x0A, let indentStart = indentBytes.baseAddress {
                            write.update(from: indentStart, count: indentCount)
                            write += indentCount
                        }
                    }
                    return write - start
                }
            }
        }
    }

    /// Charges a piece of output of `text`'s size, made `copies` times (a line made, then
    /// joined into the output, then appended to it).
    mutating func output(_ text: String, copies: Int = 1) throws(InspectionError) {
        try spend(allocated: copies * text.utf8.count)
    }
}
