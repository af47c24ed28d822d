internal import COpenSSL
import Foundation
import WalletEncoding

/// Builds and signs X.509 v3 certificates: self-signed CAs (IACA, reader roots),
/// intermediates and leaves (document signers, reader certificates) for tests and
/// reference parties.
///
/// Signatures are ECDSA with SHA-256 / SHA-384 / SHA-512 for P-256 / P-384 / P-521
/// keys, or Ed25519. Extensions are written in a fixed order: basicConstraints
/// (critical), keyUsage (critical), extendedKeyUsage, subjectAltName,
/// subjectKeyIdentifier, authorityKeyIdentifier.
public struct CertificateBuilder: Sendable {
    /// The subject name.
    public var subject: DistinguishedName
    /// The certified key as DER SubjectPublicKeyInfo; nil certifies the signing
    /// key's own public key (the usual self-signed case).
    public var subjectPublicKeyInfoDER: [UInt8]?
    /// The serial number magnitude (big-endian, positive); nil draws 16 random bytes.
    public var serialNumber: [UInt8]?
    /// Start of validity (whole seconds; fractions are truncated).
    public var notBefore: Date
    /// End of validity (whole seconds; fractions are truncated).
    public var notAfter: Date
    /// The basicConstraints extension (written critical), or nil to omit it.
    public var basicConstraints: BasicConstraints?
    /// The keyUsage extension (written critical), or nil to omit it.
    public var keyUsage: KeyUsage?
    /// Extended key usage OIDs (dotted); empty omits the extension.
    public var extendedKeyUsage: [String]
    /// Whether the extendedKeyUsage extension is marked critical (ISO 18013-5 profiles do).
    public var extendedKeyUsageIsCritical: Bool
    /// subjectAltName entries; empty omits the extension.
    public var subjectAlternativeNames: [GeneralName]
    /// Whether to write a subjectKeyIdentifier (SHA-1 of the subject public key bits).
    public var includeSubjectKeyIdentifier: Bool
    /// Whether to write an authorityKeyIdentifier on certificates signed by another
    /// certificate (the issuer's subjectKeyIdentifier, or SHA-1 of its key bits).
    public var includeAuthorityKeyIdentifier: Bool

    /// A builder with every field given explicitly.
    public init(subject: DistinguishedName, subjectPublicKeyInfoDER: [UInt8]? = nil, serialNumber: [UInt8]? = nil,
                notBefore: Date, notAfter: Date, basicConstraints: BasicConstraints? = nil,
                keyUsage: KeyUsage? = nil, extendedKeyUsage: [String] = [], extendedKeyUsageIsCritical: Bool = true,
                subjectAlternativeNames: [GeneralName] = [], includeSubjectKeyIdentifier: Bool = true,
                includeAuthorityKeyIdentifier: Bool = true) {
        self.subject = subject
        self.subjectPublicKeyInfoDER = subjectPublicKeyInfoDER
        self.serialNumber = serialNumber
        self.notBefore = notBefore
        self.notAfter = notAfter
        self.basicConstraints = basicConstraints
        self.keyUsage = keyUsage
        self.extendedKeyUsage = extendedKeyUsage
        self.extendedKeyUsageIsCritical = extendedKeyUsageIsCritical
        self.subjectAlternativeNames = subjectAlternativeNames
        self.includeSubjectKeyIdentifier = includeSubjectKeyIdentifier
        self.includeAuthorityKeyIdentifier = includeAuthorityKeyIdentifier
    }

    /// A CA profile: basicConstraints cA true (with an optional pathLenConstraint),
    /// keyUsage keyCertSign | cRLSign, subjectKeyIdentifier. Pass `subjectPublicKeyInfoDER`
    /// for an intermediate; leave it nil for a self-signed root.
    public static func certificateAuthority(subject: DistinguishedName, subjectPublicKeyInfoDER: [UInt8]? = nil,
                                            notBefore: Date, notAfter: Date,
                                            pathLength: Int? = nil) -> CertificateBuilder {
        CertificateBuilder(subject: subject, subjectPublicKeyInfoDER: subjectPublicKeyInfoDER,
                           notBefore: notBefore, notAfter: notAfter,
                           basicConstraints: BasicConstraints(isCA: true, pathLength: pathLength),
                           keyUsage: [.keyCertSign, .cRLSign])
    }

