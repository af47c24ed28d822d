import CBOR
import COSE

/// The issuer-signed part of a document (ISO 18013-5 §8.3.2.1.2.2):
/// `{? "nameSpaces": {tstr => [+ IssuerSignedItemBytes]}, "issuerAuth": COSE_Sign1}`.
public struct IssuerSigned: Sendable, Hashable {
    /// The elements by namespace, each in its exact issued bytes, in the order received.
    public let nameSpaces: [NameSpaced<IssuerSignedItemBytes>]
    /// The issuer's COSE_Sign1 over MobileSecurityObjectBytes, with its exact bytes.
    public let issuerAuth: COSESign1
    /// The MSO carried in ``issuerAuth`` (parsed, not yet verified).
    public let mobileSecurityObject: MobileSecurityObject

    /// Assembles issuer-signed data; `issuerAuth`'s payload must be MobileSecurityObjectBytes.
    public init(nameSpaces: [NameSpaced<IssuerSignedItemBytes>], issuerAuth: COSESign1) throws(MdocError) {
        self.nameSpaces = nameSpaces
        self.issuerAuth = issuerAuth
        self.mobileSecurityObject = try Self.mso(of: issuerAuth)
    }

    private init(nameSpaces: [NameSpaced<IssuerSignedItemBytes>], issuerAuth: COSESign1, mobileSecurityObject: MobileSecurityObject) {
        self.nameSpaces = nameSpaces
        self.issuerAuth = issuerAuth
        self.mobileSecurityObject = mobileSecurityObject
    }

    /// The same issuerAuth and MSO with `selected` items (taken from ``nameSpaces``) in
    /// their place: what a response discloses. The MSO parsed with this value is kept,
    /// not parsed again.
    func disclosing(_ selected: [NameSpaced<IssuerSignedItemBytes>]) -> IssuerSigned {
        IssuerSigned(nameSpaces: selected, issuerAuth: issuerAuth, mobileSecurityObject: mobileSecurityObject)
    }

    /// Parses IssuerSigned bytes (as an issuer delivers them, e.g. over OpenID4VCI).
    public init(encoded bytes: [UInt8]) throws(MdocError) {
        try self.init(item: try MdocDecoding.item(bytes))
    }

    init(item: CBORItem) throws(MdocError) {
        var spaces: [NameSpaced<IssuerSignedItemBytes>] = []
        if let nameSpacesItem = item["nameSpaces"] {
            for (key, list) in try nameSpacesItem.requiredMap("IssuerNameSpaces") {
                let name = try key.text("IssuerNameSpaces key")
                let items = try list.requiredArray("IssuerNameSpaces \(name)").map { element throws(MdocError) in
                    try IssuerSignedItemBytes(item: element)
                }
                spaces.append(NameSpaced(nameSpace: name, elements: items))
            }
        }
        nameSpaces = spaces
        let authItem = try item.required("issuerAuth", in: "IssuerSigned")
        do { issuerAuth = try COSESign1(item: authItem) } catch { throw .cose(error) }
        mobileSecurityObject = try Self.mso(of: issuerAuth)
    }

    static func mso(of issuerAuth: COSESign1) throws(MdocError) -> MobileSecurityObject {
        guard let payload = issuerAuth.payload else { throw .malformed("issuerAuth", .missingMember("payload")) }
        let tagged = try MdocDecoding.item(payload)
        return try MobileSecurityObject(item: try MdocDecoding.embedded(tagged, "MobileSecurityObjectBytes"))
    }

    /// The encoding, items and issuerAuth spliced in as their exact bytes.
    public var encodedBytes: [UInt8] {
        var splice = CBORSplice()
        write(to: &splice, nameSpaces: nameSpaces)
        return splice.bytes
    }

    func write(to splice: inout CBORSplice, nameSpaces selected: [NameSpaced<IssuerSignedItemBytes>]) {
        let nonEmpty = selected.filter { !$0.elements.isEmpty }
        splice.mapHead(nonEmpty.isEmpty ? 1 : 2)
        if !nonEmpty.isEmpty {
            splice.text("nameSpaces")
            splice.mapHead(nonEmpty.count)
            for space in nonEmpty {
                splice.text(space.nameSpace)
                splice.arrayHead(space.elements.count)
                for item in space.elements { splice.raw(item.tagged) }
            }
        }
        splice.text("issuerAuth")
        splice.raw(issuerAuth.encodedBytes)
    }

    /// The items of one namespace.
    public func items(in nameSpace: String) -> [IssuerSignedItemBytes] {
        nameSpaces.first { $0.nameSpace == nameSpace }?.elements ?? []
    }

    /// Equal when the encodings are.
    public static func == (lhs: IssuerSigned, rhs: IssuerSigned) -> Bool { lhs.encodedBytes == rhs.encodedBytes }
    /// Hashes the encoding.
    public func hash(into hasher: inout Hasher) { hasher.combine(encodedBytes) }
}
