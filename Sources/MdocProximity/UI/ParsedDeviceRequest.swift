import Mdoc

/// A DeviceRequest reduced to what a consent screen shows (ISO 18013-5 §8.3.2.1.2.1).
public struct ParsedDeviceRequest: Hashable, Sendable {
    /// One requested document.
    public struct Document: Hashable, Sendable {
        /// The requested docType, e.g. `org.iso.18013.5.1.mDL`.
        public let docType: String
        /// Requested element identifiers per namespace, in request order.
        public let nameSpaces: [(String, [String])]
        /// Per namespace and element, whether the reader intends to retain it.
        public let intentToRetain: [String: [String: Bool]]
        /// Whether the request carried reader authentication.
        public let hasReaderAuth: Bool

        /// Equality over every field.
        public static func == (lhs: Document, rhs: Document) -> Bool {
            lhs.docType == rhs.docType && lhs.intentToRetain == rhs.intentToRetain
                && lhs.hasReaderAuth == rhs.hasReaderAuth
                && lhs.nameSpaces.map(\.0) == rhs.nameSpaces.map(\.0)
                && lhs.nameSpaces.map(\.1) == rhs.nameSpaces.map(\.1)
        }

        /// Hashes the docType and namespaces.
        public func hash(into hasher: inout Hasher) {
            hasher.combine(docType)
            for (namespace, elements) in nameSpaces { hasher.combine(namespace); hasher.combine(elements) }
        }
    }

    /// The DeviceRequest version.
    public let version: String
    /// The requested documents, in request order.
    public let documents: [Document]

    /// Parses DeviceRequest CBOR with the Mdoc module's decoder (the one DeviceRequest
    /// parser of the SDK); `nil` when it is not a well-formed DeviceRequest.
    public init?(cbor bytes: [UInt8]) {
        guard let request = try? DeviceRequest(encoded: bytes) else { return nil }
        version = request.version
        documents = request.docRequests.map { docRequest in
            let items = docRequest.itemsRequest
            var retain: [String: [String: Bool]] = [:]
            for (nameSpace, elements) in items.nameSpaces {
                for element in elements { retain[nameSpace, default: [:]][element.identifier] = element.intentToRetain }
            }
            return Document(docType: items.docType,
                            nameSpaces: items.nameSpaces.map { ($0.nameSpace, $0.elements.map(\.identifier)) },
                            intentToRetain: retain, hasReaderAuth: docRequest.readerAuth != nil)
        }
    }
}

extension SessionUiState {
    /// Parses ``deviceRequest`` for a consent screen; `nil` when there is none or it is malformed.
    public func parseDeviceRequest() -> ParsedDeviceRequest? {
        deviceRequest.flatMap { ParsedDeviceRequest(cbor: $0) }
    }
}
