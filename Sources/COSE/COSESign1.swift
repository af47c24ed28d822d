import CBOR
import Foundation
import WalletCrypto

/// A COSE_Sign1 message: one signature over headers and a payload (RFC 9052 §4.2).
///
/// A parsed message keeps the exact bytes it was read from (`encodedBytes`) and the exact
/// protected header bytes; verification builds the Sig_structure from those bytes, never
/// from a re-encoding.
public struct COSESign1: Hashable, Sendable {
    /// The CBOR tag of a tagged COSE_Sign1.
    public static let tag: UInt64 = 18

    /// The protected and unprotected headers.
    public let headers: COSEHeaders
    /// The payload, or nil when it is detached (transported separately).
    public let payload: [UInt8]?
    /// The signature (raw r||s for ECDSA, 64 bytes for Ed25519).
    public let signature: [UInt8]
    /// Whether the message carried (or is encoded with) tag 18.
    public let isTagged: Bool
    /// The encoded message: the bytes it was parsed from, or the encoding of a built one.
    public let encodedBytes: [UInt8]

    /// Parses a COSE_Sign1, tagged (18) or untagged.
    /// - Parameter understoodCriticalLabels: header labels the caller processes besides
    ///   those this module understands, which `crit` may list.
    /// - Throws: `cbor` for bad CBOR, `unexpectedTag` for another tag, `malformed` for a
    ///   wrong shape, and the header errors of `COSEHeaders`.
    public init(encoded bytes: [UInt8], understoodCriticalLabels: Set<COSEHeaderLabel> = []) throws(COSEError) {
        let item: CBORItem
        do { item = try CBOR.decodeItem(bytes, options: COSEDecoding.options) } catch { throw .cbor(error) }
        try self.init(item: item, understoodCriticalLabels: understoodCriticalLabels)
    }

    /// Parses a COSE_Sign1 found inside a larger decoded structure (such as mdoc
    /// `issuerAuth`), keeping the item's exact bytes as `encodedBytes`.
    public init(item: CBORItem, understoodCriticalLabels: Set<COSEHeaderLabel> = []) throws(COSEError) {
        let parts = try COSEMessageParts(value: item.value, expectedTag: Self.tag, what: "COSE_Sign1",
                                         understoodCriticalLabels: understoodCriticalLabels)
        headers = parts.headers
        payload = parts.payload
        signature = parts.trailer
        isTagged = parts.isTagged
        encodedBytes = Array(item.encodedBytes)
    }

    /// Parses a COSE_Sign1 from a decoded value. The protected header and payload byte
    /// strings are kept as received; `encodedBytes` is the value's re-encoding, so prefer
    /// `init(item:)` when the exact outer bytes matter.
    public init(cbor: CBOR, understoodCriticalLabels: Set<COSEHeaderLabel> = []) throws(COSEError) {
        let parts = try COSEMessageParts(value: cbor, expectedTag: Self.tag, what: "COSE_Sign1",
                                         understoodCriticalLabels: understoodCriticalLabels)
        headers = parts.headers
        payload = parts.payload
        signature = parts.trailer
        isTagged = parts.isTagged
        encodedBytes = cbor.encoded()
    }

    private init(headers: COSEHeaders, payload: [UInt8]?, signature: [UInt8], tagged: Bool) {
        self.headers = headers
        self.payload = payload
        self.signature = signature
        self.isTagged = tagged
        self.encodedBytes = COSEMessageParts.encode(headers: headers, payload: payload, trailer: signature,
                                                    tag: tagged ? Self.tag : nil)
    }

    /// The message as a CBOR value (tagged when `isTagged`).
    public var cbor: CBOR {
        COSEMessageParts.value(headers: headers, payload: payload, trailer: signature, tag: isTagged ? Self.tag : nil)
    }

    /// The Sig_structure for a COSE_Sign1 (RFC 9052 §4.4):
    /// `["Signature1", body_protected, external_aad, payload]`, encoded with definite
    /// lengths and shortest heads.
    public static func signatureStructure(bodyProtected: [UInt8], externalAAD: [UInt8], payload: [UInt8]) -> [UInt8] {
        CBOR.array([.textString("Signature1"), .byteString(bodyProtected), .byteString(externalAAD),
                    .byteString(payload)]).encoded()
    }

