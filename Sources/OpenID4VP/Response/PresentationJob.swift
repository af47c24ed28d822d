import CBOR
import Foundation
import Mdoc
import SDJWT
import WalletCrypto
import WalletEncoding
import WalletStorage

/// One presentation to make: a credential answering a query, what it discloses, and
/// the transactions it authorises.
package struct PresentationJob: Sendable, Equatable {
    /// The Credential Query answered (the `vp_token` key).
    let queryId: String
    /// The stored credential presented.
    let credentialId: CredentialId
    /// Its format.
    let format: String
    /// The claims it discloses (SD-JWT claim paths, or mdoc `[namespace, element]`).
    let disclosedPaths: [ClaimPath]
    /// mdoc: the `intent_to_retain` of each claim requested, by namespace and element.
    let intentToRetain: [ClaimPath: Bool]
    /// Whether the presentation carries a holder-binding proof.
    let holderBound: Bool
    /// The transactions this presentation authorises.
    let transactionData: [TransactionData]
    /// mdoc: the device-signed elements that authorise them.
    let deviceSignedElements: [MdocTransactionDataElement]

    /// A job.
    package init(queryId: String, credentialId: CredentialId, format: String, disclosedPaths: [ClaimPath],
                 intentToRetain: [ClaimPath: Bool] = [:], holderBound: Bool, transactionData: [TransactionData] = [],
                 deviceSignedElements: [MdocTransactionDataElement] = []) {
        self.queryId = queryId
        self.credentialId = credentialId
        self.format = format
        self.disclosedPaths = disclosedPaths
        self.intentToRetain = intentToRetain
        self.holderBound = holderBound
        self.transactionData = transactionData
        self.deviceSignedElements = deviceSignedElements
    }
}

/// What every presentation of one response binds to.
package struct PresentationContext: Sendable, Equatable {
    /// The KB-JWT audience: the client identifier, or `origin:<origin>`.
    let audience: String
    /// The verifier's nonce.
    let nonce: String
    /// When the presentations are made (the KB-JWT `iat`).
    let issuedAt: Date
    /// The mdoc SessionTranscript (OpenID4VP 1.0 App. B.2.6).
    let sessionTranscript: SessionTranscript

    /// A context.
    package init(audience: String, nonce: String, issuedAt: Date, sessionTranscript: SessionTranscript) {
        self.audience = audience
        self.nonce = nonce
        self.issuedAt = issuedAt
        self.sessionTranscript = sessionTranscript
    }
}

/// Makes presentations from consumed credential instances: the signing half of the
/// response, which the driver runs because signers are asynchronous.
package enum PresentationBuilder {
    /// The presentation `job` asks for, from `instance` (its bytes and holder key).
    /// - Returns: the `vp_token` entry: an SD-JWT(+KB) string or a base64url DeviceResponse.
    package static func present(_ job: PresentationJob, instance: ConsumedInstance,
                                context: PresentationContext) async throws(PresentationError) -> String {
        switch job.format {
        case DcqlFormat.sdJwtVc:
            return try await sdJwt(job, raw: instance.instance.raw, signer: instance.signer, context: context)
        case DcqlFormat.msoMdoc:
            return try await mdoc(job, raw: instance.instance.raw, signer: instance.signer, context: context)
        default:
            throw .unexpected(.unreadableCredential(job.credentialId))
        }
    }

    /// An SD-JWT VC presentation (OpenID4VP 1.0 App. B.3.6): the disclosures the paths
    /// need and, unless the verifier waived holder binding, a KB-JWT to the audience and
    /// nonce with the hashes of the transactions it authorises.
    package static func sdJwt(_ job: PresentationJob, raw: [UInt8], signer: any Signer,
                      context: PresentationContext) async throws(PresentationError) -> String {
        guard let text = UTF8Validation.string(raw) else { throw .unexpected(.unreadableCredential(job.credentialId)) }
        // The request was refused before consent unless the transactions a query may
        // authorise share a hash (ResolvedRequest), and a job's all name its query.
        guard let algorithm = TransactionData.commonHashAlgorithm(job.transactionData) else {
            throw .invalidRequest(.invalidTransactionData(.unsupportedHashAlgorithm(job.transactionData.flatMap { $0.hashAlgorithms ?? [] })))
        }
        do {
            let credential = try SDJWT(compact: text)
            guard job.holderBound else { return try credential.presentation(disclosing: job.disclosedPaths).serialization }
            let parameters = KeyBindingParameters(audience: context.audience, nonce: context.nonce, issuedAt: context.issuedAt,
                                                  transactionData: job.transactionData.map(\.encoded),
                                                  transactionDataHashAlgorithm: algorithm)
            return try await credential.presentation(disclosing: job.disclosedPaths, keyBinding: parameters, signer: signer)
                .serialization
        } catch {
            throw .unexpected(.from(error))
        }
    }

    /// An mdoc presentation (OpenID4VP 1.0 App. B.2.5): a DeviceResponse with the
    /// requested elements and a device signature over the OpenID4VP SessionTranscript,
    /// device-signing the transaction elements.
    package static func mdoc(_ job: PresentationJob, raw: [UInt8], signer: any Signer,
                     context: PresentationContext) async throws(PresentationError) -> String {
        let credential: IssuerSigned
        do { credential = try IssuerSigned(encoded: raw) } catch { throw .unexpected(.unreadableCredential(job.credentialId)) }
        var requested: [(nameSpace: String, elements: [RequestedElement])] = []
        for path in job.disclosedPaths {
            guard path.elements.count == 2, case .key(let nameSpace) = path.elements[0],
                  case .key(let element) = path.elements[1] else { continue }
            let entry = RequestedElement(identifier: element, intentToRetain: job.intentToRetain[path] ?? false)
            if let index = requested.firstIndex(where: { $0.nameSpace == nameSpace }) {
                requested[index].elements.append(entry)
            } else {
                requested.append((nameSpace, [entry]))
            }
        }
        let nameSpaces = requested.map { NameSpaced(nameSpace: $0.nameSpace, elements: $0.elements) }
        var deviceSigned: [(nameSpace: String, elements: [DataElement])] = []
        for element in job.deviceSignedElements {
            let entry = DataElement(identifier: element.elementIdentifier, value: element.value)
            if let index = deviceSigned.firstIndex(where: { $0.nameSpace == element.nameSpace }) {
                deviceSigned[index].elements.append(entry)
            } else {
                deviceSigned.append((element.nameSpace, [entry]))
            }
        }
        let signed = deviceSigned.map { NameSpaced(nameSpace: $0.nameSpace, elements: $0.elements) }
        let request = ItemsRequest(docType: credential.mobileSecurityObject.docType, nameSpaces: nameSpaces)
        var builder = DeviceResponseBuilder(sessionTranscript: context.sessionTranscript)
        do {
            try await builder.addDocument(credential, for: request, deviceNameSpaces: DeviceNameSpaces(nameSpaces: signed),
                                          authentication: .signature(signer))
        } catch {
            if case .notAuthorizedByKeyAuthorizations(let nameSpace, let element) = error {
                throw .invalidRequest(.invalidTransactionData(.notAuthorizedByKeyAuthorizations(
                    nameSpace: nameSpace, elementIdentifier: element)))
            }
            throw .unexpected(.from(error))
        }
        return Base64URL.encode(builder.build().encodedBytes)
    }
}
