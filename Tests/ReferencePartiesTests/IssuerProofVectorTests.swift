import Foundation
import JOSE
@testable import ReferenceParties
import Testing
import WalletEncoding

/// The complete `jwt` proof of OpenID4VCI 1.0 App. F.1, checked by the issuer's own code.
@Suite("Reference issuer: the spec's jwt proof")
struct IssuerProofVectorTests {
    private func check(issuer: String = "https://credential-issuer.example.com", nonces: Set<String>, at iat: Date,
                       clientId: String? = nil) -> KeyProofCheck {
        KeyProofCheck(credentialIssuer: issuer, configuration: .pid(), clientId: clientId, requireIssuer: true,
                      requireNonce: true, validNonces: nonces, attestationAnchors: [], maxKeys: 10, now: iat,
                      maxAge: 300, clockSkew: 60)
    }

    @Test("the App. F.1 proof passes every check and yields its jwk; a wrong audience, nonce, time or client fails it")
    func specProof() throws {
        let vector = try issuerVector("openid4vci/proofs_and_key_attestation.json")
        let compact = try issuerVectorExample(vector, "jwt_proof_proofs_parameter").string("jwt_joined")
        let expected = try vector.object("expected")
        let payload = try expected.object("jwt_proof_payload")
        let iat = Date(timeIntervalSince1970: Double(try payload.int("iat")))
        let nonce = try payload.string("nonce")
        let proofs: JSONValue = ["jwt": [.string(compact)]]
        // The proof names no iss: it is an anonymous pre-authorized proof.
        let verified = try check(nonces: [nonce], at: iat).verify(proofs)
        #expect(verified.keys == [try JWK(members: try expected.object("jwt_proof_header").object("jwk"))])
        #expect(verified.nonces == [nonce])
        #expect(throws: KeyProofProblem.invalidProof(.audienceMismatch)) {
            try check(issuer: "https://other.example", nonces: [nonce], at: iat).verify(proofs)
        }
        #expect(throws: KeyProofProblem.invalidNonce(.proofNonceUnknown)) { try check(nonces: ["other"], at: iat).verify(proofs) }
        let late = iat.addingTimeInterval(301)
        #expect(throws: KeyProofProblem.invalidProof(.time(.issuedTooLongAgo(iat: iat, now: late, maximumAge: 300)))) {
            try check(nonces: [nonce], at: late).verify(proofs)
        }
        #expect(throws: KeyProofProblem.invalidProof(.issuerMissing)) {
            try check(nonces: [nonce], at: iat, clientId: "s6BhdRkqt3").verify(proofs)
        }
    }
}
