import Foundation
import Testing
@testable import WalletCrypto

@Suite("X.509 certificate builder")
struct X509BuilderTests {
    @Test("A self-signed CA has the CA profile, a random positive 16-byte serial and a verifying self-signature")
    func selfSignedCA() throws {
        let key = try ECPrivateKey.generate(curve: .p256)
        let notBefore = Date(timeIntervalSince1970: 1_700_000_000.75)
        let notAfter = Date(timeIntervalSince1970: 2_000_000_000)
        let ca = try CertificateBuilder.certificateAuthority(subject: X509TestPKI.name("Utopia IACA"), notBefore: notBefore,
                                                             notAfter: notAfter, pathLength: 0)
            .selfSigned(with: .ec(key))
        #expect(ca.version == 3)
        #expect(ca.subject == ca.issuer)
        #expect(ca.subject.rfc4514String == "CN=Utopia IACA,O=Utopia Test PKI,C=UT")
        #expect(ca.isSelfSigned)
        #expect(ca.serialNumber.count == 16)
        #expect(!ca.serialNumberIsNegative)
        #expect(ca.notBefore == Date(timeIntervalSince1970: 1_700_000_000))
        #expect(ca.notAfter == notAfter)
        #expect(ca.basicConstraints == BasicConstraints(isCA: true, pathLength: 0))
        #expect(ca.keyUsage == [.keyCertSign, .cRLSign])
        #expect(Set(ca.criticalExtensionOIDs) == ["2.5.29.19", "2.5.29.15"])
        #expect(ca.subjectKeyIdentifier?.count == 20)
        #expect(ca.authorityKeyIdentifier == nil)
        #expect(ca.signatureAlgorithmName == "ecdsa-with-SHA256")
        #expect(ca.subjectPublicKeyInfoDER == (try key.publicKey.spkiDER))
        #expect(try ca.publicKey == .ec(key.publicKey))
        #expect(ca.sha256Fingerprint == X509TestSupport.sha256(ca.derEncoded))
        let other = try CertificateBuilder.certificateAuthority(subject: X509TestPKI.name("Utopia IACA"), notBefore: notBefore,
                                                                notAfter: notAfter)
            .selfSigned(with: .ec(key))
        #expect(other.serialNumber != ca.serialNumber)
        #expect(other.basicConstraints == BasicConstraints(isCA: true, pathLength: nil))
    }

    @Test("A leaf carries issuer, key identifiers, key usage, extended key usage and subject alternative names")
    func leafProfile() throws {
        let pki = try X509TestPKI()
        let leafKey = try ECPrivateKey.generate(curve: .p256)
        let names: [GeneralName] = [
            .dnsName("verifier.example.com"), .uri("https://verifier.example.com/callback?a=1,b=2"),
            .email("ops@example.com"), .ipAddress([192, 0, 2, 7]),
        ]
        let leaf = try CertificateBuilder.endEntity(subject: X509TestPKI.name("Reader"),
                                                    subjectPublicKeyInfoDER: leafKey.publicKey.spkiDER,
                                                    notBefore: X509TestPKI.start, notAfter: X509TestPKI.end,
                                                    extendedKeyUsage: [ExtendedKeyUsageOID.mdocReaderAuthentication,
                                                                       ExtendedKeyUsageOID.clientAuth],
                                                    subjectAlternativeNames: names)
            .signed(by: pki.intermediate, key: .ec(pki.intermediateKey))
        #expect(leaf.issuer == pki.intermediate.subject)
        #expect(!leaf.isSelfSigned)
        #expect(leaf.authorityKeyIdentifier == pki.intermediate.subjectKeyIdentifier)
        #expect(leaf.subjectKeyIdentifier != nil)
        #expect(leaf.basicConstraints == BasicConstraints(isCA: false))
        #expect(leaf.keyUsage == .digitalSignature)
        #expect(leaf.extendedKeyUsage == ["1.0.18013.5.1.6", "1.3.6.1.5.5.7.3.2"])
        #expect(leaf.criticalExtensionOIDs.contains("2.5.29.37"))
        #expect(leaf.subjectAlternativeNames == names)
        #expect(leaf.subjectAlternativeDNSNames == ["verifier.example.com"])
        #expect(leaf.subjectAlternativeURIs == ["https://verifier.example.com/callback?a=1,b=2"])
        // The intermediate's key is P-384, so the leaf is signed with SHA-384.
        #expect(leaf.signatureAlgorithmName == "ecdsa-with-SHA384")
        #expect(leaf.signatureAlgorithmOID == "1.2.840.10045.4.3.3")
    }

