import Foundation
import Mdoc
import ReferenceParties
import Testing
@testable import wallet
import WalletCrypto
import WalletEncoding
import WalletRuntime

@Suite("wallet serve issuer")
struct ServeIssuerCommandTests {
    /// A self-signed wallet-provider root for `--wallet-provider-anchor`.
    static func providerRoot() throws -> X509Certificate {
        let key = try ECPrivateKey.generate(curve: .p256)
        return try CertificateBuilder.certificateAuthority(
            subject: try DistinguishedName([(.commonName, "Provider")]), notBefore: Date(timeIntervalSince1970: 1_700_000_000),
            notAfter: Date(timeIntervalSince1970: 1_900_000_000)).selfSigned(with: .ec(key))
    }

    @Test("options become the issuer configuration")
    func options() throws {
        let settings = try ServeIssuerCommand.settings([
            "--port", "8123", "--dpop-nonce", "--par", "required", "--encryption", "required", "--defer", "2", "--interval", "7",
            "--legacy-deferred", "--tx-code", "4711", "--batch", "0", "--issuer-path", "/tenant", "--separate-as",
            "--signed-metadata", "--jwt-vc-issuer", "--json",
        ])
        let configuration = settings.configuration
        #expect(settings.port == 8123 && settings.txCode == "4711" && settings.json)
        #expect(configuration.dpop == .requiredWithNonce && configuration.par == .required)
        #expect(configuration.requestEncryption?.required == true && configuration.responseEncryption?.required == true)
        #expect(configuration.deferral == DeferredIssuance(interval: 7, pendingPolls: 2, style: .legacyIssuancePending))
        #expect(configuration.batchSize == nil)
        #expect(configuration.issuerPath == "/tenant" && configuration.authorizationServerPath == "/auth")
        #expect(configuration.signedMetadata == .both && configuration.sdJwtKeyResolution == .jwtVCIssuerMetadata)
        #expect(configuration.offerFactory)
        let defaults = try ServeIssuerCommand.settings([])
        #expect(defaults.port == 0 && defaults.configuration.dpop.mode == .optional && defaults.configuration.par == .optional)
    }

    @Test("wrong options are usage errors")
    func usageErrors() {
        for arguments in [["--port", "x"], ["--par", "sometimes"], ["--encryption", "maybe"], ["--batch", "1"],
                          ["--interval", "5"], ["--defer", "-1"], ["--frobnicate"], ["extra"], ["--tx-code", ""],
                          ["--mdoc-key-authorization", ""], ["--mdoc-key-authorization"]] {
            #expect(throws: CLIError.self, "\(arguments)") { _ = try ServeIssuerCommand.settings(arguments) }
        }
    }

    @Test("a wallet-provider anchor makes both configurations require key attestations")
    func keyAttestationAnchor() throws {
        let root = try Self.providerRoot()
        let settings = try ServeIssuerCommand.settings(["--wallet-provider-anchor", root.pemEncoded])
        #expect(settings.configuration.keyAttestationTrustAnchors == [root])
        #expect(settings.configuration.credentialConfigurations.allSatisfy { $0.keyAttestation != nil })
    }

    @Test("--mdoc-key-authorization puts its namespaces into the mDL configuration's keyAuthorizations, with or without key attestation")
    func mdocKeyAuthorization() throws {
        let root = try Self.providerRoot()
        let expected = KeyAuthorizations(nameSpaces: ["org.openid4vp.transaction_data", "org.example"])
        for extra in [[], ["--wallet-provider-anchor", root.pemEncoded]] {
            let settings = try ServeIssuerCommand.settings(
                ["--mdoc-key-authorization", "org.openid4vp.transaction_data", "--mdoc-key-authorization", "org.example"] + extra)
            let configurations = settings.configuration.credentialConfigurations
            #expect(configurations.first { $0.id == IssuerCredentialConfiguration.mDLId }?.keyAuthorizations == expected)
            #expect(configurations.first { $0.id == IssuerCredentialConfiguration.pidId }?.keyAuthorizations == nil)
        }
        #expect(try ServeIssuerCommand.settings([]).configuration.credentialConfigurations.allSatisfy { $0.keyAuthorizations == nil })
    }

    @Test("the issuer serves on loopback; the JSON announcement's offer and anchors work")
    func serving() async throws {
        let running = try await ServeIssuerCommand.start(try ServeIssuerCommand.settings(["--json", "--tx-code", "123456", "--quiet"]))
        defer { running.server.stop() }
        let announcement = try JSONValue.parseObject(running.announcement)
        let issuer = try announcement.string("credential_issuer")
        #expect(issuer == running.server.baseURL.absoluteString)
        let offers = try announcement.objectArray("offers")
        #expect(offers.count == 3)
        #expect(try offers[0].string("tx_code") == "123456")
        let anchors = try X509Certificate.parsePEM(try announcement.object("trust_anchors").string("iaca"))
        #expect(anchors == [running.issuer.trustAnchors.iaca])
        // The by-reference offer resolves over HTTP to an offer of this issuer.
        let offerURI = try offers[0].string("offer_uri")
        let query = try #require(URLComponents(string: offerURI)?.percentEncodedQuery)
        let offerURL = try #require(try FormURLEncoding.decode(query)["credential_offer_uri"])
        let client = PatientHTTPClient()
        let response = try await client.send(HTTPRequest(url: try #require(URL(string: offerURL))))
        #expect(response.status == 200)
        #expect(try JSONValue.parseObject(response.body).string("credential_issuer") == issuer)
        let text = await ServeIssuerCommand.announce(running.issuer, offers: [], json: false, qr: false)
        #expect(text.hasPrefix("Reference issuer at \(issuer)"))
        #expect(text.contains("-----BEGIN CERTIFICATE-----"))
    }
}
