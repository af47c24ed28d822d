import Foundation
import WalletCrypto
import WalletRuntime
import WalletEncoding

/// A JWS in compact serialization (RFC 7515 §7.1).
///
/// Verification is always over the received `header.payload` ASCII, never over a
/// re-serialization. `alg: none` is refused when parsing.
public struct JWS: Sendable, Equatable {
    /// The protected header.
    public let header: JOSEHeader
    /// The algorithm named in the header.
    public let algorithm: JWSAlgorithm
    /// The payload as received (base64url), or empty for a detached payload.
    public let encodedPayload: String
    /// The decoded payload bytes.
    public let payload: [UInt8]
    /// The decoded signature bytes.
    public let signature: [UInt8]
    /// Whether the payload was detached (RFC 7515 Appendix F) in the serialization.
    public let isPayloadDetached: Bool

    /// Parses a compact JWS. With `detachedPayload`, the payload part must be empty
    /// and the given bytes are used in its place.
    public init(compact: String, detachedPayload: [UInt8]? = nil) throws(JOSEError) {
        let parts = compact.compactParts(separatedBy: UInt8(ascii: "."))
        guard parts.count == 3 else { throw .malformed(.partCount(expected: 3, actual: parts.count)) }
        let header = try JOSEHeader(encoded: parts[0])
        guard let alg = header.algorithm else { throw .malformed(.missingHeader("alg")) }
        self.algorithm = try JWSAlgorithm(header: alg)
        self.header = header
        if let detachedPayload {
            guard parts[1].isEmpty else { throw .malformed(.partNotEmpty(.payload)) }
            self.encodedPayload = Base64URL.encode(detachedPayload)
            self.payload = detachedPayload
            self.isPayloadDetached = true
        } else {
            guard let payload = Base64URL.decodeStrict(parts[1]) else {
                throw .malformed(.notBase64URL(.payload))
            }
            self.encodedPayload = String(parts[1])
            self.payload = payload
            self.isPayloadDetached = false
        }
        guard let signature = Base64URL.decodeStrict(parts[2]) else {
            throw .malformed(.notBase64URL(.signature))
        }
        self.signature = signature
    }

    private init(header: JOSEHeader, algorithm: JWSAlgorithm, encodedPayload: String, payload: [UInt8], signature: [UInt8]) {
        self.header = header
        self.algorithm = algorithm
        self.encodedPayload = encodedPayload
        self.payload = payload
        self.signature = signature
        self.isPayloadDetached = false
    }

    /// The exact ASCII bytes the signature covers: `BASE64URL(header) || '.' || BASE64URL(payload)`.
    public var signingInput: [UInt8] { header.encoded.utf8Bytes + [UInt8(ascii: ".")] + encodedPayload.utf8Bytes }

    /// The compact serialization (with an empty payload part when the payload is detached).
    public var compactSerialization: String {
        header.encoded + "." + (isPayloadDetached ? "" : encodedPayload) + "." + Base64URL.encode(signature)
    }

    // MARK: Signing

    /// The header members for signing: `alg` plus the optional parameters.
    static func headerMembers(
        algorithm: JWSAlgorithm, type: String?, keyID: String?, jwk: JWK?, x5c: [X509Certificate]?,
        critical: [String]?, additional: JSONObject
    ) throws(JOSEError) -> JSONObject {
        var members = additional
        members["alg"] = .string(algorithm.rawValue)
        if let type { members["typ"] = .string(type) }
        if let keyID { members["kid"] = .string(keyID) }
        if let jwk { members["jwk"] = try jwk.publicJWK.jsonValue }
        if let x5c { members["x5c"] = .array(x5c.map { .string(Base64.encode($0.derEncoded)) }) }
        if let critical { members["crit"] = .array(critical.map { .string($0) }) }
        return members
    }

    /// Signs `payload` with `signer` (a software key or a key in a secure area that
    /// never leaves it). The header gets `alg` from the signer and the given parameters;
    /// `additionalHeaders` may carry any other members (`nonce`, `htm` ...).
    public static func sign(
        payload: [UInt8], signer: any Signer, type: String? = nil, keyID: String? = nil, jwk: JWK? = nil,
        x5c: [X509Certificate]? = nil, critical: [String]? = nil, additionalHeaders: JSONObject = [:]
    ) async throws(JOSEError) -> JWS {
        let algorithm = JWSAlgorithm(signer.algorithm)
        let header = try JOSEHeader(members: try headerMembers(
            algorithm: algorithm, type: type, keyID: keyID, jwk: jwk, x5c: x5c, critical: critical,
            additional: additionalHeaders))
        let encodedPayload = Base64URL.encode(payload)
        let input = Array((header.encoded + "." + encodedPayload).utf8)
        let signature: [UInt8]
        do {
            signature = try await signer.sign(input)
        } catch {
            throw .keyOperation(error)
        }
        guard signature.count == algorithm.signatureByteCount else {
            throw .malformedSignature(expectedLength: algorithm.signatureByteCount, actualLength: signature.count)
        }
        return JWS(header: header, algorithm: algorithm, encodedPayload: encodedPayload, payload: payload, signature: signature)
    }

