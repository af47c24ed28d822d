import Foundation
import JOSE
import SDJWT
import Testing
import WalletCrypto
import WalletEncoding

/// The sd-jwt-python scenarios (transcribed into Vectors/sd_jwt_python_cases.json): the SDK
/// issues with the scenario's selectively disclosable claims, presents the holder's
/// choice, and the verified claims are exactly the scenario's expectation.
@Suite("sd-jwt-python reference scenarios")
struct ReferenceCaseTests {
    static func cases() throws -> [JSONValue] {
        try #require(try TestSupport.localVector("sd_jwt_python_cases.json")["cases"]?.arrayValue)
    }

    @Test("every scenario issues, presents and verifies to the expected claims", arguments: 0..<15)
    func scenario(_ index: Int) async throws {
        let vector = try TestSupport.localVector("sd_jwt_python_cases.json")
        let cases = try #require(vector["cases"]?.arrayValue)
        try #require(cases.count == 15)
        let scenario = cases[index]
        let issuerKey = try JWK(members: try TestSupport.object(vector["issuer_key"]))
        let holderKey = try JWK(members: try TestSupport.object(vector["holder_key"]))
        let nonce = try #require(vector["key_binding_nonce"]?.stringValue)
        let audience = try #require(vector["verifier"]?.stringValue)

        let plan = try DisclosurePlan(selectivelyDisclosable: try #require(scenario["selectively_disclosable_paths"]?.arrayValue)
            .map { try ClaimPath(json: $0) })
        let withKeyBinding = scenario["key_binding"] == true
        let issuer = SDJWTIssuer(signer: SoftwareSigner(try issuerKey.ecPrivateKey()), type: "example+sd-jwt")
        let issued = try await issuer.issue(claims: try TestSupport.object(scenario["user_claims"]), plan: plan,
                                            holderKey: withKeyBinding ? try holderKey.publicJWK : nil)
        // Every disclosure processes back to the input claims.
        #expect(JSONValue.object(try issued.processed().claims.filter { $0.key != "cnf" }) == scenario["user_claims"])

        let paths = try #require(scenario["disclosed_paths"]?.arrayValue).map { try ClaimPath(json: $0) }
        let presented: SDJWT
        var expectation: KeyBindingExpectation?
        if withKeyBinding {
            presented = try await issued.presentation(
                disclosing: paths, keyBinding: KeyBindingParameters(audience: audience, nonce: nonce, issuedAt: TestSupport.now),
                signer: SoftwareSigner(try holderKey.ecPrivateKey()))
            expectation = KeyBindingExpectation(audience: audience, nonce: nonce)
        } else {
            presented = try issued.presentation(disclosing: paths)
        }
        let verified = try SDJWTVerifier(options: SDJWTVerificationOptions(
            issuerKey: .jwk(try issuerKey.publicJWK), now: TestSupport.now, profile: .sdJWT, keyBinding: expectation))
            .verify(presented.serialization)
        #expect(JSONValue.object(verified.claims.filter { $0.key != "cnf" }) == scenario["expect_verified_user_claims"],
                "scenario \(scenario["name"]?.stringValue ?? "?")")
    }
}
