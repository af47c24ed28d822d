import Foundation
import JOSE
import OpenID4VCI
import ReferenceParties
import Testing
@testable import wallet
import WalletCrypto
import WalletEncoding

/// `wallet issue --key-attestation-key --key-attestation-chain` against `wallet serve issuer
/// --wallet-provider-anchor` on a loopback port: the CLI attests its holder keys as the
/// wallet provider, and without the options the issuance ends with the typed failure.
@Suite("wallet issue with key attestations")
struct KeyAttestedIssueCommandTests {
    /// A wallet provider's PKI written to PEM files: a root (the issuer's anchor), and a
    /// leaf certificate with its private key (what the CLI signs attestations with).
    struct WalletProvider {
        let directory: URL
        let root: X509Certificate
        let keyPath: String
        let chainPath: String

        init(now: Date = Date()) throws {
            directory = FileManager.default.temporaryDirectory.appendingPathComponent("wallet-provider-\(UUID().uuidString)")
            try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
            let rootKey = try ECPrivateKey.generate(curve: .p256)
            root = try CertificateBuilder.certificateAuthority(
                subject: try DistinguishedName([(.commonName, "CLI Test Wallet Provider Root")]),
                notBefore: now.addingTimeInterval(-3600), notAfter: now.addingTimeInterval(86_400)
            ).selfSigned(with: .ec(rootKey))
            let leafKey = try ECPrivateKey.generate(curve: .p256)
            let leaf = try CertificateBuilder.endEntity(
                subject: try DistinguishedName([(.commonName, "CLI Test Wallet Provider Key Attestation")]),
                subjectPublicKeyInfoDER: leafKey.publicKey.spkiDER,
                notBefore: now.addingTimeInterval(-3600), notAfter: now.addingTimeInterval(86_400)
            ).signed(by: root, key: .ec(rootKey))
            keyPath = directory.appendingPathComponent("provider-key.pem").path
            chainPath = directory.appendingPathComponent("provider-chain.pem").path
            try Data(Self.pem(try leafKey.pkcs8DER(), label: "PRIVATE KEY").utf8).write(to: URL(fileURLWithPath: keyPath))
            try Data(leaf.pemEncoded.utf8).write(to: URL(fileURLWithPath: chainPath))
        }

        static func pem(_ der: [UInt8], label: String) -> String {
            let body = Array(Base64.encode(der))
            let lines = stride(from: 0, to: body.count, by: 64).map { String(body[$0..<min($0 + 64, body.count)]) }
            return (["-----BEGIN \(label)-----"] + lines + ["-----END \(label)-----"]).joined(separator: "\n") + "\n"
        }

        var options: [String] { ["--key-attestation-key", keyPath, "--key-attestation-chain", chainPath] }

        func remove() { try? FileManager.default.removeItem(at: directory) }
    }

    static func environment() -> IssueCommand.Environment {
        var environment = IssueCommand.Environment()
        environment.variables = [:]
        return environment
    }

    @Test("with the provider's key and chain the batch is attested and issued; without them: credentialRequestFailed keyAttestationUnavailable, nothing stored")
    func attested() async throws {
        let provider = try WalletProvider()
        defer { provider.remove() }
        let running = try await ServeIssuerCommand.start(try ServeIssuerCommand.settings(
            ["--wallet-provider-anchor", provider.root.pemEncoded, "--json", "--quiet"]))
        defer { running.server.stop() }
        let store = IssuanceCommandTests.temporaryStore()
        defer { try? FileManager.default.removeItem(atPath: store) }
        let offers = try JSONValue.parseObject(running.announcement).objectArray("offers")
        let pidOffer = try offers[0].string("offer_uri")

        let output = try await IssueCommand.issue(
            [pidOffer, "--batch", "3", "--one-time", "--store", store, "--allow-http", "--json", "--timeout", "600"] + provider.options,
            environment: Self.environment())
        let result = try JSONValue.parseObject(output)
        #expect(result["state"] == "completed")
        let request = try #require(await running.issuer.inspection.credentialRequests.first)
        #expect(request.proofs.count == 3)
        let attestations = Set(request.proofs.compactMap(\.keyAttestation))
        #expect(attestations.count == 1, "one attestation names every key of the batch")
        let attestation = try KeyAttestation(unverified: try #require(attestations.first))
        #expect(Set(attestation.attestedKeys) == Set(request.proofs.flatMap(\.keys)))
        #expect(attestation.keyStorage == [.iso18045Basic])
        #expect(attestation.nonce != nil && attestation.nonce == request.proofs.first?.nonce)
        #expect(try KeyAttestationVerifier(trustAnchors: [provider.root])
            .verify(attestation.compactSerialization, expectedNonce: attestation.nonce, at: Date()).attestedKeys.count == 3)

        // The same issuer, a fresh offer, no provider options.
        let bare = IssuanceCommandTests.temporaryStore()
        defer { try? FileManager.default.removeItem(atPath: bare) }
        let second = try await running.issuer.createOffer(.preAuthorized([IssuerCredentialConfiguration.pidId], txCode: nil))
        do {
            _ = try await IssueCommand.issue([second.byReference, "--store", bare, "--allow-http", "--json", "--timeout", "600"],
                                             environment: Self.environment())
            Issue.record("an issuance requiring key attestations succeeded without them")
        } catch {
            #expect(error.exitCode == 1)
            #expect(error.message == "issuance failed: credentialRequestFailed: keyAttestationUnavailable")
        }
        #expect(await running.issuer.inspection.credentialRequests.count == 1, "the issuer never saw an unattested request")
        #expect(try await CredentialsCommand.run(["--store", bare], environment: Self.environment()) == "no credentials")
        let (area, _) = try await WalletHome(try CommandLineOptions(["--store", bare], valued: WalletHome.valuedOptions,
                                                                     flags: WalletHome.flagOptions), environment: [:]).open()
        #expect(try await area.listKeys().isEmpty, "no holder key is left behind")
    }

    @Test("the key-attestation options: both or neither (exit 2); a chain that does not certify the key, or no key, is refused (exit 1)")
    func optionErrors() async throws {
        let provider = try WalletProvider()
        defer { provider.remove() }
        let store = IssuanceCommandTests.temporaryStore()
        defer { try? FileManager.default.removeItem(atPath: store) }
        let offer = #"{"credential_issuer":"https://issuer.example","credential_configuration_ids":["a"]}"#
        for (options, code) in [
            (["--key-attestation-key", provider.keyPath], Int32(2)),
            (["--key-attestation-chain", provider.chainPath], 2),
            (["--key-attestation-key", provider.chainPath, "--key-attestation-chain", provider.chainPath], 1),
            (["--key-attestation-key", provider.keyPath, "--key-attestation-chain", provider.root.pemEncoded], 1),
        ] {
            do {
                _ = try await IssueCommand.issue([offer, "--store", store] + options, environment: Self.environment())
                Issue.record("\(options) was accepted")
            } catch {
                #expect(error.exitCode == code, "\(options): \(error.message)")
                #expect(!error.message.contains("PRIVATE KEY"))
            }
        }
        // The pair itself makes a provider.
        let parsed = try CommandLineOptions(provider.options, valued: IssueCommand.valued, flags: IssueCommand.flags)
        #expect(try IssueCommand.keyAttestationProvider(parsed) is SoftwareKeyAttestationProvider)
    }
}
