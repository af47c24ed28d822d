import WalletEncoding
internal import COpenSSL

/// An X.500 distinguished name (a certificate's subject or issuer), decoded into
/// its relative distinguished names in encoding order.
public struct DistinguishedName: Sendable, Hashable, CustomStringConvertible {
    /// The type of one name attribute, identified by its dotted OID.
    public struct AttributeType: Sendable, Hashable, RawRepresentable, CustomStringConvertible {
        /// The dotted-decimal OID, e.g. `"2.5.4.3"` for commonName.
        public let rawValue: String

        /// An attribute type from its dotted-decimal OID.
        public init(rawValue: String) { self.rawValue = rawValue }

        /// commonName (CN), 2.5.4.3.
        public static let commonName = AttributeType(rawValue: "2.5.4.3")
        /// surname (SN), 2.5.4.4.
        public static let surname = AttributeType(rawValue: "2.5.4.4")
        /// serialNumber, 2.5.4.5 (a subject's serial number, not the certificate's).
        public static let serialNumber = AttributeType(rawValue: "2.5.4.5")
        /// countryName (C), 2.5.4.6.
        public static let country = AttributeType(rawValue: "2.5.4.6")
        /// localityName (L), 2.5.4.7.
        public static let locality = AttributeType(rawValue: "2.5.4.7")
        /// stateOrProvinceName (ST), 2.5.4.8.
        public static let stateOrProvince = AttributeType(rawValue: "2.5.4.8")
        /// streetAddress (STREET), 2.5.4.9.
        public static let street = AttributeType(rawValue: "2.5.4.9")
        /// organizationName (O), 2.5.4.10.
        public static let organization = AttributeType(rawValue: "2.5.4.10")
        /// organizationalUnitName (OU), 2.5.4.11.
        public static let organizationalUnit = AttributeType(rawValue: "2.5.4.11")
        /// title, 2.5.4.12.
        public static let title = AttributeType(rawValue: "2.5.4.12")
        /// postalCode, 2.5.4.17.
        public static let postalCode = AttributeType(rawValue: "2.5.4.17")
        /// givenName, 2.5.4.42.
        public static let givenName = AttributeType(rawValue: "2.5.4.42")
        /// organizationIdentifier, 2.5.4.97 (e.g. eIDAS `VATBE-0123456789`).
        public static let organizationIdentifier = AttributeType(rawValue: "2.5.4.97")
        /// domainComponent (DC), 0.9.2342.19200300.100.1.25.
        public static let domainComponent = AttributeType(rawValue: "0.9.2342.19200300.100.1.25")
        /// userId (UID), 0.9.2342.19200300.100.1.1.
        public static let userID = AttributeType(rawValue: "0.9.2342.19200300.100.1.1")
        /// emailAddress (PKCS #9), 1.2.840.113549.1.9.1.
        public static let emailAddress = AttributeType(rawValue: "1.2.840.113549.1.9.1")

        /// The registered LDAP descriptor used in RFC 4514 strings, or nil when the
        /// type is written as a dotted OID.
        public var ldapName: String? { Self.ldapNames[rawValue] }

        /// The LDAP descriptor when one is known, otherwise the dotted OID.
        public var description: String { ldapName ?? rawValue }

        private static let ldapNames: [String: String] = [
            "2.5.4.3": "CN", "2.5.4.4": "SN", "2.5.4.5": "serialNumber", "2.5.4.6": "C",
            "2.5.4.7": "L", "2.5.4.8": "ST", "2.5.4.9": "STREET", "2.5.4.10": "O",
            "2.5.4.11": "OU", "2.5.4.12": "title", "2.5.4.17": "postalCode",
            "2.5.4.42": "givenName", "2.5.4.97": "organizationIdentifier",
            "0.9.2342.19200300.100.1.25": "DC", "0.9.2342.19200300.100.1.1": "UID",
            "1.2.840.113549.1.9.1": "emailAddress",
        ]
    }

    /// One attribute (type and value) of a relative distinguished name.
    public struct Attribute: Sendable, Hashable {
        /// The attribute type.
        public let type: AttributeType
        /// The value as text (UTF-8 decoded from whatever ASN.1 string type was used).
        /// Values that are not strings are given as `#` followed by the hex of their DER.
        public let value: String
        /// The ASN.1 universal tag of the encoded value (12 UTF8String, 19 PrintableString ...).
        public let valueTag: Int
        /// The DER encoding of the value (tag, length, content).
        public let valueDER: [UInt8]
        /// True when `value` is the text of an ASN.1 string type (false for the `#hex` form).
        public let isString: Bool

