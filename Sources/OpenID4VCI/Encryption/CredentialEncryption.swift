import JOSE
import WalletCrypto
import WalletEncoding

/// When the wallet asks for an encrypted Credential Response (OpenID4VCI 1.0 §10). Whenever
/// the response is encrypted, the request is too (to a key of the issuer's
/// `credential_request_encryption`), so that its `credential_response_encryption.jwk`
/// cannot be swapped on the way.
public enum CredentialEncryption: String, Sendable, Equatable, CaseIterable {
    /// Encrypt only when the issuer sets `encryption_required` (the default).
    case whenRequired
    /// Encrypt whenever the issuer advertises `credential_response_encryption`.
    case preferred
    /// Always encrypt; an issuer that cannot is refused.
    case required
}

/// The wallet's key for one encrypted Credential Response: a fresh P-256 key made for
/// the request and dropped after it. Transport material, not credential key material,
/// so it does not go through the secure area. Prints nothing of the private key.
public struct JweRecipientKey: Sendable, CustomStringConvertible {
    let privateKey: ECPrivateKey

    /// Generates a fresh P-256 key.
    public static func generate() throws(IssuanceError) -> JweRecipientKey {
        do { return JweRecipientKey(privateKey: try ECPrivateKey.generate(curve: .p256)) } catch {
            throw .unexpected(.randomSourceFailed)
        }
    }

    /// Wraps a key (tests use fixed ones).
    init(privateKey: ECPrivateKey) { self.privateKey = privateKey }

    /// The public JWK sent as `credential_response_encryption.jwk`, with `alg` ECDH-ES.
    public var publicJWK: JWK {
        (try? JWK(publicKey: .ec(privateKey.publicKey)).adding(["alg": .string(JWE.keyAgreementAlgorithm), "use": "enc"]))
            ?? JWK(publicKey: .ec(privateKey.publicKey))
    }

    /// Never the private key.
    public var description: String { "JweRecipientKey(P-256, <redacted>)" }
}

/// What encryption one issuer gets under a policy: decided once from its metadata.
struct EncryptionPlan: Sendable, Equatable {
    /// The issuer key and `enc` the request is encrypted with, if it is.
    let requestKey: JWK?
    let requestEnc: ContentEncryptionAlgorithm?
    /// The `enc` the response is asked to be encrypted with, if it is.
    let responseEnc: ContentEncryptionAlgorithm?

    /// No encryption either way.
    static let none = EncryptionPlan(requestKey: nil, requestEnc: nil, responseEnc: nil)

    /// Whether the Credential Response is to be encrypted.
    var encryptsResponse: Bool { responseEnc != nil }

    /// The strongest of `offered` the JOSE module implements (A256GCM > A192GCM > A128GCM).
    static func strongest(_ offered: [String]) -> ContentEncryptionAlgorithm? {
        [ContentEncryptionAlgorithm.a256gcm, .a192gcm, .a128gcm].first { offered.contains($0.rawValue) }
    }

    /// Decides the plan for `policy` against `metadata`.
    static func negotiate(_ policy: CredentialEncryption, metadata: CredentialIssuerMetadata) throws(EncryptionFailure) -> EncryptionPlan {
        let response = metadata.responseEncryption
        let request = metadata.requestEncryption
        let encryptResponse: Bool
        switch policy {
        case .whenRequired: encryptResponse = response?.encryptionRequired == true
        case .preferred: encryptResponse = response != nil
        case .required:
            guard response != nil else { throw .notOfferedByIssuer }
            encryptResponse = true
        }
        let encryptRequest = encryptResponse || request?.encryptionRequired == true
        guard encryptRequest else { return .none }
        // §12.2.4: credential_request_encryption is required alongside response encryption.
        guard let request else { throw .requestEncryptionKeysMissing }
        guard let key = request.keys.first(where: { key in
            key.keyType == .ec && (key.algorithm == nil || key.algorithm == JWE.keyAgreementAlgorithm)
                && (key.use == nil || key.use == "enc") && (try? key.ecPublicKey()) != nil
        }), let requestEnc = strongest(request.encValues) else {
            throw .noCommonAlgorithm
        }
        var responseEnc: ContentEncryptionAlgorithm?
        if encryptResponse, let response {
            guard response.algValues.contains(JWE.keyAgreementAlgorithm), let enc = strongest(response.encValues) else {
                throw .noCommonAlgorithm
            }
            responseEnc = enc
        }
        return EncryptionPlan(requestKey: key, requestEnc: requestEnc, responseEnc: responseEnc)
    }
}
