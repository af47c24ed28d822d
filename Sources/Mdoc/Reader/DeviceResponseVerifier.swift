import CBOR
import COSE
import Foundation
import WalletCrypto

/// A document whose issuer data and device authentication were verified.
public struct VerifiedDocument: Sendable {
    /// How the device authenticated the document.
    public enum DeviceAuthKind: String, Sendable, Hashable {
        /// deviceSignature.
        case signature
        /// deviceMac.
        case mac
    }
    /// The document type.
    public let docType: String
    /// Issuer-signed elements whose digests matched, by namespace, in received order.
    public let issuerSigned: [NameSpaced<DataElement>]
    /// Device-signed elements (authenticated by the device, authorized by keyAuthorizations).
    public let deviceSigned: [NameSpaced<DataElement>]
    /// The verified MSO.
    public let mobileSecurityObject: MobileSecurityObject
    /// The validated issuer chain: the document signer certificate, up to the IACA anchor.
    public let issuerChain: ValidatedChain
    /// How the device authenticated.
    public let deviceAuthentication: DeviceAuthKind
    /// Elements the mdoc reported as not returned.
    public let errors: [NameSpaced<ElementError>]

    /// The verified value of one issuer-signed element.
    public func value(nameSpace: String, identifier: String) -> CBOR? {
        issuerSigned.first { $0.nameSpace == nameSpace }?.elements.first { $0.identifier == identifier }?.value
    }
}

/// A DeviceResponse whose every document verified.
public struct VerifiedResponse: Sendable {
    /// The verified documents.
    public let documents: [VerifiedDocument]
    /// Document types the mdoc did not return.
    public let documentErrors: [DocumentError]
    /// The response status.
    public let status: DeviceResponse.Status
}

/// Verifies DeviceResponses on the reader's side (ISO 18013-5 §9.3.1): the issuer
/// signature and its chain to IACA anchors under the document signer policy (also at the
/// MSO's signing time), every digest, the validity window, docType consistency, and the
/// device signature or MAC over this session's transcript.
public struct DeviceResponseVerifier: Sendable {
    /// The trusted IACA certificates.
    public let trustAnchors: [X509Certificate]
    /// What the issuerAuth certificate must be trusted for; the verifier adds that it was
    /// valid when the MSO was signed.
    public let issuerPolicy: X509TrustPolicy
    /// The session the device authentication must be bound to.
    public let sessionTranscript: SessionTranscript
    /// The reader's ephemeral key, needed for deviceMac.
    public let eReaderKey: (any KeyAgreement)?

    /// A verifier for one session; `issuerPolicy` is the ISO 18013-5 document signer
    /// profile under an IACA unless the caller asks for another.
    public init(trustAnchors: [X509Certificate], sessionTranscript: SessionTranscript, eReaderKey: (any KeyAgreement)? = nil,
                issuerPolicy: X509TrustPolicy = .mdocDocumentSigner) {
        self.trustAnchors = trustAnchors
        self.issuerPolicy = issuerPolicy
        self.sessionTranscript = sessionTranscript
        self.eReaderKey = eReaderKey
    }

    /// Verifies every document of `response` at `time`.
    ///
    /// A response whose status is not OK, or that returns no document, is not a verified
    /// response: it fails with the status and the document errors the mdoc reported.
    /// - Throws: `responseStatusNotOK`, `noDocumentsReturned`, or the first failure of a
    ///   document, as a typed `MdocError`.
    public func verify(_ response: DeviceResponse, at time: Date) async throws(MdocError) -> VerifiedResponse {
        // ISO 18013-5 §8.3.2.1.2.3: status 0 is OK; 10, 11, 12 report that the request failed.
        guard response.status == .ok else {
            throw .responseStatusNotOK(status: response.status, documentErrors: response.documentErrors)
        }
        guard !response.documents.isEmpty else { throw .noDocumentsReturned(documentErrors: response.documentErrors) }
        var documents: [VerifiedDocument] = []
        for document in response.documents { documents.append(try await verify(document, at: time)) }
        return VerifiedResponse(documents: documents, documentErrors: response.documentErrors, status: response.status)
    }

