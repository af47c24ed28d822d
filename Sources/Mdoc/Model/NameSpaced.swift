import CBOR

/// The elements of one namespace, in order: the shape every per-namespace list of the
/// mdoc model takes (issuer-signed items, requested elements, device-signed elements,
/// element errors).
public struct NameSpaced<Element: Hashable & Sendable>: Hashable, Sendable {
    /// The namespace (`org.iso.18013.5.1` ...).
    public let nameSpace: String
    /// Its elements, in the order received or given.
    public let elements: [Element]

    /// The elements of `nameSpace`.
    public init(nameSpace: String, elements: [Element]) {
        self.nameSpace = nameSpace
        self.elements = elements
    }

    /// The elements of `nameSpace` (for literal-heavy call sites).
    public init(_ nameSpace: String, _ elements: [Element]) { self.init(nameSpace: nameSpace, elements: elements) }
}

/// A data element and its value (`DataElementIdentifier => DataElementValue`).
public struct DataElement: Hashable, Sendable {
    /// The data element identifier.
    public let identifier: String
    /// The value, as decoded.
    public let value: CBOR

    /// An element `identifier` with `value`.
    public init(identifier: String, value: CBOR) {
        self.identifier = identifier
        self.value = value
    }

    /// An element `identifier` with `value` (for literal-heavy call sites).
    public init(_ identifier: String, _ value: CBOR) { self.init(identifier: identifier, value: value) }
}

/// A requested data element and whether the reader intends to retain it
/// (`DataElementIdentifier => IntentToRetain`, ISO 18013-5 §8.3.2.1.2.1).
public struct RequestedElement: Hashable, Sendable {
    /// The data element identifier.
    public let identifier: String
    /// Whether the reader intends to retain the value.
    public let intentToRetain: Bool

    /// A request for `identifier`.
    public init(identifier: String, intentToRetain: Bool) {
        self.identifier = identifier
        self.intentToRetain = intentToRetain
    }

    /// A request for `identifier` (for literal-heavy call sites).
    public init(_ identifier: String, _ intentToRetain: Bool) { self.init(identifier: identifier, intentToRetain: intentToRetain) }
}

/// An element the mdoc did not return, with its error code (`DataElementIdentifier =>
/// ErrorCode`, ISO 18013-5 §8.3.2.1.2.3; 0: data not returned).
public struct ElementError: Hashable, Sendable {
    /// The data element identifier.
    public let identifier: String
    /// The error code.
    public let code: Int

    /// Element `identifier` not returned with `code`.
    public init(identifier: String, code: Int) {
        self.identifier = identifier
        self.code = code
    }
}
