import CBOR
import COSE
import Foundation
import Mdoc
import Testing
@testable import wallet
import WalletCrypto
import WalletRuntime
import WalletEncoding

/// `wallet mdoc verify`, run in-process on responses built with the Mdoc module.
@Suite("wallet mdoc verify")
struct MdocCommandTests {
    struct Setup {
        let anchorPath: String
        let transcript: SessionTranscript
        let eReaderKey: ECPrivateKey
        let signed: DeviceResponse
        let maced: DeviceResponse
    }

    static func setup() async throws -> Setup {
        let now = Date()
        let rootKey = try ECPrivateKey.generate(curve: .p256)
        let dsKey = try ECPrivateKey.generate(curve: .p256)
        let root = try CertificateBuilder.iaca(subject: try DistinguishedName([(.commonName, "CLI IACA")]),
                                                               notBefore: now.addingTimeInterval(-86_400),
                                                               notAfter: now.addingTimeInterval(30 * 86_400)).selfSigned(with: .ec(rootKey))
        let ds = try CertificateBuilder.mdocDocumentSigner(subject: try DistinguishedName([(.commonName, "CLI DS")]),
                                                  subjectPublicKeyInfoDER: dsKey.publicKey.spkiDER, notBefore: now.addingTimeInterval(-86_400),
                                                  notAfter: now.addingTimeInterval(30 * 86_400)).signed(by: root, key: .ec(rootKey))
        let deviceKey = try ECPrivateKey.generate(curve: .p256)
        let credential = try await MdocIssuer(signer: SoftwareSigner(dsKey), certificateChain: [ds]).issue(
            docType: "org.iso.18013.5.1.mDL",
            nameSpaces: [NameSpaced("org.iso.18013.5.1", [DataElement("family_name", "Doe"), DataElement("portrait", .byteString([0xfb, 0xff])),
                                                          DataElement("birth_date", .tagged(1004, "1980-05-01"))])],
            deviceKey: COSEKey(publicKey: .ec(deviceKey.publicKey)),
            validity: ValidityInfo(signed: now, validFrom: now.addingTimeInterval(-60), validUntil: now.addingTimeInterval(7 * 86_400)))
        let eDeviceKey = try ECPrivateKey.generate(curve: .p256)
        let eReaderKey = try ECPrivateKey.generate(curve: .p256)
        let transcript = SessionTranscript(deviceEngagement: DeviceEngagement(security: EngagementSecurity(eDeviceKey: eDeviceKey.publicKey)),
                                           eReaderKeyEncoded: COSEKey(publicKey: .ec(eReaderKey.publicKey)).encoded(), handover: .qr)
        let request = DeviceRequest(docRequests: [DocRequest(itemsRequest: ItemsRequest(
            docType: "org.iso.18013.5.1.mDL", nameSpaces: [NameSpaced("org.iso.18013.5.1", [RequestedElement("family_name", false), RequestedElement("portrait", false),
                                                           RequestedElement("birth_date", false)])]))])
        let signed = try await DeviceResponseBuilder.respond(to: request, with: [credential], sessionTranscript: transcript,
                                                             authentication: { _ in .signature(SoftwareSigner(deviceKey)) })
        let maced = try await DeviceResponseBuilder.respond(to: request, with: [credential], sessionTranscript: transcript,
                                                            authentication: { _ in .mac(deviceKey: SoftwareKeyAgreement(deviceKey), eReaderKey: eReaderKey.publicKey) })
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("mdoc-cli-\(UUID().uuidString).pem").path
        try root.pemEncoded.write(toFile: path, atomically: true, encoding: .utf8)
        return Setup(anchorPath: path, transcript: transcript, eReaderKey: eReaderKey, signed: signed, maced: maced)
    }

    @Test("a signed response verifies and prints its elements as JSON with base64url bytes and ISO dates")
    func verifiesSignature() async throws {
        let setup = try await Self.setup()
        defer { try? FileManager.default.removeItem(atPath: setup.anchorPath) }
        let output = try await WalletCommand.run(["mdoc", "verify", "--response", Hex.encode(setup.signed.encodedBytes),
                                                  "--transcript", Hex.encode(setup.transcript.taggedBytes), "--anchor", setup.anchorPath])
        #expect(output.contains("\"family_name\":\"Doe\""))
        #expect(output.contains("\"portrait\":\"-_8\""))
        #expect(output.contains("\"birth_date\":\"1980-05-01\""))
        #expect(output.contains("\"deviceAuthentication\":\"signature\""))
        #expect(output.contains("\"validUntil\":\"20"))
    }

    @Test("a MAC response verifies with --reader-key and fails without it")
    func verifiesMAC() async throws {
        let setup = try await Self.setup()
        defer { try? FileManager.default.removeItem(atPath: setup.anchorPath) }
        let arguments = ["mdoc", "verify", "--response", Hex.encode(setup.maced.encodedBytes),
                         "--transcript", Hex.encode(setup.transcript.encodedBytes), "--anchor", setup.anchorPath]
        let d = try setup.eReaderKey.rawScalar()
        let output = try await WalletCommand.run(arguments + ["--reader-key", Hex.encode(d)])
        #expect(output.contains("\"deviceAuthentication\":\"mac\""))
        await #expect(throws: CLIError.self) { _ = try await WalletCommand.run(arguments) }
    }

    @Test("verification at a time after the MSO's validity fails with one line and exit status 1")
    func failsOutsideValidity() async throws {
        let setup = try await Self.setup()
        defer { try? FileManager.default.removeItem(atPath: setup.anchorPath) }
        do {
            _ = try await WalletCommand.run(["mdoc", "verify", "--response", Hex.encode(setup.signed.encodedBytes),
                                             "--transcript", Hex.encode(setup.transcript.encodedBytes), "--anchor", setup.anchorPath,
                                             "--at", ISO8601DateFormatter().string(from: Date().addingTimeInterval(10 * 86_400))])
            Issue.record("verification should fail")
        } catch {
            #expect(error.exitCode == 1)
            #expect(error.message.contains("msoExpired"))
            #expect(!error.message.contains("\n"))
        }
    }

    @Test("missing options are a usage error")
    func usage() async throws {
        do {
            _ = try await WalletCommand.run(["mdoc", "verify", "--response", "a0"])
            Issue.record("should fail")
        } catch {
            #expect(error.exitCode == 2)
        }
    }
}