    /// An end-entity profile: basicConstraints cA false, the given key usage
    /// (digitalSignature by default), extended key usages and subjectAltNames.
    public static func endEntity(subject: DistinguishedName, subjectPublicKeyInfoDER: [UInt8],
                                 notBefore: Date, notAfter: Date, keyUsage: KeyUsage = .digitalSignature,
                                 extendedKeyUsage: [String] = [],
                                 subjectAlternativeNames: [GeneralName] = []) -> CertificateBuilder {
        CertificateBuilder(subject: subject, subjectPublicKeyInfoDER: subjectPublicKeyInfoDER,
                           notBefore: notBefore, notAfter: notAfter,
                           basicConstraints: BasicConstraints(isCA: false), keyUsage: keyUsage,
                           extendedKeyUsage: extendedKeyUsage, subjectAlternativeNames: subjectAlternativeNames)
    }

    /// An ISO/IEC 18013-5 IACA root as Annex B profiles it, as far as its readers check:
    /// a self-signed CA with pathLenConstraint 0 and keyCertSign | cRLSign.
    public static func iaca(subject: DistinguishedName, notBefore: Date, notAfter: Date) -> CertificateBuilder {
        certificateAuthority(subject: subject, notBefore: notBefore, notAfter: notAfter, pathLength: 0)
    }

    /// An ISO/IEC 18013-5 document signer (Annex B.1.4): an end-entity certificate with
    /// digitalSignature and the critical mdoc DS extended key usage 1.0.18013.5.1.2.
    public static func mdocDocumentSigner(subject: DistinguishedName, subjectPublicKeyInfoDER: [UInt8],
                                          notBefore: Date, notAfter: Date) -> CertificateBuilder {
        endEntity(subject: subject, subjectPublicKeyInfoDER: subjectPublicKeyInfoDER, notBefore: notBefore,
                  notAfter: notAfter, extendedKeyUsage: [ExtendedKeyUsageOID.mdocDocumentSigner])
    }

    /// An ISO/IEC 18013-5 mdoc reader authentication certificate (Annex B.1.7): an
    /// end-entity certificate with digitalSignature and the critical reader EKU 1.0.18013.5.1.6.
    public static func mdocReaderAuthentication(subject: DistinguishedName, subjectPublicKeyInfoDER: [UInt8],
                                                notBefore: Date, notAfter: Date) -> CertificateBuilder {
        endEntity(subject: subject, subjectPublicKeyInfoDER: subjectPublicKeyInfoDER, notBefore: notBefore,
                  notAfter: notAfter, extendedKeyUsage: [ExtendedKeyUsageOID.mdocReaderAuthentication])
    }

    /// Signs the certificate with `key`, with issuer = subject (a self-signed root).
    public func selfSigned(with key: CertificateSigningKey) throws(CryptoError) -> X509Certificate {
        try build(signingKey: key.evpKey, issuer: nil)
    }

    /// Signs the certificate as issued by `issuer`, whose private key is `key`
    /// (checked to match the issuer certificate's public key).
    public func signed(by issuer: X509Certificate, key: CertificateSigningKey) throws(CryptoError) -> X509Certificate {
        guard X509_check_private_key(issuer.handle.pointer, key.evpKey.pointer) == 1 else {
            ERR_clear_error()
            throw .invalidCertificate(.signingKeyMismatch)
        }
        return try build(signingKey: key.evpKey, issuer: issuer)
    }

    // MARK: - Assembly

    private func build(signingKey: EVPKey, issuer: X509Certificate?) throws(CryptoError) -> X509Certificate {
        guard notBefore <= notAfter else { throw .invalidCertificate(.validityPeriodReversed) }
        guard let x509 = X509_new() else { throw openSSLError("X509_new") }
        defer { X509_free(x509) }

        guard X509_set_version(x509, 2) == 1 else { throw openSSLError("X509_set_version") }
        try setSerial(x509)
        try setNames(x509, issuer: issuer)
        try setValidity(x509)
        try setPublicKey(x509, signingKey: signingKey)

        if let basicConstraints { try addBasicConstraints(x509, basicConstraints) }
        if let keyUsage { try addKeyUsage(x509, keyUsage) }
        if !extendedKeyUsage.isEmpty { try addExtendedKeyUsage(x509) }
        if !subjectAlternativeNames.isEmpty { try addSubjectAlternativeNames(x509) }
        if includeSubjectKeyIdentifier {
            try addOctetString(x509, nid: NID_subject_key_identifier, bytes: try Self.keyDigest(x509))
        }
        if includeAuthorityKeyIdentifier, let issuer {
            let keyID: [UInt8]
            if let identifier = issuer.subjectKeyIdentifier { keyID = identifier } else { keyID = try Self.keyDigest(issuer.handle.pointer) }
            try addAuthorityKeyIdentifier(x509, keyID: keyID)
        }

        let digest: OpaquePointer?
        switch EVP_PKEY_get_base_id(signingKey.pointer) {
        case EVP_PKEY_ED25519:
            digest = nil
        case EVP_PKEY_EC:
            switch EVP_PKEY_get_bits(signingKey.pointer) {
            case 256: digest = EVP_sha256()
            case 384: digest = EVP_sha384()
            case 521: digest = EVP_sha512()
            case let bits: throw .unsupportedAlgorithm("EC key of \(bits) bits")
            }
        default:
            throw .unsupportedAlgorithm("certificate signing key type")
        }
        guard X509_sign(x509, signingKey.pointer, digest) > 0 else { throw openSSLError("X509_sign") }

        var der: UnsafeMutablePointer<UInt8>? = nil
        let length = i2d_X509(x509, &der)
        guard length > 0, let der else { throw openSSLError("i2d_X509") }
        defer { wallet_OPENSSL_free(der) }
        return try X509Certificate(derEncoded: Array(UnsafeBufferPointer(start: der, count: Int(length))))
    }

