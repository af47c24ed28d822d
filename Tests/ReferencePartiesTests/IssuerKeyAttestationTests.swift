import Foundation
import JOSE
import ReferenceParties
import SDJWT
import Testing
import WalletCrypto
import WalletEncoding
import WalletRuntime

@Suite("Reference issuer: key attestations (OpenID4VCI 1.0 App. D)")
struct IssuerKeyAttestationTests {
    private let pid = IssuerCredentialConfiguration.pidId

    private func harness(_ provider: TestWalletProvider, levels: [String] = ["iso_18045_basic"],
                         attestationProofType: Bool = false) async throws -> IssuerHarness {
        try await IssuerHarness.make {
            var configuration = IssuerCredentialConfiguration.pid(keyAttestation: .init(keyStorage: levels))
            configuration.offersAttestationProofType = attestationProofType
            $0.credentialConfigurations = [configuration]
            $0.keyAttestationTrustAnchors = [provider.root]
        }
    }

    private func send(_ harness: IssuerHarness, _ proofs: JSONObject) async throws -> HTTPResponse {
        let grant = try await harness.preAuthorizedToken()
        return try await harness.credentialRequest(["credential_configuration_id": .string(pid), "proofs": .object(proofs)],
                                                   grant: grant)
    }

    @Test("the metadata announces key_attestations_required with the accepted levels")
    func metadata() async throws {
        let provider = try TestWalletProvider()
        let harness = try await harness(provider, levels: ["iso_18045_moderate"])
        let metadata = try json(try await harness.get("https://issuer.example/.well-known/openid-credential-issuer"))
        let jwt = try metadata.object("credential_configurations_supported").object(pid).object("proof_types_supported").object("jwt")
        #expect(try jwt.object("key_attestations_required").stringArray("key_storage") == ["iso_18045_moderate"])
    }

    @Test("a jwt proof with a key attestation of three keys gives three credentials, one per attested key")
    func attestedBatch() async throws {
        let provider = try TestWalletProvider()
        let harness = try await harness(provider)
        let holders = try (0..<3).map { _ in try HolderKey() }
        let nonce = try await harness.cNonce()
        let attestation = try await provider.attest(holders.map(\.jwk), nonce: nonce, at: harness.clock.now)
        let proof = try await holders[1].proof(audience: harness.credentialIssuer, nonce: nonce, at: harness.clock.now,
                                               keyAttestation: attestation, includeJWK: false, keyID: "1")
        let response = try await send(harness, ["jwt": [.string(proof)]])
        #expect(response.status == 200, "\(String(decoding: response.body, as: UTF8.self))")
        let bound = try json(response).objectArray("credentials").map {
            try SDJWT(compact: try $0.string("credential")).payload.confirmationKey()?.thumbprint
        }
        #expect(bound == holders.map { $0.jwk.thumbprint })
        #expect(await harness.issuer.inspection.credentialRequests.last?.proofs.first?.keyAttestation == attestation)
    }

    @Test("the attestation proof type needs no proof of possession")
    func attestationProofType() async throws {
        let provider = try TestWalletProvider()
        let harness = try await harness(provider, attestationProofType: true)
        let holders = try (0..<2).map { _ in try HolderKey() }
        let attestation = try await provider.attest(holders.map(\.jwk), nonce: try await harness.cNonce(), at: harness.clock.now)
        let response = try await send(harness, ["attestation": [.string(attestation)]])
        #expect(try json(response).objectArray("credentials").count == 2)
        let plain = try await self.harness(provider)
        let refused = try await send(plain, ["attestation": [.string(attestation)]])
        #expect(oauthError(refused) == "invalid_proof")
    }

