internal import COpenSSL

/// The basicConstraints extension (RFC 5280 section 4.2.1.9).
public struct BasicConstraints: Sendable, Hashable {
    /// The cA flag: the subject may issue certificates.
    public var isCA: Bool
    /// The pathLenConstraint: how many non-self-issued intermediate CAs may follow
    /// this one; nil when unlimited (or when `isCA` is false).
    public var pathLength: Int?

    /// Basic constraints with the given cA flag and optional path length.
    public init(isCA: Bool, pathLength: Int? = nil) {
        self.isCA = isCA
        self.pathLength = pathLength
    }
}

/// The keyUsage extension bits (RFC 5280 section 4.2.1.3); bit n of the
/// BIT STRING is `1 << n` here.
public struct KeyUsage: OptionSet, Sendable, Hashable {
    /// The bits, bit n of the extension's BIT STRING at `1 << n`.
    public let rawValue: UInt16

    /// Key usage from raw bits.
    public init(rawValue: UInt16) { self.rawValue = rawValue }

    /// digitalSignature (bit 0).
    public static let digitalSignature = KeyUsage(rawValue: 1 << 0)
    /// nonRepudiation / contentCommitment (bit 1).
    public static let nonRepudiation = KeyUsage(rawValue: 1 << 1)
    /// keyEncipherment (bit 2).
    public static let keyEncipherment = KeyUsage(rawValue: 1 << 2)
    /// dataEncipherment (bit 3).
    public static let dataEncipherment = KeyUsage(rawValue: 1 << 3)
    /// keyAgreement (bit 4).
    public static let keyAgreement = KeyUsage(rawValue: 1 << 4)
    /// keyCertSign (bit 5).
    public static let keyCertSign = KeyUsage(rawValue: 1 << 5)
    /// cRLSign (bit 6).
    public static let cRLSign = KeyUsage(rawValue: 1 << 6)
    /// encipherOnly (bit 7).
    public static let encipherOnly = KeyUsage(rawValue: 1 << 7)
    /// decipherOnly (bit 8).
    public static let decipherOnly = KeyUsage(rawValue: 1 << 8)
}

/// One GeneralName of a subjectAltName / issuerAltName extension (RFC 5280 section 4.2.1.6).
public enum GeneralName: Sendable, Hashable {
    /// rfc822Name: an email address.
    case email(String)
    /// dNSName: a host name.
    case dnsName(String)
    /// uniformResourceIdentifier.
    case uri(String)
    /// iPAddress: 4 bytes (IPv4) or 16 bytes (IPv6).
    case ipAddress([UInt8])
    /// directoryName.
    case directoryName(DistinguishedName)
    /// registeredID: a dotted OID.
    case registeredID(String)
    /// otherName, x400Address or ediPartyName: the GeneralName's context tag number
    /// (0, 3 or 5) and its DER encoding.
    case other(tag: Int, der: [UInt8])
}

/// Well-known extended key usage OIDs (dotted).
public enum ExtendedKeyUsageOID {
    /// ISO/IEC 18013-5 mdoc document signer (DS) certificates.
    public static let mdocDocumentSigner = "1.0.18013.5.1.2"
    /// ISO/IEC 18013-5 mdoc reader authentication certificates.
    public static let mdocReaderAuthentication = "1.0.18013.5.1.6"
    /// TLS web server authentication (id-kp-serverAuth).
    public static let serverAuth = "1.3.6.1.5.5.7.3.1"
    /// TLS web client authentication (id-kp-clientAuth).
    public static let clientAuth = "1.3.6.1.5.5.7.3.2"
}

/// X.509 extension OIDs the certificate type decodes.
enum X509ExtensionOID {
    static let subjectKeyIdentifier = "2.5.29.14"
    static let keyUsage = "2.5.29.15"
    static let subjectAlternativeName = "2.5.29.17"
    static let issuerAlternativeName = "2.5.29.18"
    static let basicConstraints = "2.5.29.19"
    static let authorityKeyIdentifier = "2.5.29.35"
    static let extendedKeyUsage = "2.5.29.37"
}