        init(type: AttributeType, value: String, valueTag: Int, valueDER: [UInt8], isString: Bool) {
            self.type = type
            self.value = value
            self.valueTag = valueTag
            self.valueDER = valueDER
            self.isString = isString
        }
    }

    /// The relative distinguished names in encoding order (most significant first,
    /// e.g. C before O before CN); each RDN holds one or more attributes.
    public let relativeNames: [[Attribute]]

    /// The DER encoding of the Name.
    public let derEncoded: [UInt8]

    /// All attributes in encoding order, flattened across RDNs.
    public var attributes: [Attribute] { relativeNames.flatMap { $0 } }

    /// Every value of the given attribute type, in encoding order.
    public func values(of type: AttributeType) -> [String] {
        attributes.filter { $0.type == type }.map(\.value)
    }

    /// The last (most specific) value of the given attribute type, or nil when absent.
    public subscript(_ type: AttributeType) -> String? { values(of: type).last }

    /// The most specific commonName (CN), or nil when the name has none.
    public var commonName: String? { self[.commonName] }
    /// The countryName (C), or nil when absent.
    public var country: String? { self[.country] }
    /// The organizationName (O), or nil when absent.
    public var organization: String? { self[.organization] }
    /// The organizationalUnitName (OU), or nil when absent.
    public var organizationalUnit: String? { self[.organizationalUnit] }
    /// The stateOrProvinceName (ST), or nil when absent.
    public var stateOrProvince: String? { self[.stateOrProvince] }
    /// The localityName (L), or nil when absent.
    public var locality: String? { self[.locality] }

    /// True when the name has no attributes (an empty SEQUENCE).
    public var isEmpty: Bool { relativeNames.isEmpty }

    /// The RFC 4514 string form: RDNs in reverse encoding order separated by `,`,
    /// multi-valued RDNs joined by `+`, special characters escaped; attribute types
    /// without a registered descriptor are written as dotted OIDs with a `#hex` value.
    public var rfc4514String: String {
        relativeNames.reversed().map { rdn in
            rdn.map { attribute -> String in
                if let name = attribute.type.ldapName, attribute.isString {
                    return name + "=" + Self.escape(attribute.value)
                }
                return attribute.type.rawValue + "=#" + Hex.encode(attribute.valueDER)
            }.joined(separator: "+")
        }.joined(separator: ",")
    }

    /// The RFC 4514 string form.
    public var description: String { rfc4514String }

    /// Builds a name from attributes in encoding order, one attribute per RDN
    /// (e.g. `[(.country, "US"), (.commonName, "utopia iaca")]`). countryName is
    /// encoded as PrintableString, other attributes as UTF8String where allowed.
    public init(_ attributes: [(AttributeType, String)]) throws(CryptoError) {
        guard let name = X509_NAME_new() else { throw openSSLError("X509_NAME_new") }
        defer { X509_NAME_free(name) }
        for (type, value) in attributes {
            guard let object = OBJ_txt2obj(type.rawValue, 1) else {
                ERR_clear_error()
                throw .invalidCertificate(.invalidObjectIdentifier(type.rawValue))
            }
            defer { ASN1_OBJECT_free(object) }
            let bytes = Array(value.utf8)
            let ok = bytes.withUnsafeBufferPointer { buffer in
                X509_NAME_add_entry_by_OBJ(name, object, MBSTRING_UTF8, buffer.baseAddress ?? UnsafePointer(bitPattern: 1),
                                           Int32(buffer.count), -1, 0)
            }
            guard ok == 1 else {
                throw .invalidCertificate(.unencodableAttribute(type))
            }
        }
        try self.init(borrowing: name)
    }

    /// Decodes a DER-encoded Name (a SEQUENCE OF RelativeDistinguishedName);
    /// trailing bytes are rejected.
    public init(derEncoded: [UInt8]) throws(CryptoError) {
        let name: OpaquePointer? = derEncoded.withUnsafeBufferPointer { buffer in
            guard let base = buffer.baseAddress else { return nil }
            var cursor: UnsafePointer<UInt8>? = base
            let decoded = d2i_X509_NAME(nil, &cursor, buffer.count)
            if let decoded, cursor != base + buffer.count {
                X509_NAME_free(decoded)
                return nil
            }
            return decoded
        }
        guard let name else {
            ERR_clear_error()
            throw .malformedEncoding("not a DER-encoded X.509 Name")
        }
        defer { X509_NAME_free(name) }
        try self.init(borrowing: name)
    }

