import Mdoc
import WalletCrypto

/// Supplies the credentials that answer a DeviceRequest, how each authenticates, and
/// what the user agreed to release.
///
/// Nothing leaves the wallet without an explicit selection: ``consent(for:)`` has no
/// default, and an element the selection does not name is reported to the reader as
/// not returned (ISO 18013-5 §8.3.2.1.2.2, error code 0), never sent. A requested
/// document the selection releases nothing of is not sent at all (a DocumentError).
public protocol MdocDocumentProvider: Sendable {
    /// The stored credentials that may answer `request` (the first per docType is used).
    func credentials(for request: DeviceRequest) async throws(DocumentProviderError) -> [IssuerSigned]
    /// How `credential` authenticates (device signature or MAC).
    func authentication(for credential: IssuerSigned) -> DeviceAuthenticationMethod
    /// The elements the user chose to release for `request`.
    func consent(for request: DeviceRequest) async throws(DocumentProviderError) -> ConsentSelection
}

/// A failure of the app's document provider, as a value the session carries to the app
/// unchanged (in ``ResponseFailure/provider(_:)``).
public enum DocumentProviderError: Error, Hashable, Sendable {
    /// No stored credential can answer the request.
    case noMatchingCredential
    /// The store could not be read (locked, unavailable).
    case storeUnavailable
    /// The user cancelled (for example the consent sheet or an unlock prompt).
    case userCancelled
    /// The user must authenticate before the credentials can be used.
    case authenticationRequired
    /// Any other failure, identified by the app's own code.
    case failed(code: Int)
}

/// One element of one document: the unit a user releases.
public struct ReleasedElement: Hashable, Sendable {
    /// The document type, e.g. `org.iso.18013.5.1.mDL`.
    public var docType: String
    /// The namespace, e.g. `org.iso.18013.5.1`.
    public var nameSpace: String
    /// The element identifier, e.g. `age_over_18`.
    public var identifier: String

    /// Names one element.
    public init(docType: String, nameSpace: String, identifier: String) {
        self.docType = docType
        self.nameSpace = nameSpace
        self.identifier = identifier
    }
}

/// The elements a user agreed to release: an explicit set, never "whatever was asked".
public struct ConsentSelection: Hashable, Sendable {
    /// The released elements.
    public var elements: Set<ReleasedElement>

    /// A selection of exactly `elements`.
    public init(elements: Set<ReleasedElement>) { self.elements = elements }

    /// Releases nothing (every requested document is answered with a DocumentError).
    public static let nothing = ConsentSelection(elements: [])

    /// Every element `request` asks for: for a screen where the user confirmed the
    /// request as shown.
    public static func everythingRequested(by request: DeviceRequest) -> ConsentSelection {
        var elements = Set<ReleasedElement>()
        for docRequest in request.docRequests {
            let items = docRequest.itemsRequest
            for space in items.nameSpaces {
                for element in space.elements {
                    elements.insert(ReleasedElement(docType: items.docType, nameSpace: space.nameSpace, identifier: element.identifier))
                }
            }
        }
        return ConsentSelection(elements: elements)
    }

    /// Whether the selection releases the element.
    public func releases(docType: String, nameSpace: String, identifier: String) -> Bool {
        elements.contains(ReleasedElement(docType: docType, nameSpace: nameSpace, identifier: identifier))
    }

    /// The selection by docType and namespace, the shape `DeviceResponseBuilder` takes:
    /// a docType has an entry only when the selection releases an element that one of
    /// its document requests asks for, and the entry holds only such elements. Any other
    /// requested docType is declined as a whole (a DocumentError): a document with no
    /// element would still show the reader the credential's issuerAuth (its issuer,
    /// validity and device key) and a fresh device signature, which the user did not
    /// release. Linear in the sizes of the request and the selection.
    public func byDocType(for request: DeviceRequest) -> [String: [String: Set<String>]] {
        let requested = Self.everythingRequested(by: request).elements
        var result: [String: [String: Set<String>]] = [:]
        for element in elements where requested.contains(element) {
            result[element.docType, default: [:]][element.nameSpace, default: []].insert(element.identifier)
        }
        return result
    }
}

/// A provider over a fixed list of credentials that share one device-key signer
/// (tests, demos, simple apps). Its consent is the closure it is given: there is no
/// default that releases what was requested.
public struct StaticDocumentProvider: MdocDocumentProvider {
    /// The credentials.
    public let documents: [IssuerSigned]
    /// The device key signer for all of them.
    public let signer: any Signer
    private let select: @Sendable (DeviceRequest) -> ConsentSelection

    /// A provider whose user selects `consent(request)` for each request.
    public init(documents: [IssuerSigned], signer: any Signer,
                consent: @escaping @Sendable (DeviceRequest) -> ConsentSelection) {
        self.documents = documents
        self.signer = signer
        self.select = consent
    }

    /// All documents.
    public func credentials(for request: DeviceRequest) async throws(DocumentProviderError) -> [IssuerSigned] { documents }

    /// A device signature by ``signer``.
    public func authentication(for credential: IssuerSigned) -> DeviceAuthenticationMethod { .signature(signer) }

    /// The selection the closure gives for `request`.
    public func consent(for request: DeviceRequest) async throws(DocumentProviderError) -> ConsentSelection { select(request) }
}
