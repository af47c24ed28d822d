import COpenSSL
import Foundation
import Testing
@testable import WalletCrypto

/// A small test PKI built with `CertificateBuilder`.
struct X509TestPKI {
    /// 2023-11-14T22:13:20Z.
    static let start = Date(timeIntervalSince1970: 1_700_000_000)
    static let day: TimeInterval = 86_400
    /// The validation time used by the tests: 30 days after `start`.
    static let now = start.addingTimeInterval(30 * day)
    static let end = start.addingTimeInterval(3650 * day)

    static func name(_ commonName: String) throws -> DistinguishedName {
        try DistinguishedName([(.country, "UT"), (.organization, "Utopia Test PKI"), (.commonName, commonName)])
    }

    static func root(_ commonName: String, key: ECPrivateKey, pathLength: Int? = nil,
                     notBefore: Date = start, notAfter: Date = end) throws -> X509Certificate {
        try CertificateBuilder.certificateAuthority(subject: name(commonName), notBefore: notBefore, notAfter: notAfter,
                                                    pathLength: pathLength)
            .selfSigned(with: .ec(key))
    }

    static func intermediate(_ commonName: String, key: ECPrivateKey, issuer: X509Certificate, issuerKey: ECPrivateKey,
                             pathLength: Int? = nil) throws -> X509Certificate {
        try CertificateBuilder.certificateAuthority(subject: name(commonName), subjectPublicKeyInfoDER: key.publicKey.spkiDER,
                                                    notBefore: start, notAfter: end, pathLength: pathLength)
            .signed(by: issuer, key: .ec(issuerKey))
    }

    static func leaf(_ commonName: String, key: ECPrivateKey, issuer: X509Certificate, issuerKey: ECPrivateKey,
                     notBefore: Date = start, notAfter: Date = end) throws -> X509Certificate {
        try CertificateBuilder.endEntity(subject: name(commonName), subjectPublicKeyInfoDER: key.publicKey.spkiDER,
                                         notBefore: notBefore, notAfter: notAfter,
                                         extendedKeyUsage: [ExtendedKeyUsageOID.mdocDocumentSigner])
            .signed(by: issuer, key: .ec(issuerKey))
    }

    let rootKey: ECPrivateKey
    let intermediateKey: ECPrivateKey
    let leafKey: ECPrivateKey
    let root: X509Certificate
    let intermediate: X509Certificate
    let leaf: X509Certificate

    init() throws {
        rootKey = try ECPrivateKey.generate(curve: .p256)
        intermediateKey = try ECPrivateKey.generate(curve: .p384)
        leafKey = try ECPrivateKey.generate(curve: .p256)
        root = try Self.root("Test Root", key: rootKey)
        intermediate = try Self.intermediate("Test Intermediate", key: intermediateKey, issuer: root, issuerKey: rootKey)
        leaf = try Self.leaf("Test Leaf", key: leafKey, issuer: intermediate, issuerKey: intermediateKey)
    }
}

/// Path validation alone (no use policy), returning the path as an array.
func validatePath(leaf: X509Certificate, intermediates: [X509Certificate] = [], anchors: [X509Certificate], at time: Date,
                  options: X509ChainValidator.Options = .init()) throws(TrustFailure) -> [X509Certificate] {
    try X509ChainValidator(anchors: anchors, options: options)
        .validate(leaf: leaf, intermediates: intermediates, at: time, policy: .pathValidationOnly).path
}

@Suite("X.509 chain validation")
struct X509ChainValidationTests {
    @Test("A root, intermediate and leaf chain validates and returns the path leaf first")
    func validChain() throws {
        let pki = try X509TestPKI()
        let path = try validatePath(leaf: pki.leaf, intermediates: [pki.intermediate],
                                                     anchors: [pki.root], at: X509TestPKI.now)
        #expect(path == [pki.leaf, pki.intermediate, pki.root])
    }

    @Test("Intermediates may come in any order, mixed with unrelated certificates, and anchors may be several")
    func unorderedIntermediates() throws {
        let pki = try X509TestPKI()
        let other = try X509TestPKI()
        let validator = X509ChainValidator(anchors: [other.root, pki.root])
        let path = try validator.validate(leaf: pki.leaf, intermediates: [other.intermediate, other.leaf, pki.intermediate],
                                          at: X509TestPKI.now, policy: .pathValidationOnly).path
        #expect(path == [pki.leaf, pki.intermediate, pki.root])
        #expect(try validator.validate(chain: [pki.leaf, pki.intermediate], at: X509TestPKI.now, policy: .pathValidationOnly).path.count == 3)
    }

