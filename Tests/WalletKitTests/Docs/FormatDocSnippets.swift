import Foundation
import JOSE
import Mdoc
import SDJWT
import Testing
import WalletCrypto
import WalletEncoding
import WalletRuntime
import WalletStorage

/// The examples of docs/sdjwt.md (run: issue, present, verify), docs/storage.md (run on a
/// temporary folder) and docs/mdoc.md (compiled: it needs a reader on the other side,
/// which `MdocTests` and `MdocProximityTests` provide).
@Suite("docs/sdjwt.md, storage.md, mdoc.md examples")
struct FormatDocSnippets {
    static func issue(claims: JSONObject, issuerSigner: any Signer, dsCert: X509Certificate, holderJWK: JWK) async throws -> SDJWT {
        // snippet: docs/sdjwt.md#3
        let plan = DisclosurePlan.object([
            "given_name": .disclosable,
            "address": .object(["street_address": .disclosable, "locality": .disclosable], decoys: 2).disclosable, // recursive
            "nationalities": .array([:], every: .disclosable, decoys: 1),                                        // each element
        ], decoys: 3)
        let credential = try await SDJWTIssuer(signer: issuerSigner, certificateChain: [dsCert])
            .issue(claims: claims, plan: plan, holderKey: holderJWK)
        // end snippet
        return credential
    }

    struct Request { let transactionData: [String] }

    static func present(stored: String, clientId: String, nonce: String, clock: any WalletClock, request: Request,
                        holderKeySigner: any Signer, send: (String) -> Void) async throws {
                            // snippet: docs/sdjwt.md#1
                            let credential = try SDJWT(compact: stored)
                            let presentation = try await credential.presentation(
                                disclosing: [["given_name"], ["address", "locality"], ["nationalities", nil]],
                                keyBinding: KeyBindingParameters(audience: clientId, nonce: nonce, issuedAt: clock.now,
                                                                 transactionData: request.transactionData),
                                signer: holderKeySigner)
                            send(presentation.serialization)
                            // end snippet
    }

    static func verify(vpToken: String, anchors: [X509Certificate], clock: any WalletClock, clientId: String, nonce: String,
                       sent: [String]) throws -> JSONObject {
                           // snippet: docs/sdjwt.md#2
                           let verifier = SDJWTVerifier(options: SDJWTVerificationOptions(
                               issuerKey: .certificateChain(trustAnchors: anchors),      // or .jwk(key), or .resolver { header, claims in ... }
                               now: clock.now,
                               keyBinding: KeyBindingExpectation(audience: clientId, nonce: nonce, transactionData: sent)))
                           let verified = try verifier.verify(vpToken)
                           verified.claims     // [String: JSONValue], numbers exact
                           verified.status     // kept for a status-list check
                           // end snippet
        return verified.claims
    }

    @Test("sdjwt.md: issue with a disclosure plan, present three paths with a KB-JWT, verify under the issuer's root")
    func sdJwt() async throws {
        let clock = ManualClock(Date())
        let rootKey = try ECPrivateKey.generate(curve: .p256)
        let root = try CertificateBuilder.certificateAuthority(subject: DistinguishedName([(.commonName, "Issuer Root")]),
                                                               notBefore: clock.now.addingTimeInterval(-60),
                                                               notAfter: clock.now.addingTimeInterval(3600)).selfSigned(with: .ec(rootKey))
        let issuerKey = try ECPrivateKey.generate(curve: .p256)
        let dsCert = try CertificateBuilder.endEntity(subject: DistinguishedName([(.commonName, "Issuer")]),
                                                      subjectPublicKeyInfoDER: try issuerKey.publicKey.spkiDER,
                                                      notBefore: clock.now.addingTimeInterval(-60), notAfter: clock.now.addingTimeInterval(3600),
                                                      subjectAlternativeNames: [.uri("https://issuer.example")])
            .signed(by: root, key: .ec(rootKey))
        let holderKey = try ECPrivateKey.generate(curve: .p256)
        let claims: JSONObject = ["iss": "https://issuer.example", "vct": "urn:eudi:pid:1", "given_name": "Erika",
                                  "address": ["street_address": "Heidestrasse 17", "locality": "Koeln"],
                                  "nationalities": ["DE", "FR"]]
        let credential = try await Self.issue(claims: claims, issuerSigner: SoftwareSigner(issuerKey), dsCert: dsCert,
                                              holderJWK: JWK(publicKey: .ec(holderKey.publicKey)))
        let sent = LockedBox<String?>(nil)
        try await Self.present(stored: credential.serialization, clientId: "x509_san_dns:verifier.example", nonce: "n-1", clock: clock,
                               request: Request(transactionData: []), holderKeySigner: SoftwareSigner(holderKey),
                               send: { value in sent.withLock { $0 = value } })
        let disclosed = try Self.verify(vpToken: try #require(sent.withLock { $0 }), anchors: [root], clock: clock,
                                        clientId: "x509_san_dns:verifier.example", nonce: "n-1", sent: [])
        #expect(disclosed["given_name"] == "Erika")
        #expect(disclosed["address"]?["locality"] == "Koeln")
        #expect(disclosed["address"]?["street_address"] == nil)
        #expect(disclosed["nationalities"] == ["DE", "FR"])
    }

