import Foundation
import CBOR
import COSE
import JOSE
import Mdoc
import ReferenceParties
import SDJWT
import Testing
@testable import wallet
import WalletCrypto
import WalletEncoding
import WalletRuntime
import WalletStorage

/// `wallet present` against a scripted verifier on a loopback port, answering from a
/// store in a temporary directory.
@Suite("wallet present")
struct PresentCommandTests {
    static let vct = "https://credentials.example.com/identity_credential"

    /// A new store directory opened the way `WalletHome` opens it: its secure area and store.
    static func openStore() throws -> (URL, SoftwareSecureArea, CredentialStore) {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("wallet-present-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        let keysURL = directory.appendingPathComponent("keys.sqlite")
        let wrapping = try KeyFileWrappingProvider(nextTo: keysURL)
        let area = try SoftwareSecureArea(location: .file(keysURL), wrapping: wrapping)
        let store = try CredentialStore(location: .file(directory.appendingPathComponent("credentials.sqlite")),
                                        secureArea: area, wrapping: wrapping)
        return (directory, area, store)
    }

    /// A store directory holding one SD-JWT VC `pid-1`, written with ``openStore()``.
    static func storeWithPid() async throws -> URL {
        let (directory, area, store) = try openStore()
        let key = try await area.createKey(alias: "pid-key")
        let issuer = SDJWTIssuer(signer: SoftwareSigner(try ECPrivateKey.generate(curve: .p256)))
        let sdJwt = try await issuer.issue(
            claims: ["vct": .string(vct), "given_name": "John", "family_name": "Doe", "birthdate": "1940-01-01"],
            plan: DisclosurePlan(members: ["given_name": .disclosable, "family_name": .disclosable, "birthdate": .disclosable]),
            holderKey: JWK(publicKey: key.publicKey))
        try await store.save(StoredCredential(
            id: "pid-1", format: .sdJwtVc, type: vct, issuer: IssuerInfo(identifier: "https://issuer.example"),
            instances: [CredentialInstance(index: 0, keyAlias: key.alias, raw: Array(sdJwt.serialization.utf8))]))
        await store.close()
        await area.close()
        return directory
    }

    /// A verifier that takes any form POST, records it, and answers with a redirect.
    final class Verifier: @unchecked Sendable {
        private let lock = NSLock()
        private var forms: [[String: String]] = []
        var server: LoopbackHTTPServer!

        init() throws {
            server = try LoopbackHTTPServer(handler: AnyHTTPHandler { [unowned self] request in
                let fields = try FormURLEncoding.decode(request.body ?? [])
                self.record(Dictionary(fields.map { ($0.name, $0.value) }, uniquingKeysWith: { first, _ in first }))
                return HTTPResponse(status: 200, headers: ["Content-Type": "application/json"],
                                    body: Array(#"{"redirect_uri":"https://verifier.example/done"}"#.utf8))
            })
        }

        private func record(_ form: [String: String]) {
            lock.lock(); defer { lock.unlock() }
            forms.append(form)
        }

        var received: [[String: String]] {
            lock.lock(); defer { lock.unlock() }
            return forms
        }

        var responseUri: String { server.baseURL.absoluteString + "/post" }

        /// An unsigned redirect_uri request by value.
        var requestURI: String {
            let query: JSONValue = ["credentials": [[
                "id": "pid", "format": "dc+sd-jwt", "meta": ["vct_values": [.string(vct)]],
                "claims": [["path": ["family_name"]]],
            ]]]
            return "openid4vp://?" + FormURLEncoding.encode([
                ("client_id", "redirect_uri:" + responseUri), ("response_type", "vp_token"), ("response_mode", "direct_post"),
                ("nonce", "n-1"), ("state", "s-1"), ("dcql_query", query.serialized),
            ])
        }
    }

    @Test("--auto --json answers and prints the state, the verifier and what was disclosed")
    func auto() async throws {
        let store = try await Self.storeWithPid()
        let verifier = try Verifier()
        defer { verifier.server.stop() }
        let output = try await WalletCommand.run(["present", verifier.requestURI, "--auto", "--json", "--allow-http", "--timeout", "600",
                                                  "--store", store.path])
        let result = try JSONValue.parseObject(output)
        #expect(result["state"] == "completed")
        #expect(result["redirectUri"] == "https://verifier.example/done")
        #expect(result["verifier"]?["clientIdScheme"] == "redirect_uri")
        #expect(result["verifier"]?["trusted"] == false)
        #expect(result["disclosed"] == [["queryId": "pid", "credentialId": "pid-1", "paths": [["family_name"]],
                                         "revealed": [["family_name"]]]])
        let form = try #require(verifier.received.first)
        #expect(form["state"] == "s-1")
        let token = try JSONValue.parseObject(try #require(form["vp_token"]))
        let presentation = try SDJWT(compact: try #require(token["pid"]?.stringArrayValue?.first))
        #expect(presentation.disclosures.map(\.claimName) == ["family_name"])
        #expect(presentation.keyBindingJWT?.claims.audience == ["redirect_uri:" + verifier.responseUri])
    }

    @Test("--decline tells the verifier access_denied")
    func decline() async throws {
        let store = try await Self.storeWithPid()
        let verifier = try Verifier()
        defer { verifier.server.stop() }
        let output = try await WalletCommand.run(["present", verifier.requestURI, "--decline", "--allow-http", "--timeout", "600", "--store", store.path])
        #expect(output == "declined; continue at https://verifier.example/done")
        #expect(verifier.received.first?["error"] == "access_denied")
        #expect(verifier.received.first?["vp_token"] == nil)
    }

    @Test("--select names the credential per query; one that is not a candidate fails")
    func select() async throws {
        let store = try await Self.storeWithPid()
        let verifier = try Verifier()
        defer { verifier.server.stop() }
        let output = try await WalletCommand.run(["present", verifier.requestURI, "--select", "pid=pid-1", "--allow-http", "--timeout", "600",
                                                  "--store", store.path])
        #expect(output.hasPrefix("completed"))
        await #expect(throws: CLIError.self) {
            try await WalletCommand.run(["present", verifier.requestURI, "--select", "pid=nope", "--allow-http", "--timeout", "600", "--store", store.path])
        }
        #expect(verifier.received.count == 1)
    }

    @Test("--dc-api answers a Digital Credentials API request and prints the response data object")
    func dcApi() async throws {
        let store = try await Self.storeWithPid()
        let file = store.appendingPathComponent("request.json")
        let request: JSONValue = ["protocol": "openid4vp-v1-unsigned", "data": [
            "response_type": "vp_token", "response_mode": "dc_api", "nonce": "n-2",
            "dcql_query": ["credentials": [["id": "pid", "format": "dc+sd-jwt", "meta": ["vct_values": [.string(Self.vct)]],
                                            "claims": [["path": ["given_name"]]]]]],
        ]]
        try Data(request.serializedBytes).write(to: file)
        let output = try await WalletCommand.run(["present", "--dc-api", file.path, "--origin", "https://rp.example", "--auto",
                                                  "--store", store.path])
        let data = try JSONValue.parseObject(output)
        let presentation = try SDJWT(compact: try #require(data["vp_token"]?["pid"]?.stringArrayValue?.first))
        #expect(presentation.keyBindingJWT?.claims.audience == ["origin:https://rp.example"])
    }

    /// A store directory holding one mDL `mdl-1` whose MSO authorises the device to sign
    /// elements of `org.openid4vp.transaction_data`, and the IACA it chains to.
    static func storeWithMdl() async throws -> (URL, X509Certificate) {
        let now = Date()
        let rootKey = try ECPrivateKey.generate(curve: .p256), dsKey = try ECPrivateKey.generate(curve: .p256)
        let iaca = try CertificateBuilder.iaca(subject: try DistinguishedName([(.commonName, "CLI IACA")]),
                                               notBefore: now.addingTimeInterval(-86_400),
                                               notAfter: now.addingTimeInterval(30 * 86_400)).selfSigned(with: .ec(rootKey))
        let ds = try CertificateBuilder.mdocDocumentSigner(
            subject: try DistinguishedName([(.commonName, "CLI DS")]), subjectPublicKeyInfoDER: dsKey.publicKey.spkiDER,
            notBefore: now.addingTimeInterval(-86_400), notAfter: now.addingTimeInterval(30 * 86_400)).signed(by: iaca, key: .ec(rootKey))
        let (directory, area, store) = try openStore()
        let key = try await area.createKey(alias: "mdl-key")
        let mdl = try await MdocIssuer(signer: SoftwareSigner(dsKey), certificateChain: [ds]).issue(
            docType: "org.iso.18013.5.1.mDL",
            nameSpaces: [NameSpaced("org.iso.18013.5.1", [DataElement("family_name", "Doe"), DataElement("age_over_18", true)])],
            deviceKey: COSEKey(publicKey: key.publicKey),
            validity: ValidityInfo(signed: now, validFrom: now.addingTimeInterval(-60), validUntil: now.addingTimeInterval(7 * 86_400)),
            keyAuthorizations: KeyAuthorizations(nameSpaces: ["org.openid4vp.transaction_data"]))
        try await store.save(StoredCredential(
            id: "mdl-1", format: .msoMdoc, type: "org.iso.18013.5.1.mDL", issuer: IssuerInfo(identifier: "https://issuer.example"),
            instances: [CredentialInstance(index: 0, keyAlias: key.alias, raw: mdl.encodedBytes)],
            policy: CredentialPolicy(batchSize: 1, use: .rotate)))
        await store.close()
        await area.close()
        return (directory, iaca)
    }

    @Test("--mdoc-transaction-data digest signs an mdoc-bound entry as the reference verifier expects; without it, or in another namespace, the request is refused")
    func mdocTransactionData() async throws {
        let (store, iaca) = try await Self.storeWithMdl()
        defer { try? FileManager.default.removeItem(at: store) }
        let served = try LoopbackVerifier { baseURL in VerifierConfiguration(baseURL: baseURL, mdocIssuerAnchors: [iaca]) }
        defer { served.stop() }
        let verifier = served.verifier
        func transaction() async throws -> VerifierTransaction {
            try await verifier.createTransaction(PresentationRequestOptions(
                query: VerifierQuery(credentials: [.mdoc(id: "mdl", docType: "org.iso.18013.5.1.mDL",
                                                         claims: [.init(path: [.key("org.iso.18013.5.1"), "family_name"])])]),
                transactionData: [VerifierTransactionData(type: "signature", credentialIds: ["mdl"], details: ["document": "contract.pdf"])]))
        }
        let base = ["--auto", "--reader-anchor", verifier.pki.anchorPEM, "--allow-http", "--timeout", "600", "--store", store.path]

        let bound = try await transaction()
        let output = try await WalletCommand.run(["present", bound.authorizationRequestURI, "--mdoc-transaction-data", "digest"] + base)
        #expect(output.hasPrefix("completed"))
        let verdict = try #require(await verifier.verdict(for: bound.id))
        #expect(verdict.outcome == .accepted)
        #expect(verdict.presentations(for: "mdl").first?.transactionData == [0])

        for extra in [[], ["--mdoc-transaction-data", "digest:org.example.other"]] {
            let refused = try await transaction()
            do {
                _ = try await WalletCommand.run(["present", refused.authorizationRequestURI] + extra + base)
                Issue.record("\(extra): the request was answered")
            } catch {
                #expect(error.exitCode == 1, "\(extra)")
            }
            #expect(await verifier.verdict(for: refused.id)?.outcome != .accepted, "\(extra)")
        }
        for argument in ["sha-256", "digest:", ""] {
            do {
                _ = try await WalletCommand.run(["present", bound.authorizationRequestURI, "--mdoc-transaction-data", argument] + base)
                Issue.record("--mdoc-transaction-data \(argument) was taken")
            } catch {
                #expect(error.exitCode == 2, "\(argument)")
            }
        }
    }

    @Test("usage errors: two decisions, --dc-api without --origin, nothing to present")
    func usage() async throws {
        for arguments in [["present", "openid4vp://?x=1", "--auto", "--decline"], ["present", "--dc-api", "f.json"],
                          ["present"], ["present", "--select", "bad", "openid4vp://?x=1"]] {
            await #expect(throws: CLIError.self) { try await WalletCommand.run(arguments) }
            do { _ = try await WalletCommand.run(arguments) } catch { #expect(error.exitCode == 2, "\(arguments)") }
        }
    }
}
