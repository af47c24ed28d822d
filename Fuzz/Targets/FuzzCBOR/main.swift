// libFuzzer target for the CBOR module. Built by Fuzz/Package.swift with
// -sanitize=fuzzer; libFuzzer provides main, so this file has no @main.
import CBOR

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Stops the run so libFuzzer saves the input that broke an invariant.
func check(_ condition: Bool, _ message: String) {
    if !condition {
        print("FuzzCBOR invariant violated: \(message)")
        abort()
    }
}

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzz(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    let input = Array(UnsafeBufferPointer(start: data, count: size))
    let options = CBORDecodingOptions(maxDepth: 64, maxItems: 100_000)
    let expanded = CBORDiagnosticOptions(expandEmbeddedCBOR: true, embeddedDecodingOptions: options)

    // The value decoder and the exact-bytes decoder must agree on every input.
    let prefix = try? CBOR.decodePrefix(input, options: options)
    let item = try? CBOR.decodeItemPrefix(input, options: options)
    check((prefix == nil) == (item == nil), "value and item decoders disagree on acceptance")
    guard let (value, used) = prefix, let item else { return 0 }

    check(item.value == value, "item value differs from decoded value")
    check(item.byteRange == 0..<used, "item range differs from bytes used")
    check(Array(item.encodedBytes) == Array(input[0..<used]), "root exact bytes differ from input prefix")
    for child in item.children {
        check(child.byteRange.lowerBound >= 0 && child.byteRange.upperBound <= used, "child outside parent")
    }
    // The node table is consistent: the first items in preorder each decode on their own,
    // from their exact bytes, to their value, and their children tile their content.
    var pending = [item]
    var visited = 0
    while let next = pending.popLast(), visited < 256 {
        visited += 1
        let alone = try? CBOR.decode(Array(next.encodedBytes), options: options)
        check(alone == next.value, "an item's exact bytes do not decode to its value")
        var offset = next.byteRange.lowerBound
        for child in next.children {
            check(child.byteRange.lowerBound >= offset && child.byteRange.upperBound <= next.byteRange.upperBound,
                  "children overlap or leave their parent")
            offset = child.byteRange.upperBound
            pending.append(child)
        }
    }

    // Re-encoding a decoded value and decoding it again gives the same value, and the
    // deterministic encoding is stable and accepted by the strict decoder.
    let encoded = value.encoded()
    guard let again = try? CBOR.decode(encoded, options: CBORDecodingOptions(maxDepth: 64, maxItems: 100_000, rejectDuplicateMapKeys: false)) else {
        check(false, "re-encoding is not decodable")
        return 0
    }
    check(again == value, "decode(encode(v)) != v")
    let deterministic = value.encoded(options: .deterministic)
    if let strict = try? CBOR.decode(deterministic, options: .deterministic) {
        check(strict.encoded(options: .deterministic) == deterministic, "deterministic encoding not stable")
    }

    // Diagnostic notation never crashes, with or without tag-24 expansion, and its work is
    // linear in the input: each byte read a bounded number of times, allocations (node
    // tables, the output) bounded per input byte, however the tag-24 items nest.
    _ = value.diagnostic()
    _ = item.diagnostic(options: expanded)
    var measured = expanded
    measured.maxWork = Int.max
    if let rendering = try? item.renderDiagnostic(options: measured) {
        check(rendering.work.bytesRead <= 8 * used + 64, "read \(rendering.work.bytesRead) bytes for \(used) of input")
        check(rendering.work.bytesAllocated <= 512 * used + 4096, "allocated \(rendering.work.bytesAllocated) for \(used)")
    }
    _ = value.diagnostic(options: CBORDiagnosticOptions(expandEmbeddedCBOR: true, pretty: true,
                                                        embeddedDecodingOptions: options))

    // Helpers must fail gracefully on arbitrary items.
    _ = try? value.dateValue()
    _ = try? value.fullDateValue()
    _ = try? value.embeddedValue(options: options)
    _ = try? item.embeddedItem(options: options)
    return 0
}
