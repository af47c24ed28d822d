import Foundation
import JOSE
import ReferenceParties
import Testing
import WalletCrypto
import WalletEncoding
import WalletRuntime

@Suite("Reference issuer: metadata")
struct IssuerMetadataTests {
    @Test("credential issuer metadata lives at the well-known path inserted before the issuer path")
    func wellKnownPathInsertion() async throws {
        let harness = try await IssuerHarness.make { $0.issuerPath = "/tenant" }
        #expect(harness.credentialIssuer == "https://issuer.example/tenant")
        let response = try await harness.get("https://issuer.example/.well-known/openid-credential-issuer/tenant")
        #expect(response.status == 200)
        #expect(response.headers["Content-Type"] == "application/json")
        let metadata = try json(response)
        #expect(try metadata.string("credential_issuer") == "https://issuer.example/tenant")
        #expect(try metadata.string("credential_endpoint") == "https://issuer.example/tenant/credential")
        // Appending (the OpenID Connect way) is not the OpenID4VCI location.
        let appended = try await harness.get("https://issuer.example/tenant/.well-known/openid-credential-issuer")
        #expect(appended.status == 404)
    }

    @Test("metadata describes the PID and the mDL with formats, types, proof types, batch size and display")
    func configurations() async throws {
        let harness = try await IssuerHarness.make()
        let metadata = try json(try await harness.get("https://issuer.example/.well-known/openid-credential-issuer"))
        #expect(try metadata.string("nonce_endpoint") == "https://issuer.example/nonce")
        #expect(try metadata.string("notification_endpoint") == "https://issuer.example/notification")
        #expect(metadata["deferred_credential_endpoint"] == nil)
        #expect(metadata["authorization_servers"] == nil)
        #expect(try metadata.object("batch_credential_issuance").int("batch_size") == 10)
        let configurations = try metadata.object("credential_configurations_supported")
        let pid = try configurations.object(IssuerCredentialConfiguration.pidId)
        #expect(try pid.string("format") == "dc+sd-jwt")
        #expect(try pid.string("vct") == "urn:eudi:pid:1")
        #expect(try pid.stringArray("cryptographic_binding_methods_supported") == ["jwk"])
        #expect(try pid.object("proof_types_supported").object("jwt").stringArray("proof_signing_alg_values_supported") == ["ES256"])
        #expect(try pid.object("credential_metadata").objectArray("display").first?.string("name") == "Personal ID")
        let mdl = try configurations.object(IssuerCredentialConfiguration.mDLId)
        #expect(try mdl.string("format") == "mso_mdoc")
        #expect(try mdl.string("doctype") == "org.iso.18013.5.1.mDL")
        #expect(try mdl.stringArray("cryptographic_binding_methods_supported") == ["cose_key"])
        #expect(try mdl.array("credential_signing_alg_values_supported") == [.integer(-7)])
        let claim = try mdl.object("credential_metadata").objectArray("claims").first
        #expect(try claim?.stringArray("path") == ["org.iso.18013.5.1", "given_name"])
    }

