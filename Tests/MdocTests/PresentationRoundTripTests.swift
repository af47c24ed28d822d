import CBOR
import COSE
import Foundation
import Mdoc
import Testing
import WalletCrypto
import WalletRuntime

@Suite("Holder → reader presentation")
struct PresentationRoundTripTests {
    typealias S = MdocTestSupport

    @Test("a signed DeviceResponse carries only requested and consented elements, with the issued bytes, and verifies")
    func signatureRoundTrip() async throws {
        let issuer = try S.pki("IACA")
        let deviceKey = try ECPrivateKey.generate(curve: .p256)
        let credential = try await S.issueMDL(issuer: issuer, deviceKey: deviceKey.publicKey)
        let (transcript, _, _) = try S.transcript()
        let request = DeviceRequest(docRequests: [DocRequest(itemsRequest: S.mDLRequest(["family_name", "age_over_18", "given_name", "portrait"]))])
        let response = try await DeviceResponseBuilder.respond(
            to: try DeviceRequest(encoded: request.encodedBytes), with: [credential], sessionTranscript: transcript,
            consented: [S.mDL: [S.mDLNameSpace: ["family_name", "age_over_18", "portrait"]]],
            authentication: { _ in .signature(SoftwareSigner(deviceKey)) })
        let parsed = try DeviceResponse(encoded: response.encodedBytes)
        let document = try #require(parsed.documents.first)
        let returned = document.issuerSigned.items(in: S.mDLNameSpace)
        #expect(returned.map(\.item.elementIdentifier) == ["family_name", "age_over_18"])
        for item in returned {
            #expect(credential.items(in: S.mDLNameSpace).contains { $0.taggedBytes == item.taggedBytes })
        }
        #expect(document.errors.first?.elements.map(\.identifier) == ["given_name", "portrait"])
        #expect(document.issuerSigned.issuerAuth.encodedBytes == credential.issuerAuth.encodedBytes)

        let verified = try await DeviceResponseVerifier(trustAnchors: [issuer.anchor], sessionTranscript: transcript)
            .verify(parsed, at: Date())
        let doc = try #require(verified.documents.first)
        #expect(doc.deviceAuthentication == .signature)
        #expect(doc.value(nameSpace: S.mDLNameSpace, identifier: "family_name") == "Doe")
        #expect(doc.value(nameSpace: S.mDLNameSpace, identifier: "age_over_18") == true)
        #expect(doc.value(nameSpace: S.mDLNameSpace, identifier: "given_name") == nil)
        #expect(doc.issuerChain.anchor == issuer.anchor)
    }

    @Test("a MAC-authenticated DeviceResponse verifies with the reader's ephemeral key, and a missing docType gives documentErrors")
    func macRoundTrip() async throws {
        let issuer = try S.pki("IACA")
        let deviceKey = try ECPrivateKey.generate(curve: .p256)
        let credential = try await S.issueMDL(issuer: issuer, deviceKey: deviceKey.publicKey)
        let (transcript, _, eReaderKey) = try S.transcript()
        let request = DeviceRequest(docRequests: [DocRequest(itemsRequest: S.mDLRequest()),
                                                  DocRequest(itemsRequest: S.mDLRequest(docType: "org.iso.23220.photoid.1"))])
        let response = try await DeviceResponseBuilder.respond(
            to: request, with: [credential], sessionTranscript: transcript,
            authentication: { _ in .mac(deviceKey: SoftwareKeyAgreement(deviceKey), eReaderKey: eReaderKey.publicKey) })
        #expect(response.documentErrors == [DocumentError(docType: "org.iso.23220.photoid.1", code: 0)])
        let verified = try await DeviceResponseVerifier(trustAnchors: [issuer.anchor], sessionTranscript: transcript,
                                                        eReaderKey: SoftwareKeyAgreement(eReaderKey)).verify(try DeviceResponse(encoded: response.encodedBytes), at: Date())
        #expect(verified.documents.first?.deviceAuthentication == .mac)
        #expect(verified.documentErrors.map(\.docType) == ["org.iso.23220.photoid.1"])
    }

