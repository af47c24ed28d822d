import CBOR
import COSE
import Foundation
import Mdoc
import Testing
import WalletCrypto

/// What the reader refuses besides bad signatures (issue 12): an `alg` the signature or
/// MAC does not cover, and responses that report a failure or carry nothing.
@Suite("mdoc reader strictness")
struct ReaderStrictnessTests {
    typealias S = MdocTestSupport

    /// An issuer, a holder key, a credential and a session.
    struct Setup {
        let issuer: S.PKI
        let deviceKey: ECPrivateKey
        let credential: IssuerSigned
        let transcript: SessionTranscript
        let eReaderKey: ECPrivateKey

        static func make() async throws -> Setup {
            let issuer = try S.pki("IACA")
            let deviceKey = try ECPrivateKey.generate(curve: .p256)
            let credential = try await S.issueMDL(issuer: issuer, deviceKey: deviceKey.publicKey)
            let (transcript, _, eReaderKey) = try S.transcript()
            return Setup(issuer: issuer, deviceKey: deviceKey, credential: credential, transcript: transcript, eReaderKey: eReaderKey)
        }

        func verify(_ response: DeviceResponse) async throws(MdocError) -> VerifiedResponse {
            try await DeviceResponseVerifier(trustAnchors: [issuer.anchor], sessionTranscript: transcript,
                                   eReaderKey: SoftwareKeyAgreement(eReaderKey))
                .verify(response, at: Date())
        }

        /// A document of `issuerSigned` whose deviceAuth the test builds.
        func document(issuerSigned: IssuerSigned? = nil, deviceAuth: DeviceAuth) -> Document {
            Document(docType: S.mDL, issuerSigned: issuerSigned ?? credential, deviceSigned: DeviceSigned(nameSpaces: .empty, deviceAuth: deviceAuth))
        }

        var deviceAuthenticationBytes: [UInt8] {
            DeviceSigned.deviceAuthenticationBytes(sessionTranscript: transcript, docType: S.mDL, nameSpaces: .empty)
        }

        func deviceSignature(unprotectedAlgorithm: Bool) async throws -> DeviceAuth {
            let unprotected = unprotectedAlgorithm ? COSEHeaderMap([(.algorithm, CBOR(COSEAlgorithm.es256.rawValue))]) : COSEHeaderMap()
            return .signature(try await COSESign1.sign(payload: deviceAuthenticationBytes, detached: true, unprotected: unprotected,
                                                       tagged: false, signer: SoftwareSigner(deviceKey)))
        }

        func deviceMac(unprotectedAlgorithm: Bool) async throws -> DeviceAuth {
            let key = try await SessionKeys.eMacKey(privateKey: SoftwareKeyAgreement(deviceKey), peerPublicKey: eReaderKey.publicKey, sessionTranscript: transcript)
            let unprotected = unprotectedAlgorithm ? COSEHeaderMap([(.algorithm, CBOR(COSEAlgorithm.hmac256.rawValue))]) : COSEHeaderMap()
            return .mac(try COSEMac0.create(payload: deviceAuthenticationBytes, detached: true, key: key, algorithm: .hmac256,
                                            unprotected: unprotected, tagged: false))
        }
    }

    @Test("deviceSignature and deviceMac with alg protected verify (control)")
    func protectedControl() async throws {
        let setup = try await Setup.make()
        for auth in [try await setup.deviceSignature(unprotectedAlgorithm: false), try await setup.deviceMac(unprotectedAlgorithm: false)] {
            let verified = try await setup.verify(DeviceResponse(documents: [setup.document(deviceAuth: auth)]))
            #expect(verified.documents.count == 1)
        }
    }

