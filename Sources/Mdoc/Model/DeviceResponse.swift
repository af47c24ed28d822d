import CBOR
import COSE

/// One returned document (ISO 18013-5 §8.3.2.1.2.2):
/// `{"docType": tstr, "issuerSigned": IssuerSigned, "deviceSigned": DeviceSigned, ? "errors": Errors}`.
public struct Document: Sendable, Hashable {
    /// The document type.
    public let docType: String
    /// Issuer-signed elements and the MSO (only the disclosed items).
    public let issuerSigned: IssuerSigned
    /// Device-signed elements and the device authentication.
    public let deviceSigned: DeviceSigned
    /// Elements not returned, by namespace, with their error codes (0: data not returned).
    public let errors: [NameSpaced<ElementError>]

    /// Assembles a document.
    public init(docType: String, issuerSigned: IssuerSigned, deviceSigned: DeviceSigned,
                errors: [NameSpaced<ElementError>] = []) {
        self.docType = docType
        self.issuerSigned = issuerSigned
        self.deviceSigned = deviceSigned
        self.errors = errors
    }

    init(item: CBORItem) throws(MdocError) {
        docType = try item.required("docType", in: "Document").text("Document docType")
        issuerSigned = try IssuerSigned(item: try item.required("issuerSigned", in: "Document"))
        deviceSigned = try DeviceSigned(item: try item.required("deviceSigned", in: "Document"))
        var list: [NameSpaced<ElementError>] = []
        if let errorsItem = item["errors"] {
            for (key, items) in try errorsItem.requiredMap("Errors") {
                var elements: [ElementError] = []
                for (id, code) in try items.requiredMap("ErrorItems") {
                    elements.append(ElementError(identifier: try id.text("error element identifier"), code: try code.int("ErrorCode")))
                }
                list.append(NameSpaced(nameSpace: try key.text("Errors namespace"), elements: elements))
            }
        }
        errors = list
    }

    /// An upper estimate of the encoded size when the errors are few: the exact parts plus
    /// room for the heads and names around them.
    var encodedSizeEstimate: Int {
        issuerSigned.nameSpaces.reduce(0) { total, space in
            space.elements.reduce(total + space.nameSpace.utf8.count + 9) { $0 + $1.tagged.count + 9 }
        } + issuerSigned.issuerAuth.encodedBytes.count + deviceSigned.nameSpaces.encodedBytes.count
            + deviceSigned.deviceAuth.encodedByteCount + docType.utf8.count + 128
    }

    func write(to splice: inout CBORSplice) {
        splice.mapHead(errors.isEmpty ? 3 : 4)
        splice.text("docType")
        splice.text(docType)
        splice.text("issuerSigned")
        issuerSigned.write(to: &splice, nameSpaces: issuerSigned.nameSpaces)
        splice.text("deviceSigned")
        deviceSigned.write(to: &splice)
        if !errors.isEmpty {
            splice.text("errors")
            splice.value(.map(CBORMap(errors.map { space in
                (CBOR.textString(space.nameSpace), CBOR.map(CBORMap(space.elements.map { (CBOR.textString($0.identifier), CBOR($0.code)) })))
            })))
        }
    }

    /// Equal when the encodings are.
    public static func == (lhs: Document, rhs: Document) -> Bool {
        var left = CBORSplice(), right = CBORSplice()
        lhs.write(to: &left)
        rhs.write(to: &right)
        return left.bytes == right.bytes
    }
    /// Hashes the encoding.
    public func hash(into hasher: inout Hasher) {
        var splice = CBORSplice()
        write(to: &splice)
        hasher.combine(splice.bytes)
    }
}

/// A document type the mdoc does not return, with its error code (0: data not returned).
public struct DocumentError: Sendable, Hashable {
    /// The document type.
    public let docType: String
    /// The error code.
    public let code: Int
    /// A document error.
    public init(docType: String, code: Int = 0) {
        self.docType = docType
        self.code = code
    }
}

/// The mdoc's answer (ISO 18013-5 §8.3.2.1.2.2):
/// `{"version": tstr, ? "documents": [+ Document], ? "documentErrors": [+ DocumentError], "status": uint}`.
public struct DeviceResponse: Sendable, Hashable {
    /// Response status codes (§8.3.2.1.2.3).
    public struct Status: RawRepresentable, Sendable, Hashable {
        /// The numeric code.
        public let rawValue: UInt64
        /// Wraps a code.
        public init(rawValue: UInt64) { self.rawValue = rawValue }
        /// 0: OK.
        public static let ok = Status(rawValue: 0)
        /// 10: general error.
        public static let generalError = Status(rawValue: 10)
        /// 11: CBOR decoding error.
        public static let cborDecodingError = Status(rawValue: 11)
        /// 12: CBOR validation error.
        public static let cborValidationError = Status(rawValue: 12)
    }

    /// "1.0".
    public let version: String
    /// The returned documents.
    public let documents: [Document]
    /// Requested document types not returned.
    public let documentErrors: [DocumentError]
    /// The status.
    public let status: Status
    /// The encoding, as received or built.
    public let encodedBytes: [UInt8]

    /// Assembles a response; items and COSE structures are written with their exact bytes.
    public init(version: String = "1.0", documents: [Document], documentErrors: [DocumentError] = [], status: Status = .ok) {
        self.version = version
        self.documents = documents
        self.documentErrors = documentErrors
        self.status = status
        var splice = CBORSplice(reservingCapacity: documents.reduce(64) { $0 + $1.encodedSizeEstimate })
        splice.mapHead(2 + (documents.isEmpty ? 0 : 1) + (documentErrors.isEmpty ? 0 : 1))
        splice.text("version")
        splice.text(version)
        if !documents.isEmpty {
            splice.text("documents")
            splice.arrayHead(documents.count)
            for document in documents { document.write(to: &splice) }
        }
        if !documentErrors.isEmpty {
            splice.text("documentErrors")
            splice.value(.array(documentErrors.map { .map(CBORMap([(.textString($0.docType), CBOR($0.code))])) }))
        }
        splice.text("status")
        splice.head(major: 0, status.rawValue)
        encodedBytes = splice.bytes
    }

    /// Parses a DeviceResponse, keeping exact bytes of every signed part.
    /// - Throws: `cbor` / `malformed` (status 11), `unsupportedVersion`, `cose`,
    ///   `missingDeviceAuthentication`.
    public init(encoded bytes: [UInt8]) throws(MdocError) {
        let item = try MdocDecoding.item(bytes)
        version = try item.required("version", in: "DeviceResponse").text("DeviceResponse version")
        guard version.hasPrefix("1.") else { throw .unsupportedVersion(version) }
        documents = try (item["documents"]?.requiredArray("documents") ?? []).map { element throws(MdocError) in
            try Document(item: element)
        }
        var errors: [DocumentError] = []
        for entry in try item["documentErrors"]?.requiredArray("documentErrors") ?? [] {
            for (docType, code) in try entry.requiredMap("DocumentError") {
                errors.append(DocumentError(docType: try docType.text("DocumentError docType"), code: try code.int("ErrorCode")))
            }
        }
        documentErrors = errors
        status = Status(rawValue: try item.required("status", in: "DeviceResponse").unsigned("DeviceResponse status"))
        encodedBytes = bytes
    }

    /// Equal when the encodings are.
    public static func == (lhs: DeviceResponse, rhs: DeviceResponse) -> Bool { lhs.encodedBytes == rhs.encodedBytes }
    /// Hashes the encoding.
    public func hash(into hasher: inout Hasher) { hasher.combine(encodedBytes) }
}
