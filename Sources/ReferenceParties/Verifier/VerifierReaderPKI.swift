import Foundation
import WalletCrypto
import WalletEncoding

/// The verifier's own reader PKI: a root that wallets configure as their reader trust
/// anchor and a leaf that signs request objects, its subjectAltName naming the verifier's
/// DNS name. Beside it, the certificates the negative switches need: a trusted leaf with
/// another DNS name, and a leaf under a root no wallet trusts.
public struct VerifierReaderPKI: Sendable {
    /// The common name of the signing leaf (what a wallet shows as the verifier's name).
    public let commonName: String
    /// The DNS name in the leaf's subjectAltName (the `x509_san_dns` client identifier).
    public let dnsName: String
    /// The trust anchor (self-signed root) a wallet configures.
    public let root: X509Certificate
    /// The request-signing certificate, issued by ``root``.
    public let leaf: X509Certificate
    /// A leaf under ``root`` whose subjectAltName is another DNS name (for SAN mismatch tests).
    public let mismatchedLeaf: X509Certificate
    /// A root that no wallet is told to trust.
    public let untrustedRoot: X509Certificate
    /// A leaf under ``untrustedRoot`` with the right DNS name (for untrusted chain tests).
    public let untrustedLeaf: X509Certificate

    let leafKey: ECPrivateKey
    let mismatchedLeafKey: ECPrivateKey
    let untrustedLeafKey: ECPrivateKey

    /// The DNS name of ``mismatchedLeaf``.
    public static let mismatchedDNSName = "mismatch.invalid"

    /// Generates the PKI: P-256 keys, certificates valid from a day before `now` for `validity` seconds.
    public init(dnsName: String, commonName: String = "Reference Verifier", now: Date,
                validity: TimeInterval = 365 * 86_400) throws(VerifierError) {
        let notBefore = now.addingTimeInterval(-86_400), notAfter = now.addingTimeInterval(validity)
        do throws(CryptoError) {
            let rootKey = try ECPrivateKey.generate(curve: .p256)
            let otherRootKey = try ECPrivateKey.generate(curve: .p256)
            leafKey = try ECPrivateKey.generate(curve: .p256)
            mismatchedLeafKey = try ECPrivateKey.generate(curve: .p256)
            untrustedLeafKey = try ECPrivateKey.generate(curve: .p256)
            root = try CertificateBuilder.certificateAuthority(
                subject: try DistinguishedName([(.commonName, "\(commonName) Reader Root"), (.country, "UT")]),
                notBefore: notBefore, notAfter: notAfter, pathLength: 0).selfSigned(with: .ec(rootKey))
            untrustedRoot = try CertificateBuilder.certificateAuthority(
                subject: try DistinguishedName([(.commonName, "\(commonName) Untrusted Root"), (.country, "UT")]),
                notBefore: notBefore, notAfter: notAfter, pathLength: 0).selfSigned(with: .ec(otherRootKey))
            func makeLeaf(_ key: ECPrivateKey, name: String, under issuer: X509Certificate, _ issuerKey: ECPrivateKey) throws(CryptoError)
                -> X509Certificate {
                try CertificateBuilder.endEntity(
                    subject: try DistinguishedName([(.commonName, commonName), (.country, "UT")]),
                    subjectPublicKeyInfoDER: key.publicKey.spkiDER, notBefore: notBefore, notAfter: notAfter,
                    subjectAlternativeNames: [.dnsName(name)]).signed(by: issuer, key: .ec(issuerKey))
            }
            leaf = try makeLeaf(leafKey, name: dnsName, under: root, rootKey)
            mismatchedLeaf = try makeLeaf(mismatchedLeafKey, name: Self.mismatchedDNSName, under: root, rootKey)
            untrustedLeaf = try makeLeaf(untrustedLeafKey, name: dnsName, under: untrustedRoot, otherRootKey)
        } catch {
            throw .crypto(error)
        }
        self.dnsName = dnsName
        self.commonName = commonName
    }

    /// The anchors a wallet trusts: ``root`` only.
    public var anchors: [X509Certificate] { [root] }

    /// The anchor as DER, the shape of the wallet's `readerAnchorsDer`.
    public var anchorsDER: [[UInt8]] { anchors.map(\.derEncoded) }

    /// The anchor as PEM (what `wallet serve verifier` prints).
    public var anchorPEM: String { root.pemEncoded }

    /// The `x509_hash` client identifier value of a certificate: base64url of the SHA-256
    /// of its DER (OpenID4VP 1.0 §5.9.3).
    public static func x509Hash(of certificate: X509Certificate) -> String {
        Base64URL.encode(HashAlgorithm.sha256.digest(certificate.derEncoded))
    }

    /// The `x509_hash` value of ``leaf``.
    public var leafHash: String { Self.x509Hash(of: leaf) }
}
