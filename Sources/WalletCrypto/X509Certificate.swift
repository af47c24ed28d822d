import WalletEncoding
internal import COpenSSL
import Foundation

/// Owns one parsed `X509*` and frees it with the last reference. The certificate
/// is never mutated after parsing, hence `@unchecked Sendable` (OpenSSL 3 guards
/// its internal extension cache with a lock).
final class X509Handle: @unchecked Sendable {
    let pointer: OpaquePointer
    /// The certified key once imported (guarded by `lock`): every copy of the certificate,
    /// and every later parse of the same bytes that `ParsedCertificates` answers, shares
    /// this handle, so a verifier that sees one document signer many times imports its key
    /// once.
    private var importedKey: PublicKey?
    private let lock = NSLock()

    init(taking pointer: OpaquePointer) { self.pointer = pointer }

    deinit { X509_free(pointer) }

    /// The key certified by `spki` (this certificate's SubjectPublicKeyInfo), imported at
    /// the first call. A failure is not kept: the next call tries again and fails the same way.
    func certifiedKey(spki: [UInt8]) throws(CryptoError) -> PublicKey {
        lock.lock()
        defer { lock.unlock() }
        if let importedKey { return importedKey }
        let key = try PublicKey(spkiDER: spki)
        importedKey = key
        return key
    }
}

/// The certificates parsed last, keyed by their exact DER bytes: at most `capacity`
/// of at most `maxSize` bytes each, the oldest dropped first. A certificate is immutable
/// once parsed, so a kept one is the same value a fresh parse would give.
final class ParsedCertificates: @unchecked Sendable {
    static let shared = ParsedCertificates()

    private struct Key: Hashable {
        let der: [UInt8]
        func hash(into hasher: inout Hasher) { der.withUnsafeBytes { hasher.combine(bytes: $0) } }
    }

    let capacity = 64
    let maxSize = 16 * 1024
    private let lock = NSLock()
    private var kept: [Key: X509Certificate] = [:]
    private var order: [Key] = []

    func certificate(for der: [UInt8]) -> X509Certificate? {
        guard der.count <= maxSize else { return nil }
        let key = Key(der: der)
        return lock.withLock { kept[key] }
    }

    func keep(_ certificate: X509Certificate) {
        guard certificate.derEncoded.count <= maxSize else { return }
        let key = Key(der: certificate.derEncoded)
        lock.withLock {
            guard kept.updateValue(certificate, forKey: key) == nil else { return }
            order.append(key)
            if order.count > capacity { kept[order.removeFirst()] = nil }
        }
    }

    /// The number of certificates kept (for tests).
    var count: Int { lock.withLock { kept.count } }
}

/// An X.509 v1-v3 certificate parsed from DER or PEM (RFC 5280), such as an ISO
/// 18013-5 IACA or document-signer certificate, a reader certificate or a JWS x5c entry.
///
/// All fields are decoded once at parse time; equality and hashing use the DER bytes.
public struct X509Certificate: Sendable, Hashable, CustomStringConvertible {
    let handle: X509Handle

    /// The exact DER bytes the certificate was parsed from.
    public let derEncoded: [UInt8]
    /// The certificate version: 1, 2 or 3.
    public let version: Int
    /// The serial number's magnitude as big-endian bytes (no leading zero byte).
    public let serialNumber: [UInt8]
    /// True when the encoded serial number is negative (not allowed by RFC 5280, but parsed).
    public let serialNumberIsNegative: Bool
    /// The subject name.
    public let subject: DistinguishedName
    /// The issuer name.
    public let issuer: DistinguishedName
    /// The start of the validity period.
    public let notBefore: Date
    /// The end of the validity period (inclusive).
    public let notAfter: Date
    /// The DER SubjectPublicKeyInfo of the certified key.
    public let subjectPublicKeyInfoDER: [UInt8]
    /// The dotted OID of the signature algorithm (e.g. `1.2.840.10045.4.3.2` for ecdsa-with-SHA256).
    public let signatureAlgorithmOID: String
    /// The signature value (the BIT STRING content; DER ECDSA-Sig-Value for ECDSA).
    public let signature: [UInt8]
    /// SHA-256 of `derEncoded`.
    public let sha256Fingerprint: [UInt8]
    let extensions: X509DecodedExtensions

    /// Parses one DER-encoded certificate; bytes after the certificate are rejected.
    ///
    /// Recently parsed certificates are kept, keyed by their exact DER bytes, so a
    /// verifier that sees one issuer's document-signer or reader certificate many times
    /// parses it once. Only successful parses are kept; the result is the same either way.
    public init(derEncoded: [UInt8]) throws(CryptoError) {
        if let cached = ParsedCertificates.shared.certificate(for: derEncoded) {
            self = cached
            return
        }
        try self.init(parsing: derEncoded)
        ParsedCertificates.shared.keep(self)
    }

