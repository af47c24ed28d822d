import CBOR
import WalletCrypto

/// A COSE_Mac0 message: an HMAC tag over headers and a payload, the key being known to
/// both sides (RFC 9052 §6.2), as used by mdoc `DeviceMac`.
public struct COSEMac0: Hashable, Sendable {
    /// The CBOR tag of a tagged COSE_Mac0.
    public static let tag: UInt64 = 17

    /// The protected and unprotected headers.
    public let headers: COSEHeaders
    /// The payload, or nil when it is detached.
    public let payload: [UInt8]?
    /// The authentication tag (8 bytes for HMAC 256/64, else the full digest).
    public let authenticationTag: [UInt8]
    /// Whether the message carried (or is encoded with) tag 17.
    public let isTagged: Bool
    /// The encoded message: the bytes it was parsed from, or the encoding of a built one.
    public let encodedBytes: [UInt8]

    /// Parses a COSE_Mac0, tagged (17) or untagged.
    /// - Throws: `cbor`, `unexpectedTag`, `malformed` and the header errors of `COSEHeaders`.
    public init(encoded bytes: [UInt8], understoodCriticalLabels: Set<COSEHeaderLabel> = []) throws(COSEError) {
        let item: CBORItem
        do { item = try CBOR.decodeItem(bytes, options: COSEDecoding.options) } catch { throw .cbor(error) }
        try self.init(item: item, understoodCriticalLabels: understoodCriticalLabels)
    }

    /// Parses a COSE_Mac0 found inside a larger decoded structure, keeping its exact bytes.
    public init(item: CBORItem, understoodCriticalLabels: Set<COSEHeaderLabel> = []) throws(COSEError) {
        let parts = try COSEMessageParts(value: item.value, expectedTag: Self.tag, what: "COSE_Mac0",
                                         understoodCriticalLabels: understoodCriticalLabels)
        headers = parts.headers
        payload = parts.payload
        authenticationTag = parts.trailer
        isTagged = parts.isTagged
        encodedBytes = Array(item.encodedBytes)
    }

    /// Parses a COSE_Mac0 from a decoded value; `encodedBytes` is the value's re-encoding.
    public init(cbor: CBOR, understoodCriticalLabels: Set<COSEHeaderLabel> = []) throws(COSEError) {
        let parts = try COSEMessageParts(value: cbor, expectedTag: Self.tag, what: "COSE_Mac0",
                                         understoodCriticalLabels: understoodCriticalLabels)
        headers = parts.headers
        payload = parts.payload
        authenticationTag = parts.trailer
        isTagged = parts.isTagged
        encodedBytes = cbor.encoded()
    }

    private init(headers: COSEHeaders, payload: [UInt8]?, tag: [UInt8], tagged: Bool) {
        self.headers = headers
        self.payload = payload
        self.authenticationTag = tag
        self.isTagged = tagged
        self.encodedBytes = COSEMessageParts.encode(headers: headers, payload: payload, trailer: tag,
                                                    tag: tagged ? Self.tag : nil)
    }

    /// The message as a CBOR value (tagged when `isTagged`).
    public var cbor: CBOR {
        COSEMessageParts.value(headers: headers, payload: payload, trailer: authenticationTag, tag: isTagged ? Self.tag : nil)
    }

    /// The MAC_structure for a COSE_Mac0 (RFC 9052 §6.3):
    /// `["MAC0", body_protected, external_aad, payload]`.
    public static func macStructure(bodyProtected: [UInt8], externalAAD: [UInt8], payload: [UInt8]) -> [UInt8] {
        CBOR.array([.textString("MAC0"), .byteString(bodyProtected), .byteString(externalAAD),
                    .byteString(payload)]).encoded()
    }

    /// The bytes this message's tag covers.
    /// - Throws: `missingPayload` or `unexpectedDetachedPayload`.
    public func toBeMACed(externalAAD: [UInt8] = [], detachedPayload: [UInt8]? = nil) throws(COSEError) -> [UInt8] {
        let content = try COSEMessageParts.resolvePayload(attached: payload, detached: detachedPayload)
        return Self.macStructure(bodyProtected: headers.bodyProtected, externalAAD: externalAAD, payload: content)
    }

