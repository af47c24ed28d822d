import Foundation
import Testing
@testable import WalletCrypto

/// The kept parses behind `X509Certificate(derEncoded:)` (issue 16): the same value as a
/// fresh parse, keyed by the exact bytes, bounded, and never holding a failure.
@Suite("Parsed certificates are kept by their exact DER")
struct ParsedCertificatesTests {
    @Test("a kept certificate equals a fresh parse field by field; another byte string is parsed on its own")
    func keptEqualsFresh() throws {
        let key = try ECPrivateKey.generate(curve: .p256)
        let root = try X509TestPKI.root("kept root", key: key)
        let der = root.derEncoded
        let first = try X509Certificate(derEncoded: Array(der))
        let second = try X509Certificate(derEncoded: Array(der))
        let store = ParsedCertificates()
        #expect(store.certificate(for: der) == nil)
        store.keep(first)
        let kept = try #require(store.certificate(for: Array(der)))
        for certificate in [second, kept] {
            #expect(certificate == first)
            #expect(certificate.derEncoded == der)
            #expect(certificate.subject == first.subject)
            #expect(certificate.serialNumber == first.serialNumber)
            #expect(certificate.notAfter == first.notAfter)
            #expect(certificate.subjectPublicKeyInfoDER == first.subjectPublicKeyInfoDER)
            #expect(certificate.sha256Fingerprint == first.sha256Fingerprint)
            #expect(certificate.keyUsage == first.keyUsage)
        }
        // One byte more, or one changed in the signature, is another key: parsed, and refused.
        #expect(store.certificate(for: der + [0]) == nil)
        #expect(throws: CryptoError.self) { try X509Certificate(derEncoded: der + [0]) }
        var tampered = der
        tampered[tampered.count - 1] ^= 0x01
        #expect(store.certificate(for: tampered) == nil)
        let reparsed = try X509Certificate(derEncoded: tampered)
        #expect(reparsed.signature != first.signature)
        #expect(reparsed != first)
    }

    @Test("at most `capacity` certificates are kept, the oldest dropped first; large ones are not kept")
    func bounded() throws {
        let store = ParsedCertificates()
        let key = try ECPrivateKey.generate(curve: .p256)
        var certificates: [X509Certificate] = []
        for n in 0..<(store.capacity + 3) {
            certificates.append(try X509TestPKI.root("root \(n)", key: key))
        }
        for certificate in certificates { store.keep(certificate) }
        store.keep(certificates[store.capacity + 2])    // kept already: nothing changes
        #expect(store.count == store.capacity)
        for (n, certificate) in certificates.enumerated() {
            #expect((store.certificate(for: certificate.derEncoded) != nil) == (n >= 3), "certificate \(n)")
        }
        #expect(store.certificate(for: [UInt8](repeating: 0x30, count: store.maxSize + 1)) == nil)
    }

    @Test("the certified key is imported once per parsed certificate: copies and later parses of the same bytes share it")
    func certifiedKeyKept() throws {
        let rootKey = try ECPrivateKey.generate(curve: .p256), leafKey = try ECPrivateKey.generate(curve: .p256)
        let root = try X509TestPKI.root("key root", key: rootKey)
        let built = try X509TestPKI.leaf("key leaf", key: leafKey, issuer: root, issuerKey: rootKey)
        let parsed = try X509Certificate(derEncoded: built.derEncoded)
        let copy = parsed
        let reparsed = try X509Certificate(derEncoded: Array(built.derEncoded))
        func evpKey(_ certificate: X509Certificate) throws -> EVPKey {
            guard case .ec(let key) = try certificate.publicKey else { throw CryptoError.unsupportedKey(expected: .ec) }
            return key.key
        }
        let first = try evpKey(parsed)
        #expect(try evpKey(copy) === first)
        #expect(try evpKey(reparsed) === first)
        #expect(try parsed.publicKey == .ec(leafKey.publicKey))
        // The kept key is the certified one: it verifies the leaf key's signatures only.
        let message = Array("signed by the leaf".utf8)
        let signature = try leafKey.signature(for: message).rawRepresentation(curve: .p256)
        #expect(try parsed.publicKey.verify(signature: signature, for: message, algorithm: .es256))
        #expect(try !root.publicKey.verify(signature: signature, for: message, algorithm: .es256))
        #expect(try root.publicKey == .ec(rootKey.publicKey))
    }

    @Test("a malformed certificate is refused each time it is parsed")
    func failuresAreNotKept() {
        let garbage: [UInt8] = [0x30, 0x03, 0x02, 0x01, 0x01]
        for _ in 0..<2 {
            #expect(throws: CryptoError.self) { try X509Certificate(derEncoded: garbage) }
            #expect(ParsedCertificates.shared.certificate(for: garbage) == nil)
        }
    }
}