    private init(parsing derEncoded: [UInt8]) throws(CryptoError) {
        let parsed: OpaquePointer? = derEncoded.withUnsafeBufferPointer { buffer in
            guard let base = buffer.baseAddress else { return nil }
            var cursor: UnsafePointer<UInt8>? = base
            guard let x509 = d2i_X509(nil, &cursor, buffer.count) else { return nil }
            guard cursor == base + buffer.count else {
                X509_free(x509)
                return nil
            }
            return x509
        }
        guard let parsed else {
            ERR_clear_error()
            if derEncoded.isEmpty { throw .malformedEncoding("empty certificate") }
            throw .malformedEncoding("not a single DER-encoded X.509 certificate")
        }
        try self.init(taking: parsed, der: derEncoded)
    }

    /// Parses a PEM document holding exactly one CERTIFICATE block.
    public init(pemEncoded: String) throws(CryptoError) {
        let certificates = try Self.parsePEM(pemEncoded)
        guard certificates.count == 1 else {
            throw .malformedEncoding("expected one CERTIFICATE block, found \(certificates.count)")
        }
        self = certificates[0]
    }

    /// Parses every `-----BEGIN CERTIFICATE-----` block of a PEM document (RFC 7468,
    /// strict base64; text between blocks and blocks with other labels are ignored).
    /// Throws when there is no certificate block or a block is malformed.
    public static func parsePEM(_ pem: String) throws(CryptoError) -> [X509Certificate] {
        var certificates: [X509Certificate] = []
        for block in try X509PEM.blocks(pem) where block.label == "CERTIFICATE" {
            certificates.append(try X509Certificate(derEncoded: block.der))
        }
        guard !certificates.isEmpty else { throw .malformedEncoding("no CERTIFICATE block in PEM") }
        return certificates
    }

    /// Takes ownership of a freshly parsed `X509*` (freed on failure too).
    private init(taking x509: OpaquePointer, der: [UInt8]) throws(CryptoError) {
        handle = X509Handle(taking: x509)
        derEncoded = der
        // The encoded INTEGER is 0, 1 or 2 for v1-v3; OpenSSL hands back any `long` the DER
        // holds, so the number a certificate claims is range-checked before it is shifted
        // (Int.max + 1 would trap).
        let encodedVersion = X509_get_version(x509)
        guard (0...2).contains(encodedVersion) else {
            let claimed = Int(encodedVersion).addingReportingOverflow(1)
            throw .invalidCertificate(.unsupportedVersion(claimed.overflow ? Int.max : claimed.partialValue))
        }
        version = Int(encodedVersion) + 1

        guard let serial = X509_get0_serialNumber(x509) else { throw .invalidCertificate(.missingField(.serialNumber)) }
        var magnitude = x509StringBytes(serial)
        while magnitude.count > 1, magnitude[0] == 0 { magnitude.removeFirst() }
        serialNumber = magnitude
        serialNumberIsNegative = ASN1_STRING_type(serial) == V_ASN1_NEG_INTEGER

        guard let subjectName = X509_get_subject_name(x509) else { throw .invalidCertificate(.missingField(.subject)) }
        guard let issuerName = X509_get_issuer_name(x509) else { throw .invalidCertificate(.missingField(.issuer)) }
        subject = try DistinguishedName(borrowing: subjectName)
        issuer = try DistinguishedName(borrowing: issuerName)

        notBefore = try x509Date(X509_get0_notBefore(x509), .notBefore)
        notAfter = try x509Date(X509_get0_notAfter(x509), .notAfter)

        guard let publicKey = X509_get_X509_PUBKEY(x509) else { throw .invalidCertificate(.missingField(.subjectPublicKeyInfo)) }
        var spki: UnsafeMutablePointer<UInt8>? = nil
        let spkiLength = i2d_X509_PUBKEY(publicKey, &spki)
        guard spkiLength > 0, let spki else { throw openSSLError("i2d_X509_PUBKEY") }
        subjectPublicKeyInfoDER = Array(UnsafeBufferPointer(start: spki, count: Int(spkiLength)))
        wallet_OPENSSL_free(spki)

        var signatureBits: UnsafePointer<ASN1_BIT_STRING>? = nil
        var algorithm: UnsafePointer<X509_ALGOR>? = nil
        X509_get0_signature(&signatureBits, &algorithm, x509)
        guard let signatureBits, let algorithm else { throw .invalidCertificate(.missingField(.signature)) }
        signature = x509StringBytes(signatureBits)
        var object: OpaquePointer? = nil
        X509_ALGOR_get0(&object, nil, nil, algorithm)
        guard let object else { throw .invalidCertificate(.missingField(.signatureAlgorithm)) }
        signatureAlgorithmOID = try x509ObjectIdentifier(object)

        extensions = try X509DecodedExtensions(x509: x509)
        sha256Fingerprint = try x509SHA256(der)
    }