    @Test("a whole session: engagement, establishment with reader authentication, encrypted request and response, termination")
    func wholeSession() async throws {
        let issuer = try S.pki("IACA")
        let readerPKI = try S.pki("Reader", role: .reader)
        let deviceKey = try ECPrivateKey.generate(curve: .p256)
        let credential = try await S.issueMDL(issuer: issuer, deviceKey: deviceKey.publicKey)

        // mdoc shows its engagement
        let eDeviceKey = try ECPrivateKey.generate(curve: .p256)
        let engagement = DeviceEngagement(security: EngagementSecurity(eDeviceKey: eDeviceKey.publicKey),
                                          deviceRetrievalMethods: [.ble(.init(peripheralServerMode: true, centralClientMode: false,
                                                                              peripheralServerUUID: Array(repeating: 7, count: 16)))])
        // reader scans it
        let scanned = try DeviceEngagement(uri: engagement.uri)
        let eReaderKey = try ECPrivateKey.generate(curve: .p256)
        let readerTranscript = SessionTranscript(deviceEngagement: scanned,
                                                 eReaderKeyEncoded: COSEKey(publicKey: .ec(eReaderKey.publicKey)).encoded(), handover: .qr)
        var readerSession = try await SessionEncryption(role: .reader, privateKey: SoftwareKeyAgreement(eReaderKey),
                                                        peerPublicKey: try scanned.security.ecPublicKey(), sessionTranscript: readerTranscript)
        let docRequest = try await DocRequest(itemsRequest: S.mDLRequest(),
                                              readerKey: ReaderAuthenticationKey(signer: readerPKI.signer, certificateChain: [readerPKI.leaf]),
                                              sessionTranscript: readerTranscript)
        let establishment = SessionEstablishment(eReaderKey: eReaderKey.publicKey,
                                                 data: try readerSession.encrypt(DeviceRequest(docRequests: [docRequest]).encodedBytes))

        // mdoc receives it
        let received = try SessionEstablishment(encoded: establishment.encodedBytes)
        let mdocTranscript = SessionTranscript(deviceEngagement: engagement, eReaderKeyEncoded: received.eReaderKeyEncoded, handover: .qr)
        #expect(mdocTranscript == readerTranscript)
        var mdocSession = try await SessionEncryption(role: .mdoc, privateKey: SoftwareKeyAgreement(eDeviceKey),
                                                      peerPublicKey: try received.eReaderPublicKey(), sessionTranscript: mdocTranscript)
        let request = try DeviceRequest(encoded: try mdocSession.decrypt(received.data))
        let path = try request.docRequests[0].verifyReaderAuthentication(sessionTranscript: mdocTranscript,
                                                                         trustAnchors: [readerPKI.anchor], at: Date())
        #expect(path.leaf == readerPKI.leaf)
        let response = try await DeviceResponseBuilder.respond(to: request, with: [credential], sessionTranscript: mdocTranscript,
                                                               authentication: { _ in .signature(SoftwareSigner(deviceKey)) })
        let message = try mdocSession.sessionData(response.encodedBytes, status: .sessionTermination)

        // reader reads the answer
        let plaintext = try #require(try readerSession.open(try SessionData(encoded: message.encodedBytes)))
        #expect(readerSession.isTerminated)
        let verified = try await DeviceResponseVerifier(trustAnchors: [issuer.anchor], sessionTranscript: readerTranscript)
            .verify(try DeviceResponse(encoded: plaintext), at: Date())
        #expect(verified.documents.first?.value(nameSpace: S.mDLNameSpace, identifier: "age_over_18") == true)
    }

    @Test("device-signed elements covered by keyAuthorizations are returned and verified")
    func deviceSignedAuthorized() async throws {
        let issuer = try S.pki("IACA")
        let deviceKey = try ECPrivateKey.generate(curve: .p256)
        let credential = try await S.issueMDL(issuer: issuer, deviceKey: deviceKey.publicKey,
                                              keyAuthorizations: KeyAuthorizations(dataElements: [S.mDLNameSpace: ["nickname"]]))
        #expect(credential.mobileSecurityObject.keyAuthorizations?.dataElements[S.mDLNameSpace] == ["nickname"])
        let (transcript, _, _) = try S.transcript()
        var builder = DeviceResponseBuilder(sessionTranscript: transcript)
        try await builder.addDocument(credential, for: S.mDLRequest(["family_name", "nickname"]),
                                      deviceNameSpaces: DeviceNameSpaces(nameSpaces: [NameSpaced(S.mDLNameSpace, [DataElement("nickname", "Johnny")])]),
                                      authentication: .signature(SoftwareSigner(deviceKey)))
        let response = try DeviceResponse(encoded: builder.build().encodedBytes)
        let verified = try await DeviceResponseVerifier(trustAnchors: [issuer.anchor], sessionTranscript: transcript)
            .verify(response, at: Date())
        #expect(verified.documents.first?.deviceSigned.first?.elements.first?.value == "Johnny")
        #expect(verified.documents.first?.errors.isEmpty == true)
    }

    @Test("items parsed inside a document keep their exact bytes, compare and hash by them, and digest to the MSO's values")
    func itemsParsedInPlace() async throws {
        let issuer = try S.pki("IACA")
        let credential = try await S.issueMDL(issuer: issuer, deviceKey: try ECPrivateKey.generate(curve: .p256).publicKey)
        // Each item is a view of the document's bytes, at an offset inside them.
        let reparsed = try IssuerSigned(encoded: credential.encodedBytes)
        let original = credential.items(in: S.mDLNameSpace)
        let parsed = reparsed.items(in: S.mDLNameSpace)
        #expect(parsed.count == original.count && !parsed.isEmpty)
        let digests = reparsed.mobileSecurityObject.valueDigests[S.mDLNameSpace] ?? [:]
        for (built, read) in zip(original, parsed) {
            #expect(read.taggedBytes == built.taggedBytes)
            #expect(read == built)
            #expect(Set([read, built]).count == 1)
            #expect(read.digest() == SHA256.digest(read.taggedBytes))
            #expect(digests[read.item.digestID] == read.digest())
            #expect(try IssuerSignedItemBytes(encoded: read.taggedBytes) == read)
        }
        #expect(reparsed.encodedBytes == credential.encodedBytes)
    }

    @Test("an issued MSO has 32-byte salts, unique digestIDs per namespace and a tdate validity without fractions")
    func issuedStructure() async throws {
        let issuer = try S.pki("IACA")
        let deviceKey = try ECPrivateKey.generate(curve: .p256)
        let credential = try await S.issueMDL(issuer: issuer, deviceKey: deviceKey.publicKey)
        let reparsed = try IssuerSigned(encoded: credential.encodedBytes)
        #expect(reparsed.encodedBytes == credential.encodedBytes)
        let items = reparsed.items(in: S.mDLNameSpace)
        #expect(items.allSatisfy { $0.item.random.count == 32 })
        #expect(Set(items.map(\.item.digestID)).count == items.count)
        let msoValue = try CBOR.decode(reparsed.mobileSecurityObject.encodedBytes)
        guard case .tagged(0, .textString(let signed))? = msoValue["validityInfo"]?["signed"] else {
            Issue.record("signed is not a tdate")
            return
        }
        #expect(signed.hasSuffix("Z") && !signed.contains("."))
        #expect(reparsed.mobileSecurityObject.deviceKey == COSEKey(publicKey: .ec(deviceKey.publicKey)))
    }
}
