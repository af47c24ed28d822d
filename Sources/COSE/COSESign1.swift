import CBOR
import Foundation
import WalletCrypto

/// A COSE_Sign1 message: one signature over headers and a payload (RFC 9052 §4.2).
///
/// A parsed message keeps the exact bytes it was read from (`encodedBytes`) and the exact
/// protected header bytes; verification builds the Sig_structure from those bytes, never
/// from a re-encoding.
public struct COSESign1: COSEMessage {
    /// The CBOR tag of a tagged COSE_Sign1.
    public static let tag: UInt64 = 18

    /// The message as parsed or built.
    public let parts: COSEMessageParts

    /// Wraps parts parsed or built for a COSE_Sign1.
    /// - Throws: `unexpectedTag` for the parts of a COSE_Mac0.
    public init(parts: COSEMessageParts) throws(COSEError) {
        self.init(built: try parts.checked(for: Self.tag))
    }

    /// Parts this type parsed or built itself.
    private init(built parts: COSEMessageParts) {
        self.parts = parts
    }

    /// The signature (raw r||s for ECDSA, 64 bytes for Ed25519).
    public var signature: [UInt8] { parts.trailer }

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
        let content = try content(detachedPayload: detachedPayload)
        return Self.signatureStructure(bodyProtected: headers.bodyProtected, externalAAD: externalAAD, payload: content)
    }

    /// Signs `payload` with `signer`.
    ///
    /// `alg` is put first in the protected bucket unless a bucket already names it; an
    /// `alg` that differs from the signer's algorithm is rejected (the same rule as
    /// `COSEMac0.create`).
    /// - Parameters:
    ///   - detached: when true the payload is signed but not carried (nil in the message).
    ///   - tagged: whether the encoding carries tag 18.
    /// - Throws: `algorithmKeyMismatch`, header errors, or the signer's failure as
    ///   `crypto` / `signingFailed`.
    public static func sign(payload: [UInt8], detached: Bool = false,
                            protected: COSEHeaderMap = COSEHeaderMap(), unprotected: COSEHeaderMap = COSEHeaderMap(),
                            externalAAD: [UInt8] = [], tagged: Bool = true,
                            signer: some Signer) async throws(COSEError) -> COSESign1 {
        let headers = try COSEMessageParts.headers(for: COSEAlgorithm(signer.algorithm), protected: protected,
                                                   unprotected: unprotected)
        let toBeSigned = signatureStructure(bodyProtected: headers.bodyProtected, externalAAD: externalAAD, payload: payload)
        let signature: [UInt8]
        do {
            signature = try await signer.sign(toBeSigned)
        } catch {
            throw .keyOperation(error)
        }
        return COSESign1(built: COSEMessageParts(headers: headers, payload: detached ? nil : payload, trailer: signature,
                                                     tag: Self.tag, tagged: tagged))
    }

    /// Verifies the signature with `publicKey`.
    /// - Parameters:
    ///   - externalAAD: the externally supplied data the signer bound in.
    ///   - detachedPayload: the payload when the message's is detached.
    ///   - requireProtectedAlgorithm: refuse an `alg` that only the unprotected bucket names.
    /// - Throws: `invalidSignature`, `invalidSignatureLength`, `algorithmKeyMismatch`,
    ///   `missingAlgorithm`, `algorithmNotProtected`, `unsupportedAlgorithm`, `missingPayload`.
    public func verify(publicKey: PublicKey, externalAAD: [UInt8] = [], detachedPayload: [UInt8]? = nil,
                       requireProtectedAlgorithm: Bool = false) throws(COSEError) {
        let algorithm = try headers.algorithm(requireProtected: requireProtectedAlgorithm)
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
                       detachedPayload: [UInt8]? = nil, requireProtectedAlgorithm: Bool = false) throws(COSEError) -> ValidatedChain {
        let chain: ValidatedChain
        do {
            chain = try X509ChainValidator(anchors: trustAnchors)
                .validate(chainDER: headers.x5chainDER, at: time, policy: policy)
        } catch {
            throw .untrusted(error)
        }
        let key: PublicKey
        do { key = try chain.leafPublicKey() } catch { throw .untrusted(error) }
        try verify(publicKey: key, externalAAD: externalAAD, detachedPayload: detachedPayload,
                   requireProtectedAlgorithm: requireProtectedAlgorithm)
        return chain
    }

    /// The `x5chain` certificates, leaf first.
    public func x5chain() throws(COSEError) -> [X509Certificate] { try headers.x5chain() }
}
