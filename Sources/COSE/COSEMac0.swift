import CBOR
import WalletCrypto

/// A COSE_Mac0 message: an HMAC tag over headers and a payload, the key being known to
/// both sides (RFC 9052 §6.2), as used by mdoc `DeviceMac`.
public struct COSEMac0: COSEMessage {
    /// The CBOR tag of a tagged COSE_Mac0.
    public static let tag: UInt64 = 17

    /// The message as parsed or built.
    public let parts: COSEMessageParts

    /// Wraps parts parsed or built for a COSE_Mac0.
    /// - Throws: `unexpectedTag` for the parts of a COSE_Sign1.
    public init(parts: COSEMessageParts) throws(COSEError) {
        self.init(built: try parts.checked(for: Self.tag))
    }

    /// Parts this type parsed or built itself.
    private init(built parts: COSEMessageParts) {
        self.parts = parts
    }

    /// The authentication tag (8 bytes for HMAC 256/64, else the full digest).
    public var authenticationTag: [UInt8] { parts.trailer }

    /// The MAC_structure for a COSE_Mac0 (RFC 9052 §6.3):
    /// `["MAC0", body_protected, external_aad, payload]`.
    public static func macStructure(bodyProtected: [UInt8], externalAAD: [UInt8], payload: [UInt8]) -> [UInt8] {
        CBOR.array([.textString("MAC0"), .byteString(bodyProtected), .byteString(externalAAD),
                    .byteString(payload)]).encoded()
    }

    /// The bytes this message's tag covers.
    /// - Throws: `missingPayload` or `unexpectedDetachedPayload`.
    public func toBeMACed(externalAAD: [UInt8] = [], detachedPayload: [UInt8]? = nil) throws(COSEError) -> [UInt8] {
        let content = try content(detachedPayload: detachedPayload)
        return Self.macStructure(bodyProtected: headers.bodyProtected, externalAAD: externalAAD, payload: content)
    }

    /// Computes a COSE_Mac0 over `payload` with the secret `key`.
    ///
    /// `alg` is put first in the protected bucket unless a bucket already names it (the
    /// same rule as `COSESign1.sign`).
    /// - Throws: `invalidKey` for an empty key, `algorithmKeyMismatch` when `algorithm` is
    ///   not an HMAC or differs from an `alg` header, `crypto` when HMAC fails.
    public static func create(payload: [UInt8], detached: Bool = false, key: SymmetricKey,
                              algorithm: COSEAlgorithm = .hmac256,
                              protected: COSEHeaderMap = COSEHeaderMap(), unprotected: COSEHeaderMap = COSEHeaderMap(),
                              externalAAD: [UInt8] = [], tagged: Bool = true) throws(COSEError) -> COSEMac0 {
        guard algorithm.isMAC else { throw .algorithmKeyMismatch }
        let headers = try COSEMessageParts.headers(for: algorithm, protected: protected, unprotected: unprotected)
        let structure = macStructure(bodyProtected: headers.bodyProtected, externalAAD: externalAAD, payload: payload)
        let tag = try computeTag(structure, key: key, algorithm: algorithm)
        return COSEMac0(built: COSEMessageParts(headers: headers, payload: detached ? nil : payload, trailer: tag,
                                                    tag: Self.tag, tagged: tagged))
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

    /// Verifies the tag with the secret `key`, comparing in constant time; with
    /// `requireProtectedAlgorithm`, an `alg` only in the unprotected bucket is refused.
    /// - Throws: `invalidMAC`, `algorithmKeyMismatch` (not an HMAC `alg`),
    ///   `missingAlgorithm`, `algorithmNotProtected`, `unsupportedAlgorithm`,
    ///   `missingPayload`, `invalidKey`.
    public func verify(key: SymmetricKey, externalAAD: [UInt8] = [], detachedPayload: [UInt8]? = nil,
                       requireProtectedAlgorithm: Bool = false) throws(COSEError) {
        let algorithm = try headers.algorithm(requireProtected: requireProtectedAlgorithm)
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
