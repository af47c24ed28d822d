import Foundation
import Testing
@testable import WalletCrypto

/// Helpers shared by the X.509 test suites.
enum X509TestSupport {
    static func bytes(fromHex hex: String) -> [UInt8] {
        let digits = Array(hex.utf8)
        precondition(digits.count % 2 == 0, "odd hex length")
        func value(_ digit: UInt8) -> UInt8 {
            switch digit {
            case UInt8(ascii: "0")...UInt8(ascii: "9"): return digit - UInt8(ascii: "0")
            case UInt8(ascii: "a")...UInt8(ascii: "f"): return digit - UInt8(ascii: "a") + 10
            case UInt8(ascii: "A")...UInt8(ascii: "F"): return digit - UInt8(ascii: "A") + 10
            default: preconditionFailure("not a hex digit")
            }
        }
        return stride(from: 0, to: digits.count, by: 2).map { value(digits[$0]) << 4 | value(digits[$0 + 1]) }
    }

    static func hex(_ bytes: [UInt8]) -> String {
        bytes.map { String(format: "%02x", $0) }.joined()
    }

    static func sha256(_ bytes: [UInt8]) -> [UInt8] { SHA256.digest(bytes) }

    static func base64(_ bytes: [UInt8]) -> String { Data(bytes).base64EncodedString() }

    /// A PEM block with 64-column lines, built independently of the code under test.
    static func pem(_ der: [UInt8], label: String = "CERTIFICATE", lineEnding: String = "\n") -> String {
        let body = base64(der)
        var lines = ["-----BEGIN \(label)-----"]
        var index = body.startIndex
        while index < body.endIndex {
            let end = body.index(index, offsetBy: 64, limitedBy: body.endIndex) ?? body.endIndex
            lines.append(String(body[index..<end]))
            index = end
        }
        lines.append("-----END \(label)-----")
        return lines.joined(separator: lineEnding) + lineEnding
    }

    static func isP256(_ key: PublicKey) -> Bool {
        if case .ec(let ec) = key { return ec.curve == .p256 }
        return false
    }

    static func isMalformedEncoding(_ error: CryptoError?) -> Bool {
        if case .malformedEncoding = error { return true }
        return false
    }
}

@Suite("X.509 parsing")
struct X509ParsingTests {
    @Test("A PEM document with several CERTIFICATE blocks, CRLF lines and surrounding text yields each certificate in order")
    func pemWithSeveralBlocks() throws {
        let pem = "issuer chain\r\n" + X509TestSupport.pem(AnnexDCertificates.documentSigner, lineEnding: "\r\n")
            + "\r\nsome explanatory text\r\n"
            + X509TestSupport.pem([0x01, 0x02, 0x03], label: "OTHER THING", lineEnding: "\r\n")
            + X509TestSupport.pem(AnnexDCertificates.iaca, lineEnding: "\r\n")
        let certificates = try X509Certificate.parsePEM(pem)
        #expect(certificates.map(\.derEncoded) == [AnnexDCertificates.documentSigner, AnnexDCertificates.iaca])
        #expect(certificates.map(\.subject.commonName) == ["utopia ds", "utopia iaca"])
    }

    @Test("A single-certificate PEM parses with init(pemEncoded:) and round-trips through pemEncoded")
    func singlePEM() throws {
        let certificate = try X509Certificate(pemEncoded: X509TestSupport.pem(AnnexDCertificates.reader))
        #expect(certificate.derEncoded == AnnexDCertificates.reader)
        #expect(certificate.pemEncoded == X509TestSupport.pem(AnnexDCertificates.reader))
        #expect(try X509Certificate(pemEncoded: certificate.pemEncoded) == certificate)
    }

    @Test("init(pemEncoded:) rejects a document with two certificates")
    func pemWithTwoCertificatesForSingleInit() {
        let pem = X509TestSupport.pem(AnnexDCertificates.iaca) + X509TestSupport.pem(AnnexDCertificates.documentSigner)
        let error = #expect(throws: CryptoError.self) { try X509Certificate(pemEncoded: pem) }
        #expect(X509TestSupport.isMalformedEncoding(error))
    }

    @Test("Malformed PEM is a typed malformedEncoding error", arguments: [
        "",
        "no pem here",
        "-----BEGIN CERTIFICATE-----\nMIIB*AAA\n-----END CERTIFICATE-----\n",          // bad character
        "-----BEGIN CERTIFICATE-----\nMIIBzjCCAXOgAwIBAgIUKrTt0FKyWC9M\n",                 // no END line
        "-----BEGIN CERTIFICATE-----\nAAAA\n-----END X509 CRL-----\n",                     // mismatched END
        "-----BEGIN CERTIFICATE-----\nAAA\n-----END CERTIFICATE-----\n",                   // length not a multiple of 4
        "-----BEGIN CERTIFICATE-----\nAB==\n-----END CERTIFICATE-----\n",                  // non-zero padding bits
        "-----BEGIN CERTIFICATE-----\nA=AA\n-----END CERTIFICATE-----\n",                  // padding in the middle
        "-----BEGIN CERTIFICATE-----\n\n-----END CERTIFICATE-----\n",                      // empty body
        "-----BEGIN CERTIFICATE-----\nMAMCAQE=\n-----END CERTIFICATE-----\n",              // valid base64, not a certificate
        "-----BEGIN PRIVATE KEY-----\nMAMCAQE=\n-----END PRIVATE KEY-----\n",              // no CERTIFICATE block
    ])
    func malformedPEM(pem: String) {
        let error = #expect(throws: CryptoError.self) { try X509Certificate.parsePEM(pem) }
        #expect(X509TestSupport.isMalformedEncoding(error))
    }