    /// Computes a COSE_Mac0 over `payload` with the secret `key`.
    ///
    /// `alg` is put first in the protected bucket unless it is already there.
    /// - Throws: `invalidKey` for an empty key, `algorithmKeyMismatch` when `algorithm` is
    ///   not an HMAC or differs from an `alg` header, `crypto` when HMAC fails.
    public static func create(payload: [UInt8], detached: Bool = false, key: SymmetricKey,
                              algorithm: COSEAlgorithm = .hmac256,
                              protected: COSEHeaderMap = COSEHeaderMap(), unprotected: COSEHeaderMap = COSEHeaderMap(),
                              externalAAD: [UInt8] = [], tagged: Bool = true) throws(COSEError) -> COSEMac0 {
        guard algorithm.isMAC, try COSEMessageParts.algorithmFits(algorithm, protected: protected, unprotected: unprotected) else {
            throw .algorithmKeyMismatch
        }
        var protected = protected
        if protected[.algorithm] == nil && unprotected[.algorithm] == nil {
            protected = COSEHeaderMap([(.algorithm, CBOR(algorithm.rawValue))] + protected.entries.map { ($0.label, $0.value) })
        }
        let headers = try COSEHeaders(protected: protected, unprotected: unprotected)
        let structure = macStructure(bodyProtected: headers.bodyProtected, externalAAD: externalAAD, payload: payload)
        let tag = try computeTag(structure, key: key, algorithm: algorithm)
        return COSEMac0(headers: headers, payload: detached ? nil : payload, tag: tag, tagged: tagged)
    }

    /// Computes a COSE_Mac0 with a symmetric COSE_Key (kty 4); the key's `alg`, when
    /// present, must be `algorithm`.
    public static func create(payload: [UInt8], detached: Bool = false, key: COSEKey,
                              algorithm: COSEAlgorithm = .hmac256,
                              protected: COSEHeaderMap = COSEHeaderMap(), unprotected: COSEHeaderMap = COSEHeaderMap(),
                              externalAAD: [UInt8] = [], tagged: Bool = true) throws(COSEError) -> COSEMac0 {
        try create(payload: payload, detached: detached, key: try key.macKey(for: algorithm), algorithm: algorithm,
                   protected: protected, unprotected: unprotected, externalAAD: externalAAD, tagged: tagged)
    }

    /// Verifies the tag with the secret `key`, comparing in constant time.
    /// - Throws: `invalidMAC`, `algorithmKeyMismatch` (not an HMAC `alg`),
    ///   `missingAlgorithm`, `unsupportedAlgorithm`, `missingPayload`, `invalidKey`.
    public func verify(key: SymmetricKey, externalAAD: [UInt8] = [], detachedPayload: [UInt8]? = nil) throws(COSEError) {
        let algorithm = try headers.algorithm()
        guard algorithm.isMAC else { throw .algorithmKeyMismatch }
        let structure = try toBeMACed(externalAAD: externalAAD, detachedPayload: detachedPayload)
        let expected = try Self.computeTag(structure, key: key, algorithm: algorithm)
        guard ConstantTime.equals(expected, authenticationTag) else { throw .invalidMAC }
    }

    /// Verifies the tag with a symmetric COSE_Key.
    public func verify(key: COSEKey, externalAAD: [UInt8] = [], detachedPayload: [UInt8]? = nil) throws(COSEError) {
        try verify(key: try key.macKey(for: try headers.algorithm()), externalAAD: externalAAD,
                   detachedPayload: detachedPayload)
    }

    /// HMAC over `structure`, truncated to the algorithm's tag length.
    static func computeTag(_ structure: [UInt8], key: SymmetricKey, algorithm: COSEAlgorithm) throws(COSEError) -> [UInt8] {
        guard let hash = algorithm.macHash, let length = algorithm.macTagLength else { throw .algorithmKeyMismatch }
        guard key.byteCount > 0 else { throw .invalidKey(.emptySymmetricKey) }
        let full: [UInt8]
        do {
            full = try HMAC.authenticationCode(for: structure, key: key, algorithm: hash)
        } catch {
            throw .crypto(error)
        }
        return Array(full.prefix(length))
    }
}
