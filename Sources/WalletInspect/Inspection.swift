import CBOR
import WalletCrypto

/// Why an input could not be shown.
public enum InspectionError: Error, Equatable, Sendable {
    /// A PEM document whose blocks do not parse, or that holds no CERTIFICATE block.
    case unreadablePEM(CryptoError)
    /// The input is none of the forms shown (PEM, a JOSE compact serialization, a DER
    /// certificate), and does not decode as CBOR: the decoder's reason.
    case notRecognized(CBORError)
    /// Rendering the CBOR would exceed its work limit (`CBORError.workLimitExceeded`).
    case renderingFailed(CBORError)
}

/// What `wallet inspect` prints: recognises an input and renders it readably, verifying
/// nothing. CBOR is shown in diagnostic notation (tag-24 items expanded on request) with a
/// summary of every COSE_Sign1 in it; PEM and DER certificates as summaries; JWS, JWE and
/// SD-JWT compact serializations part by part.
///
/// Work is linear in the input and bounded by `options.maxWork` (issue 12): a rendering
/// that would exceed it fails with `renderingFailed(.workLimitExceeded)`.
public enum Inspection {
    /// Renders `bytes` (with `text`, their trimmed text when printable, for PEM and JOSE).
    public static func render(text: String?, bytes: [UInt8], options: CBORDiagnosticOptions) throws(InspectionError) -> String {
        if let text {
            if text.hasPrefix("-----BEGIN") { return try pem(text) }
            if let compactForm = CompactSerialization(text) { return compactForm.render(diagnostic: options) }
        }
        if bytes.first == 0x30, let certificate = try? X509Certificate(derEncoded: bytes) {
            return CertificateSummary.lines(for: certificate).joined(separator: "\n")
        }
        let item: CBORItem
        do { item = try CBOR.decodeItem(bytes) } catch { throw .notRecognized(error) }
        var output: String
        do { output = try item.renderDiagnostic(options: options).text } catch { throw .renderingFailed(error) }
        for (path, lines) in COSESummary.find(in: item, diagnostic: options) {
            output += "\n\n" + (path.isEmpty ? "" : "at \(path): ") + lines.joined(separator: "\n")
        }
        return output
    }

    private static func pem(_ text: String) throws(InspectionError) -> String {
        let certificates: [X509Certificate]
        do { certificates = try X509Certificate.parsePEM(text) } catch { throw .unreadablePEM(error) }
        return certificates.enumerated().map { index, certificate in
            (certificates.count > 1 ? "[\(index)] " : "") + CertificateSummary.lines(for: certificate).joined(separator: "\n")
        }.joined(separator: "\n\n")
    }
}