    @Test("Empty, truncated, garbage and trailing-byte DER are typed malformedEncoding errors")
    func malformedDER() {
        let der = AnnexDCertificates.documentSigner
        let cases: [[UInt8]] = [
            [],
            Array(der.dropLast()),
            Array(der.prefix(40)),
            der + [0x00],
            der + der,
            [0x30, 0x03, 0x02, 0x01, 0x01],
            Array("definitely not a certificate".utf8),
            [UInt8](repeating: 0xff, count: 64),
        ]
        for bytes in cases {
            let error = #expect(throws: CryptoError.self) { try X509Certificate(derEncoded: bytes) }
            #expect(X509TestSupport.isMalformedEncoding(error))
        }
    }

    @Test("A version other than v1-v3 is unsupportedVersion, up to the largest INTEGER OpenSSL reads", arguments: [
        ([0x03], 4), ([0xff], 0), ([0x7f, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff], Int.max),
        ([0x7f, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xfe], Int.max), ([0x80, 0, 0, 0, 0, 0, 0, 0], Int.min + 1),
    ] as [([UInt8], Int)])
    func versionOutOfRange(encoded: [UInt8], reported: Int) throws {
        // The document signer's tbsCertificate with its `[0] INTEGER 2` replaced; the two
        // enclosing SEQUENCEs (long form, two length bytes) grow by the difference.
        var der = AnnexDCertificates.documentSigner
        let original: [UInt8] = [0xa0, 0x03, 0x02, 0x01, 0x02]
        #expect(Array(der[8..<13]) == original && der[0] == 0x30 && der[1] == 0x82 && der[4] == 0x30 && der[5] == 0x82)
        let replacement: [UInt8] = [0xa0, UInt8(encoded.count + 2), 0x02, UInt8(encoded.count)] + encoded
        der.replaceSubrange(8..<13, with: replacement)
        let growth = replacement.count - original.count
        for offset in [2, 6] {
            let length = (Int(der[offset]) << 8 | Int(der[offset + 1])) + growth
            der[offset] = UInt8(length >> 8)
            der[offset + 1] = UInt8(length & 0xff)
        }
        #expect(throws: CryptoError.invalidCertificate(.unsupportedVersion(reported))) { try X509Certificate(derEncoded: der) }
    }

    /// DER of a certificate (signature not valid, which parsing does not check) whose
    /// extensions are the non-critical, empty `1.3.6.1.4.1.99999.<n>` for each `n` given.
    static func certificate(extensionArcs arcs: [Int]) throws -> [UInt8] {
        func tlv(_ tag: UInt8, _ content: [UInt8]) -> [UInt8] {
            let count = content.count
            let length: [UInt8] = count < 0x80 ? [UInt8(count)]
                : count < 0x100 ? [0x81, UInt8(count)]
                : count < 0x10000 ? [0x82, UInt8(count >> 8), UInt8(count & 0xff)]
                : [0x83, UInt8(count >> 16), UInt8((count >> 8) & 0xff), UInt8(count & 0xff)]
            return [tag] + length + content
        }
        func arc(_ value: Int) -> [UInt8] {
            var bytes = [UInt8(value & 0x7f)]
            var rest = value >> 7
            while rest > 0 { bytes.insert(UInt8(rest & 0x7f) | 0x80, at: 0); rest >>= 7 }
            return bytes
        }
        let ecdsaSHA256 = tlv(0x30, tlv(0x06, [0x2a, 0x86, 0x48, 0xce, 0x3d, 0x04, 0x03, 0x02]))
        let name = tlv(0x30, tlv(0x31, tlv(0x30, tlv(0x06, [0x55, 0x04, 0x03]) + tlv(0x0c, Array("Many".utf8)))))
        let validity = tlv(0x30, tlv(0x17, Array("250101000000Z".utf8)) + tlv(0x17, Array("350101000000Z".utf8)))
        let extensions = arcs.flatMap { n in
            tlv(0x30, tlv(0x06, [0x2b, 0x06, 0x01, 0x04, 0x01, 0x86, 0x8d, 0x1f] + arc(n)) + tlv(0x04, []))
        }
        let spki = try ECPrivateKey.generate(curve: .p256).publicKey.spkiDER
        let tbs = tlv(0x30, tlv(0xa0, tlv(0x02, [0x02])) + tlv(0x02, [0x01]) + ecdsaSHA256 + name + validity + name
                      + spki + tlv(0xa3, tlv(0x30, extensions)))
        return tlv(0x30, tbs + ecdsaSHA256 + tlv(0x03, [0x00, 0x30, 0x06, 0x02, 0x01, 0x01, 0x02, 0x01, 0x01]))
    }

