import CBOR
import COSE
import Foundation
import Mdoc
import Testing
import WalletCrypto
import WalletRuntime
import WalletEncoding

@Suite("Rejections, each a typed error")
struct NegativeTests {
    typealias S = MdocTestSupport

    /// An issuer, a credential, a transcript and a valid signed document for them.
    struct Fixture {
        let issuer: S.PKI
        let deviceKey: ECPrivateKey
        let credential: IssuerSigned
        let transcript: SessionTranscript
        let eReaderKey: ECPrivateKey
        let document: Document

        static func make(validity: ValidityInfo? = nil, mac: Bool = false) async throws -> Fixture {
            let issuer = try S.pki("IACA", notBefore: Date().addingTimeInterval(-400 * 86_400),
                                   notAfter: Date().addingTimeInterval(400 * 86_400))
            let deviceKey = try ECPrivateKey.generate(curve: .p256)
            let credential = try await S.issueMDL(issuer: issuer, deviceKey: deviceKey.publicKey, validity: validity)
            let (transcript, _, eReaderKey) = try S.transcript()
            var builder = DeviceResponseBuilder(sessionTranscript: transcript)
            try await builder.addDocument(credential, for: S.mDLRequest(),
                                          authentication: mac ? .mac(deviceKey: SoftwareKeyAgreement(deviceKey), eReaderKey: eReaderKey.publicKey)
                                                              : .signature(SoftwareSigner(deviceKey)))
            return Fixture(issuer: issuer, deviceKey: deviceKey, credential: credential, transcript: transcript,
                           eReaderKey: eReaderKey, document: try #require(builder.build().documents.first))
        }

        func verify(_ document: Document? = nil, anchors: [X509Certificate]? = nil, transcript: SessionTranscript? = nil,
                    eReaderKey: ECPrivateKey? = nil, at time: Date = Date()) async throws(MdocError) {
            _ = try await DeviceResponseVerifier(trustAnchors: anchors ?? [issuer.anchor], sessionTranscript: transcript ?? self.transcript,
                                                 eReaderKey: SoftwareKeyAgreement(eReaderKey ?? self.eReaderKey))
                .verify(DeviceResponse(documents: [document ?? self.document]), at: time)
        }

        /// The document with its issuer-signed items replaced.
        func withItems(_ items: [IssuerSignedItemBytes]) throws -> Document {
            Document(docType: document.docType,
                     issuerSigned: try IssuerSigned(nameSpaces: [NameSpaced(S.mDLNameSpace, items)], issuerAuth: credential.issuerAuth),
                     deviceSigned: document.deviceSigned)
        }
    }