    /// Reads a name that OpenSSL owns elsewhere (it is not freed here).
    init(borrowing name: OpaquePointer) throws(CryptoError) {
        var der: UnsafeMutablePointer<UInt8>? = nil
        let length = i2d_X509_NAME(name, &der)
        guard length >= 0, let der else { throw openSSLError("i2d_X509_NAME") }
        derEncoded = Array(UnsafeBufferPointer(start: der, count: Int(length)))
        wallet_OPENSSL_free(der)

        var rdns: [[Attribute]] = []
        var lastSet: Int32 = -1
        let count = X509_NAME_entry_count(name)
        for index in 0..<max(count, 0) {
            guard let entry = X509_NAME_get_entry(name, index),
                  let object = X509_NAME_ENTRY_get_object(entry),
                  let data = X509_NAME_ENTRY_get_data(entry) else {
                throw .invalidCertificate(.malformedName)
            }
            let attribute = try Self.attribute(object: object, data: data)
            let set = X509_NAME_ENTRY_set(entry)
            if set == lastSet, !rdns.isEmpty {
                rdns[rdns.count - 1].append(attribute)
            } else {
                rdns.append([attribute])
            }
            lastSet = set
        }
        relativeNames = rdns
    }

    private static func attribute(object: OpaquePointer, data: UnsafePointer<ASN1_STRING>) throws(CryptoError) -> Attribute {
        let type = AttributeType(rawValue: try x509ObjectIdentifier(object))
        let tag = Int(ASN1_STRING_type(data))
        let length = Int(ASN1_STRING_length(data))
        let content: [UInt8] = length > 0 ? Array(UnsafeBufferPointer(start: ASN1_STRING_get0_data(data), count: length)) : []
        // Universal string types carry their tag number as the OpenSSL type.
        let constructed = tag == 16 || tag == 17
        let valueDER = (0..<31).contains(tag) ? x509DERTLV(tag: UInt8(tag) | (constructed ? 0x20 : 0), content: content) : content

        var utf8: UnsafeMutablePointer<UInt8>? = nil
        let utf8Length = ASN1_STRING_to_UTF8(&utf8, data)
        if utf8Length >= 0, let utf8 {
            let text = String(decoding: UnsafeBufferPointer(start: utf8, count: Int(utf8Length)), as: UTF8.self)
            wallet_OPENSSL_free(utf8)
            return Attribute(type: type, value: text, valueTag: tag, valueDER: valueDER, isString: true)
        }
        ERR_clear_error()
        return Attribute(type: type, value: "#" + Hex.encode(valueDER), valueTag: tag, valueDER: valueDER, isString: false)
    }

    /// RFC 4514 section 2.4 escaping of one attribute value.
    static func escape(_ value: String) -> String {
        var out = ""
        let scalars = Array(value.unicodeScalars)
        for (index, scalar) in scalars.enumerated() {
            switch scalar {
            case "\"", "+", ",", ";", "<", ">", "\\":
                out += "\\" + String(scalar)
            case "\u{0}":
                out += "\\00"
            case " " where index == 0 || index == scalars.count - 1:
                out += "\\ "
            case "#" where index == 0:
                out += "\\#"
            default:
                out.unicodeScalars.append(scalar)
            }
        }
        return out
    }
}

/// The dotted-decimal text of an ASN.1 OBJECT IDENTIFIER.
func x509ObjectIdentifier(_ object: OpaquePointer) throws(CryptoError) -> String {
    var buffer = [CChar](repeating: 0, count: 128)
    let needed = OBJ_obj2txt(&buffer, Int32(buffer.count), object, 1)
    guard needed > 0 else {
        ERR_clear_error()
        throw .invalidCertificate(.malformedObjectIdentifier)
    }
    if Int(needed) >= buffer.count {
        buffer = [CChar](repeating: 0, count: Int(needed) + 1)
        guard OBJ_obj2txt(&buffer, Int32(buffer.count), object, 1) == needed else {
            throw .invalidCertificate(.malformedObjectIdentifier)
        }
    }
    return String(decoding: buffer.prefix(while: { $0 != 0 }).map { UInt8(bitPattern: $0) }, as: UTF8.self)
}


/// A DER tag-length-value with a single-byte tag.
func x509DERTLV(tag: UInt8, content: [UInt8]) -> [UInt8] {
    var out: [UInt8] = [tag]
    let count = content.count
    if count < 0x80 {
        out.append(UInt8(count))
    } else {
        var lengthBytes: [UInt8] = []
        var remaining = count
        while remaining > 0 {
            lengthBytes.insert(UInt8(remaining & 0xff), at: 0)
            remaining >>= 8
        }
        out.append(0x80 | UInt8(lengthBytes.count))
        out += lengthBytes
    }
    return out + content
}
