import Foundation
import JOSE
import SDJWT
import Testing
import WalletCrypto
import WalletEncoding

/// The examples of RFC 9901 (draft 22 text) in ../shared/vectors/sdjwt, reproduced.
@Suite("RFC 9901 examples")
struct RFC9901VectorTests {
    /// Each listed disclosure decodes to its printed contents and hashes to its printed digest.
    static func checkDisclosures(_ entries: JSONValue?) throws {
        let list = try #require(entries?.arrayValue)
        #expect(!list.isEmpty)
        for entry in list {
            let disclosure = try Disclosure(encoded: try #require(entry["disclosure"]?.stringValue))
            #expect(disclosure.digest() == entry["sha256_hash"]?.stringValue)
            let contents = try #require(entry["contents_decoded"]?.arrayValue)
            let decoded: [JSONValue] = disclosure.claimName.map { [.string(disclosure.salt), .string($0), disclosure.value] }
                ?? [.string(disclosure.salt), disclosure.value]
            #expect(decoded == contents)
        }
    }

    /// Verification time just after the KB-JWT's `iat`, or a fixed instant inside the credential's window.
    static func time(of sdJWT: SDJWT) -> Date {
        sdJWT.keyBindingJWT?.claims.issuedAt?.addingTimeInterval(1) ?? TestSupport.now
    }

    @Test("a disclosure built from the §4.2.1 JSON text has the printed encoding and digest")
    func disclosureBasics() throws {
        let vectors = try #require(try TestSupport.sharedVector("rfc9901_disclosure_basics.json")["vectors"]?.arrayValue)
        let object = vectors[0]
        let built = try Disclosure(jsonText: try #require(object["inputs"]?["json_array_text"]?.stringValue))
        #expect(built.encoded == object["expected"]?["disclosure"]?.stringValue)
        #expect(built.digest() == object["expected"]?["sha256_digest"]?.stringValue)
        #expect(built.salt == "_26bc4LT-ac6q2KI6cBW5es" && built.claimName == "family_name" && built.value == "Möbius")

        // The equivalent encodings decode to the same salt, name and value, with other digests.
        let variants = try #require(vectors[1]["expected"]?.objectValue).values.compactMap(\.stringValue)
        #expect(variants.count == 3)
        for encoded in variants {
            let variant = try Disclosure(encoded: encoded)
            #expect(variant.salt == built.salt && variant.claimName == built.claimName && variant.value == built.value)
            #expect(variant.digest() != built.digest())
        }

        let element = vectors[2]
        let array = try Disclosure(jsonText: try #require(element["inputs"]?["json_array_text"]?.stringValue))
        #expect(array.encoded == element["expected"]?["disclosure"]?.stringValue)
        #expect(array.isArrayElement && array.value == "FR")
    }

    @Test("the §5 SD-JWT verifies, its payload and disclosures match, and the KB presentation processes to the printed claims")
    func section5() throws {
        let vector = try TestSupport.sharedVector("rfc9901_section5_example.json")
        let expected = try #require(vector["expected"])
        try Self.checkDisclosures(expected["disclosures"])
        let issuerKey = try JWK(members: try TestSupport.object(vector["inputs"]?["issuer_public_jwk"]))

        let issuance = try SDJWT(compact: try #require(expected["sd_jwt_issuance"]?.stringValue))
        #expect(issuance.issuerSignedJWTString == expected["issuer_signed_jwt"]?.stringValue)
        #expect(JSONValue.object(issuance.payload.members) == expected["sd_jwt_payload"])
        #expect(issuance.disclosures.count == 10)
        #expect(issuance.serialization == expected["sd_jwt_issuance"]?.stringValue)
        try issuance.issuerSignedJWT.jws.verify(with: issuerKey)

        let text = try #require(expected["sd_jwt_kb_presentation"]?.stringValue)
        let presentation = try SDJWT(compact: text)
        #expect(presentation.serialization == text)
        #expect(presentation.sdHash == expected["kb_jwt_payload"]?["sd_hash"]?.stringValue)
        // The parsed value keeps the input up to its last `~`; one assembled from the same
        // parts joins them to the same text.
        let assembled = try SDJWT(issuerSignedJWT: presentation.issuerSignedJWTString, disclosures: presentation.disclosures,
                                  keyBindingJWT: presentation.keyBindingJWTString)
        #expect(assembled == presentation)
        #expect(assembled.withoutKeyBinding == presentation.withoutKeyBinding)
        #expect(assembled.sdHash == presentation.sdHash)
        #expect(presentation.withoutKeyBinding + (presentation.keyBindingJWTString ?? "") == text)
        #expect(issuance.withoutKeyBinding == expected["sd_jwt_issuance"]?.stringValue)
        #expect(JSONValue.object(try #require(presentation.keyBindingJWT).claims.members) == expected["kb_jwt_payload"])

        let verifier = SDJWTVerifier(options: SDJWTVerificationOptions(
            issuerKey: .jwk(issuerKey), now: Self.time(of: presentation), profile: .sdJWT,
            keyBinding: KeyBindingExpectation(audience: "https://verifier.example.org", nonce: "1234567890")))
        let verified = try verifier.verify(text)
        #expect(JSONValue.object(verified.claims) == expected["processed_payload_after_verification"])
        #expect(verified.holderKey?.thumbprint == TestSupport.holderPublicJWK.thumbprint)
    }

    @Test("the §6 flat, structured and recursive payloads process with their disclosures")
    func section6() throws {
        let vectors = try #require(try TestSupport.sharedVector("rfc9901_section6_nested_data.json")["vectors"]?.arrayValue)
        let address: JSONValue = [
            "street_address": "Schulstr. 12", "locality": "Schulpforta", "region": "Sachsen-Anhalt", "country": "DE",
        ]
        for vector in vectors {
            try Self.checkDisclosures(vector["disclosures"])
            let disclosures = try #require(vector["disclosures"]?.arrayValue).map {
                try Disclosure(encoded: try #require($0["disclosure"]?.stringValue))
            }
            let payload = try TestSupport.object(vector["json_blocks_in_order"]?.arrayValue?.first)
            let processed = try ProcessedPayload(payload: payload, disclosures: disclosures, hashAlgorithm: .sha256)
            #expect(processed.claims["address"] == address)
            #expect(processed.claims["_sd"] == nil && processed.claims["_sd_alg"] == nil)
            #expect(processed.claims["sub"] == "6c5c0a49-b589-431d-bae7-219122a9ec2c")
        }
        // §6.2 second figure: country stays visible and the three others are disclosable.
        let structured = try TestSupport.object(vectors[1]["json_blocks_in_order"]?.arrayValue?.last)
        let threeOfFour = try #require(vectors[1]["disclosures"]?.arrayValue).prefix(3).map {
            try Disclosure(encoded: try #require($0["disclosure"]?.stringValue))
        }
        let processed = try ProcessedPayload(payload: structured, disclosures: threeOfFour, hashAlgorithm: .sha256)
        #expect(processed.claims["address"] == address)
    }

    @Test("App. A.2: the complex structured presentation verifies and processes to the printed claims")
    func appendixA2() throws {
        let vector = try TestSupport.sharedVector("rfc9901_appendix_a2_complex_structured.json")
        try checkAppendix(vector, presentationIndex: 0, processedBlock: 2, profile: .sdJWT)
    }

    @Test("App. A.3: the SD-JWT VC issuance and its KB presentation verify as SD-JWT VC")
    func appendixA3() throws {
        let vector = try TestSupport.sharedVector("rfc9901_appendix_a3_sd_jwt_vc.json")
        try checkAppendix(vector, presentationIndex: 1, processedBlock: 3, profile: .sdJWTVC)
        let expected = try #require(vector["expected"])
        let tokens = try #require(expected["compact_tokens"]?.arrayValue)
        let presentation = try SDJWT(compact: try #require(tokens[1].stringValue))
        #expect(JSONValue.object(try #require(presentation.keyBindingJWT).claims.members) == expected["json_blocks_in_order"]?.arrayValue?[2])
        // The issuance with every disclosure processes to the input claims (plus iat, exp, cnf).
        let issuance = try SDJWT(compact: try #require(tokens[0].stringValue))
        var claims = try issuance.processed().claims
        for name in ["iat", "exp", "cnf"] { claims.removeValue(forKey: name) }
        #expect(JSONValue.object(claims) == expected["json_blocks_in_order"]?.arrayValue?[0])
        // The holder side: presenting the same two claims selects the same disclosures.
        let selected = try issuance.disclosures(for: [["nationalities", nil], ["age_equal_or_over", "18"]])
        #expect(Set(selected.map(\.encoded)) == Set(presentation.disclosures.map(\.encoded)))
    }

    @Test("App. A.4: the W3C VCDM SD-JWT and its KB presentation verify")
    func appendixA4() throws {
        let vector = try TestSupport.sharedVector("rfc9901_appendix_a4_w3c_vcdm.json")
        try checkAppendix(vector, presentationIndex: 1, processedBlock: 2, profile: .sdJWT)
    }

    private func checkAppendix(_ vector: JSONValue, presentationIndex: Int, processedBlock: Int, profile: SDJWTProfile) throws {
        let expected = try #require(vector["expected"])
        try Self.checkDisclosures(expected["disclosures"])
        let issuerKey = try JWK(members: try TestSupport.object(vector["inputs"]?["issuer_public_jwk"]))
        let tokens = try #require(expected["compact_tokens"]?.arrayValue).compactMap(\.stringValue)
        for token in tokens {
            let sdJWT = try SDJWT(compact: token)
            #expect(sdJWT.serialization == token)
            #expect(JSONValue.object(sdJWT.payload.members) == expected["json_blocks_in_order"]?.arrayValue?[1])
            var keyBinding: KeyBindingExpectation?
            if let kb = sdJWT.keyBindingJWT {
                keyBinding = KeyBindingExpectation(audience: try #require(kb.claims.audience.first),
                                                   nonce: try #require(kb.claims.nonce))
                #expect(kb.claims["sd_hash"]?.stringValue == sdJWT.sdHash)
            }
            let verified = try SDJWTVerifier(options: SDJWTVerificationOptions(
                issuerKey: .jwk(issuerKey), now: Self.time(of: sdJWT), profile: profile, keyBinding: keyBinding)).verify(sdJWT)
            if token == tokens[presentationIndex] {
                #expect(JSONValue.object(verified.claims) == expected["json_blocks_in_order"]?.arrayValue?[processedBlock])
            }
        }
    }
}