    @Test("a changed element value fails its digest")
    func digestMismatch() async throws {
        let fixture = try await Fixture.make()
        let original = try #require(fixture.document.issuerSigned.items(in: S.mDLNameSpace).first).item
        let forged = IssuerSignedItemBytes(IssuerSignedItem(digestID: original.digestID, random: original.random,
                                                            elementIdentifier: original.elementIdentifier, elementValue: "Mallory"))
        await #expect(throws: MdocError.digestMismatch(nameSpace: S.mDLNameSpace, elementIdentifier: original.elementIdentifier,
                                                       digestID: original.digestID)) {
            try await fixture.verify(try fixture.withItems([forged]))
        }
    }

    @Test("an element whose digestID is not in the MSO is rejected")
    func unknownDigestID() async throws {
        let fixture = try await Fixture.make()
        let original = try #require(fixture.document.issuerSigned.items(in: S.mDLNameSpace).first).item
        let stray = IssuerSignedItemBytes(IssuerSignedItem(digestID: 9_999, random: original.random,
                                                           elementIdentifier: original.elementIdentifier, elementValue: original.elementValue))
        await #expect(throws: MdocError.unknownDigestID(nameSpace: S.mDLNameSpace, digestID: 9_999)) {
            try await fixture.verify(try fixture.withItems([stray]))
        }
    }

    @Test("an expired MSO and a not yet valid MSO are rejected")
    func validityWindow() async throws {
        let now = Date()
        let expired = try await Fixture.make(validity: ValidityInfo(signed: now.addingTimeInterval(-10 * 86_400),
                                                                     validFrom: now.addingTimeInterval(-10 * 86_400),
                                                                     validUntil: now.addingTimeInterval(-86_400)))
        await #expect { try await expired.verify() } throws: { error in
            if case MdocError.msoExpired = error { return true }
            return false
        }
        let future = try await Fixture.make(validity: ValidityInfo(signed: now, validFrom: now.addingTimeInterval(86_400),
                                                                    validUntil: now.addingTimeInterval(10 * 86_400)))
        await #expect { try await future.verify() } throws: { error in
            if case MdocError.msoNotYetValid = error { return true }
            return false
        }
        try await future.verify(at: now.addingTimeInterval(2 * 86_400))
    }

    @Test("a document whose docType differs from its MSO's is rejected, on both sides")
    func docTypeMismatch() async throws {
        let fixture = try await Fixture.make()
        let relabelled = Document(docType: "org.iso.23220.photoid.1", issuerSigned: fixture.document.issuerSigned,
                                  deviceSigned: fixture.document.deviceSigned)
        await #expect(throws: MdocError.docTypeMismatch(expected: S.mDL, actual: "org.iso.23220.photoid.1")) {
            try await fixture.verify(relabelled)
        }
        var builder = DeviceResponseBuilder(sessionTranscript: fixture.transcript)
        await #expect(throws: MdocError.docTypeMismatch(expected: "org.iso.23220.photoid.1", actual: S.mDL)) {
            try await builder.addDocument(fixture.credential, for: S.mDLRequest(docType: "org.iso.23220.photoid.1"),
                                          authentication: .signature(SoftwareSigner(fixture.deviceKey)))
        }
    }

    @Test("an issuer chain to an anchor that is not trusted is rejected")
    func untrustedIssuer() async throws {
        let fixture = try await Fixture.make()
        let stranger = try S.pki("Other IACA")
        await #expect { try await fixture.verify(anchors: [stranger.anchor]) } throws: { error in
            if case MdocError.untrustedIssuer = error { return true }
            return false
        }
    }

    @Test("a device signature made over another session transcript is rejected")
    func deviceSignatureOtherTranscript() async throws {
        let fixture = try await Fixture.make()
        let (other, _, _) = try S.transcript()
        await #expect(throws: MdocError.deviceAuthenticationFailed(.invalidSignature)) {
            try await fixture.verify(transcript: other)
        }
    }

    @Test("a deviceMac checked with another reader key is rejected, and without one it cannot be checked")
    func wrongMACKey() async throws {
        let fixture = try await Fixture.make(mac: true)
        try await fixture.verify()
        await #expect(throws: MdocError.deviceAuthenticationFailed(.invalidMAC)) {
            try await fixture.verify(eReaderKey: try ECPrivateKey.generate(curve: .p256))
        }
        await #expect(throws: MdocError.macKeyUnavailable) {
            _ = try await DeviceResponseVerifier(trustAnchors: [fixture.issuer.anchor], sessionTranscript: fixture.transcript)
                .verify(fixture.document, at: Date())
        }
    }

    @Test("a SessionData whose AES-GCM tag was altered fails with status 10, and the next genuine message still decrypts")
    func tagFailure() async throws {
        let keys = SessionKeys(skReader: SymmetricKey(bytes: Array(repeating: 1, count: 32)), skDevice: SymmetricKey(bytes: Array(repeating: 2, count: 32)))
        let (transcript, _, _) = try S.transcript()
        var reader = SessionEncryption(role: .reader, keys: keys, sessionTranscript: transcript)
        var mdoc = SessionEncryption(role: .mdoc, keys: keys, sessionTranscript: transcript)
        var message = try mdoc.encrypt([1, 2, 3])
        message[message.count - 1] ^= 0x01
        let tampered = message
        #expect(throws: MdocError.decryptionFailed(counter: 1)) { _ = try reader.decrypt(tampered) }
        #expect(MdocError.decryptionFailed(counter: 1).sessionStatus == .sessionEncryptionError)
        var fresh = SessionEncryption(role: .mdoc, keys: keys, sessionTranscript: transcript)
        let unchangedCopy = try fresh.encrypt([1, 2, 3])
        #expect(try reader.decrypt(unchangedCopy) == [1, 2, 3])
    }

    @Test("a replayed SessionData and one received out of order are rejected with status 10")
    func replayAndReorder() async throws {
        let keys = SessionKeys(skReader: SymmetricKey(bytes: Array(repeating: 3, count: 32)), skDevice: SymmetricKey(bytes: Array(repeating: 4, count: 32)))
        let (transcript, _, _) = try S.transcript()
        var reader = SessionEncryption(role: .reader, keys: keys, sessionTranscript: transcript)
        var mdoc = SessionEncryption(role: .mdoc, keys: keys, sessionTranscript: transcript)
        let first = try mdoc.encrypt(Array("one".utf8))
        let second = try mdoc.encrypt(Array("two".utf8))
        let third = try mdoc.encrypt(Array("three".utf8))
        #expect(try reader.decrypt(first) == Array("one".utf8))
        #expect(throws: MdocError.decryptionFailed(counter: 2)) { _ = try reader.decrypt(first) }   // replay
        #expect(throws: MdocError.decryptionFailed(counter: 2)) { _ = try reader.decrypt(third) }   // reordered
        #expect(try reader.decrypt(second) == Array("two".utf8))
        #expect(try reader.decrypt(third) == Array("three".utf8))
        // the reader's own direction is separate: its first message uses counter 1 and identifier 0
        let request = try reader.encrypt([9])
        #expect(try AESGCM.open(combined: request, key: keys.skReader, nonce: SessionEncryption.nonce(sender: .reader, counter: 1)) == [9])
        #expect(SessionEncryption.nonce(sender: .mdoc, counter: 258) == [0, 0, 0, 0, 0, 0, 0, 1, 0, 0, 1, 2])
    }

    @Test("reader authentication by a certificate outside the trusted readers is rejected; a tampered request fails its signature")
    func untrustedReader() async throws {
        let readerPKI = try S.pki("Reader", role: .reader)
        let stranger = try S.pki("Other reader root", role: .reader)
        let (transcript, _, _) = try S.transcript()
        let docRequest = try await DocRequest(itemsRequest: S.mDLRequest(),
                                              readerKey: ReaderAuthenticationKey(signer: readerPKI.signer, certificateChain: [readerPKI.leaf]),
                                              sessionTranscript: transcript)
        #expect(throws: MdocError.self) {
            try docRequest.verifyReaderAuthentication(sessionTranscript: transcript, trustAnchors: [stranger.anchor], at: Date())
        }
        do {
            try docRequest.verifyReaderAuthentication(sessionTranscript: transcript, trustAnchors: [stranger.anchor], at: Date())
        } catch {
            guard case .untrustedReader = error else { Issue.record("unexpected \(error)"); return }
        }
        #expect(docRequest.readerCertificate == readerPKI.leaf)
        let (other, _, _) = try S.transcript()
        #expect(throws: MdocError.readerAuthenticationFailed(.invalidSignature)) {
            try docRequest.verifyReaderAuthentication(sessionTranscript: other, trustAnchors: [readerPKI.anchor], at: Date())
        }
        #expect(throws: MdocError.readerAuthenticationMissing) {
            try DocRequest(itemsRequest: S.mDLRequest()).verifyReaderAuthentication(sessionTranscript: transcript,
                                                                                   trustAnchors: [readerPKI.anchor], at: Date())
        }
    }

    @Test("verifyReaderSignature checks readerAuth under its own certificate's key for this transcript, trusting nothing about the certificate")
    func readerSignatureOnly() async throws {
        let readerPKI = try S.pki("Reader", role: .reader)
        let (transcript, _, _) = try S.transcript()
        let docRequest = try await DocRequest(itemsRequest: S.mDLRequest(),
                                              readerKey: ReaderAuthenticationKey(signer: readerPKI.signer, certificateChain: [readerPKI.leaf]),
                                              sessionTranscript: transcript)
        #expect(try docRequest.verifyReaderSignature(sessionTranscript: transcript) == readerPKI.leaf)
        let (other, _, _) = try S.transcript()
        #expect(throws: MdocError.readerAuthenticationFailed(.invalidSignature)) {
            try docRequest.verifyReaderSignature(sessionTranscript: other)
        }
        #expect(throws: MdocError.readerAuthenticationMissing) {
            try DocRequest(itemsRequest: S.mDLRequest()).verifyReaderSignature(sessionTranscript: transcript)
        }
    }

    @Test("the holder refuses to device-sign elements that keyAuthorizations do not cover, and keys that are not the MSO's")
    func keyAuthorizationsRefusal() async throws {
        let fixture = try await Fixture.make()
        var builder = DeviceResponseBuilder(sessionTranscript: fixture.transcript)
        await #expect(throws: MdocError.notAuthorizedByKeyAuthorizations(nameSpace: S.mDLNameSpace, elementIdentifier: "nickname")) {
            try await builder.addDocument(fixture.credential, for: S.mDLRequest(),
                                          deviceNameSpaces: DeviceNameSpaces(nameSpaces: [NameSpaced(S.mDLNameSpace, [DataElement("nickname", "J")])]),
                                          authentication: .signature(SoftwareSigner(fixture.deviceKey)))
        }
        await #expect(throws: MdocError.deviceKeyMismatch) {
            try await builder.addDocument(fixture.credential, for: S.mDLRequest(),
                                          authentication: .signature(SoftwareSigner(try ECPrivateKey.generate(curve: .p256))))
        }
    }

    @Test("malformed messages give status 11, and a SessionData with status 20 ends the session")
    func statusCodes() async throws {
        #expect(throws: MdocError.self) { _ = try SessionEstablishment(encoded: [0xa1, 0x61]) }
        do { _ = try DeviceRequest(encoded: [0x83, 0x01]) } catch { #expect(error.sessionStatus == .cborDecodingError) }
        do { _ = try DeviceResponse(encoded: CBOR.map(CBORMap([("version", "1.0")])).encoded()) } catch {
            #expect(error == .malformed(MdocMalformation("DeviceResponse", .missingMember("status"))))
            #expect(error.sessionStatus == .cborDecodingError)
        }
        let keys = SessionKeys(skReader: SymmetricKey(bytes: Array(repeating: 5, count: 32)), skDevice: SymmetricKey(bytes: Array(repeating: 6, count: 32)))
        let (transcript, _, _) = try S.transcript()
        var reader = SessionEncryption(role: .reader, keys: keys, sessionTranscript: transcript)
        let end = try SessionData(encoded: SessionData(status: .sessionTermination).encodedBytes)
        #expect(end.status == .sessionTermination && end.data == nil)
        #expect(throws: MdocError.sessionTerminated) { _ = try reader.open(end) }
        #expect(throws: MdocError.sessionTerminated) { _ = try reader.encrypt([1]) }
        #expect(MdocError.sessionTerminated.sessionStatus == .sessionTermination)
        #expect(SessionData(data: [1], status: .sessionTermination).encodedBytes == Hex.decode("a26464617461410166737461747573 14".replacingOccurrences(of: " ", with: "")))
    }
}