    @Test("The chain also validates without the strict RFC 5280 checks")
    func nonStrict() throws {
        let pki = try X509TestPKI()
        let path = try validatePath(leaf: pki.leaf, intermediates: [pki.intermediate], anchors: [pki.root],
                                                     at: X509TestPKI.now, options: .init(strict: false))
        #expect(path.count == 3)
    }

    @Test("A trusted intermediate is an anchor on its own with partial chains allowed")
    func trustedIntermediate() throws {
        let pki = try X509TestPKI()
        let path = try validatePath(leaf: pki.leaf, anchors: [pki.intermediate], at: X509TestPKI.now)
        #expect(path == [pki.leaf, pki.intermediate])
        #expect(throws: TrustFailure.unknownAnchor) {
            try validatePath(leaf: pki.leaf, anchors: [pki.intermediate], at: X509TestPKI.now,
                                              options: .init(allowPartialChain: false))
        }
    }

    @Test("An expired leaf fails with expired at depth 0")
    func expiredLeaf() throws {
        let pki = try X509TestPKI()
        let leaf = try X509TestPKI.leaf("Expired", key: pki.leafKey, issuer: pki.intermediate, issuerKey: pki.intermediateKey,
                                        notAfter: X509TestPKI.start.addingTimeInterval(X509TestPKI.day))
        #expect(throws: TrustFailure.expired(depth: 0)) {
            try validatePath(leaf: leaf, intermediates: [pki.intermediate], anchors: [pki.root],
                                              at: X509TestPKI.now)
        }
    }

    @Test("A leaf that is not yet valid fails with notYetValid at depth 0")
    func notYetValidLeaf() throws {
        let pki = try X509TestPKI()
        let leaf = try X509TestPKI.leaf("Future", key: pki.leafKey, issuer: pki.intermediate, issuerKey: pki.intermediateKey,
                                        notBefore: X509TestPKI.now.addingTimeInterval(X509TestPKI.day))
        #expect(throws: TrustFailure.notYetValid(depth: 0)) {
            try validatePath(leaf: leaf, intermediates: [pki.intermediate], anchors: [pki.root],
                                              at: X509TestPKI.now)
        }
    }

    @Test("Validity is checked at the given time, not the system clock")
    func givenTimeNotClock() throws {
        let rootKey = try ECPrivateKey.generate(curve: .p256)
        let from = Date(timeIntervalSince1970: 2_208_988_800)  // 2040-01-01
        let until = from.addingTimeInterval(365 * X509TestPKI.day)
        let root = try X509TestPKI.root("Future Root", key: rootKey, notBefore: from, notAfter: until)
        let leaf = try X509TestPKI.leaf("Future Leaf", key: rootKey, issuer: root, issuerKey: rootKey,
                                        notBefore: from, notAfter: until)
        let inside = from.addingTimeInterval(100 * X509TestPKI.day)
        #expect(try validatePath(leaf: leaf, anchors: [root], at: inside) == [leaf, root])
        #expect(throws: TrustFailure.notYetValid(depth: 1)) {
            try validatePath(leaf: leaf, anchors: [root], at: Date())
        }
        #expect(throws: TrustFailure.expired(depth: 1)) {
            try validatePath(leaf: leaf, anchors: [root], at: until.addingTimeInterval(1))
        }
    }

    @Test("A time that is not a number or past the time_t range fails validity, never traps")
    func unrepresentableTime() throws {
        let pki = try X509TestPKI()
        #expect(throws: TrustFailure.notYetValid(depth: 2)) {
            try validatePath(leaf: pki.leaf, intermediates: [pki.intermediate], anchors: [pki.root], at: Date(timeIntervalSince1970: .nan))
        }
        // OpenSSL cannot compare a time_t this late with the certificates' times.
        for seconds in [1e300, Double.infinity] {
            #expect(throws: TrustFailure.self) {
                try validatePath(leaf: pki.leaf, intermediates: [pki.intermediate], anchors: [pki.root], at: Date(timeIntervalSince1970: seconds))
            }
        }
    }

    @Test("A chain to a root that is not an anchor fails with unknownAnchor")
    func unknownRoot() throws {
        let pki = try X509TestPKI()
        let other = try X509TestPKI()
        #expect(throws: TrustFailure.unknownAnchor) {
            try validatePath(leaf: pki.leaf, intermediates: [pki.intermediate], anchors: [other.root],
                                              at: X509TestPKI.now)
        }
        // The same root passed as an untrusted intermediate does not make it trusted.
        #expect(throws: TrustFailure.unknownAnchor) {
            try validatePath(leaf: pki.leaf, intermediates: [pki.intermediate, pki.root],
                                              anchors: [other.root], at: X509TestPKI.now)
        }
    }

    @Test("A missing intermediate fails with unknownAnchor")
    func missingIntermediate() throws {
        let pki = try X509TestPKI()
        #expect(throws: TrustFailure.unknownAnchor) {
            try validatePath(leaf: pki.leaf, anchors: [pki.root], at: X509TestPKI.now)
        }
    }

    @Test("No anchors fails with noTrustAnchors and an empty chain with missingCertificate")
    func emptyInputs() throws {
        let pki = try X509TestPKI()
        #expect(throws: TrustFailure.noTrustAnchors) {
            try validatePath(leaf: pki.leaf, intermediates: [pki.intermediate], anchors: [], at: X509TestPKI.now)
        }
        #expect(throws: TrustFailure.missingCertificate) {
            try X509ChainValidator(anchors: [pki.root]).validate(chain: [], at: X509TestPKI.now, policy: .pathValidationOnly)
        }
    }

    /// `certificate` signed again by `key` over `digest` (what a CA using a weak digest
    /// issues), on a copy of its own: parsed certificates may share OpenSSL objects.
    static func resigned(_ certificate: X509Certificate, by key: ECPrivateKey, digest: OpaquePointer?) throws -> X509Certificate {
        let der = certificate.derEncoded
        let copy = try #require(der.withUnsafeBufferPointer { buffer -> OpaquePointer? in
            var cursor: UnsafePointer<UInt8>? = buffer.baseAddress
            return d2i_X509(nil, &cursor, buffer.count)
        })
        defer { X509_free(copy) }
        #expect(X509_sign(copy, key.key.pointer, digest) > 0)
        var out: UnsafeMutablePointer<UInt8>? = nil
        let length = i2d_X509(copy, &out)
        let bytes = try #require(out.map { Array(UnsafeBufferPointer(start: $0, count: Int(length))) })
        wallet_OPENSSL_free(out)
        return try X509Certificate(derEncoded: bytes)
    }

    @Test("A certificate signed over SHA-1 anywhere in the path fails with weakCryptography")
    func sha1Signature() throws {
        let pki = try X509TestPKI()
        let weakLeaf = try Self.resigned(pki.leaf, by: pki.intermediateKey, digest: EVP_sha1())
        #expect(weakLeaf.signature != pki.leaf.signature)
        let weakIntermediate = try Self.resigned(pki.intermediate, by: pki.rootKey, digest: EVP_sha1())
        // The depth is the certificate whose signature is weak.
        #expect(throws: TrustFailure.weakCryptography(depth: 0)) {
            try validatePath(leaf: weakLeaf, intermediates: [pki.intermediate], anchors: [pki.root], at: X509TestPKI.now)
        }
        #expect(throws: TrustFailure.weakCryptography(depth: 1)) {
            try validatePath(leaf: pki.leaf, intermediates: [weakIntermediate], anchors: [pki.root], at: X509TestPKI.now)
        }
        // The same certificates signed over SHA-256 again validate.
        let strong = try Self.resigned(weakLeaf, by: pki.intermediateKey, digest: EVP_sha256())
        #expect(try validatePath(leaf: strong, intermediates: [pki.intermediate], anchors: [pki.root], at: X509TestPKI.now).count == 3)
    }

    @Test("A leaf whose signature was tampered with fails with badSignature at depth 0")
    func tamperedSignature() throws {
        let pki = try X509TestPKI()
        var der = pki.leaf.derEncoded
        der[der.count - 1] ^= 0x01  // last byte of the ECDSA s value inside the signature BIT STRING
        let tampered = try X509Certificate(derEncoded: der)
        #expect(tampered.signature != pki.leaf.signature)
        #expect(tampered.subject == pki.leaf.subject)
        #expect(throws: TrustFailure.badSignature(depth: 0)) {
            try validatePath(leaf: tampered, intermediates: [pki.intermediate], anchors: [pki.root],
                                              at: X509TestPKI.now)
        }
    }

    @Test("A leaf naming the intermediate as issuer but signed by another key fails with badSignature at depth 0")
    func wrongIssuerKey() throws {
        let pki = try X509TestPKI()
        // An impostor with the intermediate's subject name; the forged leaf carries no
        // authorityKeyIdentifier (so OpenSSL matches the real intermediate by name alone),
        // which the strict profile would reject earlier, hence strict: false.
        let impostorKey = try ECPrivateKey.generate(curve: .p384)
        let impostor = try CertificateBuilder.certificateAuthority(subject: pki.intermediate.subject,
                                                                   notBefore: X509TestPKI.start, notAfter: X509TestPKI.end)
            .selfSigned(with: .ec(impostorKey))
        var builder = try CertificateBuilder.endEntity(subject: X509TestPKI.name("Forged"),
                                                       subjectPublicKeyInfoDER: pki.leafKey.publicKey.spkiDER,
                                                       notBefore: X509TestPKI.start, notAfter: X509TestPKI.end)
        builder.includeAuthorityKeyIdentifier = false
        let forged = try builder.signed(by: impostor, key: .ec(impostorKey))
        #expect(forged.issuer == pki.intermediate.subject)
        #expect(throws: TrustFailure.badSignature(depth: 0)) {
            try validatePath(leaf: forged, intermediates: [pki.intermediate], anchors: [pki.root],
                                              at: X509TestPKI.now, options: .init(strict: false))
        }
        // With the impostor's key identifier the real intermediate is not even a candidate issuer.
        let forgedWithKeyID = try X509TestPKI.leaf("Forged", key: pki.leafKey, issuer: impostor, issuerKey: impostorKey)
        #expect(throws: TrustFailure.unknownAnchor) {
            try validatePath(leaf: forgedWithKeyID, intermediates: [pki.intermediate], anchors: [pki.root],
                                              at: X509TestPKI.now)
        }
    }

    @Test("An intermediate without the CA flag that issues the leaf fails with issuerNotCA at depth 1")
    func intermediateNotCA() throws {
        let pki = try X509TestPKI()
        let notCAKey = try ECPrivateKey.generate(curve: .p256)
        let notCA = try CertificateBuilder.endEntity(subject: X509TestPKI.name("Not A CA"),
                                                     subjectPublicKeyInfoDER: notCAKey.publicKey.spkiDER,
                                                     notBefore: X509TestPKI.start, notAfter: X509TestPKI.end)
            .signed(by: pki.root, key: .ec(pki.rootKey))
        #expect(notCA.basicConstraints == BasicConstraints(isCA: false))
        let leaf = try X509TestPKI.leaf("Leaf", key: pki.leafKey, issuer: notCA, issuerKey: notCAKey)
        for strict in [true, false] {
            #expect(throws: TrustFailure.issuerNotCA(depth: 1)) {
                try validatePath(leaf: leaf, intermediates: [notCA], anchors: [pki.root],
                                                  at: X509TestPKI.now, options: .init(strict: strict))
            }
        }
    }

    @Test("A second intermediate below one with pathLenConstraint 0 fails with pathTooLong")
    func pathLengthExceeded() throws {
        let rootKey = try ECPrivateKey.generate(curve: .p256)
        let firstKey = try ECPrivateKey.generate(curve: .p256)
        let secondKey = try ECPrivateKey.generate(curve: .p256)
        let leafKey = try ECPrivateKey.generate(curve: .p256)
        let root = try X509TestPKI.root("Root", key: rootKey)
        let first = try X509TestPKI.intermediate("Intermediate pathLen 0", key: firstKey, issuer: root, issuerKey: rootKey,
                                                 pathLength: 0)
        let second = try X509TestPKI.intermediate("Intermediate below", key: secondKey, issuer: first, issuerKey: firstKey)
        let leaf = try X509TestPKI.leaf("Leaf", key: leafKey, issuer: second, issuerKey: secondKey)
        #expect(first.basicConstraints == BasicConstraints(isCA: true, pathLength: 0))
        // The constraint sits on the certificate at depth 2 (leaf 0, second 1, first 2).
        #expect(throws: TrustFailure.pathTooLong(depth: 2)) {
            try validatePath(leaf: leaf, intermediates: [second, first], anchors: [root], at: X509TestPKI.now)
        }
        // One intermediate under the pathLen 0 CA is fine.
        let shortLeaf = try X509TestPKI.leaf("Short", key: leafKey, issuer: first, issuerKey: firstKey)
        #expect(try validatePath(leaf: shortLeaf, intermediates: [first], anchors: [root],
                                                  at: X509TestPKI.now).count == 3)
    }

    @Test("A maximum number of intermediates below the chain's length fails with pathTooLong")
    func maximumDepth() throws {
        let pki = try X509TestPKI()
        let failure = #expect(throws: TrustFailure.self) {
            try validatePath(leaf: pki.leaf, intermediates: [pki.intermediate], anchors: [pki.root],
                                              at: X509TestPKI.now, options: .init(maximumIntermediates: 0))
        }
        guard case .pathTooLong = failure else {
            Issue.record("expected pathTooLong, got \(String(describing: failure))")
            return
        }
        #expect(try validatePath(leaf: pki.leaf, intermediates: [pki.intermediate], anchors: [pki.root],
                                                  at: X509TestPKI.now, options: .init(maximumIntermediates: 1)).count == 3)
    }

    @Test("A self-signed leaf that is not an anchor fails with unknownAnchor")
    func selfSignedLeaf() throws {
        let pki = try X509TestPKI()
        let key = try ECPrivateKey.generate(curve: .p256)
        let selfSigned = try X509TestPKI.root("Lonely", key: key)
        #expect(throws: TrustFailure.unknownAnchor) {
            try validatePath(leaf: selfSigned, anchors: [pki.root], at: X509TestPKI.now)
        }
    }
}