    /// The bytes this message's signature covers.
    /// - Parameter detachedPayload: the payload when the message's is detached.
    /// - Throws: `missingPayload` or `unexpectedDetachedPayload`.
    public func toBeSigned(externalAAD: [UInt8] = [], detachedPayload: [UInt8]? = nil) throws(COSEError) -> [UInt8] {
        let content = try COSEMessageParts.resolvePayload(attached: payload, detached: detachedPayload)
        return Self.signatureStructure(bodyProtected: headers.bodyProtected, externalAAD: externalAAD, payload: content)
    }

    /// Signs `payload` with `signer`.
    ///
    /// `alg` is put first in the protected bucket unless it is already there; an `alg`
    /// that differs from the signer's algorithm is rejected.
    /// - Parameters:
    ///   - detached: when true the payload is signed but not carried (nil in the message).
    ///   - tagged: whether the encoding carries tag 18.
    /// - Throws: `algorithmKeyMismatch`, header errors, or the signer's failure as
    ///   `crypto` / `signingFailed`.
    public static func sign(payload: [UInt8], detached: Bool = false,
                            protected: COSEHeaderMap = COSEHeaderMap(), unprotected: COSEHeaderMap = COSEHeaderMap(),
                            externalAAD: [UInt8] = [], tagged: Bool = true,
                            signer: some Signer) async throws(COSEError) -> COSESign1 {
        let algorithm = COSEAlgorithm(signer.algorithm)
        guard try COSEMessageParts.algorithmFits(algorithm, protected: protected, unprotected: unprotected) else {
            throw .algorithmKeyMismatch
        }
        var protected = protected
        if protected[.algorithm] == nil {
            protected = COSEHeaderMap([(.algorithm, CBOR(algorithm.rawValue))] + protected.entries.map { ($0.label, $0.value) })
        }
        let headers = try COSEHeaders(protected: protected, unprotected: unprotected)
        let toBeSigned = signatureStructure(bodyProtected: headers.bodyProtected, externalAAD: externalAAD, payload: payload)
        let signature: [UInt8]
        do {
            signature = try await signer.sign(toBeSigned)
        } catch {
            throw .keyOperation(error)
        }
        return COSESign1(headers: headers, payload: detached ? nil : payload, signature: signature, tagged: tagged)
    }

    /// Verifies the signature with `publicKey`.
    /// - Parameters:
    ///   - externalAAD: the externally supplied data the signer bound in.
    ///   - detachedPayload: the payload when the message's is detached.
    /// - Throws: `invalidSignature`, `invalidSignatureLength`, `algorithmKeyMismatch`,
    ///   `missingAlgorithm`, `unsupportedAlgorithm`, `missingPayload`.
    public func verify(publicKey: PublicKey, externalAAD: [UInt8] = [], detachedPayload: [UInt8]? = nil) throws(COSEError) {
        let algorithm = try headers.algorithm()
        guard algorithm.isSignature else { throw .algorithmKeyMismatch }
        let message = try toBeSigned(externalAAD: externalAAD, detachedPayload: detachedPayload)
        try COSESignatureVerification.verify(signature, over: message, algorithm: algorithm, publicKey: publicKey)
    }

    /// Verifies the signature with the public key of the `x5chain` leaf, after validating
    /// the chain against `trustAnchors` at `time` under `policy`.
    /// - Parameter policy: what the leaf must be trusted for (`.mdocDocumentSigner`,
    ///   `.mdocReaderAuthentication` ...; `.pathValidationOnly` when nothing more).
    /// - Returns: the validated chain.
    /// - Throws: `untrusted` with the `TrustFailure` (also for an absent, empty or
    ///   unparsable `x5chain`), then the errors of `verify(publicKey:externalAAD:detachedPayload:)`.
    @discardableResult
    public func verify(trustAnchors: [X509Certificate], at time: Date, policy: X509TrustPolicy, externalAAD: [UInt8] = [],
                       detachedPayload: [UInt8]? = nil) throws(COSEError) -> ValidatedChain {
        let chain: ValidatedChain
        do {
            chain = try X509ChainValidator(anchors: trustAnchors)
                .validate(chainDER: headers.x5chainDER, at: time, policy: policy)
        } catch {
            throw .untrusted(error)
        }
        let key: PublicKey
        do { key = try chain.leafPublicKey() } catch { throw .untrusted(error) }
        try verify(publicKey: key, externalAAD: externalAAD, detachedPayload: detachedPayload)
        return chain
    }

    /// The `x5chain` certificates, leaf first.
    public func x5chain() throws(COSEError) -> [X509Certificate] { try headers.x5chain() }
}