/// The decoded extensions of one certificate.
struct X509DecodedExtensions: Sendable, Hashable {
    var basicConstraints: BasicConstraints?
    var keyUsage: KeyUsage?
    var extendedKeyUsage: [String]?
    var subjectAlternativeNames: [GeneralName] = []
    var issuerAlternativeNames: [GeneralName] = []
    var subjectKeyIdentifier: [UInt8]?
    var authorityKeyIdentifier: [UInt8]?
    var extensionOIDs: [String] = []
    var criticalExtensionOIDs: [String] = []

    /// The most extensions a certificate is read with.
    static let maximumCount = 256

    /// Decodes the extensions of `x509`; a duplicated or undecodable known extension
    /// is an error (RFC 5280 forbids duplicates), and so are more than ``maximumCount``.
    init(x509: OpaquePointer) throws(CryptoError) {
        let count = X509_get_ext_count(x509)
        guard count <= Self.maximumCount else { throw .invalidCertificate(.tooManyExtensions(limit: Self.maximumCount)) }
        var seen = Set<String>()
        for index in 0..<max(count, 0) {
            guard let ext = X509_get_ext(x509, index), let object = X509_EXTENSION_get_object(ext) else {
                throw .invalidCertificate(.malformedExtension(oid: nil))
            }
            let oid = try x509ObjectIdentifier(object)
            guard seen.insert(oid).inserted else {
                throw .invalidCertificate(.duplicateExtension(oid: oid))
            }
            extensionOIDs.append(oid)
            if X509_EXTENSION_get_critical(ext) > 0 { criticalExtensionOIDs.append(oid) }
        }

        if extensionOIDs.contains(X509ExtensionOID.basicConstraints) {
            let raw = try Self.decode(x509, NID_basic_constraints, X509ExtensionOID.basicConstraints)
            let constraints = raw.assumingMemoryBound(to: BASIC_CONSTRAINTS.self)
            defer { BASIC_CONSTRAINTS_free(constraints) }
            var pathLength: Int? = nil
            if let pathlen = constraints.pointee.pathlen {
                var value: Int64 = 0
                guard ASN1_INTEGER_get_int64(&value, pathlen) == 1, value >= 0, value <= Int64(Int32.max) else {
                    ERR_clear_error()
                    throw .invalidCertificate(.invalidPathLengthConstraint)
                }
                pathLength = Int(value)
            }
            basicConstraints = BasicConstraints(isCA: constraints.pointee.ca != 0, pathLength: pathLength)
        }

        if extensionOIDs.contains(X509ExtensionOID.keyUsage) {
            let raw = try Self.decode(x509, NID_key_usage, X509ExtensionOID.keyUsage)
            let bits = raw.assumingMemoryBound(to: ASN1_BIT_STRING.self)
            defer { ASN1_BIT_STRING_free(bits) }
            var usage: UInt16 = 0
            for bit in 0..<9 where ASN1_BIT_STRING_get_bit(bits, Int32(bit)) == 1 {
                usage |= 1 << UInt16(bit)
            }
            keyUsage = KeyUsage(rawValue: usage)
        }

        if extensionOIDs.contains(X509ExtensionOID.extendedKeyUsage) {
            let stack = OpaquePointer(try Self.decode(x509, NID_ext_key_usage, X509ExtensionOID.extendedKeyUsage))
            defer { wallet_EXTENDED_KEY_USAGE_free(stack) }
            var oids: [String] = []
            for index in 0..<max(wallet_sk_ASN1_OBJECT_num(stack), 0) {
                guard let object = wallet_sk_ASN1_OBJECT_value(stack, index) else { continue }
                oids.append(try x509ObjectIdentifier(object))
            }
            extendedKeyUsage = oids
        }

        if extensionOIDs.contains(X509ExtensionOID.subjectAlternativeName) {
            let names = OpaquePointer(try Self.decode(x509, NID_subject_alt_name, X509ExtensionOID.subjectAlternativeName))
            defer { wallet_GENERAL_NAMES_free(names) }
            subjectAlternativeNames = try Self.generalNames(names)
        }

        if extensionOIDs.contains(X509ExtensionOID.issuerAlternativeName) {
            let names = OpaquePointer(try Self.decode(x509, NID_issuer_alt_name, X509ExtensionOID.issuerAlternativeName))
            defer { wallet_GENERAL_NAMES_free(names) }
            issuerAlternativeNames = try Self.generalNames(names)
        }

        if extensionOIDs.contains(X509ExtensionOID.subjectKeyIdentifier) {
            let raw = try Self.decode(x509, NID_subject_key_identifier, X509ExtensionOID.subjectKeyIdentifier)
            let octets = raw.assumingMemoryBound(to: ASN1_OCTET_STRING.self)
            defer { ASN1_OCTET_STRING_free(octets) }
            subjectKeyIdentifier = x509StringBytes(octets)
        }

        if extensionOIDs.contains(X509ExtensionOID.authorityKeyIdentifier) {
            let raw = try Self.decode(x509, NID_authority_key_identifier, X509ExtensionOID.authorityKeyIdentifier)
            let keyID = raw.assumingMemoryBound(to: AUTHORITY_KEYID.self)
            defer { AUTHORITY_KEYID_free(keyID) }
            if let octets = keyID.pointee.keyid {
                authorityKeyIdentifier = x509StringBytes(octets)
            }
        }
    }

