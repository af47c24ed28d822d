import CBOR
import WalletCrypto

/// One issuer-signed data element (ISO 18013-5 §8.3.2.1.2.2):
/// `{"digestID": uint, "random": bstr, "elementIdentifier": tstr, "elementValue": any}`.
public struct IssuerSignedItem: Sendable, Hashable {
    /// The key of this element's digest in the MSO.
    public let digestID: UInt64
    /// Random salt (at least 16 bytes when issued by this module).
    public let random: [UInt8]
    /// The data element identifier.
    public let elementIdentifier: String
    /// The data element value.
    public let elementValue: CBOR

    /// An item with all its fields.
    public init(digestID: UInt64, random: [UInt8], elementIdentifier: String, elementValue: CBOR) {
        self.digestID = digestID
        self.random = random
        self.elementIdentifier = elementIdentifier
        self.elementValue = elementValue
    }

    /// The item encoded in the standard's field order.
    public var encoded: [UInt8] {
        CBOR.map(CBORMap([("digestID", .unsigned(digestID)), ("random", .byteString(random)),
                  ("elementIdentifier", .textString(elementIdentifier)), ("elementValue", elementValue)])).encoded()
    }
}

/// `IssuerSignedItemBytes = #6.24(bstr .cbor IssuerSignedItem)`, kept exactly as issued:
/// the MSO digest is over ``taggedBytes``, and a holder passes these bytes on unchanged.
public struct IssuerSignedItemBytes: Sendable, Hashable {
    /// The whole tag-24 item, exactly as received (what the MSO digest covers), as a new
    /// array on each access.
    public var taggedBytes: [UInt8] { Array(tagged) }
    /// The decoded item.
    public let item: IssuerSignedItem
    /// The whole tag-24 item: a view of the bytes it was decoded from, which the item
    /// shares with its document, so that a parse copies a portrait once (into the
    /// element's value) rather than twice (issue 16).
    let tagged: ArraySlice<UInt8>

    /// Wraps a freshly built item.
    public init(_ item: IssuerSignedItem) {
        self.item = item
        self.tagged = CBORSplice.embedded(item.encoded)[...]
    }

    /// Parses an IssuerSignedItemBytes found inside a larger structure.
    init(item tagged: CBORItem) throws(MdocError) {
        let inner = try MdocDecoding.embedded(tagged, "IssuerSignedItemBytes")
        item = IssuerSignedItem(
            digestID: try inner.required("digestID", in: "IssuerSignedItem").unsigned("digestID"),
            random: try inner.required("random", in: "IssuerSignedItem").bytes("random"),
            elementIdentifier: try inner.required("elementIdentifier", in: "IssuerSignedItem").text("elementIdentifier"),
            elementValue: try inner.required("elementValue", in: "IssuerSignedItem").value)
        self.tagged = tagged.encodedBytes
    }

    /// Parses IssuerSignedItemBytes on their own.
    public init(encoded bytes: [UInt8]) throws(MdocError) {
        try self.init(item: try MdocDecoding.item(bytes))
    }

    /// The digest of these bytes with `algorithm` (§9.1.2.5).
    public func digest(_ algorithm: HashAlgorithm = .sha256) -> [UInt8] { algorithm.digest(tagged) }
}
