import CBOR
import COSE
import Foundation
import Mdoc
import Testing
import WalletCrypto
import WalletRuntime

@Suite("ISO 18013-5 Annex D vectors")
struct AnnexDVectorTests {
    typealias S = MdocTestSupport

    @Test("the Annex D DeviceEngagement parses and is rebuilt byte for byte from its parts")
    func deviceEngagement() throws {
        let file = try S.json("mdoc/annex_d_device_engagement.json")
        let bytes = try S.hex(file, "expected", "device_engagement_hex")
        let parsed = try DeviceEngagement(encoded: bytes)
        #expect(parsed.encodedBytes == bytes)
        #expect(parsed.version == "1.0")
        #expect(parsed.security.eDeviceKeyBytes == (try S.hex(file, "expected", "e_device_key_bytes_hex")))
        let ephemeral = try S.annexKey("ephemeral_device_key")
        #expect(try parsed.security.ecPublicKey() == ephemeral.publicKey)
        guard case .ble(1, let options) = parsed.deviceRetrievalMethods.first else {
            Issue.record("no BLE method")
            return
        }
        #expect(options.centralClientMode && !options.peripheralServerMode)
        let rebuilt = DeviceEngagement(security: EngagementSecurity(eDeviceKey: ephemeral.publicKey),
                                       deviceRetrievalMethods: [.ble(options)])
        #expect(rebuilt.encodedBytes == bytes)
        #expect(try DeviceEngagement(uri: parsed.uri).encodedBytes == bytes)
        #expect(parsed.uri.hasPrefix("mdoc:o"))
    }

