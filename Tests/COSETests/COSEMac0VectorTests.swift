import CBOR
import COSE
import Foundation
import Testing

@Suite("COSE_Mac0 against the cose-wg examples")
struct COSEMac0VectorTests {
    typealias S = COSETestSupport

    static let expectedFailures: [String: COSEError] = [
        "mac-fail-01": .unexpectedTag(992),
        "mac-fail-02": .invalidMAC,
        "mac-fail-03": .unsupportedAlgorithm(-999),
        "mac-fail-04": .unsupportedAlgorithmName("Unknown"),
        "mac-fail-06": .invalidMAC,
        "mac-fail-07": .invalidMAC,
        "HMAC-ENC-04": .invalidMAC,
    ]

    static func verify(_ vector: [String: Any]) throws -> COSEMac0 {
        let aad = try S.hex(S.string(vector, "input", "mac0", "external") ?? "")
        let message = try COSEMac0(encoded: try S.hex(try #require(S.string(vector, "output", "cbor"))))
        try message.verify(key: try S.macKey(vector), externalAAD: aad)
        return message
    }

    /// Recomputes the MAC from the inputs and expects output.cbor byte for byte.
    static func recompute(_ vector: [String: Any], parsed: COSEMac0) throws {
        let aad = try S.hex(S.string(vector, "input", "mac0", "external") ?? "")
        let algorithm = try parsed.headers.algorithm()
        let rebuilt = try COSEMac0.create(payload: try #require(parsed.payload), key: try S.macKey(vector),
                                          algorithm: algorithm, protected: parsed.headers.protected,
                                          unprotected: parsed.headers.unprotected, externalAAD: aad,
                                          tagged: parsed.isTagged)
        #expect(rebuilt.authenticationTag == parsed.authenticationTag, "\(vector["title"] ?? "")")
        let expected = try S.hex(try #require(S.string(vector, "intermediates", "ToMac_hex")))
        #expect(try parsed.toBeMACed(externalAAD: aad) == expected, "\(vector["title"] ?? "")")
        // The rebuilt message re-encodes the received protected bytes only when they are
        // canonical; mac-pass-01 carries h'a0' which a builder sends as h''.
        if parsed.headers.protectedBytes == rebuilt.headers.protectedBytes {
            #expect(rebuilt.encodedBytes == parsed.encodedBytes, "\(vector["title"] ?? "")")
        }
    }

    @Test("every mac0-tests pass case verifies, and recomputing reproduces the tag and ToMac")
    func passCases() throws {
        let vectors = try S.upstreamVectors("cose_mac0_tests.json").filter { $0["fail"] as? Bool != true }
        #expect(vectors.count == 4)
        for vector in vectors { try Self.recompute(vector, parsed: try Self.verify(vector)) }
    }

    @Test("every mac0-tests fail case fails with its typed error")
    func failCases() throws {
        let vectors = try S.upstreamVectors("cose_mac0_tests.json").filter { $0["fail"] as? Bool == true }
        #expect(vectors.count == 6)
        for vector in vectors {
            let title = try #require(vector["title"] as? String)
            let expected = try #require(Self.expectedFailures[String(title.prefix(11))], "\(title)")
            #expect(throws: expected, "\(title)") { _ = try Self.verify(vector) }
        }
    }

    @Test("HMAC 256/256, 384, 512 and 256/64 examples are reproduced bit-exactly; the wrong tag fails")
    func hmacExamples() throws {
        var reproduced = 0
        for vector in try S.upstreamVectors("cose_mac0_hmac.json") {
            let title = try #require(vector["title"] as? String)
            if vector["fail"] as? Bool == true {
                #expect(throws: try #require(Self.expectedFailures[String(title.prefix(11))])) { _ = try Self.verify(vector) }
                continue
            }
            try Self.recompute(vector, parsed: try Self.verify(vector))
            reproduced += 1
        }
        #expect(reproduced == 4)
    }

    @Test("RFC 9052 Appendix C.6.1 (AES-MAC 256/64) parses but its algorithm is reported unsupported")
    func appendixC61() throws {
        let vector = try #require(try S.upstreamVectors("cose_rfc9052_appendix_c.json").first {
            S.dictionary($0, "input", "mac0") != nil
        })
        let message = try COSEMac0(encoded: try S.hex(try #require(S.string(vector, "output", "cbor"))))
        let expected = try S.hex(try #require(S.string(vector, "intermediates", "ToMac_hex")))
        #expect(try message.toBeMACed() == expected)
        #expect(throws: COSEError.unsupportedAlgorithm(15)) { try message.verify(key: try S.macKey(vector)) }
    }
}
