import Foundation
import COpenSSL
import Testing
@testable import WalletCrypto

/// Each trust policy accepts the certificate made for its use and refuses, with a typed
/// `TrustFailure`, one that differs in the single property the rule checks.
@Suite("X.509 trust policies")
struct X509TrustPolicyTests {
    typealias P = X509TestPKI

    /// A root (built by `root`) and a leaf (built by `leaf`) under it, both for a fresh key.
    struct Pair {
        let root: X509Certificate
        let leaf: X509Certificate
        let rootKey: ECPrivateKey
        let leafKey: ECPrivateKey

        func validate(_ policy: X509TrustPolicy, at time: Date = P.now) throws(TrustFailure) -> ValidatedChain {
            try X509ChainValidator(anchors: [root]).validate(chain: [leaf], at: time, policy: policy)
        }
    }

    static func pair(root: (DistinguishedName) -> CertificateBuilder = { .iaca(subject: $0, notBefore: P.start, notAfter: P.end) },
                     leaf: (DistinguishedName, [UInt8]) -> CertificateBuilder) throws -> Pair {
        let rootKey = try ECPrivateKey.generate(curve: .p256)
        let leafKey = try ECPrivateKey.generate(curve: .p256)
        let rootCertificate = try root(try P.name("Policy Root")).selfSigned(with: .ec(rootKey))
        let leafCertificate = try leaf(try P.name("Policy Leaf"), try leafKey.publicKey.spkiDER)
            .signed(by: rootCertificate, key: .ec(rootKey))
        return Pair(root: rootCertificate, leaf: leafCertificate, rootKey: rootKey, leafKey: leafKey)
    }

    static func endEntity(keyUsage: KeyUsage = .digitalSignature, extendedKeyUsage: [String] = [],
                          names: [GeneralName] = [], notBefore: Date = P.start,
                          notAfter: Date = P.end) -> (DistinguishedName, [UInt8]) -> CertificateBuilder {
        { subject, spki in
            .endEntity(subject: subject, subjectPublicKeyInfoDER: spki, notBefore: notBefore, notAfter: notAfter,
                       keyUsage: keyUsage, extendedKeyUsage: extendedKeyUsage, subjectAlternativeNames: names)
        }
    }

    static let ds = ExtendedKeyUsageOID.mdocDocumentSigner
    static let reader = ExtendedKeyUsageOID.mdocReaderAuthentication

    // MARK: mdoc document signer

    @Test("the document signer policy accepts a DS certificate under an IACA and returns leaf, path and anchor")
    func documentSignerAccepts() throws {
        let pair = try Self.pair(leaf: Self.endEntity(extendedKeyUsage: [Self.ds]))
        let chain = try pair.validate(.mdocDocumentSigner)
        #expect(chain.leaf == pair.leaf && chain.anchor == pair.root && chain.path == [pair.leaf, pair.root])
        #expect(chain.intermediates.isEmpty && chain.validationTime == P.now)
        #expect(try chain.leafPublicKey() == .ec(pair.leafKey.publicKey))
    }

    @Test("the document signer policy refuses a leaf without the DS EKU, with the reader EKU, or with no EKU extension")
    func documentSignerNeedsExtendedKeyUsage() throws {
        for usages in [[], [Self.reader], [ExtendedKeyUsageOID.serverAuth]] {
            let pair = try Self.pair(leaf: Self.endEntity(extendedKeyUsage: usages))
            #expect(throws: TrustFailure.missingExtendedKeyUsage(required: Self.ds, depth: 0)) { try pair.validate(.mdocDocumentSigner) }
        }
    }