    private func setSerial(_ x509: OpaquePointer) throws(CryptoError) {
        var magnitude: [UInt8]
        if let serialNumber {
            magnitude = Array(serialNumber.drop(while: { $0 == 0 }))
            guard !magnitude.isEmpty, magnitude.count <= 20 else {
                throw .invalidCertificate(.invalidSerialNumber)
            }
        } else {
            magnitude = try SystemRandom().bytes(count: 16)
            magnitude[0] = (magnitude[0] & 0x7f) | 0x01  // 16 bytes, positive, no leading zero
        }
        guard let number = BN_bin2bn(magnitude, Int32(magnitude.count), nil) else { throw openSSLError("BN_bin2bn") }
        defer { BN_free(number) }
        guard let integer = BN_to_ASN1_INTEGER(number, nil) else { throw openSSLError("BN_to_ASN1_INTEGER") }
        defer { ASN1_INTEGER_free(integer) }
        guard X509_set_serialNumber(x509, integer) == 1 else { throw openSSLError("X509_set_serialNumber") }
    }

    private func setNames(_ x509: OpaquePointer, issuer: X509Certificate?) throws(CryptoError) {
        let subjectName = try Self.decodeName(subject.derEncoded)
        defer { X509_NAME_free(subjectName) }
        guard X509_set_subject_name(x509, subjectName) == 1 else { throw openSSLError("X509_set_subject_name") }
        if let issuer {
            guard X509_set_issuer_name(x509, X509_get_subject_name(issuer.handle.pointer)) == 1 else {
                throw openSSLError("X509_set_issuer_name")
            }
        } else {
            guard X509_set_issuer_name(x509, subjectName) == 1 else { throw openSSLError("X509_set_issuer_name") }
        }
    }

    private static func decodeName(_ der: [UInt8]) throws(CryptoError) -> OpaquePointer {
        let name: OpaquePointer? = der.withUnsafeBufferPointer { buffer in
            var cursor = buffer.baseAddress
            return d2i_X509_NAME(nil, &cursor, buffer.count)
        }
        guard let name else { throw openSSLError("d2i_X509_NAME") }
        return name
    }

    private func setValidity(_ x509: OpaquePointer) throws(CryptoError) {
        for (date, isStart) in [(notBefore, true), (notAfter, false)] {
            guard let time = ASN1_TIME_set(nil, time_t(date.wholeSecondsSince1970)) else {
                throw openSSLError("ASN1_TIME_set")
            }
            defer { ASN1_TIME_free(time) }
            let ok = isStart ? X509_set1_notBefore(x509, time) : X509_set1_notAfter(x509, time)
            guard ok == 1 else { throw openSSLError("X509_set1_notBefore/After") }
        }
    }

    private func setPublicKey(_ x509: OpaquePointer, signingKey: EVPKey) throws(CryptoError) {
        guard let spki = subjectPublicKeyInfoDER else {
            guard X509_set_pubkey(x509, signingKey.pointer) == 1 else { throw openSSLError("X509_set_pubkey") }
            return
        }
        let key: OpaquePointer? = spki.withUnsafeBufferPointer { buffer in
            guard let base = buffer.baseAddress else { return nil }
            var cursor: UnsafePointer<UInt8>? = base
            let key = d2i_PUBKEY(nil, &cursor, buffer.count)
            if let key, cursor != base + buffer.count {
                EVP_PKEY_free(key)
                return nil
            }
            return key
        }
        guard let key else {
            ERR_clear_error()
            throw .invalidKey("subjectPublicKeyInfoDER is not a supported DER SubjectPublicKeyInfo")
        }
        defer { EVP_PKEY_free(key) }
        guard X509_set_pubkey(x509, key) == 1 else { throw openSSLError("X509_set_pubkey") }
    }

