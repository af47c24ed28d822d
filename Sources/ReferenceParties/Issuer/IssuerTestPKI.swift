import Foundation
import JOSE
import WalletCrypto
import WalletEncoding

/// The reference issuer's own test PKI, made fresh for every issuer:
///
/// - an IACA root and a document signer certificate under it (the ISO 18013-5 Annex B
///   profiles of `CertificateBuilder.iaca` / `.mdocDocumentSigner`) for mdoc `issuerAuth`;
/// - an issuer root and, per Credential Issuer Identifier, a leaf whose subjectAltName
///   URI is that identifier (SD-JWT VC §3.5) for SD-JWT VC `x5c` and signed metadata;
///   its key is also published in `/.well-known/jwt-vc-issuer`.
///
/// The roots are what a wallet is told to trust (``ReferenceIssuer/trustAnchors``).
/// Private keys never leave this value.
struct IssuerTestPKI: Sendable {
    let iaca: X509Certificate
    let documentSigner: X509Certificate
    let documentSignerKey: ECPrivateKey
    let issuerRoot: X509Certificate
    private let issuerRootKey: ECPrivateKey
    /// The key of the SD-JWT VC / metadata signing leaf.
    let signingKey: ECPrivateKey
    let notBefore: Date
    let notAfter: Date

    /// The `kid` of the SD-JWT VC signing key in the jwt-vc-issuer JWKS: its RFC 7638 thumbprint.
    var signingKeyID: String { JWK(publicKey: signingKey.publicKey).thumbprint }

    /// Generates the keys and the roots, valid from a day before `now` for two years.
    static func generate(now: Date, name: String) throws(ReferenceIssuerError) -> IssuerTestPKI {
        let notBefore = now.addingTimeInterval(-86_400), notAfter = now.addingTimeInterval(2 * 365 * 86_400)
        do throws(CryptoError) {
            let iacaKey = try ECPrivateKey.generate(curve: .p256)
            let dsKey = try ECPrivateKey.generate(curve: .p256)
            let rootKey = try ECPrivateKey.generate(curve: .p256)
            let signingKey = try ECPrivateKey.generate(curve: .p256)
            let iaca = try CertificateBuilder.iaca(
                subject: try DistinguishedName([(.commonName, "\(name) IACA"), (.country, "UT")]),
                notBefore: notBefore, notAfter: notAfter
            ).selfSigned(with: .ec(iacaKey))
            let documentSigner = try CertificateBuilder.mdocDocumentSigner(
                subject: try DistinguishedName([(.commonName, "\(name) Document Signer"), (.country, "UT")]),
                subjectPublicKeyInfoDER: dsKey.publicKey.spkiDER, notBefore: notBefore, notAfter: notAfter
            ).signed(by: iaca, key: .ec(iacaKey))
            let issuerRoot = try CertificateBuilder.certificateAuthority(
                subject: try DistinguishedName([(.commonName, "\(name) Root"), (.country, "UT")]),
                notBefore: notBefore, notAfter: notAfter, pathLength: 0
            ).selfSigned(with: .ec(rootKey))
            return IssuerTestPKI(iaca: iaca, documentSigner: documentSigner, documentSignerKey: dsKey,
                                 issuerRoot: issuerRoot, issuerRootKey: rootKey, signingKey: signingKey,
                                 notBefore: notBefore, notAfter: notAfter)
        } catch {
            throw .crypto(error)
        }
    }

    /// The signing leaf for the Credential Issuer Identifier `issuer`: SAN URI = `issuer`,
    /// plus the host as a dNSName when it is a name (not an IP literal).
    func issuerCertificate(for issuer: String) throws(ReferenceIssuerError) -> X509Certificate {
        var names: [GeneralName] = [.uri(issuer)]
        if let host = URLComponents(string: issuer)?.host, !host.isEmpty, !Self.isIPLiteral(host) {
            names.append(.dnsName(host))
        }
        do throws(CryptoError) {
            let subject = try DistinguishedName([(.commonName, "Credential Issuer"), (.country, "UT")])
            return try CertificateBuilder.endEntity(
                subject: subject,
                subjectPublicKeyInfoDER: signingKey.publicKey.spkiDER, notBefore: notBefore, notAfter: notAfter,
                subjectAlternativeNames: names
            ).signed(by: issuerRoot, key: .ec(issuerRootKey))
        } catch {
            throw .crypto(error)
        }
    }

    static func isIPLiteral(_ host: String) -> Bool {
        host.contains(":") || host.allSatisfy { $0.isNumber || $0 == "." }
    }
}

/// An issuer that signs with keys nobody trusts: what ``IssuerBehaviour/signWithUnknownKey``
/// uses. Same shapes as the real PKI, fresh roots.
struct ImpostorKeys: Sendable {
    let pki: IssuerTestPKI

    static func generate(now: Date) throws(ReferenceIssuerError) -> ImpostorKeys {
        ImpostorKeys(pki: try IssuerTestPKI.generate(now: now, name: "Impostor"))
    }
}

/// What a wallet must trust to accept the reference issuer's credentials and metadata.
public struct IssuerTrustAnchors: Sendable, Hashable {
    /// The IACA root of mdoc document signer certificates.
    public let iaca: X509Certificate
    /// The root of the SD-JWT VC issuer certificate (`x5c`) and of the signed-metadata signer.
    public let issuerRoot: X509Certificate
    /// The public key signing SD-JWT VCs and signed metadata, as published in
    /// `/.well-known/jwt-vc-issuer`.
    public let signingKey: JWK

    /// Both roots, PEM encoded, IACA first.
    public var pem: String { iaca.pemEncoded + issuerRoot.pemEncoded }
}