    @Test("the metadata has the members of the spec's full example (OpenID4VCI 1.0 App. I.1) when every option is on")
    func fullMetadataShape() async throws {
        let vector = try issuerVector("openid4vci/issuer_metadata.json")
        let example = try issuerVectorExample(vector, "issuer_metadata_full_optional_parameters")
        let expected = try example.object("json")
        let harness = try await IssuerHarness.make {
            $0.authorizationServerPath = "/auth"
            $0.deferral = DeferredIssuance()
            $0.requestEncryption = EncryptionSupport(required: true, contentEncryption: ["A128GCM"], compression: ["DEF"])
            $0.responseEncryption = EncryptionSupport(required: true, contentEncryption: ["A128GCM"], compression: ["DEF"])
        }
        let metadata = try json(try await harness.get("https://issuer.example/.well-known/openid-credential-issuer"))
        for name in expected.keys {
            #expect(metadata[name] != nil, "member \(name) of the spec's example is missing")
        }
        let request = try metadata.object("credential_request_encryption")
        let expectedRequest = try expected.object("credential_request_encryption")
        #expect(Set(request.keys) == Set(expectedRequest.keys))
        // The 1.0 text makes jwks a JWK Set (errata: {"keys": [...]}); each key has kid and alg.
        let key = try request.object("jwks").objectArray("keys")[0]
        for name in ["kty", "kid", "use", "crv", "alg", "x", "y"] { #expect(key[name] != nil, "jwk member \(name)") }
        #expect(try key.string("alg") == "ECDH-ES")
        let response = try metadata.object("credential_response_encryption")
        #expect(Set(response.keys) == Set(try expected.object("credential_response_encryption").keys))
        #expect(try metadata.stringArray("authorization_servers") == ["https://issuer.example/auth"])
    }

    @Test("authorization server metadata follows RFC 8414 with PAR, PKCE, DPoP and the pre-authorized grant")
    func authorizationServerMetadata() async throws {
        let harness = try await IssuerHarness.make {
            $0.authorizationServerPath = "/auth"
            $0.par = .required
            $0.dpop = .requiredWithNonce
        }
        let response = try await harness.get("https://issuer.example/.well-known/oauth-authorization-server/auth")
        #expect(response.status == 200)
        let metadata = try json(response)
        #expect(try metadata.string("issuer") == "https://issuer.example/auth")
        #expect(try metadata.string("token_endpoint") == "https://issuer.example/auth/token")
        #expect(try metadata.string("pushed_authorization_request_endpoint") == "https://issuer.example/auth/par")
        #expect(try metadata.bool("require_pushed_authorization_requests"))
        #expect(try metadata.stringArray("code_challenge_methods_supported") == ["S256"])
        #expect(try metadata.stringArray("dpop_signing_alg_values_supported") == ["ES256"])
        #expect(try metadata.stringArray("grant_types_supported").contains("urn:ietf:params:oauth:grant-type:pre-authorized_code"))
        #expect(try metadata.bool("pre-authorized_grant_anonymous_access_supported"))
        #expect(try metadata.bool("authorization_response_iss_parameter_supported"))
        // Only RFC 8414 by default: no OpenID discovery document.
        #expect(try await harness.get("https://issuer.example/auth/.well-known/openid-configuration").status == 404)
    }

    @Test("authorization server metadata can be served only at the OpenID discovery location")
    func openIDConfigurationOnly() async throws {
        let harness = try await IssuerHarness.make { $0.authorizationServerMetadata = .openIDConfiguration }
        #expect(try await harness.get("https://issuer.example/.well-known/oauth-authorization-server").status == 404)
        let response = try await harness.get("https://issuer.example/.well-known/openid-configuration")
        #expect(response.status == 200)
        #expect(try json(response).string("issuer") == "https://issuer.example")
    }

    @Test("signed metadata is served on Accept application/jwt, typed, with sub and an x5c chain to the issuer root")
    func signedMetadataOnRequest() async throws {
        let harness = try await IssuerHarness.make { $0.signedMetadata = .onRequest }
        let plain = try await harness.get("https://issuer.example/.well-known/openid-credential-issuer")
        #expect(try json(plain)["signed_metadata"] == nil)
        let response = try await harness.get("https://issuer.example/.well-known/openid-credential-issuer",
                                             headers: ["Accept": "application/jwt"])
        #expect(response.headers["Content-Type"] == "application/jwt")
        let jwt = try JWT(compact: String(decoding: response.body, as: UTF8.self))
        #expect(jwt.header.type == "openidvci-issuer-metadata+jwt")
        let chain = try jwt.jws.verifyWithCertificateChain(trustAnchors: [harness.issuer.trustAnchors.issuerRoot],
                                                           at: harness.clock.now, policy: .sdJWTVCIssuer("https://issuer.example"))
        #expect(chain.leaf.subjectAlternativeURIs == ["https://issuer.example"])
        #expect(jwt.claims.subject == "https://issuer.example")
        #expect(jwt.claims.issuedAt == harness.clock.now)
        #expect(jwt.claims["credential_endpoint"]?.stringValue == "https://issuer.example/credential")
    }

    @Test("signed metadata can be embedded as the draft signed_metadata member")
    func signedMetadataEmbedded() async throws {
        let harness = try await IssuerHarness.make { $0.signedMetadata = .embedded }
        let metadata = try json(try await harness.get("https://issuer.example/.well-known/openid-credential-issuer"))
        let jwt = try JWT(compact: try metadata.string("signed_metadata"))
        try jwt.jws.verifyWithCertificateChain(trustAnchors: [harness.issuer.trustAnchors.issuerRoot], at: harness.clock.now,
                                               policy: .signingCertificate)
        #expect(jwt.claims["signed_metadata"] == nil)
        #expect(jwt.claims["credential_issuer"]?.stringValue == "https://issuer.example")
    }

    @Test("jwt-vc-issuer metadata publishes the SD-JWT VC signing key with its kid")
    func jwtVCIssuerMetadata() async throws {
        let harness = try await IssuerHarness.make { $0.issuerPath = "/tenant" }
        let metadata = try json(try await harness.get("https://issuer.example/.well-known/jwt-vc-issuer/tenant"))
        #expect(try metadata.string("issuer") == "https://issuer.example/tenant")
        let key = try JWK(members: try metadata.object("jwks").objectArray("keys")[0])
        #expect(key.thumbprint == harness.issuer.trustAnchors.signingKey.thumbprint)
        #expect(key.keyID == key.thumbprint)
    }

    @Test("a configuration advertising response encryption without request encryption is refused")
    func responseEncryptionNeedsRequestEncryption() throws {
        var configuration = ReferenceIssuerConfiguration()
        configuration.responseEncryption = EncryptionSupport()
        #expect(throws: ReferenceIssuerError.invalidConfiguration(.responseEncryptionWithoutRequestEncryption)) {
            _ = try ReferenceIssuer(configuration: configuration)
        }
        configuration.behaviour.advertiseResponseEncryptionWithoutRequestKeys = true
        #expect(throws: Never.self) { _ = try ReferenceIssuer(configuration: configuration) }
    }