    /// SHA-1 of the certificate's subjectPublicKey BIT STRING (RFC 5280 4.2.1.2 method 1).
    private static func keyDigest(_ x509: OpaquePointer) throws(CryptoError) -> [UInt8] {
        var digest = [UInt8](repeating: 0, count: 20)
        var length: UInt32 = 0
        guard X509_pubkey_digest(x509, EVP_sha1(), &digest, &length) == 1, length == 20 else {
            throw openSSLError("X509_pubkey_digest")
        }
        return digest
    }

    private func addBasicConstraints(_ x509: OpaquePointer, _ value: BasicConstraints) throws(CryptoError) {
        guard let constraints = BASIC_CONSTRAINTS_new() else { throw openSSLError("BASIC_CONSTRAINTS_new") }
        defer { BASIC_CONSTRAINTS_free(constraints) }
        constraints.pointee.ca = value.isCA ? 0xff : 0
        if let pathLength = value.pathLength {
            guard pathLength >= 0 else { throw .invalidCertificate(.invalidPathLengthConstraint) }
            guard let integer = ASN1_INTEGER_new() else { throw openSSLError("ASN1_INTEGER_new") }
            constraints.pointee.pathlen = integer  // owned by `constraints` from here
            guard ASN1_INTEGER_set_int64(integer, Int64(pathLength)) == 1 else { throw openSSLError("ASN1_INTEGER_set_int64") }
        }
        try add(x509, nid: NID_basic_constraints, value: UnsafeMutableRawPointer(constraints), critical: true)
    }

    private func addKeyUsage(_ x509: OpaquePointer, _ usage: KeyUsage) throws(CryptoError) {
        guard let bits = ASN1_BIT_STRING_new() else { throw openSSLError("ASN1_BIT_STRING_new") }
        defer { ASN1_BIT_STRING_free(bits) }
        for bit in 0..<9 where usage.rawValue & (1 << UInt16(bit)) != 0 {
            guard ASN1_BIT_STRING_set_bit(bits, Int32(bit), 1) == 1 else { throw openSSLError("ASN1_BIT_STRING_set_bit") }
        }
        try add(x509, nid: NID_key_usage, value: UnsafeMutableRawPointer(bits), critical: true)
    }

    private func addExtendedKeyUsage(_ x509: OpaquePointer) throws(CryptoError) {
        guard let stack = wallet_sk_ASN1_OBJECT_new_null() else { throw openSSLError("sk_ASN1_OBJECT_new_null") }
        defer { wallet_EXTENDED_KEY_USAGE_free(stack) }
        for oid in extendedKeyUsage {
            guard let object = OBJ_txt2obj(oid, 1) else {
                ERR_clear_error()
                throw .invalidCertificate(.invalidObjectIdentifier(oid))
            }
            guard wallet_sk_ASN1_OBJECT_push(stack, object) > 0 else {
                ASN1_OBJECT_free(object)
                throw openSSLError("sk_ASN1_OBJECT_push")
            }
        }
        try add(x509, nid: NID_ext_key_usage, value: UnsafeMutableRawPointer(stack), critical: extendedKeyUsageIsCritical)
    }

    private func addSubjectAlternativeNames(_ x509: OpaquePointer) throws(CryptoError) {
        guard let names = wallet_sk_GENERAL_NAME_new_null() else { throw openSSLError("sk_GENERAL_NAME_new_null") }
        defer { wallet_GENERAL_NAMES_free(names) }
        for entry in subjectAlternativeNames {
            let name = try Self.makeGeneralName(entry)
            guard wallet_sk_GENERAL_NAME_push(names, name) > 0 else {
                GENERAL_NAME_free(name)
                throw openSSLError("sk_GENERAL_NAME_push")
            }
        }
        try add(x509, nid: NID_subject_alt_name, value: UnsafeMutableRawPointer(names), critical: subject.isEmpty)
    }

