import CBOR
import COSE
import Foundation
import Mdoc
import Testing
import WalletCrypto

/// The reader checks that the issuerAuth and readerAuth certificates are the ones ISO/IEC
/// 18013-5 Annex B profiles for that use, not merely certificates that chain to an anchor
/// (issue 11 acceptance 1, issue 12 "certificates are trusted for anything").
@Suite("mdoc certificate profiles")
struct CertificateProfileTests {
    typealias S = MdocTestSupport

    static let day: TimeInterval = 86_400
    static let from = Date().addingTimeInterval(-400 * day)
    static let until = Date().addingTimeInterval(400 * day)

    static func name(_ text: String) throws -> DistinguishedName {
        try DistinguishedName([(.commonName, text), (.country, "UT")])
    }

    /// An IACA as given, a document signer certificate built by `ds` under it, and a
    /// DeviceResponse signed by that document signer and a fresh device key.
    struct Issued {
        let anchor: X509Certificate
        let response: DeviceResponse
        let transcript: SessionTranscript
    }

    static func issue(iaca: CertificateBuilder = .iaca(subject: try! name("IACA"), notBefore: from, notAfter: until),
                      ds: (DistinguishedName, [UInt8]) throws -> CertificateBuilder = { subject, spki in
                          .mdocDocumentSigner(subject: subject, subjectPublicKeyInfoDER: spki, notBefore: from, notAfter: until)
                      },
                      signedAt: Date = Date(), signWithIACAKey: Bool = false) async throws -> Issued {
        let iacaKey = try ECPrivateKey.generate(curve: .p256)
        let dsKey = try ECPrivateKey.generate(curve: .p256)
        let root = try iaca.selfSigned(with: .ec(iacaKey))
        let leaf = try ds(try name("DS"), try dsKey.publicKey.spkiDER).signed(by: root, key: .ec(iacaKey))
        let issuer = signWithIACAKey ? S.PKI(anchor: root, leaf: root, leafKey: iacaKey) : S.PKI(anchor: root, leaf: leaf, leafKey: dsKey)
        let deviceKey = try ECPrivateKey.generate(curve: .p256)
        let now = Date()
        let credential = try await S.issueMDL(issuer: issuer, deviceKey: deviceKey.publicKey, validity: ValidityInfo(
            signed: signedAt, validFrom: now.addingTimeInterval(-day), validUntil: now.addingTimeInterval(100 * day)))
        let (transcript, _, _) = try S.transcript()
        var builder = DeviceResponseBuilder(sessionTranscript: transcript)
        try await builder.addDocument(credential, for: S.mDLRequest(), authentication: .signature(SoftwareSigner(deviceKey)))
        return Issued(anchor: root, response: builder.build(), transcript: transcript)
    }

    static func verify(_ issued: Issued) async throws(MdocError) {
        _ = try await DeviceResponseVerifier(trustAnchors: [issued.anchor], sessionTranscript: issued.transcript)
            .verify(issued.response, at: Date())
    }

    @Test("a document signer certificate with the DS profile under an Annex B IACA verifies")
    func control() async throws {
        try await Self.verify(try await Self.issue())
    }

