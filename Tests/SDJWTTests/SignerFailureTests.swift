import Foundation
import JOSE
import SDJWT
import Testing
import WalletCrypto
import WalletEncoding

/// A signer for the holder's key whose every use fails the way a hardware key behind a
/// biometric or passcode prompt can fail.
private struct FailingSigner: Signer {
    let algorithm = SignatureAlgorithm.es256
    let publicKey: PublicKey
    let failure: KeyOperationError
    func sign(_ message: [UInt8]) async throws(KeyOperationError) -> [UInt8] { throw failure }
}

/// Issue 11, acceptance 1 (second half): what a signer says reaches the app unchanged.
@Suite("SD-JWT signer failures")
struct SignerFailureTests {
    static let claims: JSONObject = ["vct": "urn:example:1", "iss": "https://issuer.example", "given_name": "Erika"]
    static let plan = DisclosurePlan.object(["given_name": .disclosable])
    static let parameters = KeyBindingParameters(audience: TestSupport.audience, nonce: TestSupport.nonce,
                                                 issuedAt: TestSupport.now)

    @Test("a holder's cancelled prompt during key binding surfaces as keyOperation(.userCancelled), and so do the other key failures")
    func presentationSignerFailure() async throws {
        let credential = try await TestSupport.mint(Self.claims, plan: Self.plan)
        let holderKey = try TestSupport.holderPublicJWK.publicKey()
        for failure in [KeyOperationError.userCancelled, .authenticationRequired, .keyInvalidated] {
            let signer = FailingSigner(publicKey: holderKey, failure: failure)
            await #expect(throws: SDJWTError.keyOperation(failure)) {
                _ = try await credential.presentation(disclosing: [["given_name"]], keyBinding: Self.parameters, signer: signer)
            }
        }
    }

    @Test("an issuer signer's cancelled prompt surfaces as keyOperation(.userCancelled)")
    func issuanceSignerFailure() async throws {
        let signer = FailingSigner(publicKey: try TestSupport.issuerPublicJWK.publicKey(), failure: .userCancelled)
        await #expect(throws: SDJWTError.keyOperation(.userCancelled)) {
            _ = try await SDJWTIssuer(signer: signer).issue(claims: Self.claims, plan: Self.plan,
                                                            holderKey: TestSupport.holderPublicJWK)
        }
    }

    @Test("a random source that fails while drawing salts is randomSourceFailed with its CryptoError")
    func randomFailure() async throws {
        struct BrokenRandom: RandomSource {
            func bytes(count: Int) throws(CryptoError) -> [UInt8] { throw .backendFailure(.randomGeneration) }
        }
        await #expect(throws: SDJWTError.randomSourceFailed(.backendFailure(.randomGeneration))) {
            _ = try await SDJWTIssuer(signer: TestSupport.issuerSigner, random: BrokenRandom())
                .issue(claims: Self.claims, plan: Self.plan, holderKey: nil)
        }
    }
}
