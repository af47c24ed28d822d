import Foundation
import JOSE
import Mdoc
import ReferenceParties
import SDJWT
import Testing
import WalletCrypto
import WalletEncoding
import WalletRuntime

@Suite("Reference issuer: deliberate faults")
struct IssuerBehaviourTests {
    private func issue(_ harness: IssuerHarness, _ id: String = IssuerCredentialConfiguration.pidId,
                       holder: HolderKey) async throws -> HTTPResponse {
        let grant = try await harness.preAuthorizedToken([id])
        let proof = try await holder.proof(audience: harness.credentialIssuer, nonce: try await harness.cNonce(), at: harness.clock.now)
        return try await harness.credentialRequest(["credential_configuration_id": .string(id), "proofs": ["jwt": [.string(proof)]]],
                                                   grant: grant)
    }

    private func firstCredential(_ response: HTTPResponse) throws -> String {
        try json(response).objectArray("credentials")[0].string("credential")
    }

    @Test("signWithUnknownKey: the SD-JWT VC chain and the mdoc issuerAuth no longer lead to the published roots")
    func unknownKey() async throws {
        let harness = try await IssuerHarness.make { $0.behaviour.signWithUnknownKey = true }
        let anchors = harness.issuer.trustAnchors
        let sdJwt = try firstCredential(try await issue(harness, holder: try HolderKey()))
        #expect(throws: SDJWTError.self) {
            _ = try SDJWTVerifier(options: SDJWTVerificationOptions(
                issuerKey: .certificateChain(trustAnchors: [anchors.issuerRoot]), now: harness.clock.now)).verify(sdJwt)
        }
        let mdoc = try firstCredential(try await issue(harness, IssuerCredentialConfiguration.mDLId, holder: try HolderKey()))
        let document = try IssuerSigned(encoded: try #require(Base64URL.decodeStrict(mdoc)))
        #expect(throws: (any Error).self) { _ = try document.issuerAuth.verify(trustAnchors: [anchors.iaca], at: harness.clock.now, policy: .mdocDocumentSigner) }
    }

    @Test("bindToWrongKey: cnf and deviceKey are not the proof key")
    func wrongKey() async throws {
        let harness = try await IssuerHarness.make { $0.behaviour.bindToWrongKey = true }
        let holder = try HolderKey()
        let sdJwt = try SDJWT(compact: try firstCredential(try await issue(harness, holder: holder)))
        let bound = try #require(try sdJwt.payload.confirmationKey())
        #expect(bound.thumbprint != holder.jwk.thumbprint)
        let mdoc = try firstCredential(try await issue(harness, IssuerCredentialConfiguration.mDLId, holder: holder))
        let document = try IssuerSigned(encoded: try #require(Base64URL.decodeStrict(mdoc)))
        #expect(try document.mobileSecurityObject.devicePublicKey() != .ec(holder.key.publicKey))
    }

    @Test("issueWrongCredentialType and issueExpiredCredentials change vct/docType and the validity")
    func typeAndValidity() async throws {
        let harness = try await IssuerHarness.make {
            $0.behaviour.issueWrongCredentialType = true
            $0.behaviour.issueExpiredCredentials = true
        }
        let sdJwt = try SDJWT(compact: try firstCredential(try await issue(harness, holder: try HolderKey())))
        #expect(sdJwt.payload["vct"]?.stringValue == "urn:eudi:pid:1.invalid")
        #expect(try #require(sdJwt.payload.expiration) < harness.clock.now)
        let mdoc = try firstCredential(try await issue(harness, IssuerCredentialConfiguration.mDLId, holder: try HolderKey()))
        let mso = try IssuerSigned(encoded: try #require(Base64URL.decodeStrict(mdoc))).mobileSecurityObject
        #expect(mso.docType == "org.iso.18013.5.1.mDL.invalid")
        #expect(mso.validityInfo.validUntil < harness.clock.now)
    }

    @Test("credentialError and issueFewerCredentials")
    func credentialFaults() async throws {
        let harness = try await IssuerHarness.make { $0.behaviour.credentialError = "credential_request_denied" }
        let refused = try await issue(harness, holder: try HolderKey())
        #expect(refused.status == 400 && oauthError(refused) == "credential_request_denied")
        try await harness.issuer.setBehaviour(IssuerBehaviour(issueFewerCredentials: true))
        let grant = try await harness.preAuthorizedToken()
        let nonce = try await harness.cNonce()
        var proofs: [JSONValue] = []
        for _ in 0..<3 {
            proofs.append(.string(try await HolderKey().proof(audience: harness.credentialIssuer, nonce: nonce, at: harness.clock.now)))
        }
        let response = try await harness.credentialRequest(
            ["credential_configuration_id": .string(IssuerCredentialConfiguration.pidId), "proofs": ["jwt": .array(proofs)]], grant: grant)
        #expect(try json(response).objectArray("credentials").count == 1)
    }

    @Test("the inspection records exchanges and refusals with their reasons; clearing it starts afresh")
    func inspection() async throws {
        let harness = try await IssuerHarness.make()
        _ = try await harness.postForm(harness.asURL("/token"), [("grant_type", "password")])
        let inspection = await harness.issuer.inspection
        let exchange = try #require(inspection.exchanges.last)
        #expect(exchange.method == "POST" && exchange.path == "/token" && exchange.status == 400)
        #expect(inspection.refusals.last?.error == "unsupported_grant_type")
        #expect(inspection.refusals.last?.description?.contains("password") == true)
        await harness.issuer.clearInspection()
        #expect(await harness.issuer.inspection.exchanges.isEmpty)
    }

    @Test("setOrigin moves identifiers and endpoints, and the SD-JWT VC certificate names the new issuer")
    func origin() async throws {
        let harness = try await IssuerHarness.make()
        try await harness.issuer.setOrigin(try #require(URL(string: "http://127.0.0.1:8123")))
        #expect(await harness.issuer.credentialIssuer == "http://127.0.0.1:8123")
        #expect(await harness.issuer.metadataURL == "http://127.0.0.1:8123/.well-known/openid-credential-issuer")
        let moved = IssuerHarness(issuer: harness.issuer, clock: harness.clock, credentialIssuer: "http://127.0.0.1:8123",
                                  authorizationServer: "http://127.0.0.1:8123")
        let holder = try HolderKey()
        let credential = try firstCredential(try await issue(moved, holder: holder))
        let verified = try SDJWTVerifier(options: SDJWTVerificationOptions(
            issuerKey: .certificateChain(trustAnchors: [harness.issuer.trustAnchors.issuerRoot]), now: harness.clock.now,
            expectedIssuer: "http://127.0.0.1:8123")).verify(credential)
        #expect(verified.certificateChain?.leaf.subjectAlternativeURIs == ["http://127.0.0.1:8123"])
        await #expect(throws: ReferenceIssuerError.invalidConfiguration(.originHasPath)) {
            try await harness.issuer.setOrigin(try #require(URL(string: "http://127.0.0.1:8123/x")))
        }
    }
}