    @Test("storage.md: a folder store, keys made in one transaction, a passphrase key, save and consume")
    func storage() async throws {
        let appSupport = temporaryFolder()
        let folder = appSupport.appendingPathComponent("wallet")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: appSupport) }
        let issuerURL = "https://issuer.example"
        let refreshToken = "refresh"
        let claims = try JWTClaims(["aud": "verifier", "nonce": "n"])
        // What an issuance stored: five instances, each bound to a key already in the area.
        let preparing = try SoftwareSecureArea(location: .file(folder.appendingPathComponent("keys.sqlite")),
                                               wrapping: try KeyFileWrappingProvider(nextTo: folder.appendingPathComponent("keys.sqlite")))
        let issued = try await preparing.createKeys(count: 5, options: KeyCreationOptions()).enumerated().map {
            CredentialInstance(index: $0.offset, keyAlias: $0.element.alias, raw: Array("sd-jwt-\($0.offset)".utf8))
        }
        await preparing.close()
        // snippet: docs/storage.md#1
        let dir = appSupport.appendingPathComponent("wallet")
        let keysURL = dir.appendingPathComponent("keys.sqlite")
        let area = try SoftwareSecureArea(
            location: .file(keysURL),
            wrapping: try KeyFileWrappingProvider(nextTo: keysURL))       // or PassphraseWrappingProvider
        let store = try CredentialStore(
            location: .file(dir.appendingPathComponent("credentials.sqlite")),
            secureArea: area, wrapping: try KeyFileWrappingProvider(nextTo: keysURL))
        try await store.purgeSpentKeys()                                  // finish deletions a crash interrupted

        // Issuance: one key per instance, created in one transaction (all or none).
        let keys = try await area.createKeys(count: 5, options: KeyCreationOptions())
        // A key protected by its own passphrase is used with unlock data the area defines.
        let locked = try await area.createKey(alias: "pin", options: KeyCreationOptions(protection: .passphrase("1234")))
        let pinSigner = try await area.signer(for: locked.alias, unlock: PassphraseUnlock("1234"))
        try await store.save(StoredCredential(id: "pid", format: .sdJwtVc, type: "urn:eudi:pid:1",
            issuer: IssuerInfo(identifier: issuerURL), instances: issued,
            policy: CredentialPolicy(batchSize: 5, use: .oneTime), refreshToken: refreshToken))

        // Presentation: one instance, and a signer for its key.
        let used = try await store.consumeInstance(of: "pid")
        let kbJwt = try await JWT.sign(claims: claims, signer: used.signer, type: "kb+jwt")
        // end snippet
        #expect(keys.count == 5)
        #expect(used.credentialId == "pid")
        #expect(try await store.remainingInstances(of: "pid") == 4)
        _ = kbJwt
        _ = pinSigner
    }

    static func mdoc(uuid: [UInt8], bytes: [UInt8], readerRoots: [X509Certificate], now: Date, credentials: [IssuerSigned],
                     userChoice: [String: [String: Set<String>]], deviceKeySigner: any Signer, iacas: [X509Certificate],
                     eReaderKey: any KeyAgreement, showQR: (String) -> Void, show: (X509Certificate) -> Void,
                     send: ([UInt8]) -> Void) async throws {
                         // snippet: docs/mdoc.md#1
                         // mdoc: show the engagement
                         let eDeviceKey = try ECPrivateKey.generate(curve: .p256)
                         let engagement = DeviceEngagement(security: EngagementSecurity(eDeviceKey: eDeviceKey.publicKey),
                                                           deviceRetrievalMethods: [.ble(.init(peripheralServerMode: false, centralClientMode: true,
                                                                                               centralClientUUID: uuid))])
                         showQR(engagement.uri)                                     // "mdoc:" + base64url

                         // mdoc: receive SessionEstablishment
                         let establishment = try SessionEstablishment(encoded: bytes)
                         let transcript = SessionTranscript(deviceEngagement: engagement,
                                                            eReaderKeyEncoded: establishment.eReaderKeyEncoded, handover: .qr)
                         var session = try await SessionEncryption(role: .mdoc, privateKey: SoftwareKeyAgreement(eDeviceKey),
                                                                   peerPublicKey: try establishment.eReaderPublicKey(),
                                                                   sessionTranscript: transcript)
                         let request = try DeviceRequest(encoded: try session.decrypt(establishment.data))
                         for doc in request.docRequests where doc.readerAuth != nil {
                             let chain = try doc.verifyReaderAuthentication(sessionTranscript: transcript, trustAnchors: readerRoots, at: now)
                             show(chain.leaf)                                       // the reader's certificate
                         }
                         let response = try await DeviceResponseBuilder.respond(
                             to: request, with: credentials, sessionTranscript: transcript, consented: userChoice,
                             authentication: { _ in .signature(deviceKeySigner) })   // or .mac(deviceKey:, eReaderKey:)
                         send(try session.sessionData(response.encodedBytes, status: .sessionTermination).encodedBytes)

                         // reader
                         let verified = try await DeviceResponseVerifier(trustAnchors: iacas, sessionTranscript: transcript,
                                                                         eReaderKey: eReaderKey).verify(response, at: now)
                         // end snippet
        _ = verified
    }

    @Test("mdoc.md: the example compiles against the Mdoc API")
    func mdocCompiles() { _ = Self.mdoc }
}