    @Test("An explicit serial number and extensionless certificate are encoded as given")
    func explicitSerial() throws {
        let key = try ECPrivateKey.generate(curve: .p256)
        var builder = CertificateBuilder(subject: try DistinguishedName([(.commonName, "plain")]), serialNumber: [0x00, 0x80, 0x01],
                                         notBefore: X509TestPKI.start, notAfter: X509TestPKI.end)
        builder.includeSubjectKeyIdentifier = false
        let certificate = try builder.selfSigned(with: .ec(key))
        #expect(certificate.serialNumber == [0x80, 0x01])
        #expect(certificate.serialNumberHex == "8001")
        #expect(certificate.extensionOIDs.isEmpty)
        #expect(certificate.keyUsage == nil)
        #expect(certificate.basicConstraints == nil)
    }

    @Test("P-521 keys sign with SHA-512 and Ed25519 keys with PureEdDSA, and such chains validate")
    func otherAlgorithms() throws {
        let rootKey = try ECPrivateKey.generate(curve: .p521)
        let root = try X509TestPKI.root("P-521 Root", key: rootKey)
        #expect(root.signatureAlgorithmName == "ecdsa-with-SHA512")

        let edRootKey = try Ed25519PrivateKey.generate()
        let edRoot = try CertificateBuilder.certificateAuthority(subject: X509TestPKI.name("Ed25519 Root"),
                                                                 notBefore: X509TestPKI.start, notAfter: X509TestPKI.end)
            .selfSigned(with: .ed25519(edRootKey))
        #expect(edRoot.signatureAlgorithmOID == "1.3.101.112")
        #expect(edRoot.isSelfSigned)
        #expect(try edRoot.publicKey == .ed25519(edRootKey.publicKey))

        let edLeafKey = try Ed25519PrivateKey.generate()
        let edLeaf = try CertificateBuilder.endEntity(subject: X509TestPKI.name("Ed25519 Leaf"),
                                                      subjectPublicKeyInfoDER: edLeafKey.publicKey.spkiDER,
                                                      notBefore: X509TestPKI.start, notAfter: X509TestPKI.end)
            .signed(by: edRoot, key: .ed25519(edRootKey))
        #expect(try validatePath(leaf: edLeaf, anchors: [edRoot], at: X509TestPKI.now) == [edLeaf, edRoot])

        let ecLeafKey = try ECPrivateKey.generate(curve: .p256)
        let ecLeaf = try X509TestPKI.leaf("Under P-521", key: ecLeafKey, issuer: root, issuerKey: rootKey)
        #expect(try validatePath(leaf: ecLeaf, anchors: [root], at: X509TestPKI.now) == [ecLeaf, root])
    }

    @Test("Signing with a key that does not match the issuer certificate is rejected")
    func mismatchedIssuerKey() throws {
        let pki = try X509TestPKI()
        let stranger = try ECPrivateKey.generate(curve: .p256)
        #expect(throws: CryptoError.invalidCertificate(.signingKeyMismatch)) {
            try CertificateBuilder.endEntity(subject: X509TestPKI.name("x"), subjectPublicKeyInfoDER: stranger.publicKey.spkiDER,
                                             notBefore: X509TestPKI.start, notAfter: X509TestPKI.end)
                .signed(by: pki.root, key: .ec(stranger))
        }
    }

    @Test("Invalid builder inputs are typed errors")
    func invalidInputs() throws {
        let key = try ECPrivateKey.generate(curve: .p256)
        let name = try DistinguishedName([(.commonName, "x")])
        let reversed = CertificateBuilder(subject: name, notBefore: X509TestPKI.end, notAfter: X509TestPKI.start)
        #expect(throws: CryptoError.invalidCertificate(.validityPeriodReversed)) { try reversed.selfSigned(with: .ec(key)) }
        let badSerial = CertificateBuilder(subject: name, serialNumber: [0, 0], notBefore: X509TestPKI.start, notAfter: X509TestPKI.end)
        #expect(throws: CryptoError.invalidCertificate(.invalidSerialNumber)) { try badSerial.selfSigned(with: .ec(key)) }
        let badEKU = CertificateBuilder(subject: name, notBefore: X509TestPKI.start, notAfter: X509TestPKI.end,
                                        extendedKeyUsage: ["not an oid"])
        #expect(throws: CryptoError.invalidCertificate(.invalidObjectIdentifier("not an oid"))) { try badEKU.selfSigned(with: .ec(key)) }
        let badIP = CertificateBuilder(subject: name, notBefore: X509TestPKI.start, notAfter: X509TestPKI.end,
                                       subjectAlternativeNames: [.ipAddress([1, 2, 3])])
        #expect(throws: CryptoError.invalidCertificate(.invalidGeneralName(.ipAddress([1, 2, 3])))) { try badIP.selfSigned(with: .ec(key)) }
        let badSPKI = CertificateBuilder(subject: name, subjectPublicKeyInfoDER: [0x30, 0x00],
                                         notBefore: X509TestPKI.start, notAfter: X509TestPKI.end)
        let spkiError = #expect(throws: CryptoError.self) { try badSPKI.selfSigned(with: .ec(key)) }
        guard case .invalidKey = spkiError else {
            Issue.record("expected invalidKey, got \(String(describing: spkiError))")
            return
        }
    }
}