    @Test("the SessionTranscript with the NFC handover is built byte for byte from its parts")
    func sessionTranscript() throws {
        let file = try S.json("mdoc/annex_d_session_transcript.json")
        // With NFC negotiated handover the engagement travels inside the Handover Select
        // message (its "mdoc" record): version and security only, no retrieval methods.
        let engagement = DeviceEngagement(security: EngagementSecurity(eDeviceKey: try S.annexKey("ephemeral_device_key").publicKey))
        let select = try S.hex(file, "inputs", "nfc_handover_select_message_hex")
        #expect(select.suffix(engagement.encodedBytes.count).elementsEqual(engagement.encodedBytes))
        let readerKey = try S.annexKey("ephemeral_reader_key").publicKey
        let transcript = SessionTranscript(
            deviceEngagement: engagement, eReaderKeyEncoded: COSEKey(publicKey: .ec(readerKey)).encoded(),
            handover: .nfc(handoverSelect: try S.hex(file, "inputs", "nfc_handover_select_message_hex"),
                           handoverRequest: try S.hex(file, "inputs", "nfc_handover_request_message_hex")))
        let expected = try S.hex(file, "expected", "session_transcript_bytes_hex")
        #expect(transcript.taggedBytes == expected)
        let parsed = try SessionTranscript(encoded: expected)
        #expect(parsed.encodedBytes == transcript.encodedBytes)
        #expect(parsed.handover == transcript.handover)
        let messages = try S.json("mdoc/annex_d_device_engagement.json")
        #expect(parsed.handover == .nfc(handoverSelect: try S.hex(messages, "expected", "nfc_handover_select_message_hex"),
                                        handoverRequest: try S.hex(messages, "expected", "nfc_handover_request_message_hex")))
    }

    @Test("ECDH gives the published ZAB and HKDF the published SKReader, from either side")
    func sessionKeys() async throws {
        let file = try S.json("mdoc/annex_d_session_keys.json")
        let transcript = try SessionTranscript(encoded: try S.hex(file, "inputs", "session_transcript_bytes_hex"))
        let device = try S.annexKey("ephemeral_device_key")
        let reader = try S.annexKey("ephemeral_reader_key")
        let zab = try device.sharedSecret(with: reader.publicKey)
        #expect(zab == SharedSecret(bytes: try S.hex(file, "expected", "zab_hex")))
        let keys = try SessionKeys(sharedSecret: zab, sessionTranscript: transcript)
        #expect(keys.skReader == SymmetricKey(bytes: try S.hex(file, "expected", "sk_reader_hex")))
        let readerSide = try await SessionKeys.derive(privateKey: SoftwareKeyAgreement(reader), peerPublicKey: device.publicKey,
                                                      sessionTranscript: transcript)
        #expect(readerSide.skReader == keys.skReader && readerSide.skDevice == keys.skDevice)
        #expect(keys.skDevice != keys.skReader && keys.skDevice.byteCount == 32)
    }

    @Test("the SessionEstablishment decrypts with SKReader counter 1 to the published DeviceRequest, and re-encrypts to the same bytes")
    func sessionEstablishment() async throws {
        let file = try S.json("mdoc/annex_d_session_establishment.json")
        let bytes = try S.hex(file, "expected", "session_establishment_hex")
        let establishment = try SessionEstablishment(encoded: bytes)
        let engagement = DeviceEngagement(security: EngagementSecurity(eDeviceKey: try S.annexKey("ephemeral_device_key").publicKey))
        let messages = try S.json("mdoc/annex_d_session_transcript.json")
        let transcript = SessionTranscript(
            deviceEngagement: engagement, eReaderKeyEncoded: establishment.eReaderKeyEncoded,
            handover: .nfc(handoverSelect: try S.hex(messages, "inputs", "nfc_handover_select_message_hex"),
                           handoverRequest: try S.hex(messages, "inputs", "nfc_handover_request_message_hex")))
        #expect(transcript.taggedBytes == (try S.hex(messages, "expected", "session_transcript_bytes_hex")))
        var mdoc = try await SessionEncryption(role: .mdoc, privateKey: SoftwareKeyAgreement(try S.annexKey("ephemeral_device_key")),
                                               peerPublicKey: try establishment.eReaderPublicKey(), sessionTranscript: transcript)
        let plaintext = try mdoc.decrypt(establishment.data)
        #expect(plaintext == (try S.hex(file, "expected", "device_request_plaintext_hex")))
        #expect(mdoc.nextReceiveCounter == 2)

        // The reader side encrypts the same request to the same bytes (the IV is deterministic).
        var reader = try await SessionEncryption(role: .reader, privateKey: SoftwareKeyAgreement(try S.annexKey("ephemeral_reader_key")),
                                                 peerPublicKey: try engagement.security.ecPublicKey(), sessionTranscript: transcript)
        let data = try reader.encrypt(plaintext)
        let rebuilt = SessionEstablishment(eReaderKey: try establishment.eReaderPublicKey(), data: data)
        #expect(rebuilt.encodedBytes == bytes)

        // The session continues: the mdoc answers under SKDevice, identifier ...01, counter 1.
        let answer = try mdoc.encrypt(Array("DeviceResponse".utf8))
        let keys = try SessionKeys(sharedSecret: try S.annexKey("ephemeral_device_key")
            .sharedSecret(with: S.annexKey("ephemeral_reader_key").publicKey), sessionTranscript: transcript)
        let direct = try AESGCM.seal(Array("DeviceResponse".utf8), key: keys.skDevice,
                                     nonce: [0, 0, 0, 0, 0, 0, 0, 1, 0, 0, 0, 1])
        #expect(answer == direct.ciphertextAndTag)
        #expect(try reader.decrypt(answer) == Array("DeviceResponse".utf8))
    }

    @Test("the Annex D DeviceRequest parses, re-encodes exactly, and its reader authentication verifies")
    func deviceRequest() throws {
        let file = try S.json("mdoc/annex_d_device_request_reader_auth.json")
        let bytes = try S.hex(file, "expected", "device_request_hex")
        let request = try DeviceRequest(encoded: bytes)
        #expect(request.version == "1.0")
        #expect(DeviceRequest(version: request.version, docRequests: request.docRequests).encodedBytes == bytes)
        let doc = try #require(request.docRequests.first)
        #expect(doc.itemsRequest.encodedBytes == (try S.hex(file, "expected", "items_request_hex")))
        #expect(doc.itemsRequest.docType == S.mDL)
        let elements = doc.itemsRequest.nameSpaces.first?.elements ?? []
        #expect(elements.map(\.identifier) == ["family_name", "document_number", "driving_privileges", "issue_date",
                                                "expiry_date", "portrait"])
        #expect(elements.first { $0.identifier == "portrait" }?.intentToRetain == false)
        #expect(doc.readerAuth?.encodedBytes == (try S.hex(file, "expected", "reader_auth_cose_sign1_hex")))

        let transcript = try SessionTranscript(encoded: try S.hex(file, "inputs", "session_transcript_bytes_hex"))
        #expect(DocRequest.readerAuthenticationBytes(sessionTranscript: transcript, itemsRequest: doc.itemsRequest)
                == (try S.hex(file, "expected", "reader_authentication_bytes_hex")))
        let root = try X509Certificate(derEncoded: try S.hex(file, "expected", "reader_root_cert_der_hex"))
        let path = try doc.verifyReaderAuthentication(sessionTranscript: transcript, trustAnchors: [root],
                                                      at: S.date("2021-06-01T00:00:00Z"))
        #expect(path.leaf.derEncoded == (try S.hex(file, "expected", "reader_cert_der_hex")))
        #expect(doc.readerCertificate?.derEncoded == (try S.hex(file, "expected", "reader_cert_der_hex")))
    }

    @Test("the Annex D issuerAuth verifies against the IACA, and its MSO holds the static device key")
    func issuerAuth() throws {
        let file = try S.json("mdoc/annex_d_issuer_auth.json")
        let issuerAuth = try COSESign1(encoded: try S.hex(file, "expected", "issuer_auth_cose_sign1_hex"))
        let iaca = try X509Certificate(derEncoded: try S.hex(file, "expected", "iaca_cert_der_hex"))
        let chain = try issuerAuth.verify(trustAnchors: [iaca], at: S.date("2021-01-01T00:00:00Z"), policy: .mdocDocumentSigner)
        #expect(chain.leaf.derEncoded == (try S.hex(file, "expected", "ds_cert_der_hex")))
        let issuerSigned = try IssuerSigned(nameSpaces: [], issuerAuth: issuerAuth)
        let mso = issuerSigned.mobileSecurityObject
        #expect(mso.docType == S.mDL)
        #expect(mso.digestAlgorithm == "SHA-256")
        #expect(try mso.devicePublicKey() == .ec(try S.annexKey("static_device_key").publicKey))
        #expect(mso.valueDigests[S.mDLNameSpace]?.isEmpty == false)
        #expect(mso.validityInfo.validFrom <= S.date("2021-01-01T00:00:00Z"))
        #expect(CBOR.tagged(24, .byteString(mso.encodedBytes)).encoded() == issuerAuth.payload)
    }
}
