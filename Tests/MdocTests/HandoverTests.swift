import CBOR
import Foundation
import Mdoc
import Testing
import WalletCrypto
import WalletRuntime

@Suite("OpenID4VP handovers")
struct HandoverTests {
    typealias S = MdocTestSupport

    @Test("the redirect handover gives the published OpenID4VPHandoverInfo, its hash and the SessionTranscript")
    func redirect() throws {
        let file = try S.json("openid4vp/session_transcript_redirect.json")
        let handover = Handover.openID4VP(clientId: try S.string(file, "inputs", "client_id"),
                                          nonce: try S.string(file, "inputs", "nonce"),
                                          jwkThumbprint: try S.hex(file, "expected", "jwk_thumbprint_hex"),
                                          responseUri: try S.string(file, "inputs", "response_uri"))
        #expect(handover.handoverInfoBytes == (try S.hex(file, "expected", "handover_info_hex")))
        #expect(handover.cbor.encoded() == (try S.hex(file, "expected", "handover_hex")))
        let transcript = SessionTranscript.openID4VP(handover)
        #expect(transcript.encodedBytes == (try S.hex(file, "expected", "session_transcript_hex")))
        #expect(try SessionTranscript(encoded: transcript.encodedBytes).encodedBytes == transcript.encodedBytes)
    }

    @Test("the DC API handover gives the published OpenID4VPDCAPIHandoverInfo, its hash and the SessionTranscript")
    func dcAPI() throws {
        let file = try S.json("openid4vp/session_transcript_dc_api.json")
        let handover = Handover.openID4VPDCAPI(origin: try S.string(file, "inputs", "origin"),
                                               nonce: try S.string(file, "inputs", "nonce"),
                                               jwkThumbprint: try S.hex(file, "expected", "jwk_thumbprint_hex"))
        #expect(handover.handoverInfoBytes == (try S.hex(file, "expected", "handover_info_hex")))
        #expect(HashAlgorithm.sha256.digest(handover.handoverInfoBytes ?? []) == (try S.hex(file, "expected", "handover_info_sha256_hex")))
        #expect(SessionTranscript.openID4VP(handover).encodedBytes == (try S.hex(file, "expected", "session_transcript_hex")))
    }

    @Test("without encryption the thumbprint is null, and a response bound to it verifies only under that transcript")
    func nullThumbprintRoundTrip() async throws {
        let redirect = Handover.openID4VP(clientId: "x509_san_dns:verifier.example", nonce: "n-0S6", jwkThumbprint: nil,
                                          responseUri: "https://verifier.example/post")
        let info = try CBOR.decode(redirect.handoverInfoBytes ?? [])
        #expect(info[2] == .null)
        let dcAPI = Handover.openID4VPDCAPI(origin: "https://verifier.example", nonce: "n-0S6", jwkThumbprint: nil)
        #expect(try CBOR.decode(dcAPI.handoverInfoBytes ?? []) == ["https://verifier.example", "n-0S6", nil])

        let issuer = try S.pki("IACA")
        let deviceKey = try ECPrivateKey.generate(curve: .p256)
        let credential = try await S.issueMDL(issuer: issuer, deviceKey: deviceKey.publicKey)
        let transcript = SessionTranscript.openID4VP(redirect)
        let response = try await DeviceResponseBuilder.respond(
            to: DeviceRequest(docRequests: [DocRequest(itemsRequest: S.mDLRequest())]), with: [credential],
            sessionTranscript: transcript, authentication: { _ in .signature(SoftwareSigner(deviceKey)) })
        _ = try await DeviceResponseVerifier(trustAnchors: [issuer.anchor], sessionTranscript: transcript).verify(response, at: Date())
        let other = SessionTranscript.openID4VP(.openID4VPDCAPI(origin: "https://verifier.example", nonce: "n-0S6", jwkThumbprint: nil))
        await #expect(throws: MdocError.self) {
            _ = try await DeviceResponseVerifier(trustAnchors: [issuer.anchor], sessionTranscript: other).verify(response, at: Date())
        }
    }
}