    @Test("Extensions are read up to 256, each OID once: more is tooManyExtensions before any is read, a repeat is duplicateExtension")
    func extensionCount() throws {
        let full = try X509Certificate(derEncoded: try Self.certificate(extensionArcs: Array(0..<256)))
        #expect(full.extensionOIDs.count == 256)
        #expect(full.extensionOIDs.last == "1.3.6.1.4.1.99999.255")
        // 20,000 distinct extensions (a 250 KB certificate) took seconds to check for repeats
        // one against all; they are refused from their count.
        for count in [257, 20_000] {
            #expect(throws: CryptoError.invalidCertificate(.tooManyExtensions(limit: 256))) {
                try X509Certificate(derEncoded: try Self.certificate(extensionArcs: Array(0..<count)))
            }
        }
        #expect(throws: CryptoError.invalidCertificate(.duplicateExtension(oid: "1.3.6.1.4.1.99999.7"))) {
            try X509Certificate(derEncoded: try Self.certificate(extensionArcs: Array(0..<200) + [7]))
        }
    }

    @Test("Every truncation and many single-byte corruptions of a certificate fail with a typed error or parse, never crash")
    func corruptionNeverCrashes() {
        let der = AnnexDCertificates.iaca
        for length in 0..<der.count {
            #expect(throws: CryptoError.self) { try X509Certificate(derEncoded: Array(der.prefix(length))) }
        }
        for index in 0..<der.count {
            for mask: UInt8 in [0x01, 0x80, 0xff] {
                var corrupted = der
                corrupted[index] ^= mask
                do {
                    let certificate = try X509Certificate(derEncoded: corrupted)
                    #expect(certificate.derEncoded == corrupted)
                    _ = certificate.isSelfSigned
                    _ = certificate.subject.rfc4514String
                } catch {
                    // Typed by the signature: any thrown error is a CryptoError.
                    _ = error
                }
            }
        }
    }

    @Test("Equality and hashing follow the DER bytes")
    func equalityByDER() throws {
        let first = try X509Certificate(derEncoded: AnnexDCertificates.iaca)
        let second = try X509Certificate(derEncoded: AnnexDCertificates.iaca)
        let other = try X509Certificate(derEncoded: AnnexDCertificates.readerRoot)
        #expect(first == second)
        #expect(first != other)
        #expect(Set([first, second, other]).count == 2)
    }
}

@Suite("X.509 distinguished names")
struct X509DistinguishedNameTests {
    @Test("A built name keeps attribute order, encodes C as PrintableString and CN as UTF8String")
    func builtName() throws {
        let name = try DistinguishedName([
            (.country, "NL"), (.organization, "Example Wallet B.V."), (.organizationalUnit, "Readers"),
            (.stateOrProvince, "Noord-Holland"), (.locality, "Amsterdam"), (.commonName, "Reader Ünit 1"),
        ])
        #expect(name.country == "NL")
        #expect(name.organization == "Example Wallet B.V.")
        #expect(name.organizationalUnit == "Readers")
        #expect(name.stateOrProvince == "Noord-Holland")
        #expect(name.locality == "Amsterdam")
        #expect(name.commonName == "Reader Ünit 1")
        #expect(name.attributes.first?.valueTag == 19)
        #expect(name.attributes.last?.valueTag == 12)
        #expect(name.rfc4514String == "CN=Reader Ünit 1,L=Amsterdam,ST=Noord-Holland,OU=Readers,O=Example Wallet B.V.,C=NL")
        #expect(try DistinguishedName(derEncoded: name.derEncoded) == name)
    }

    @Test("RFC 4514 strings escape special characters and write unregistered types as a dotted OID with a hex value")
    func rfc4514Escaping() throws {
        let name = try DistinguishedName([
            (.init(rawValue: "2.5.4.65"), "x"),
            (.commonName, ##"#a,b+c="d";<e>\ "##),
        ])
        #expect(name.rfc4514String == ##"CN=\#a\,b\+c=\"d\"\;\<e\>\\\ ,2.5.4.65=#0c0178"##)
        #expect(name.values(of: .commonName) == [##"#a,b+c="d";<e>\ "##])
    }

    @Test("A DER name with trailing bytes or garbage is a typed error")
    func malformedName() throws {
        let name = try DistinguishedName([(.commonName, "x")])
        let trailing = #expect(throws: CryptoError.self) { try DistinguishedName(derEncoded: name.derEncoded + [0]) }
        #expect(X509TestSupport.isMalformedEncoding(trailing))
        let garbage = #expect(throws: CryptoError.self) { try DistinguishedName(derEncoded: [0x04, 0x01]) }
        #expect(X509TestSupport.isMalformedEncoding(garbage))
    }

    @Test("An invalid country code (not two PrintableString letters) cannot be encoded")
    func invalidCountry() {
        #expect(throws: CryptoError.invalidCertificate(.unencodableAttribute(.country))) {
            try DistinguishedName([(.country, "Netherlands")])
        }
    }
}
