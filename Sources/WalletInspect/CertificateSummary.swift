import Foundation
import WalletCrypto
import WalletEncoding

/// The human-readable summary `wallet inspect` prints for an X.509 certificate.
enum CertificateSummary {
    /// The summary as one text, charged to `budget` (its parts are bounded by the DER,
    /// which was charged when it was parsed).
    static func text(for certificate: X509Certificate, indent: String = "",
                     budget: inout InspectionBudget) throws(InspectionError) -> String {
        let text = lines(for: certificate, indent: indent).joined(separator: "\n")
        try budget.output(text)
        return text
    }

    static func lines(for certificate: X509Certificate, indent: String = "") -> [String] {
        let formatter = ISO8601DateFormatter()
        var lines = [
            "X.509 certificate (v\(certificate.version), \(certificate.derEncoded.count) bytes)",
            "  subject:    \(certificate.subject.rfc4514String)",
            "  issuer:     \(certificate.issuer.rfc4514String)\(certificate.isSelfSigned ? " (self-signed)" : "")",
            "  serial:     \(certificate.serialNumberHex)",
            "  validity:   \(formatter.string(from: certificate.notBefore)) .. \(formatter.string(from: certificate.notAfter))",
            "  public key: \(keyDescription(certificate))",
            "  signature:  \(certificate.signatureAlgorithmName)",
        ]
        if let constraints = certificate.basicConstraints {
            let path = constraints.pathLength.map { ", pathLen \($0)" } ?? ""
            lines.append("  basic constraints: CA \(constraints.isCA)\(path)")
        }
        if let usage = certificate.keyUsage {
            lines.append("  key usage:  \(keyUsageNames(usage).joined(separator: ", "))")
        }
        if certificate.hasExtendedKeyUsage {
            lines.append("  extended key usage: \(certificate.extendedKeyUsage.map(extendedKeyUsageName).joined(separator: ", "))")
        }
        if !certificate.subjectAlternativeNames.isEmpty {
            lines.append("  subject alt names: \(certificate.subjectAlternativeNames.map(generalName).joined(separator: ", "))")
        }
        if let ski = certificate.subjectKeyIdentifier { lines.append("  subject key id:   \(Hex.encode(ski))") }
        if let aki = certificate.authorityKeyIdentifier { lines.append("  authority key id: \(Hex.encode(aki))") }
        lines.append("  SHA-256:    \(certificate.sha256FingerprintHex)")
        return lines.map { indent + $0 }
    }

    private static func keyDescription(_ certificate: X509Certificate) -> String {
        guard let key = try? certificate.publicKey else { return "unsupported key type" }
        switch key {
        case .ec(let ec): return "EC \(ec.curve.rawValue) x=\(Hex.encode(ec.x))"
        case .ed25519: return "Ed25519"
        }
    }

    private static func keyUsageNames(_ usage: KeyUsage) -> [String] {
        let names: [(KeyUsage, String)] = [
            (.digitalSignature, "digitalSignature"), (.nonRepudiation, "nonRepudiation"),
            (.keyEncipherment, "keyEncipherment"), (.dataEncipherment, "dataEncipherment"),
            (.keyAgreement, "keyAgreement"), (.keyCertSign, "keyCertSign"), (.cRLSign, "cRLSign"),
            (.encipherOnly, "encipherOnly"), (.decipherOnly, "decipherOnly"),
        ]
        return names.filter { usage.contains($0.0) }.map(\.1)
    }

    private static func extendedKeyUsageName(_ oid: String) -> String {
        switch oid {
        case ExtendedKeyUsageOID.mdocDocumentSigner: return "mdoc document signer (\(oid))"
        case ExtendedKeyUsageOID.mdocReaderAuthentication: return "mdoc reader authentication (\(oid))"
        case ExtendedKeyUsageOID.serverAuth: return "serverAuth"
        case ExtendedKeyUsageOID.clientAuth: return "clientAuth"
        default: return oid
        }
    }

    private static func generalName(_ name: GeneralName) -> String {
        switch name {
        case .email(let value): return "email:\(value)"
        case .dnsName(let value): return "DNS:\(value)"
        case .uri(let value): return "URI:\(value)"
        case .ipAddress(let bytes): return "IP:\(bytes.map(String.init).joined(separator: bytes.count == 4 ? "." : ":"))"
        case .directoryName(let dn): return "DirName:\(dn.rfc4514String)"
        case .registeredID(let oid): return "RID:\(oid)"
        default: return "\(name)"
        }
    }
}
