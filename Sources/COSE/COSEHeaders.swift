import CBOR
import WalletCrypto

/// The two header buckets of a COSE structure (RFC 9052 §3).
///
/// The protected bucket is kept as the exact bytes of its byte string (`protectedBytes`),
/// which is what signatures and MACs cover; its map is decoded from those bytes and never
/// re-encoded for verification. A bucket with no parameters is sent as a zero-length byte
/// string; a byte string holding an empty map (`a0`) is accepted and kept as received.
public struct COSEHeaders: Hashable, Sendable {
    /// The content of the protected header byte string, exactly as received or built.
    public let protectedBytes: [UInt8]
    /// The protected parameters, decoded from `protectedBytes`.
    public let protected: COSEHeaderMap
    /// The unprotected parameters.
    public let unprotected: COSEHeaderMap

    /// Builds headers to send: the protected bucket is encoded in its entry order with
    /// preferred serialization (a zero-length byte string when empty).
    /// - Throws: `duplicateHeaderLabel`, `unknownCriticalHeader` or `malformed` when the
    ///   buckets break the rules of RFC 9052 §3.
    public init(protected: COSEHeaderMap = COSEHeaderMap(), unprotected: COSEHeaderMap = COSEHeaderMap(),
                understoodCriticalLabels: Set<COSEHeaderLabel> = []) throws(COSEError) {
        try protected.validateValueTypes()
        try unprotected.validateValueTypes()
        self.protected = protected
        self.unprotected = unprotected
        self.protectedBytes = protected.isEmpty ? [] : protected.cbor.encoded()
        try validate(understoodCriticalLabels: understoodCriticalLabels)
    }

    /// Reads headers as received: `protectedBytes` is the content of the protected byte
    /// string and must be empty or one CBOR map; `unprotected` is the unprotected map.
    /// - Parameter understoodCriticalLabels: labels the caller processes in addition to
    ///   `COSEHeaderLabel.understood`, which `crit` may therefore list.
    public init(protectedBytes: [UInt8], unprotected: CBOR,
                understoodCriticalLabels: Set<COSEHeaderLabel> = []) throws(COSEError) {
        if protectedBytes.isEmpty {
            protected = COSEHeaderMap()
        } else {
            let value: CBOR
            do { value = try CBOR.decode(protectedBytes, options: COSEDecoding.options) } catch { throw .cbor(error) }
            guard case .map = value else { throw .malformed(.headerNotAMap) }
            protected = try COSEHeaderMap(cbor: value)
        }
        self.protectedBytes = protectedBytes
        self.unprotected = try COSEHeaderMap(cbor: unprotected)
        try validate(understoodCriticalLabels: understoodCriticalLabels)
    }

    /// The protected bucket as it enters a Sig_structure or MAC_structure: the received
    /// bytes, except that a bucket holding no parameters is a zero-length byte string
    /// (RFC 9052 §4.4 and §6.3: "if there are no protected attributes, a zero-length
    /// byte string is used").
    public var bodyProtected: [UInt8] { protected.isEmpty ? [] : protectedBytes }

    /// The value under `label`, looked up in the protected bucket first.
    public subscript(label: COSEHeaderLabel) -> CBOR? { protected[label] ?? unprotected[label] }

    /// The algorithm (`alg`, label 1) from either bucket.
    /// - Throws: `missingAlgorithm`, `unsupportedAlgorithm` or `unsupportedAlgorithmName`.
    public func algorithm() throws(COSEError) -> COSEAlgorithm {
        try algorithm(requireProtected: false)
    }

    /// The algorithm (`alg`, label 1); with `requireProtected`, only from the protected
    /// bucket, which the signature or tag covers (RFC 9052 §3.1 recommends it; ISO/IEC
    /// 18013-5 requires it for issuerAuth, deviceSignature, deviceMac and readerAuth).
    /// - Throws: `algorithmNotProtected` when it is only unprotected and must not be,
    ///   `missingAlgorithm`, `unsupportedAlgorithm` or `unsupportedAlgorithmName`.
    public func algorithm(requireProtected: Bool) throws(COSEError) -> COSEAlgorithm {
        if let algorithm = try protected.algorithm() { return algorithm }
        guard let algorithm = try unprotected.algorithm() else { throw .missingAlgorithm }
        guard !requireProtected else { throw .algorithmNotProtected }
        return algorithm
    }

    /// `kid` (4) from either bucket.
    public var keyID: [UInt8]? { protected.keyID ?? unprotected.keyID }

    /// `content type` (3) from either bucket.
    public var contentType: COSEContentType? { protected.contentType ?? unprotected.contentType }

    /// `IV` (5) from either bucket.
    public var iv: [UInt8]? { protected.iv ?? unprotected.iv }

    /// `crit` (2), which is only allowed in the protected bucket.
    public var critical: [COSEHeaderLabel] { protected.critical }

    /// The `x5chain` (33) DER certificates, leaf first, from either bucket (empty when absent).
    public var x5chainDER: [[UInt8]] { protected.x5chainDER ?? unprotected.x5chainDER ?? [] }

    /// The `x5chain` (33) certificates, leaf first, from either bucket.
    /// - Throws: `invalidCertificate` when the header is absent or a certificate does not parse.
    public func x5chain() throws(COSEError) -> [X509Certificate] {
        guard !x5chainDER.isEmpty else { throw .invalidCertificate }
        var certificates: [X509Certificate] = []
        for der in x5chainDER {
            do { certificates.append(try X509Certificate(derEncoded: der)) } catch { throw .invalidCertificate }
        }
        return certificates
    }

    /// RFC 9052 §3: no label in both buckets; `crit` only protected, naming protected
    /// labels this implementation understands.
    private func validate(understoodCriticalLabels: Set<COSEHeaderLabel>) throws(COSEError) {
        let protectedLabels = Set(protected.labels)
        for label in unprotected.labels where protectedLabels.contains(label) {
            throw .duplicateHeaderLabel(label)
        }
        if unprotected[.critical] != nil { throw .malformed(.criticalInUnprotectedBucket) }
        for label in protected.critical {
            guard protectedLabels.contains(label),
                  COSEHeaderLabel.understood.contains(label) || understoodCriticalLabels.contains(label) else {
                throw .unknownCriticalHeader(label)
            }
        }
    }
}

/// Shared decoding settings for COSE input.
enum COSEDecoding {
    /// Strict but general: definite or indefinite lengths, no duplicate map keys, with
    /// limits suited to credentials (a COSE structure beyond 16 MiB is rejected).
    static let options = CBORDecodingOptions(maxDepth: 64, maxInputSize: 16 << 20, rejectDuplicateMapKeys: true)
}
