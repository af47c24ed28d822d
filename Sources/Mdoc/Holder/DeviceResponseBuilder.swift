import CBOR
import COSE
import WalletCrypto

/// How the mdoc authenticates a document it returns (ISO 18013-5 §9.1.3).
public enum DeviceAuthenticationMethod: Sendable {
    /// deviceSignature: COSE_Sign1 by the device key (the MSO's deviceKey).
    case signature(any Signer)
    /// deviceMac: COSE_Mac0 (HMAC 256/256) under EMacKey, agreed between the device key
    /// and the reader's ephemeral key.
    case mac(deviceKey: any KeyAgreement, eReaderKey: ECPublicKey)
}

/// Builds a DeviceResponse on the holder's side: for each request, only the elements
/// both requested and consented to, as the original IssuerSignedItemBytes, with device
/// authentication over the session transcript.
public struct DeviceResponseBuilder: Sendable {
    /// The transcript the device authentication binds to.
    public let sessionTranscript: SessionTranscript
    /// The documents added so far.
    public private(set) var documents: [Document] = []
    /// The document errors added so far.
    public private(set) var documentErrors: [DocumentError] = []

    /// A builder for one response in the session identified by `sessionTranscript`.
    public init(sessionTranscript: SessionTranscript) {
        self.sessionTranscript = sessionTranscript
    }

    /// Adds a document answering `request` from the stored `credential`.
    /// - Parameters:
    ///   - consented: the elements the user agreed to release, by namespace; nil means
    ///     everything requested. Requested elements not returned are listed in the
    ///     document's `errors` with code 0.
    ///   - deviceNameSpaces: elements the device signs itself; each must be covered by the
    ///     MSO's keyAuthorizations.
    /// - Throws: `docTypeMismatch`, `notAuthorizedByKeyAuthorizations`, `deviceKeyMismatch`,
    ///   `keyOperation` (the signer's or key agreement's own failure, such as a cancelled
    ///   prompt, unchanged), `cose`, `crypto`.
    public mutating func addDocument(_ credential: IssuerSigned, for request: ItemsRequest,
                                     consented: [String: Set<String>]? = nil,
                                     deviceNameSpaces: DeviceNameSpaces = .empty,
                                     authentication: DeviceAuthenticationMethod) async throws(MdocError) {
        let mso = credential.mobileSecurityObject
        guard request.docType == mso.docType else { throw .docTypeMismatch(expected: request.docType, actual: mso.docType) }
        // ISO 18013-5 §9.1.2.4: the device key may sign only what keyAuthorizations allow.
        for space in deviceNameSpaces.nameSpaces {
            for element in space.elements
            where mso.keyAuthorizations?.authorizes(nameSpace: space.nameSpace, elementIdentifier: element.identifier) != true {
                throw .notAuthorizedByKeyAuthorizations(nameSpace: space.nameSpace, elementIdentifier: element.identifier)
            }
        }
        var disclosed: [NameSpaced<IssuerSignedItemBytes>] = []
        var errors: [NameSpaced<ElementError>] = []
        for requestedSpace in request.nameSpaces {
            let nameSpace = requestedSpace.nameSpace
            // By identifier (the first of each), so that the work stays linear in a
            // request of many elements.
            let available = Dictionary(credential.items(in: nameSpace).map { ($0.item.elementIdentifier, $0) },
                                       uniquingKeysWith: { first, _ in first })
            var items: [IssuerSignedItemBytes] = []
            var missing: [ElementError] = []
            for identifier in requestedSpace.elements.map(\.identifier) {
                let allowed = consented.map { $0[nameSpace]?.contains(identifier) == true } ?? true
                if allowed, let item = available[identifier] {
                    items.append(item)
                } else if !deviceNameSpaces.nameSpaces.contains(where: { space in
                    space.nameSpace == nameSpace && space.elements.contains { $0.identifier == identifier }
                }) {
                    missing.append(ElementError(identifier: identifier, code: 0))
                }
            }
            if !items.isEmpty { disclosed.append(NameSpaced(nameSpace: nameSpace, elements: items)) }
            if !missing.isEmpty { errors.append(NameSpaced(nameSpace: nameSpace, elements: missing)) }
        }
        let issuerSigned = credential.disclosing(disclosed)
        let payload = DeviceSigned.deviceAuthenticationBytes(sessionTranscript: sessionTranscript, docType: mso.docType,
                                                             nameSpaces: deviceNameSpaces)
        let deviceKey = try mso.devicePublicKey()
        let deviceAuth: DeviceAuth
        switch authentication {
        case .signature(let signer):
            guard signer.publicKey == deviceKey else { throw .deviceKeyMismatch }
            do {
                deviceAuth = .signature(try await COSESign1.sign(payload: payload, detached: true, tagged: false, signer: signer))
            } catch .keyOperation(let failure) {
                throw .keyOperation(failure)
            } catch {
                throw .cose(error)
            }
        case .mac(let agreementKey, let eReaderKey):
            guard deviceKey == .ec(agreementKey.publicKey) else { throw .deviceKeyMismatch }
            let key = try await SessionKeys.eMacKey(privateKey: agreementKey, peerPublicKey: eReaderKey,
                                                    sessionTranscript: sessionTranscript)
            do {
                deviceAuth = .mac(try COSEMac0.create(payload: payload, detached: true, key: key, algorithm: .hmac256, tagged: false))
            } catch {
                throw .cose(error)
            }
        }
        documents.append(Document(docType: mso.docType, issuerSigned: issuerSigned,
                                  deviceSigned: DeviceSigned(nameSpaces: deviceNameSpaces, deviceAuth: deviceAuth),
                                  errors: errors))
    }

    /// Records a requested document type that is not returned (code 0: data not returned).
    public mutating func addDocumentError(docType: String, code: Int = 0) {
        documentErrors.append(DocumentError(docType: docType, code: code))
    }

    /// The response with everything added.
    public func build(status: DeviceResponse.Status = .ok) -> DeviceResponse {
        DeviceResponse(documents: documents, documentErrors: documentErrors, status: status)
    }

    /// Answers a whole DeviceRequest: each DocRequest is served by the first credential of
    /// its docType, or becomes a document error when there is none or the user declined it.
    /// - Parameters:
    ///   - consented: by docType, the elements released (see `addDocument`); a docType
    ///     absent from a non-nil map is declined. Nil releases everything requested.
    ///   - authentication: the device authentication for a credential.
    public static func respond(to request: DeviceRequest, with credentials: [IssuerSigned],
                               sessionTranscript: SessionTranscript,
                               consented: [String: [String: Set<String>]]? = nil,
                               authentication: @Sendable (IssuerSigned) -> DeviceAuthenticationMethod)
        async throws(MdocError) -> DeviceResponse {
        var builder = DeviceResponseBuilder(sessionTranscript: sessionTranscript)
        for docRequest in request.docRequests {
            let docType = docRequest.itemsRequest.docType
            let released = consented.map { $0[docType] }
            guard let credential = credentials.first(where: { $0.mobileSecurityObject.docType == docType }),
                  released != .some(nil) else {
                builder.addDocumentError(docType: docType)
                continue
            }
            try await builder.addDocument(credential, for: docRequest.itemsRequest, consented: released ?? nil,
                                          authentication: authentication(credential))
        }
        return builder.build()
    }
}