    /// Two certificates are equal when their DER encodings are.
    public static func == (lhs: X509Certificate, rhs: X509Certificate) -> Bool {
        lhs.derEncoded == rhs.derEncoded
    }

    /// Hashes the DER encoding.
    public func hash(into hasher: inout Hasher) {
        hasher.combine(derEncoded)
    }

    /// The certified public key (EC on P-256/P-384/P-521, or Ed25519); other key
    /// types throw `CryptoError.unsupportedKey`.
    public var publicKey: PublicKey {
        get throws(CryptoError) { try handle.certifiedKey(spki: subjectPublicKeyInfoDER) }
    }

    /// The serial number as lowercase hex (magnitude, no separators).
    public var serialNumberHex: String { Hex.encode(serialNumber) }

    /// The SHA-256 fingerprint as lowercase hex.
    public var sha256FingerprintHex: String { Hex.encode(sha256Fingerprint) }

    /// The OpenSSL short name of the signature algorithm (e.g. `ecdsa-with-SHA256`, `ED25519`),
    /// or the dotted OID when OpenSSL does not know it.
    public var signatureAlgorithmName: String {
        guard let object = OBJ_txt2obj(signatureAlgorithmOID, 1) else {
            ERR_clear_error()
            return signatureAlgorithmOID
        }
        defer { ASN1_OBJECT_free(object) }
        let nid = OBJ_obj2nid(object)
        guard nid != NID_undef, let name = OBJ_nid2sn(nid) else { return signatureAlgorithmOID }
        return String(cString: name)
    }

    /// The basicConstraints extension, or nil when absent.
    public var basicConstraints: BasicConstraints? { extensions.basicConstraints }
    /// The keyUsage extension, or nil when absent.
    public var keyUsage: KeyUsage? { extensions.keyUsage }
    /// The extendedKeyUsage purposes as dotted OIDs; empty when the extension is absent
    /// (check `hasExtendedKeyUsage` to tell an absent extension from an empty one).
    public var extendedKeyUsage: [String] { extensions.extendedKeyUsage ?? [] }
    /// True when the certificate has an extendedKeyUsage extension.
    public var hasExtendedKeyUsage: Bool { extensions.extendedKeyUsage != nil }
    /// The subjectAltName entries in encoding order; empty when absent.
    public var subjectAlternativeNames: [GeneralName] { extensions.subjectAlternativeNames }
    /// The issuerAltName entries in encoding order; empty when absent.
    public var issuerAlternativeNames: [GeneralName] { extensions.issuerAlternativeNames }
    /// The dNSName entries of the subjectAltName.
    public var subjectAlternativeDNSNames: [String] {
        subjectAlternativeNames.compactMap { if case .dnsName(let name) = $0 { name } else { nil } }
    }
    /// The URI entries of the subjectAltName.
    public var subjectAlternativeURIs: [String] {
        subjectAlternativeNames.compactMap { if case .uri(let uri) = $0 { uri } else { nil } }
    }
    /// The subjectKeyIdentifier bytes, or nil when absent.
    public var subjectKeyIdentifier: [UInt8]? { extensions.subjectKeyIdentifier }
    /// The keyIdentifier of the authorityKeyIdentifier extension, or nil when absent.
    public var authorityKeyIdentifier: [UInt8]? { extensions.authorityKeyIdentifier }
    /// The dotted OIDs of all extensions, in encoding order.
    public var extensionOIDs: [String] { extensions.extensionOIDs }
    /// The dotted OIDs of the extensions marked critical, in encoding order.
    public var criticalExtensionOIDs: [String] { extensions.criticalExtensionOIDs }

    /// True when subject equals issuer and the certificate's signature verifies with
    /// its own public key.
    public var isSelfSigned: Bool {
        let result = X509_self_signed(handle.pointer, 1)
        ERR_clear_error()
        return result == 1
    }

    /// True when `date` lies within `notBefore ... notAfter`.
    public func isValid(at date: Date) -> Bool {
        notBefore <= date && date <= notAfter
    }