    private static func makeGeneralName(_ entry: GeneralName) throws(CryptoError) -> UnsafeMutablePointer<GENERAL_NAME> {
        func string(_ bytes: [UInt8], octet: Bool) throws(CryptoError) -> UnsafeMutableRawPointer {
            guard let value = octet ? ASN1_OCTET_STRING_new() : ASN1_IA5STRING_new() else { throw openSSLError("ASN1_STRING_new") }
            guard ASN1_STRING_set(value, bytes, Int32(bytes.count)) == 1 else {
                ASN1_STRING_free(value)
                throw openSSLError("ASN1_STRING_set")
            }
            return UnsafeMutableRawPointer(value)
        }
        func ascii(_ text: String) throws(CryptoError) -> [UInt8] {
            let bytes = Array(text.utf8)
            guard bytes.allSatisfy({ $0 < 0x80 }) else { throw .invalidCertificate(.invalidGeneralName(entry)) }
            return bytes
        }

        guard let name = GENERAL_NAME_new() else { throw openSSLError("GENERAL_NAME_new") }
        do throws(CryptoError) {
            let type: Int32
            let value: UnsafeMutableRawPointer
            switch entry {
            case .email(let text): type = GEN_EMAIL; value = try string(try ascii(text), octet: false)
            case .dnsName(let text): type = GEN_DNS; value = try string(try ascii(text), octet: false)
            case .uri(let text): type = GEN_URI; value = try string(try ascii(text), octet: false)
            case .ipAddress(let bytes):
                guard bytes.count == 4 || bytes.count == 16 else { throw .invalidCertificate(.invalidGeneralName(entry)) }
                type = GEN_IPADD; value = try string(bytes, octet: true)
            case .directoryName(let directory):
                type = GEN_DIRNAME; value = UnsafeMutableRawPointer(try decodeName(directory.derEncoded))
            case .registeredID(let oid):
                guard let object = OBJ_txt2obj(oid, 1) else {
                    ERR_clear_error()
                    throw .invalidCertificate(.invalidGeneralName(entry))
                }
                type = GEN_RID; value = UnsafeMutableRawPointer(object)
            case .other(_, let der):
                GENERAL_NAME_free(name)
                let decoded: UnsafeMutablePointer<GENERAL_NAME>? = der.withUnsafeBufferPointer { buffer in
                    guard let base = buffer.baseAddress else { return nil }
                    var cursor: UnsafePointer<UInt8>? = base
                    let decoded = d2i_GENERAL_NAME(nil, &cursor, buffer.count)
                    if let decoded, cursor != base + buffer.count {
                        GENERAL_NAME_free(decoded)
                        return nil
                    }
                    return decoded
                }
                guard let decoded else {
                    ERR_clear_error()
                    throw .invalidCertificate(.invalidGeneralName(entry))
                }
                return decoded
            }
            GENERAL_NAME_set0_value(name, type, value)  // `name` owns `value` from here
            return name
        } catch {
            if case .other = entry {} else { GENERAL_NAME_free(name) }
            throw error
        }
    }

    private func addOctetString(_ x509: OpaquePointer, nid: Int32, bytes: [UInt8]) throws(CryptoError) {
        guard let octets = ASN1_OCTET_STRING_new() else { throw openSSLError("ASN1_OCTET_STRING_new") }
        defer { ASN1_OCTET_STRING_free(octets) }
        guard ASN1_OCTET_STRING_set(octets, bytes, Int32(bytes.count)) == 1 else { throw openSSLError("ASN1_OCTET_STRING_set") }
        try add(x509, nid: nid, value: UnsafeMutableRawPointer(octets), critical: false)
    }

    private func addAuthorityKeyIdentifier(_ x509: OpaquePointer, keyID: [UInt8]) throws(CryptoError) {
        guard let authority = AUTHORITY_KEYID_new() else { throw openSSLError("AUTHORITY_KEYID_new") }
        defer { AUTHORITY_KEYID_free(authority) }
        guard let octets = ASN1_OCTET_STRING_new() else { throw openSSLError("ASN1_OCTET_STRING_new") }
        authority.pointee.keyid = octets  // owned by `authority` from here
        guard ASN1_OCTET_STRING_set(octets, keyID, Int32(keyID.count)) == 1 else { throw openSSLError("ASN1_OCTET_STRING_set") }
        try add(x509, nid: NID_authority_key_identifier, value: UnsafeMutableRawPointer(authority), critical: false)
    }

    /// Encodes `value` (an OpenSSL extension structure, not consumed) into the certificate.
    private func add(_ x509: OpaquePointer, nid: Int32, value: UnsafeMutableRawPointer, critical: Bool) throws(CryptoError) {
        guard X509_add1_ext_i2d(x509, nid, value, critical ? 1 : 0, 0) == 1 else {
            throw openSSLError("X509_add1_ext_i2d")
        }
    }
}