    @Test("invalid configurations are refused: paths, batch size, duplicate ids, key attestation without anchors")
    func invalidConfigurations() {
        func problem(_ change: (inout ReferenceIssuerConfiguration) -> Void) -> ReferenceIssuerError? {
            var configuration = ReferenceIssuerConfiguration()
            change(&configuration)
            do { _ = try ReferenceIssuer(configuration: configuration); return nil } catch { return error }
        }
        #expect(problem { $0.issuerPath = "tenant" } == .invalidConfiguration(.invalidPath("tenant")))
        #expect(problem { $0.origin = URL(fileURLWithPath: "/tmp") } == .invalidConfiguration(.originNotHTTP))
        #expect(problem { $0.batchSize = 1 } == .invalidConfiguration(.batchSizeBelowTwo))
        #expect(problem { $0.credentialConfigurations = [.pid(), .pid()] }
                == .invalidConfiguration(.duplicateConfiguration(IssuerCredentialConfiguration.pidId)))
        #expect(problem { $0.credentialConfigurations = [.pid(keyAttestation: .init())] }
                == .invalidConfiguration(.keyAttestationWithoutAnchors(IssuerCredentialConfiguration.pidId)))
    }

    @Test("unknown paths answer 404 and known paths with the wrong method 405")
    func routing() async throws {
        let harness = try await IssuerHarness.make()
        #expect(try await harness.get(harness.url("/nowhere")).status == 404)
        let wrongMethod = try await harness.get(harness.url("/credential"))
        #expect(wrongMethod.status == 405)
        #expect(wrongMethod.headers["Allow"] == "POST")
    }
}
