// libFuzzer target for `wallet inspect`'s printing path (WalletInspect): recognising the
// input, decoding CBOR, expanding tag-24 items, rendering diagnostic notation, the
// COSE_Sign1, certificate and JOSE summaries. It measures work, not only crashes: the
// inspection's counted work must stay within its limit, a constant times the input
// (issue 12), or the run stops with the input saved.
import CBOR
import WalletInspect

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

func check(_ condition: Bool, _ message: String) {
    if !condition {
        print("FuzzInspect invariant violated: \(message)")
        abort()
    }
}

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzz(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    let bytes = Array(UnsafeBufferPointer(start: data, count: size))
    let text = String(validating: bytes, as: UTF8.self)
    // What the command does: pretty, expanded, under the inspection's one budget, which
    // counts decoding, rendering, the summaries and the output. A finished inspection must
    // have stayed within the limit of its input size (here at most 1 MiB for small inputs).
    let options = CBORDiagnosticOptions(expandEmbeddedCBOR: true, pretty: true, maxWork: max(1 << 20, 32 * size))
    if let inspection = try? Inspection.inspect(text: text, bytes: bytes, options: options) {
        check(inspection.work.total <= inspection.limit && inspection.limit <= Inspection.workLimit(forInputSize: size),
              "inspection counted \(inspection.work.total) bytes of work for \(size) of input, limit \(inspection.limit)")
    }

    // One-line expanded rendering: every byte read a bounded number of times, every
    // allocation (node tables, output) bounded per input byte, whatever the nesting.
    guard let item = try? CBOR.decodeItem(bytes) else { return 0 }
    let compact = CBORDiagnosticOptions(expandEmbeddedCBOR: true, maxWork: Int.max)
    if let rendering = try? item.renderDiagnostic(options: compact) {
        check(rendering.work.bytesRead <= 8 * size + 64, "read \(rendering.work.bytesRead) bytes for \(size) of input")
        check(rendering.work.bytesAllocated <= 512 * size + 4096,
              "allocated \(rendering.work.bytesAllocated) bytes for \(size) of input")
    }
    return 0
}