    /// The certificate as one PEM `CERTIFICATE` block (64-column base64, trailing newline).
    public var pemEncoded: String {
        X509PEM.encode(label: "CERTIFICATE", der: derEncoded)
    }

    /// A short description: subject, issuer and serial number.
    public var description: String {
        "X509Certificate(subject: \(subject.rfc4514String), issuer: \(issuer.rfc4514String), serial: \(serialNumberHex))"
    }
}

/// An ASN1_TIME as a `Date` (UTC).
func x509Date(_ time: UnsafePointer<ASN1_TIME>?, _ field: CertificateField) throws(CryptoError) -> Date {
    guard let time else { throw .invalidCertificate(.missingField(field)) }
    var parts = tm()
    guard ASN1_TIME_to_tm(time, &parts) == 1 else {
        ERR_clear_error()
        throw .invalidCertificate(.malformedField(field))
    }
    let days = x509DaysFromCivil(year: Int(parts.tm_year) + 1900, month: Int(parts.tm_mon) + 1, day: Int(parts.tm_mday))
    let seconds = days * 86_400 + Int(parts.tm_hour) * 3600 + Int(parts.tm_min) * 60 + Int(parts.tm_sec)
    return Date(timeIntervalSince1970: TimeInterval(seconds))
}

/// Days since 1970-01-01 of a proleptic Gregorian date.
func x509DaysFromCivil(year: Int, month: Int, day: Int) -> Int {
    let y = month <= 2 ? year - 1 : year
    let era = (y >= 0 ? y : y - 399) / 400
    let yearOfEra = y - era * 400
    let dayOfYear = (153 * (month + (month > 2 ? -3 : 9)) + 2) / 5 + day - 1
    let dayOfEra = yearOfEra * 365 + yearOfEra / 4 - yearOfEra / 100 + dayOfYear
    return era * 146_097 + dayOfEra - 719_468
}

/// SHA-256 of bytes via EVP_Digest.
func x509SHA256(_ bytes: [UInt8]) throws(CryptoError) -> [UInt8] {
    var digest = [UInt8](repeating: 0, count: 32)
    var length: UInt32 = 0
    let ok = bytes.withUnsafeBytes { input in
        EVP_Digest(input.baseAddress, input.count, &digest, &length, EVP_sha256(), nil)
    }
    guard ok == 1, length == 32 else { throw openSSLError("EVP_Digest") }
    return digest
}

/// Strict PEM (RFC 7468) framing and base64.
enum X509PEM {
    struct Block {
        let label: String
        let der: [UInt8]
    }

    static func blocks(_ pem: String) throws(CryptoError) -> [Block] {
        var blocks: [Block] = []
        var label: String? = nil
        var body = ""
        for rawLine in pem.split(omittingEmptySubsequences: false, whereSeparator: { $0 == "\n" || $0 == "\r\n" || $0 == "\r" }) {
            let line = rawLine.trimmingCharacters(in: .whitespaces)
            if let current = label {
                if line.hasPrefix("-----END ") {
                    guard line == "-----END \(current)-----" else {
                        throw .malformedEncoding("PEM END line does not match BEGIN \(current)")
                    }
                    // The framing above removed the line breaks; what is left must be
                    // padded, canonical base64 (RFC 7468 §3 `stricttextualmsg`).
                    guard let der = Base64.decodeStrict(body), !der.isEmpty else {
                        throw .malformedEncoding("invalid base64 in PEM \(current) block")
                    }
                    blocks.append(Block(label: current, der: der))
                    label = nil
                    body = ""
                } else if line.hasPrefix("-----") {
                    throw .malformedEncoding("unterminated PEM \(current) block")
                } else {
                    body += line
                }
            } else if line.hasPrefix("-----BEGIN ") {
                guard line.hasSuffix("-----"), line.count > 16 else {
                    throw .malformedEncoding("malformed PEM BEGIN line")
                }
                label = String(line.dropFirst(11).dropLast(5))
            }
        }
        if let label { throw .malformedEncoding("unterminated PEM \(label) block") }
        return blocks
    }

    /// A PEM block with the body in lines of 64 characters (RFC 7468 §2).
    static func encode(label: String, der: [UInt8]) -> String {
        let encoded = Array(Base64.encode(der).utf8)
        var lines = "-----BEGIN \(label)-----\n"
        var start = 0
        while start < encoded.count {
            lines += String(decoding: encoded[start..<min(start + 64, encoded.count)], as: UTF8.self) + "\n"
            start += 64
        }
        return lines + "-----END \(label)-----\n"
    }
}