    /// X509_get_ext_d2i for an extension known to be present exactly once.
    private static func decode(_ x509: OpaquePointer, _ nid: Int32, _ oid: String) throws(CryptoError) -> UnsafeMutableRawPointer {
        var critical: Int32 = 0
        guard let raw = X509_get_ext_d2i(x509, nid, &critical, nil) else {
            ERR_clear_error()
            throw .invalidCertificate(.malformedExtension(oid: oid))
        }
        return raw
    }

    private static func generalNames(_ names: OpaquePointer) throws(CryptoError) -> [GeneralName] {
        var result: [GeneralName] = []
        for index in 0..<max(wallet_sk_GENERAL_NAME_num(names), 0) {
            guard let name = wallet_sk_GENERAL_NAME_value(names, index) else { continue }
            result.append(try generalName(name))
        }
        return result
    }

    private static func generalName(_ name: UnsafeMutablePointer<GENERAL_NAME>) throws(CryptoError) -> GeneralName {
        let type = name.pointee.type
        switch type {
        case GEN_EMAIL:
            return .email(x509StringText(name.pointee.d.rfc822Name))
        case GEN_DNS:
            return .dnsName(x509StringText(name.pointee.d.dNSName))
        case GEN_URI:
            return .uri(x509StringText(name.pointee.d.uniformResourceIdentifier))
        case GEN_IPADD:
            return .ipAddress(name.pointee.d.iPAddress.map { x509StringBytes($0) } ?? [])
        case GEN_DIRNAME:
            guard let directory = name.pointee.d.directoryName else {
                throw .invalidCertificate(.emptyGeneralName)
            }
            return .directoryName(try DistinguishedName(borrowing: directory))
        case GEN_RID:
            guard let object = name.pointee.d.registeredID else {
                throw .invalidCertificate(.emptyGeneralName)
            }
            return .registeredID(try x509ObjectIdentifier(object))
        default:
            var der: UnsafeMutablePointer<UInt8>? = nil
            let length = i2d_GENERAL_NAME(name, &der)
            guard length >= 0, let der else { throw openSSLError("i2d_GENERAL_NAME") }
            defer { wallet_OPENSSL_free(der) }
            return .other(tag: Int(type), der: Array(UnsafeBufferPointer(start: der, count: Int(length))))
        }
    }
}

/// The content bytes of an ASN1_STRING.
func x509StringBytes(_ string: UnsafePointer<ASN1_STRING>) -> [UInt8] {
    let length = Int(ASN1_STRING_length(string))
    guard length > 0, let data = ASN1_STRING_get0_data(string) else { return [] }
    return Array(UnsafeBufferPointer(start: data, count: length))
}

/// The content of an IA5String-like ASN1_STRING as text (invalid UTF-8 repaired).
func x509StringText(_ string: UnsafeMutablePointer<ASN1_STRING>?) -> String {
    guard let string else { return "" }
    return String(decoding: x509StringBytes(string), as: UTF8.self)
}
