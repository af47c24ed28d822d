import CBOR

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

    /// Parses DeviceRequest CBOR; `nil` when it is not a well-formed DeviceRequest.
    public init?(cbor bytes: [UInt8]) {
        guard let root = try? CBOR.decode(bytes), let version = root["version"]?.stringValue,
              let docRequests = root["docRequests"]?.arrayValue else { return nil }
        var documents: [Document] = []
        for docRequest in docRequests {
            // ItemsRequestBytes = #6.24(bstr .cbor ItemsRequest)
            guard let wrapped = docRequest["itemsRequest"], let items = try? wrapped.embeddedValue(),
                  let docType = items["docType"]?.stringValue, let spaces = items["nameSpaces"]?.mapValue
            else { return nil }
            var nameSpaces: [(String, [String])] = []
            var retain: [String: [String: Bool]] = [:]
            for entry in spaces {
                guard let namespace = entry.key.stringValue, let elements = entry.value.mapValue else { return nil }
                var names: [String] = []
                for element in elements {
                    guard let name = element.key.stringValue, let keep = element.value.boolValue else { return nil }
                    names.append(name)
                    retain[namespace, default: [:]][name] = keep
                }
                nameSpaces.append((namespace, names))
            }
            documents.append(Document(docType: docType, nameSpaces: nameSpaces, intentToRetain: retain,
                                      hasReaderAuth: docRequest["readerAuth"] != nil))
        }
        self.version = version
        self.documents = documents
    }
}

extension SessionUiState {
    /// Parses ``deviceRequest`` for a consent screen; `nil` when there is none or it is malformed.
    public func parseDeviceRequest() -> ParsedDeviceRequest? {
        deviceRequest.flatMap { ParsedDeviceRequest(cbor: $0) }
    }
}