    @Test("the document signer policy refuses a leaf without digitalSignature, or without a keyUsage extension")
    func documentSignerNeedsDigitalSignature() throws {
        let pair = try Self.pair(leaf: Self.endEntity(keyUsage: .keyAgreement, extendedKeyUsage: [Self.ds]))
        #expect(throws: TrustFailure.missingKeyUsage(required: .digitalSignature, depth: 0)) { try pair.validate(.mdocDocumentSigner) }
        let noKeyUsage = try Self.pair(leaf: { subject, spki in
            var builder = CertificateBuilder.mdocDocumentSigner(subject: subject, subjectPublicKeyInfoDER: spki,
                                                                notBefore: P.start, notAfter: P.end)
            builder.keyUsage = nil
            return builder
        })
        #expect(throws: TrustFailure.missingKeyUsage(required: .digitalSignature, depth: 0)) {
            try noKeyUsage.validate(.mdocDocumentSigner)
        }
    }

    @Test("the document signer policy refuses a CA as the signing certificate, including the IACA itself")
    func documentSignerIsNotCA() throws {
        let pair = try Self.pair(leaf: { subject, spki in
            var builder = CertificateBuilder.mdocDocumentSigner(subject: subject, subjectPublicKeyInfoDER: spki,
                                                                notBefore: P.start, notAfter: P.end)
            builder.basicConstraints = BasicConstraints(isCA: true)
            return builder
        })
        #expect(throws: TrustFailure.leafIsCA) { try pair.validate(.mdocDocumentSigner) }
        // The anchor presented as its own leaf.
        #expect(throws: TrustFailure.leafIsCA) {
            try X509ChainValidator(anchors: [pair.root]).validate(chain: [pair.root], at: P.now, policy: .mdocDocumentSigner)
        }
    }

    @Test("the IACA rules refuse an anchor without keyCertSign, without the CA flag, or without pathLenConstraint 0")
    func iacaProfile() throws {
        let noCertSign = try Self.pair(root: { subject in
            var builder = CertificateBuilder.iaca(subject: subject, notBefore: P.start, notAfter: P.end)
            builder.keyUsage = [.cRLSign, .digitalSignature]
            return builder
        }, leaf: Self.endEntity(extendedKeyUsage: [Self.ds]))
        // OpenSSL already refuses such an issuer (as not a CA); the policy rule says it on its own too.
        #expect(throws: TrustFailure.issuerNotCA(depth: 1)) { try noCertSign.validate(.mdocDocumentSigner) }
        #expect(throws: TrustFailure.issuerCannotSignCertificates(depth: 1)) {
            try X509TrustPolicy.mdocDocumentSigner.check(ValidatedChain(path: [noCertSign.leaf, noCertSign.root], validationTime: P.now))
        }
        let notCA = try Self.pair(root: { subject in
            CertificateBuilder(subject: subject, notBefore: P.start, notAfter: P.end, basicConstraints: BasicConstraints(isCA: false),
                               keyUsage: [.keyCertSign, .cRLSign])
        }, leaf: Self.endEntity(extendedKeyUsage: [Self.ds]))
        #expect(throws: TrustFailure.issuerNotCA(depth: 1)) { try notCA.validate(.mdocDocumentSigner) }
        for pathLength in [nil, 1] as [Int?] {
            let unconstrained = try Self.pair(root: { subject in
                .certificateAuthority(subject: subject, notBefore: P.start, notAfter: P.end, pathLength: pathLength)
            }, leaf: Self.endEntity(extendedKeyUsage: [Self.ds]))
            #expect(throws: TrustFailure.pathLengthNotConstrained(depth: 1, maximum: 0)) {
                try unconstrained.validate(.mdocDocumentSigner)
            }
            #expect(try unconstrained.validate(.init([.leafExtendedKeyUsage(Self.ds), .issuersAreCertificateAuthorities])).path.count == 2)
        }
    }

    @Test("a leafValid rule refuses a leaf that was not valid at that time, though it is now")
    func validAtSecondTime() throws {
        let pair = try Self.pair(leaf: Self.endEntity(extendedKeyUsage: [Self.ds], notBefore: P.now.addingTimeInterval(-P.day)))
        let signed = P.now.addingTimeInterval(-10 * P.day)
        #expect(throws: TrustFailure.notValidAt(time: signed, depth: 0)) {
            try pair.validate(.mdocDocumentSigner + .init([.leafValid(at: signed)]))
        }
        #expect(try pair.validate(.mdocDocumentSigner + .init([.leafValid(at: P.now.addingTimeInterval(-3600))])).path.count == 2)
        let after = P.end.addingTimeInterval(1)
        #expect(throws: TrustFailure.notValidAt(time: after, depth: 0)) {
            try pair.validate(.init([.leafValid(at: after)]))
        }
    }

    // MARK: mdoc reader authentication

    @Test("the reader authentication policy accepts the reader EKU and refuses the DS EKU or none")
    func readerAuthentication() throws {
        let good = try Self.pair(leaf: Self.endEntity(extendedKeyUsage: [Self.reader]))
        #expect(try good.validate(.mdocReaderAuthentication).leaf == good.leaf)
        for usages in [[], [Self.ds]] {
            let pair = try Self.pair(leaf: Self.endEntity(extendedKeyUsage: usages))
            #expect(throws: TrustFailure.missingExtendedKeyUsage(required: Self.reader, depth: 0)) {
                try pair.validate(.mdocReaderAuthentication)
            }
        }
    }

    @Test("the Annex D certificates meet their own policy and not the other's")
    func annexDProfiles() throws {
        let iaca = try X509Certificate(derEncoded: AnnexDCertificates.iaca)
        let ds = try X509Certificate(derEncoded: AnnexDCertificates.documentSigner)
        let root = try X509Certificate(derEncoded: AnnexDCertificates.readerRoot)
        let reader = try X509Certificate(derEncoded: AnnexDCertificates.reader)
        let time = AnnexDCertificates.validTime
        #expect(try X509ChainValidator(anchors: [iaca]).validate(chain: [ds], at: time, policy: .mdocDocumentSigner).path == [ds, iaca])
        #expect(try X509ChainValidator(anchors: [root]).validate(chain: [reader], at: time, policy: .mdocReaderAuthentication)
            .path == [reader, root])
        #expect(throws: TrustFailure.missingExtendedKeyUsage(required: Self.reader, depth: 0)) {
            try X509ChainValidator(anchors: [iaca]).validate(chain: [ds], at: time, policy: .mdocReaderAuthentication)
        }
        #expect(throws: TrustFailure.missingExtendedKeyUsage(required: Self.ds, depth: 0)) {
            try X509ChainValidator(anchors: [root]).validate(chain: [reader], at: time, policy: .mdocDocumentSigner)
        }
    }

    // MARK: SD-JWT VC issuer, OpenID4VP client identifiers

    @Test("the SD-JWT VC issuer policy binds iss to a URI SAN, or its https / dns: host to a dNSName SAN")
    func sdJWTVCIssuer() throws {
        let byDNS = try Self.pair(root: { .certificateAuthority(subject: $0, notBefore: P.start, notAfter: P.end) },
                                  leaf: Self.endEntity(names: [.dnsName("issuer.example")]))
        for issuer in ["https://issuer.example", "https://Issuer.Example/path", "https://issuer.example:8443", "dns:issuer.example",
                       "dns://192.0.2.1/issuer.example"] {
            #expect(try byDNS.validate(.sdJWTVCIssuer(issuer)).leaf == byDNS.leaf, "\(issuer)")
        }
        for issuer in ["https://other.example", "http://issuer.example", "https://user@issuer.example", "issuer.example",
                       "https://issuer.example.evil", "urn:issuer.example"] {
            #expect(throws: TrustFailure.subjectAlternativeNameMismatch(expected: issuer)) { try byDNS.validate(.sdJWTVCIssuer(issuer)) }
        }
        let byURI = try Self.pair(root: { .certificateAuthority(subject: $0, notBefore: P.start, notAfter: P.end) },
                                  leaf: Self.endEntity(names: [.uri("urn:example:issuer")]))
        #expect(try byURI.validate(.sdJWTVCIssuer("urn:example:issuer")).leaf == byURI.leaf)
        #expect(throws: TrustFailure.subjectAlternativeNameMismatch(expected: "urn:example:issuer2")) {
            try byURI.validate(.sdJWTVCIssuer("urn:example:issuer2"))
        }
        let noSigning = try Self.pair(root: { .certificateAuthority(subject: $0, notBefore: P.start, notAfter: P.end) },
                                      leaf: Self.endEntity(keyUsage: .keyEncipherment, names: [.dnsName("issuer.example")]))
        #expect(throws: TrustFailure.missingKeyUsage(required: .digitalSignature, depth: 0)) {
            try noSigning.validate(.sdJWTVCIssuer("https://issuer.example"))
        }
    }

    @Test("x509_san_dns matches a dNSName SAN exactly (case-insensitive, no wildcard); x509_hash matches the leaf's SHA-256")
    func openID4VPClientIdentifiers() throws {
        let pair = try Self.pair(root: { .certificateAuthority(subject: $0, notBefore: P.start, notAfter: P.end) },
                                 leaf: Self.endEntity(names: [.dnsName("verifier.example"), .dnsName("*.wild.example"),
                                                             .uri("https://uri.example")]))
        #expect(try pair.validate(.openID4VPClient(sanDNS: "verifier.example")).leaf == pair.leaf)
        #expect(try pair.validate(.openID4VPClient(sanDNS: "VERIFIER.example")).leaf == pair.leaf)
        for host in ["other.example", "a.wild.example", "uri.example", "verifier.example."] {
            #expect(throws: TrustFailure.subjectAlternativeNameMismatch(expected: host)) {
                try pair.validate(.openID4VPClient(sanDNS: host))
            }
        }
        let hash = HashAlgorithm.sha256.digest(pair.leaf.derEncoded)
        #expect(try pair.validate(.openID4VPClient(certificateSHA256: hash)).leaf == pair.leaf)
        #expect(throws: TrustFailure.certificateHashMismatch) {
            try pair.validate(.openID4VPClient(certificateSHA256: HashAlgorithm.sha256.digest(pair.root.derEncoded)))
        }
        #expect(throws: TrustFailure.certificateHashMismatch) { try pair.validate(.openID4VPClient(certificateSHA256: [])) }
    }

    // MARK: key attestation signer, composition

    @Test("the key-attestation signer policy wants an end-entity signing certificate under a CA")
    func keyAttestationSigner() throws {
        let good = try Self.pair(root: { .certificateAuthority(subject: $0, notBefore: P.start, notAfter: P.end) },
                                 leaf: Self.endEntity())
        #expect(try good.validate(.keyAttestationSigner).leaf == good.leaf)
        let noSigning = try Self.pair(root: { .certificateAuthority(subject: $0, notBefore: P.start, notAfter: P.end) },
                                      leaf: Self.endEntity(keyUsage: .keyAgreement))
        #expect(throws: TrustFailure.missingKeyUsage(required: .digitalSignature, depth: 0)) { try noSigning.validate(.keyAttestationSigner) }
        #expect(throws: TrustFailure.leafIsCA) {
            try X509ChainValidator(anchors: [good.root]).validate(chain: [good.root], at: P.now, policy: .keyAttestationSigner)
        }
        // RFC 5280 §4.2.1.3: without a keyUsage extension the key is not restricted.
        let unrestricted = try Self.pair(root: { .certificateAuthority(subject: $0, notBefore: P.start, notAfter: P.end) },
                                         leaf: { subject, spki in
                                             var builder = CertificateBuilder.endEntity(subject: subject, subjectPublicKeyInfoDER: spki,
                                                                                        notBefore: P.start, notAfter: P.end)
                                             builder.keyUsage = nil
                                             return builder
                                         })
        #expect(try unrestricted.validate(.keyAttestationSigner).leaf == unrestricted.leaf)
        #expect(throws: TrustFailure.missingKeyUsage(required: .digitalSignature, depth: 0)) {
            try unrestricted.validate(.mdocReaderAuthentication)
        }
    }

    @Test("policies compose in order; the first rule broken decides; path validation comes before any rule")
    func composition() throws {
        let pair = try Self.pair(leaf: Self.endEntity(keyUsage: .keyAgreement))
        let combined = X509TrustPolicy([.leafExtendedKeyUsage(Self.ds)]) + X509TrustPolicy([.leafKeyUsage(.digitalSignature)])
        #expect(combined.rules == [.leafExtendedKeyUsage(Self.ds), .leafKeyUsage(.digitalSignature)])
        #expect(throws: TrustFailure.missingExtendedKeyUsage(required: Self.ds, depth: 0)) { try pair.validate(combined) }
        #expect(throws: TrustFailure.missingKeyUsage(required: .digitalSignature, depth: 0)) {
            try pair.validate(X509TrustPolicy([.leafKeyUsage(.digitalSignature)]) + X509TrustPolicy([.leafExtendedKeyUsage(Self.ds)]))
        }
        // Root and leaf end together; OpenSSL reports the root.
        #expect(throws: TrustFailure.expired(depth: 1)) { try pair.validate(combined, at: P.end.addingTimeInterval(P.day)) }
        #expect(try pair.validate(.pathValidationOnly).path.count == 2)
    }

    @Test("a chain of DER that does not parse names the bad certificate; an empty chain is missingCertificate")
    func derChains() throws {
        let pair = try Self.pair(leaf: Self.endEntity(extendedKeyUsage: [Self.ds]))
        let validator = X509ChainValidator(anchors: [pair.root])
        #expect(try validator.validate(chainDER: [pair.leaf.derEncoded], at: P.now, policy: .mdocDocumentSigner).leaf == pair.leaf)
        #expect(throws: TrustFailure.malformedCertificate(index: 1)) {
            try validator.validate(chainDER: [pair.leaf.derEncoded, [0x30, 0x00]], at: P.now, policy: .mdocDocumentSigner)
        }
        #expect(throws: TrustFailure.missingCertificate) { try validator.validate(chainDER: [], at: P.now, policy: .pathValidationOnly) }
    }

    @Test("a leaf certifying an RSA key validates but has no usable key: unsupportedLeafKey")
    func unsupportedLeafKey() throws {
        guard let context = EVP_PKEY_CTX_new_from_name(nil, "RSA", nil) else { Issue.record("no RSA"); return }
        defer { EVP_PKEY_CTX_free(context) }
        var generated: OpaquePointer? = nil
        guard EVP_PKEY_keygen_init(context) == 1, EVP_PKEY_CTX_set_rsa_keygen_bits(context, 2048) == 1,
              EVP_PKEY_generate(context, &generated) == 1, let rsa = generated else {
            Issue.record("RSA key generation failed")
            return
        }
        defer { EVP_PKEY_free(rsa) }
        var der: UnsafeMutablePointer<UInt8>? = nil
        let length = i2d_PUBKEY(rsa, &der)
        guard length > 0, let der else { Issue.record("i2d_PUBKEY failed"); return }
        let spki = Array(UnsafeBufferPointer(start: der, count: Int(length)))
        CRYPTO_free(der, #file, #line)
        let rootKey = try ECPrivateKey.generate(curve: .p256)
        let root = try CertificateBuilder.certificateAuthority(subject: try P.name("RSA Root"), notBefore: P.start, notAfter: P.end)
            .selfSigned(with: .ec(rootKey))
        let leaf = try CertificateBuilder.endEntity(subject: try P.name("RSA Leaf"), subjectPublicKeyInfoDER: spki,
                                                    notBefore: P.start, notAfter: P.end).signed(by: root, key: .ec(rootKey))
        let chain = try X509ChainValidator(anchors: [root]).validate(chain: [leaf], at: P.now, policy: .signingCertificate)
        #expect(throws: TrustFailure.unsupportedLeafKey) { try chain.leafPublicKey() }
    }
}
