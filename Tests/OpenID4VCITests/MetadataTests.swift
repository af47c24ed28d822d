import Foundation
import JOSE
import Testing
import WalletCrypto
import WalletEncoding
@testable import OpenID4VCI

@Suite("Issuer and authorization server metadata (OpenID4VCI 1.0 §12, RFC 8414)")
struct MetadataTests {
    static let file = "openid4vci/issuer_metadata.json"
    let policy = URLPolicy(allowsLoopbackHTTP: false)

    private func metadata(_ object: JSONObject, issuer: String = "https://credential-issuer.example.com",
                          anchors: [X509Certificate] = []) throws(MetadataProblem) -> CredentialIssuerMetadata {
        try CredentialIssuerMetadata(json: object, expectedIssuer: issuer, policy: policy, trustAnchors: anchors, now: Date())
    }

    @Test("the well-known URLs insert the suffix after the host (and OpenID discovery appends it)")
    func wellKnown() {
        #expect(URLPolicy.wellKnown("openid-credential-issuer", insertedInto: "https://credential-issuer.example.com")?.absoluteString
            == "https://credential-issuer.example.com/.well-known/openid-credential-issuer")
        #expect(URLPolicy.wellKnown("openid-credential-issuer", insertedInto: "https://issuer.example/tenant/1/")?.absoluteString
            == "https://issuer.example/.well-known/openid-credential-issuer/tenant/1")
        #expect(AuthorizationServerMetadata.candidateURLs(for: "https://as.example/realm").map(\.absoluteString)
            == ["https://as.example/.well-known/oauth-authorization-server/realm",
                "https://as.example/realm/.well-known/openid-configuration"])
    }

    @Test("the Appendix I.1 metadata gives endpoints, both encryption objects, batch size 10 and display")
    func fullExample() throws {
        let example = try Vectors.example(Self.file, "issuer_metadata_full_optional_parameters")
        let parsed = try metadata(try #require(example["json"]?.objectValue))
        #expect(parsed.authorizationServers == ["https://server.example.com"])
        #expect(parsed.credentialEndpoint.absoluteString == "https://credential-issuer.example.com/credential")
        #expect(parsed.nonceEndpoint?.absoluteString == "https://credential-issuer.example.com/nonce")
        #expect(parsed.deferredCredentialEndpoint?.absoluteString == "https://credential-issuer.example.com/deferred_credential")
        #expect(parsed.notificationEndpoint?.absoluteString == "https://credential-issuer.example.com/notification")
        #expect(parsed.batchSize == 10)
        #expect(parsed.requestEncryption?.keys.first?.keyID == "ac")
        #expect(parsed.requestEncryption?.encValues == ["A128GCM"])
        #expect(parsed.requestEncryption?.encryptionRequired == true)
        #expect(parsed.responseEncryption?.algValues == ["ECDH-ES"])
        #expect(parsed.display.first?.name == "Example University")
        #expect(parsed.isSigned == false)
        #expect(parsed.authorizationServer(preferred: nil) == "https://server.example.com")
        // The errata's JWK Set form of jwks is read the same way.
        var errata = try #require(example["json"]?.objectValue)
        var request = try #require(errata["credential_request_encryption"]?.objectValue)
        request["jwks"] = ["keys": try #require(request["jwks"])]
        errata["credential_request_encryption"] = .object(request)
        #expect(try metadata(errata).requestEncryption?.keys.first?.keyID == "ac")
    }

    @Test("configurations: dc+sd-jwt with key attestations required, mso_mdoc with its doctype and display")
    func configurations() throws {
        let sdJWT = try Vectors.example(Self.file, "credential_configuration_dc_sd_jwt")
        var object = try #require(sdJWT["json"]?.objectValue)
        object["credential_issuer"] = "https://credential-issuer.example.com"
        object["credential_endpoint"] = "https://credential-issuer.example.com/credential"
        let configuration = try #require(try metadata(object).configuration("SD_JWT_VC_example_in_OpenID4VCI"))
        #expect(configuration.storedFormat == .sdJwtVc)
        #expect(configuration.vct == "SD_JWT_VC_example_in_OpenID4VCI")
        #expect(configuration.proofTypes["jwt"]?.signingAlgorithms == ["ES256"])
        #expect(configuration.proofTypes["jwt"]?.keyAttestationsRequired
            == KeyAttestationRequirement(keyStorage: [.iso18045Moderate], userAuthentication: [.iso18045Moderate]))
        #expect(configuration.display.first?.name == "IdentityCredential")
        #expect(configuration.display.first?.logoURI == "https://university.example.edu/public/logo.png")
        #expect(configuration.claims.first?.path == ["given_name"])

        let mdoc = try Vectors.example(Self.file, "credential_configuration_mso_mdoc")
        var mdocObject = try #require(mdoc["json"]?.objectValue)
        mdocObject["credential_issuer"] = "https://credential-issuer.example.com"
        mdocObject["credential_endpoint"] = "https://credential-issuer.example.com/credential"
        let mDL = try #require(try metadata(mdocObject).configuration("org.iso.18013.5.1.mDL"))
        #expect(mDL.storedFormat == .msoMdoc)
        #expect(mDL.credentialType == "org.iso.18013.5.1.mDL")
        #expect(mDL.display.map(\.locale) == ["en-US", "ja-JP"])

        let ldp = try Vectors.example(Self.file, "credential_configuration_ldp_vc")
        var ldpObject = try #require(ldp["json"]?.objectValue)
        ldpObject["credential_issuer"] = "https://credential-issuer.example.com"
        ldpObject["credential_endpoint"] = "https://credential-issuer.example.com/credential"
        #expect(try metadata(ldpObject).configuration("UniversityDegree_LDP_VC")?.storedFormat == nil)
    }

    @Test("the Appendix I.1 signed_metadata verifies with its x5c and its values take precedence")
    func signedMetadata() throws {
        let example = try Vectors.example(Self.file, "signed_metadata_jwt")
        let jwt = try #require(example["jwt_joined"]?.stringValue)
        let plain: JSONObject = ["credential_issuer": "https://credential-issuer.example.com",
                                 "credential_endpoint": "https://stale.example.com/credential",
                                 "signed_metadata": .string(jwt)]
        let parsed = try metadata(plain)
        #expect(parsed.isSigned)
        #expect(parsed.credentialEndpoint.absoluteString == "https://credential-issuer.example.com/credential")
        #expect(parsed.display.map(\.name) == ["Example University", "Example Université"])
        #expect(parsed.configurationIds == ["SD_JWT_VC_example_in_OpenID4VCI"])

        // Tampered: one payload byte changed, same signature.
        let parts = jwt.split(separator: ".").map(String.init)
        var payload = try #require(Base64URL.decode(parts[1]))
        payload[payload.count - 3] ^= 0x01
        let tampered = parts[0] + "." + Base64URL.encode(payload) + "." + parts[2]
        var bad = plain
        bad["signed_metadata"] = .string(tampered)
        #expect(throws: MetadataProblem.self) { _ = try metadata(bad) }
        // Anchors configured: the example's self-signed certificate is not one of them.
        let stranger = try TestPKI(name: "Stranger")
        #expect(throws: MetadataProblem.self) { _ = try metadata(plain, anchors: [stranger.anchor]) }
        // sub names another issuer.
        #expect(throws: MetadataProblem.self) { _ = try metadata(plain, issuer: "https://credential-issuer.example.com/other") }
    }

    @Test("signed_metadata under the anchors must come from a signing certificate naming the issuer; without anchors it is signed, not trusted")
    func signedMetadataSigner() async throws {
        let issuer = "https://issuer.example"
        func document(_ pki: TestPKI) async throws -> JSONObject {
            let claims = try JWTClaims(["sub": .string(issuer), "iat": .number(Double(Date().wholeSecondsSince1970)),
                                        "credential_endpoint": "https://issuer.example/signed-credential"])
            let jwt = try await JWT.sign(claims: claims, signer: pki.signer, type: CredentialIssuerMetadata.signedMetadataType,
                                         x5c: [pki.leaf])
            return ["credential_issuer": .string(issuer), "credential_endpoint": "https://issuer.example/credential",
                    "credential_configurations_supported": [:], "signed_metadata": .string(jwt.compactSerialization)]
        }
        let named = try TestPKI(name: "Issuer", issuer: issuer)
        let trusted = try metadata(try await document(named), issuer: issuer, anchors: [named.anchor])
        #expect(trusted.isSigned && trusted.isSignerTrusted)
        #expect(trusted.credentialEndpoint.absoluteString == "https://issuer.example/signed-credential")
        // Another party's certificate under the same anchor (a signer for another issuer).
        let other = try TestPKI(name: "Other", issuer: "https://other.example")
        let otherDocument = try await document(other)
        #expect(throws: MetadataProblem.invalidSignedMetadata(.untrusted(.subjectAlternativeNameMismatch(expected: issuer)))) {
            _ = try metadata(otherDocument, issuer: issuer, anchors: [other.anchor])
        }
        // No anchors: the signature is checked with its own certificate only.
        let untrusted = try metadata(otherDocument, issuer: issuer)
        #expect(untrusted.isSigned && !untrusted.isSignerTrusted)
        #expect(try metadata(["credential_issuer": .string(issuer), "credential_endpoint": "https://issuer.example/c",
                              "credential_configurations_supported": [:]], issuer: issuer).isSigned == false)
    }

    @Test("a document for another issuer, a missing endpoint or an http endpoint is refused")
    func negatives() throws {
        let good: JSONObject = ["credential_issuer": "https://i.example", "credential_endpoint": "https://i.example/c",
                                "credential_configurations_supported": [:]]
        #expect(throws: Never.self) { _ = try metadata(good, issuer: "https://i.example") }
        #expect(throws: MetadataProblem.identifierMismatch(expected: "https://i.example/x", actual: "https://i.example")) {
            _ = try metadata(good, issuer: "https://i.example/x")
        }
        var missing = good
        missing["credential_endpoint"] = nil
        #expect(throws: MetadataProblem.missingEndpoint("credential_endpoint")) { _ = try metadata(missing, issuer: "https://i.example") }
        var insecure = good
        insecure["credential_endpoint"] = "http://i.example/c"
        #expect(throws: MetadataProblem.insecureURL("http://i.example/c")) { _ = try metadata(insecure, issuer: "https://i.example") }
        var badBatch = good
        badBatch["batch_credential_issuance"] = ["batch_size": 1]
        #expect(throws: MetadataProblem.invalidMember("batch_credential_issuance.batch_size")) {
            _ = try metadata(badBatch, issuer: "https://i.example")
        }
        var responseWithoutRequired = good
        responseWithoutRequired["credential_response_encryption"] = ["alg_values_supported": ["ECDH-ES"], "enc_values_supported": ["A128GCM"]]
        #expect(throws: MetadataProblem.invalidMember("credential_response_encryption.encryption_required")) {
            _ = try metadata(responseWithoutRequired, issuer: "https://i.example")
        }
    }

    @Test("authorization server metadata: issuer must match, token endpoint required, DPoP and PAR read")
    func serverMetadata() throws {
        let object: JSONObject = ["issuer": "https://as.example", "authorization_endpoint": "https://as.example/authorize",
                                  "token_endpoint": "https://as.example/token", "pushed_authorization_request_endpoint": "https://as.example/par",
                                  "require_pushed_authorization_requests": true, "dpop_signing_alg_values_supported": ["ES256", "EdDSA"],
                                  "authorization_response_iss_parameter_supported": true]
        let server = try AuthorizationServerMetadata(json: object, expectedIssuer: "https://as.example", policy: policy)
        #expect(server.pushedAuthorizationRequestEndpoint?.absoluteString == "https://as.example/par")
        #expect(server.requiresPushedAuthorizationRequests)
        #expect(server.dpopSigningAlgorithms == ["ES256", "EdDSA"])
        #expect(server.issuesResponseIssuer)
        #expect(throws: MetadataProblem.identifierMismatch(expected: "https://as.example/x", actual: "https://as.example")) {
            _ = try AuthorizationServerMetadata(json: object, expectedIssuer: "https://as.example/x", policy: policy)
        }
        var noToken = object
        noToken["token_endpoint"] = nil
        #expect(throws: MetadataProblem.missingEndpoint("token_endpoint")) {
            _ = try AuthorizationServerMetadata(json: noToken, expectedIssuer: "https://as.example", policy: policy)
        }
    }
}