    @Test("each unacceptable attestation is invalid_proof (or invalid_nonce)")
    func refusals() async throws {
        let provider = try TestWalletProvider(), stranger = try TestWalletProvider()
        let harness = try await harness(provider, levels: ["iso_18045_moderate"])
        let holder = try HolderKey(), other = try HolderKey()
        let now = harness.clock.now, audience = harness.credentialIssuer
        var cases: [(String, String, String)] = []
        func add(_ name: String, _ error: String = "invalid_proof", _ make: (String) async throws -> String) async throws {
            cases.append((name, error, try await make(try await harness.cNonce())))
        }
        try await add("no attestation") { try await holder.proof(audience: audience, nonce: $0, at: now) }
        try await add("untrusted wallet provider") { nonce in
            let attestation = try await stranger.attest([holder.jwk], nonce: nonce, at: now, keyStorage: ["iso_18045_moderate"])
            return try await holder.proof(audience: audience, nonce: nonce, at: now, keyAttestation: attestation)
        }
        try await add("level too low") { nonce in
            let attestation = try await provider.attest([holder.jwk], nonce: nonce, at: now, keyStorage: ["iso_18045_basic"])
            return try await holder.proof(audience: audience, nonce: nonce, at: now, keyAttestation: attestation)
        }
        try await add("expired") { nonce in
            let attestation = try await provider.attest([holder.jwk], nonce: nonce, at: now.addingTimeInterval(-7200),
                                                        keyStorage: ["iso_18045_moderate"])
            return try await holder.proof(audience: audience, nonce: nonce, at: now, keyAttestation: attestation)
        }
        try await add("wrong typ") { nonce in
            let attestation = try await provider.attest([holder.jwk], nonce: nonce, at: now, keyStorage: ["iso_18045_moderate"],
                                                        type: "JWT")
            return try await holder.proof(audience: audience, nonce: nonce, at: now, keyAttestation: attestation)
        }
        try await add("proof key not attested") { nonce in
            let attestation = try await provider.attest([other.jwk], nonce: nonce, at: now, keyStorage: ["iso_18045_moderate"])
            return try await holder.proof(audience: audience, nonce: nonce, at: now, keyAttestation: attestation)
        }
        try await add("attestation without the c_nonce") { nonce in
            let attestation = try await provider.attest([holder.jwk], nonce: nil, at: now, keyStorage: ["iso_18045_moderate"])
            return try await holder.proof(audience: audience, nonce: nonce, at: now, keyAttestation: attestation)
        }
        try await add("attestation with another nonce", "invalid_nonce") { nonce in
            let attestation = try await provider.attest([holder.jwk], nonce: "other", at: now, keyStorage: ["iso_18045_moderate"])
            return try await holder.proof(audience: audience, nonce: nonce, at: now, keyAttestation: attestation)
        }
        for (name, error, proof) in cases {
            let response = try await send(harness, ["jwt": [.string(proof)]])
            #expect(oauthError(response) == error, "\(name)")
        }
        // And the right one passes.
        let nonce = try await harness.cNonce()
        let attestation = try await provider.attest([holder.jwk], nonce: nonce, at: now, keyStorage: ["iso_18045_moderate"])
        let proof = try await holder.proof(audience: audience, nonce: nonce, at: now, keyAttestation: attestation)
        #expect(try await send(harness, ["jwt": [.string(proof)]]).status == 200)
    }

    @Test("an attestation of more keys than batch_size is invalid_credential_request")
    func attestedKeysOverBatchSize() async throws {
        let provider = try TestWalletProvider()
        let harness = try await IssuerHarness.make {
            $0.credentialConfigurations = [.pid(keyAttestation: .init())]
            $0.keyAttestationTrustAnchors = [provider.root]
            $0.batchSize = 2
        }
        let holders = try (0..<3).map { _ in try HolderKey() }
        let nonce = try await harness.cNonce()
        let attestation = try await provider.attest(holders.map(\.jwk), nonce: nonce, at: harness.clock.now)
        let proof = try await holders[0].proof(audience: harness.credentialIssuer, nonce: nonce, at: harness.clock.now,
                                               keyAttestation: attestation)
        #expect(oauthError(try await send(harness, ["jwt": [.string(proof)]])) == "invalid_credential_request")
    }
}