    @Test("a document signer certificate without the mdoc DS extended key usage is untrustedIssuer(missingExtendedKeyUsage)")
    func dsWithoutExtendedKeyUsage() async throws {
        let issued = try await Self.issue(ds: { subject, spki in
            .endEntity(subject: subject, subjectPublicKeyInfoDER: spki, notBefore: Self.from, notAfter: Self.until)
        })
        await #expect(throws: MdocError.untrustedIssuer(.missingExtendedKeyUsage(required: "1.0.18013.5.1.2", depth: 0))) {
            try await Self.verify(issued)
        }
    }

    @Test("a document signer certificate with the reader extended key usage instead is untrustedIssuer(missingExtendedKeyUsage)")
    func dsWithReaderExtendedKeyUsage() async throws {
        let issued = try await Self.issue(ds: { subject, spki in
            .mdocReaderAuthentication(subject: subject, subjectPublicKeyInfoDER: spki, notBefore: Self.from, notAfter: Self.until)
        })
        await #expect(throws: MdocError.untrustedIssuer(.missingExtendedKeyUsage(required: "1.0.18013.5.1.2", depth: 0))) {
            try await Self.verify(issued)
        }
    }

    @Test("a document signer certificate without digitalSignature is untrustedIssuer(missingKeyUsage)")
    func dsWithoutDigitalSignature() async throws {
        let issued = try await Self.issue(ds: { subject, spki in
            .endEntity(subject: subject, subjectPublicKeyInfoDER: spki, notBefore: Self.from, notAfter: Self.until,
                       keyUsage: .nonRepudiation, extendedKeyUsage: [ExtendedKeyUsageOID.mdocDocumentSigner])
        })
        await #expect(throws: MdocError.untrustedIssuer(.missingKeyUsage(required: .digitalSignature, depth: 0))) {
            try await Self.verify(issued)
        }
    }

    @Test("the IACA key signing the MSO itself is untrustedIssuer(leafIsCA)")
    func iacaSignsMSO() async throws {
        let issued = try await Self.issue(signWithIACAKey: true)
        await #expect(throws: MdocError.untrustedIssuer(.leafIsCA)) { try await Self.verify(issued) }
    }

    @Test("a document signer certificate expired at the MSO's signing time is untrustedIssuer(notValidAt), though valid now")
    func dsExpiredAtSigningTime() async throws {
        // The DS certificate became valid yesterday; the MSO claims it was signed 60 days ago.
        let signed = Date(timeIntervalSince1970: (Date().timeIntervalSince1970 - 60 * Self.day).rounded(.down))
        let issued = try await Self.issue(ds: { subject, spki in
            .mdocDocumentSigner(subject: subject, subjectPublicKeyInfoDER: spki, notBefore: Date().addingTimeInterval(-Self.day),
                                notAfter: Self.until)
        }, signedAt: signed)
        await #expect(throws: MdocError.untrustedIssuer(.notValidAt(time: signed, depth: 0))) { try await Self.verify(issued) }
    }

    @Test("an IACA that is not a CA is untrustedIssuer(issuerNotCA)")
    func iacaNotCA() async throws {
        let notCA = CertificateBuilder(subject: try Self.name("IACA"), notBefore: Self.from, notAfter: Self.until,
                                       basicConstraints: BasicConstraints(isCA: false), keyUsage: [.keyCertSign, .cRLSign])
        let issued = try await Self.issue(iaca: notCA)
        await #expect(throws: MdocError.untrustedIssuer(.issuerNotCA(depth: 1))) { try await Self.verify(issued) }
        var noConstraints = notCA
        noConstraints.basicConstraints = nil
        let issuedWithout = try await Self.issue(iaca: noConstraints)
        await #expect(throws: MdocError.untrustedIssuer(.issuerNotCA(depth: 1))) { try await Self.verify(issuedWithout) }
    }

    @Test("an IACA without pathLenConstraint 0 is untrustedIssuer(pathLengthNotConstrained)")
    func iacaWithoutPathLength() async throws {
        let unconstrained = CertificateBuilder.certificateAuthority(subject: try Self.name("IACA"), notBefore: Self.from,
                                                                    notAfter: Self.until)
        let issued = try await Self.issue(iaca: unconstrained)
        await #expect(throws: MdocError.untrustedIssuer(.pathLengthNotConstrained(depth: 1, maximum: 0))) {
            try await Self.verify(issued)
        }
        // A caller that accepts such roots says so with its own policy.
        let policy = X509TrustPolicy([.leafNotCA, .leafKeyUsage(.digitalSignature),
                                      .leafExtendedKeyUsage(ExtendedKeyUsageOID.mdocDocumentSigner)])
        _ = try await DeviceResponseVerifier(trustAnchors: [issued.anchor], sessionTranscript: issued.transcript, issuerPolicy: policy)
            .verify(issued.response, at: Date())
    }

    @Test("a reader authentication certificate without the reader extended key usage is untrustedReader(missingExtendedKeyUsage)")
    func readerWithoutExtendedKeyUsage() async throws {
        let rootKey = try ECPrivateKey.generate(curve: .p256)
        let readerKey = try ECPrivateKey.generate(curve: .p256)
        let root = try CertificateBuilder.iaca(subject: try Self.name("Reader root"), notBefore: Self.from, notAfter: Self.until)
            .selfSigned(with: .ec(rootKey))
        let (transcript, _, _) = try S.transcript()
        for extendedKeyUsage in [[], [ExtendedKeyUsageOID.mdocDocumentSigner]] {
            let leaf = try CertificateBuilder.endEntity(subject: try Self.name("Reader"), subjectPublicKeyInfoDER: readerKey.publicKey.spkiDER,
                                                        notBefore: Self.from, notAfter: Self.until, extendedKeyUsage: extendedKeyUsage)
                .signed(by: root, key: .ec(rootKey))
            let request = try await DocRequest(itemsRequest: S.mDLRequest(),
                                               readerKey: ReaderAuthenticationKey(signer: SoftwareSigner(readerKey), certificateChain: [leaf]),
                                               sessionTranscript: transcript)
            #expect(throws: MdocError.untrustedReader(.missingExtendedKeyUsage(required: "1.0.18013.5.1.6", depth: 0))) {
                try request.verifyReaderAuthentication(sessionTranscript: transcript, trustAnchors: [root], at: Date())
            }
        }
        let reader = try CertificateBuilder.mdocReaderAuthentication(subject: try Self.name("Reader"),
                                                                    subjectPublicKeyInfoDER: readerKey.publicKey.spkiDER,
                                                                    notBefore: Self.from, notAfter: Self.until)
            .signed(by: root, key: .ec(rootKey))
        let request = try await DocRequest(itemsRequest: S.mDLRequest(),
                                           readerKey: ReaderAuthenticationKey(signer: SoftwareSigner(readerKey), certificateChain: [reader]),
                                           sessionTranscript: transcript)
        #expect(try request.verifyReaderAuthentication(sessionTranscript: transcript, trustAnchors: [root], at: Date()).leaf == reader)
    }
}