    @Test("a deviceSignature with alg only in the unprotected bucket is deviceAuthenticationFailed(algorithmNotProtected)")
    func deviceSignatureAlgorithmUnprotected() async throws {
        let setup = try await Setup.make()
        let auth = try await setup.deviceSignature(unprotectedAlgorithm: true)
        guard case .signature(let signature) = auth else { Issue.record("not a signature"); return }
        #expect(signature.headers.protected.isEmpty && signature.headers.unprotected[.algorithm] != nil)
        // The signature itself is good: only where alg sits is wrong.
        try signature.verify(publicKey: .ec(setup.deviceKey.publicKey), detachedPayload: setup.deviceAuthenticationBytes)
        await #expect(throws: MdocError.deviceAuthenticationFailed(.algorithmNotProtected)) {
            try await setup.verify(DeviceResponse(documents: [setup.document(deviceAuth: auth)]))
        }
    }

    @Test("a deviceMac with alg only in the unprotected bucket is deviceAuthenticationFailed(algorithmNotProtected)")
    func deviceMacAlgorithmUnprotected() async throws {
        let setup = try await Setup.make()
        let auth = try await setup.deviceMac(unprotectedAlgorithm: true)
        await #expect(throws: MdocError.deviceAuthenticationFailed(.algorithmNotProtected)) {
            try await setup.verify(DeviceResponse(documents: [setup.document(deviceAuth: auth)]))
        }
    }

    @Test("an issuerAuth with alg only in the unprotected bucket is issuerSignatureInvalid(algorithmNotProtected)")
    func issuerAuthAlgorithmUnprotected() async throws {
        let setup = try await Setup.make()
        let original = setup.credential.issuerAuth
        let unprotected = COSEHeaderMap([(.algorithm, CBOR(COSEAlgorithm.es256.rawValue)), (.x5chain, .byteString(setup.issuer.leaf.derEncoded))])
        let issuerAuth = try await COSESign1.sign(payload: try #require(original.payload), unprotected: unprotected, tagged: false,
                                                  signer: setup.issuer.signer)
        #expect(issuerAuth.headers.protected.isEmpty)
        let issuerSigned = try IssuerSigned(nameSpaces: setup.credential.nameSpaces, issuerAuth: issuerAuth)
        let auth = try await setup.deviceSignature(unprotectedAlgorithm: false)
        await #expect(throws: MdocError.issuerSignatureInvalid(.algorithmNotProtected)) {
            try await setup.verify(DeviceResponse(documents: [setup.document(issuerSigned: issuerSigned, deviceAuth: auth)]))
        }
    }

    @Test("a readerAuth with alg only in the unprotected bucket is readerAuthenticationFailed(algorithmNotProtected)")
    func readerAuthAlgorithmUnprotected() async throws {
        let reader = try S.pki("Reader", role: .reader)
        let (transcript, _, _) = try S.transcript()
        let itemsRequest = S.mDLRequest()
        let payload = DocRequest.readerAuthenticationBytes(sessionTranscript: transcript, itemsRequest: itemsRequest)
        let readerAuth = try await COSESign1.sign(
            payload: payload, detached: true,
            unprotected: COSEHeaderMap([(.algorithm, CBOR(COSEAlgorithm.es256.rawValue)), (.x5chain, .byteString(reader.leaf.derEncoded))]),
            tagged: false, signer: reader.signer)
        // A DocRequest as a reader would send it: {itemsRequest, readerAuth}.
        var splice = CBORMap()
        splice.append(key: "itemsRequest", value: .tagged(24, .byteString(itemsRequest.encodedBytes)))
        splice.append(key: "readerAuth", value: readerAuth.cbor)
        let request = try DeviceRequest(encoded: CBOR.map(CBORMap([("version", "1.0"), ("docRequests", .array([.map(splice)]))])).encoded())
        #expect(throws: MdocError.readerAuthenticationFailed(.algorithmNotProtected)) {
            try request.docRequests[0].verifyReaderAuthentication(sessionTranscript: transcript, trustAnchors: [reader.anchor], at: Date())
        }
    }

    @Test("a DeviceResponse whose status is not 0 is responseStatusNotOK with its document errors, even with documents")
    func statusNotOK() async throws {
        let setup = try await Setup.make()
        let auth = try await setup.deviceSignature(unprotectedAlgorithm: false)
        let errors = [DocumentError(docType: "org.iso.23220.photoid.1", code: 0)]
        for status in [DeviceResponse.Status.generalError, .cborDecodingError, .cborValidationError, .init(rawValue: 1)] {
            let response = DeviceResponse(documents: [setup.document(deviceAuth: auth)], documentErrors: errors, status: status)
            await #expect(throws: MdocError.responseStatusNotOK(status: status, documentErrors: errors)) {
                try await setup.verify(DeviceResponse(encoded: response.encodedBytes))
            }
        }
    }

    @Test("a DeviceResponse with status 0 and no documents is noDocumentsReturned, not a verified empty response")
    func noDocuments() async throws {
        let setup = try await Setup.make()
        let errors = [DocumentError(docType: S.mDL, code: 0)]
        await #expect(throws: MdocError.noDocumentsReturned(documentErrors: errors)) {
            try await setup.verify(DeviceResponse(encoded: DeviceResponse(documents: [], documentErrors: errors).encodedBytes))
        }
        await #expect(throws: MdocError.noDocumentsReturned(documentErrors: [])) {
            try await setup.verify(DeviceResponse(documents: []))
        }
    }
}