    /// Signs `payload` with HS256 under `hmacKey`.
    public static func sign(
        payload: [UInt8], hmacKey: SymmetricKey, type: String? = nil, keyID: String? = nil,
        critical: [String]? = nil, additionalHeaders: JSONObject = [:]
    ) throws(JOSEError) -> JWS {
        guard hmacKey.byteCount > 0 else { throw .invalidKey(.emptySymmetricKey) }
        let header = try JOSEHeader(members: try headerMembers(
            algorithm: .hs256, type: type, keyID: keyID, jwk: nil, x5c: nil, critical: critical,
            additional: additionalHeaders))
        let encodedPayload = Base64URL.encode(payload)
        let signature = try JOSECrypto.hmacSHA256(Array((header.encoded + "." + encodedPayload).utf8), key: hmacKey)
        return JWS(header: header, algorithm: .hs256, encodedPayload: encodedPayload, payload: payload, signature: signature)
    }

    // MARK: Verification

    private func checkSignatureLength() throws(JOSEError) {
        guard signature.count == algorithm.signatureByteCount else {
            throw .malformedSignature(expectedLength: algorithm.signatureByteCount, actualLength: signature.count)
        }
    }

    /// Verifies the signature with `key`. The key must fit `alg` (curve included);
    /// every `crit` parameter must be in `understoodCriticalHeaders`.
    public func verify(with key: PublicKey, understoodCriticalHeaders: Set<String> = []) throws(JOSEError) {
        try header.checkCritical(understood: understoodCriticalHeaders)
        guard algorithm != .hs256 else { throw .algorithmKeyMismatch(algorithm: algorithm.rawValue, keyType: "public key") }
        try algorithm.checkKey(key)
        try checkSignatureLength()
        guard JOSECrypto.isValid(signature: signature, for: signingInput, key: key, hash: algorithm.curve?.signatureHashAlgorithm)
        else { throw .invalidSignature }
    }

    /// Verifies an HS256 signature with `hmacKey` (compared in constant time).
    public func verify(hmacKey: SymmetricKey, understoodCriticalHeaders: Set<String> = []) throws(JOSEError) {
        try header.checkCritical(understood: understoodCriticalHeaders)
        guard algorithm == .hs256 else { throw .algorithmKeyMismatch(algorithm: algorithm.rawValue, keyType: "oct") }
        guard hmacKey.byteCount > 0 else { throw .invalidKey(.emptySymmetricKey) }
        try checkSignatureLength()
        let expected = try JOSECrypto.hmacSHA256(signingInput, key: hmacKey)
        guard ConstantTime.equals(expected, signature) else { throw .invalidSignature }
    }

    /// Verifies with a JWK: an `oct` key for HS256, otherwise its public key. A JWK
    /// that names an `alg` must name this JWS's algorithm.
    public func verify(with jwk: JWK, understoodCriticalHeaders: Set<String> = []) throws(JOSEError) {
        if let keyAlgorithm = jwk.algorithm, keyAlgorithm != algorithm.rawValue {
            throw .algorithmKeyMismatch(algorithm: algorithm.rawValue, keyType: "JWK for \(keyAlgorithm)")
        }
        if jwk.keyType == .oct {
            try verify(hmacKey: try jwk.symmetricKey(), understoodCriticalHeaders: understoodCriticalHeaders)
        } else {
            try verify(with: try jwk.publicKey(), understoodCriticalHeaders: understoodCriticalHeaders)
        }
    }

    /// Verifies with the key the header's own `jwk` carries (DPoP proofs, OpenID4VCI
    /// key proofs) and returns that key, so the caller can bind it (e.g. by thumbprint).
    public func verifyWithEmbeddedJWK(understoodCriticalHeaders: Set<String> = []) throws(JOSEError) -> JWK {
        guard let jwk = try header.jwk() else { throw .invalidKey(.missingHeaderKey) }
        try verify(with: try jwk.publicKey(), understoodCriticalHeaders: understoodCriticalHeaders)
        return jwk
    }

    /// Verifies with the leaf of the header's `x5c` after validating that chain to one
    /// of `trustAnchors` at `time` under `policy` (`.signingCertificate`,
    /// `.sdJWTVCIssuer(iss)`, `.keyAttestationSigner` ...). Returns the validated chain.
    /// - Throws: `untrusted` with the `TrustFailure`, then the signature errors.
    @discardableResult
    public func verifyWithCertificateChain(
        trustAnchors: [X509Certificate], at time: Date, policy: X509TrustPolicy, understoodCriticalHeaders: Set<String> = []
    ) throws(JOSEError) -> ValidatedChain {
        let certificates = try header.certificateChain() ?? []
        let chain: ValidatedChain
        do {
            chain = try X509ChainValidator(anchors: trustAnchors).validate(chain: certificates, at: time, policy: policy)
        } catch {
            throw .untrusted(error)
        }
        let key: PublicKey
        do { key = try chain.leafPublicKey() } catch { throw .untrusted(error) }
        try verify(with: key, understoodCriticalHeaders: understoodCriticalHeaders)
        return chain
    }

    /// Verifies with the key `resolver` picks for this header (by `kid`, `jwk`, `x5c`,
    /// the issuer's metadata ...). A resolver that knows no key returns nil, which is
    /// `unknownKey` with the header's `kid`.
    public func verify(
        understoodCriticalHeaders: Set<String> = [], resolvingKeyWith resolver: (JOSEHeader) -> JWK?
    ) throws(JOSEError) -> JWK {
        guard let jwk = resolver(header) else { throw .unknownKey(keyID: header.keyID) }
        try verify(with: jwk, understoodCriticalHeaders: understoodCriticalHeaders)
        return jwk
    }
}
