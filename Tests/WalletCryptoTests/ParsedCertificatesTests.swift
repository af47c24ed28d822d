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

    @Test("a malformed certificate is refused each time it is parsed")
    func failuresAreNotKept() {
        let garbage: [UInt8] = [0x30, 0x03, 0x02, 0x01, 0x01]
        for _ in 0..<2 {
            #expect(throws: CryptoError.self) { try X509Certificate(derEncoded: garbage) }
            #expect(ParsedCertificates.shared.certificate(for: garbage) == nil)
        }
    }
}
