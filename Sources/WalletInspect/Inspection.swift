import CBOR
import WalletCrypto

/// Why an input could not be shown.
public enum InspectionError: Error, Equatable, Sendable {
    /// A PEM document whose blocks do not parse, or that holds no CERTIFICATE block.
    case unreadablePEM(CryptoError)
    /// The input is none of the forms shown (PEM, a JOSE compact serialization, a DER
    /// certificate), and does not decode as CBOR: the decoder's reason.
    case notRecognized(CBORError)
    /// Showing the input would take more work than `limit` bytes (read and allocated,
    /// counted over the whole inspection: decoding, rendering, summaries, output).
    case workLimitExceeded(limit: Int)
}

/// An inspection's text and the work it took.
public struct InspectionRendering: Sendable, Hashable {
    /// What `wallet inspect` prints.
    public let text: String
    /// The work counted over the whole inspection, in bytes read and bytes allocated.
    public let work: CBORWork
    /// The limit the work was held to.
    public let limit: Int
}

/// What `wallet inspect` prints: recognises an input and renders it readably, verifying
/// nothing. CBOR is shown in diagnostic notation (tag-24 items expanded on request) with a
/// summary of every COSE_Sign1 in it; PEM and DER certificates as summaries; JWS, JWE and
/// SD-JWT compact serializations part by part.
///
/// Work is linear in the input and bounded (issue 12): one budget, owned by the
/// inspection, counts the bytes every step reads and allocates (decoding, diagnostic
/// rendering, the COSE, certificate and JOSE summaries, the output), and an inspection
/// that would pass it fails with ``InspectionError/workLimitExceeded(limit:)``. The limit
/// is ``workLimit(forInputSize:)``, or `options.maxWork` when that is lower.
public enum Inspection {
    /// Bytes of work (read plus allocated) allowed per input byte.
    public static let workPerInputByte = 128
    /// The work allowed whatever the input's size: small inputs may print large (pretty
    /// indentation of nesting), within this.
    public static let minimumWorkLimit = 16 << 20

    /// The work allowed for an input of `size` bytes: a constant times the size, and at
    /// least ``minimumWorkLimit``.
    public static func workLimit(forInputSize size: Int) -> Int {
        let (scaled, overflow) = size.multipliedReportingOverflow(by: workPerInputByte)
        return overflow ? Int.max : max(minimumWorkLimit, scaled)
    }

    /// Renders `bytes` (with `text`, their trimmed text when printable, for PEM and JOSE).
    public static func render(text: String?, bytes: [UInt8], options: CBORDiagnosticOptions) throws(InspectionError) -> String {
        try inspect(text: text, bytes: bytes, options: options).text
    }

    /// Renders `bytes` as ``render(text:bytes:options:)`` does and reports the work counted.
    public static func inspect(text: String?, bytes: [UInt8], options: CBORDiagnosticOptions) throws(InspectionError) -> InspectionRendering {
        let size = max(bytes.count, text?.utf8.count ?? 0)
        var budget = InspectionBudget(limit: min(max(0, options.maxWork), workLimit(forInputSize: size)))
        let output = try render(text: text, bytes: bytes, options: options, budget: &budget)
        return InspectionRendering(text: output, work: budget.work, limit: budget.limit)
    }

    private static func render(text: String?, bytes: [UInt8], options: CBORDiagnosticOptions,
                               budget: inout InspectionBudget) throws(InspectionError) -> String {
        if let text {
            // Recognising a form reads the text once or twice.
            try budget.spend(read: 2 * text.utf8.count)
            if text.hasPrefix("-----BEGIN") { return try pem(text, budget: &budget) }
            if let compactForm = CompactSerialization(text), try compactForm.isJOSE(budget: &budget) {
                try budget.spend(allocated: compactForm.partCount * MemoryLayout<Substring>.stride)
                return try compactForm.render(diagnostic: options, budget: &budget)
            }
        }
        if bytes.first == 0x30 {
            try budget.spend(read: bytes.count, allocated: InspectionBudget.certificateAllocationPerByte * bytes.count)
            if let certificate = try? X509Certificate(derEncoded: bytes) {
                return try CertificateSummary.text(for: certificate, budget: &budget)
            }
        }
        var cost = CBORWork()
        let item: CBORItem
        do { item = try CBOR.decodeItem(bytes, work: &cost) } catch {
            // The decoder's limits bound what it did before refusing; its reason is the answer.
            throw .notRecognized(error)
        }
        try budget.spend(cost)
        var output = try budget.render(item, options: options)
        for (path, lines) in try COSESummary.find(in: item, diagnostic: options, budget: &budget) {
            let piece = "\n\n" + (path.isEmpty ? "" : "at \(path): ") + lines.joined(separator: "\n")
            // Joined, then appended to the output (which may grow by a copy).
            try budget.output(piece, copies: 3)
            output += piece
        }
        return output
    }

    private static func pem(_ text: String, budget: inout InspectionBudget) throws(InspectionError) -> String {
        // Base64 decoding, then each certificate parsed.
        try budget.spend(read: text.utf8.count, allocated: (1 + InspectionBudget.certificateAllocationPerByte) * text.utf8.count)
        let certificates: [X509Certificate]
        do { certificates = try X509Certificate.parsePEM(text) } catch { throw .unreadablePEM(error) }
        var pieces: [String] = []
        for (index, certificate) in certificates.enumerated() {
            let summary = try CertificateSummary.text(for: certificate, budget: &budget)
            pieces.append((certificates.count > 1 ? "[\(index)] " : "") + summary)
        }
        let output = pieces.joined(separator: "\n\n")
        try budget.output(output)
        return output
    }
}