    /// Verifies one document at `time`.
    /// - Throws: `untrustedIssuer`, `issuerSignatureInvalid`, `docTypeMismatch`,
    ///   `msoNotYetValid`, `msoExpired`, `unknownDigestID`, `duplicateDigestID`,
    ///   `digestMismatch`, `notAuthorizedByKeyAuthorizations`, `macKeyUnavailable`,
    ///   `deviceAuthenticationFailed`.
    public func verify(_ document: Document, at time: Date) async throws(MdocError) -> VerifiedDocument {
        let issuerSigned = document.issuerSigned
        let mso = issuerSigned.mobileSecurityObject
        // The document signer must have been valid when it signed the MSO, as well as now.
        let policy = issuerPolicy + X509TrustPolicy([.leafValid(at: mso.validityInfo.signed)])
        let chain: ValidatedChain
        do {
            // §9.1.2.4: alg is a protected header of issuerAuth.
            chain = try issuerSigned.issuerAuth.verify(trustAnchors: trustAnchors, at: time, policy: policy,
                                                       requireProtectedAlgorithm: true)
        } catch .untrusted(let failure) {
            throw .untrustedIssuer(failure)
        } catch {
            throw .issuerSignatureInvalid(error)
        }
        guard document.docType == mso.docType else { throw .docTypeMismatch(expected: mso.docType, actual: document.docType) }
        guard time >= mso.validityInfo.validFrom else { throw .msoNotYetValid(validFrom: mso.validityInfo.validFrom, at: time) }
        guard time <= mso.validityInfo.validUntil else { throw .msoExpired(validUntil: mso.validityInfo.validUntil, at: time) }

        let hash = try mso.hashAlgorithm()
        var elements: [NameSpaced<DataElement>] = []
        for space in issuerSigned.nameSpaces {
            let nameSpace = space.nameSpace
            var seen = Set<UInt64>()
            var list: [DataElement] = []
            for item in space.elements {
                let id = item.item.digestID
                guard let expected = mso.valueDigests[nameSpace]?[id] else { throw .unknownDigestID(nameSpace: nameSpace, digestID: id) }
                guard seen.insert(id).inserted else { throw .duplicateDigestID(nameSpace: nameSpace, digestID: id) }
                guard ConstantTime.equals(item.digest(hash), expected) else {
                    throw .digestMismatch(nameSpace: nameSpace, elementIdentifier: item.item.elementIdentifier, digestID: id)
                }
                list.append(DataElement(identifier: item.item.elementIdentifier, value: item.item.elementValue))
            }
            elements.append(NameSpaced(nameSpace: nameSpace, elements: list))
        }

        let deviceNameSpaces = document.deviceSigned.nameSpaces
        for space in deviceNameSpaces.nameSpaces {
            for element in space.elements
            where mso.keyAuthorizations?.authorizes(nameSpace: space.nameSpace, elementIdentifier: element.identifier) != true {
                throw .notAuthorizedByKeyAuthorizations(nameSpace: space.nameSpace, elementIdentifier: element.identifier)
            }
        }
        let payload = DeviceSigned.deviceAuthenticationBytes(sessionTranscript: sessionTranscript, docType: document.docType,
                                                             nameSpaces: deviceNameSpaces)
        let deviceKey = try mso.devicePublicKey()
        let kind: VerifiedDocument.DeviceAuthKind
        switch document.deviceSigned.deviceAuth {
        case .signature(let signature):
            // §9.1.3.6: alg is a protected header of deviceSignature.
            do { try signature.verify(publicKey: deviceKey, detachedPayload: payload, requireProtectedAlgorithm: true) } catch {
                throw .deviceAuthenticationFailed(error)
            }
            kind = .signature
        case .mac(let mac):
            guard let eReaderKey else { throw .macKeyUnavailable }
            guard case .ec(let deviceECKey) = deviceKey else { throw .deviceAuthenticationFailed(.algorithmKeyMismatch) }
            // ISO 18013-5 §9.1.3.5: deviceMac is HMAC SHA-256 with a 256-bit tag, its alg protected.
            let algorithm: COSEAlgorithm
            do { algorithm = try mac.headers.algorithm(requireProtected: true) } catch { throw .deviceAuthenticationFailed(error) }
            guard algorithm == .hmac256 else { throw .deviceAuthenticationFailed(.algorithmKeyMismatch) }
            let key = try await SessionKeys.eMacKey(privateKey: eReaderKey, peerPublicKey: deviceECKey,
                                                    sessionTranscript: sessionTranscript)
            do { try mac.verify(key: key, detachedPayload: payload, requireProtectedAlgorithm: true) } catch {
                throw .deviceAuthenticationFailed(error)
            }
            kind = .mac
        }
        return VerifiedDocument(docType: document.docType, issuerSigned: elements, deviceSigned: deviceNameSpaces.nameSpaces,
                                mobileSecurityObject: mso, issuerChain: chain, deviceAuthentication: kind,
                                errors: document.errors)
    }
}
