import JOSE
import WalletCrypto
import WalletEncoding

/// The verifier metadata a request carries in `client_metadata` (OpenID4VP 1.0 §5.1, §11).
package struct ClientMetadata: Sendable, Equatable {
    /// `jwks`: the keys of the set this wallet can read (others are skipped, RFC 7517 §5).
    let keys: [JWK]
    /// `encrypted_response_enc_values_supported`, or the default `A128GCM` (§8.3).
    let encryptedResponseEncValues: [String]
    /// `vp_formats_supported`, as received.
    let vpFormatsSupported: JSONObject?

    /// No metadata.
    static let empty = ClientMetadata(keys: [], encryptedResponseEncValues: ["A128GCM"], vpFormatsSupported: nil)

    private init(keys: [JWK], encryptedResponseEncValues: [String], vpFormatsSupported: JSONObject?) {
        self.keys = keys
        self.encryptedResponseEncValues = encryptedResponseEncValues
        self.vpFormatsSupported = vpFormatsSupported
    }

    /// Reads `client_metadata`; members this wallet does not use are ignored (§11).
    init(json members: JSONObject) throws(InvalidRequestReason) {
        var keys: [JWK] = []
        if let jwks = members["jwks"], !jwks.isNull {
            do { keys = try JWKSet(value: jwks).keys } catch { throw .invalidClientMetadata }
        }
        let parts: (enc: [String]?, formats: JSONObject?)
        do {
            parts = (try members.optionalStringArray("encrypted_response_enc_values_supported"),
                     try members.optionalObject("vp_formats_supported"))
        } catch {
            throw .invalidClientMetadata
        }
        if let enc = parts.enc, enc.isEmpty { throw .invalidClientMetadata }
        self.init(keys: keys, encryptedResponseEncValues: parts.enc ?? ["A128GCM"], vpFormatsSupported: parts.formats)
    }

    /// The key and content encryption for an encrypted response (§8.3): the first key
    /// meant for encryption (`use` absent or `enc`) whose `alg` is ECDH-ES on a curve this
    /// wallet has, and the strongest AES-GCM the verifier lists. Nil when there is none.
    var responseEncryption: ResponseEncryption? {
        let preference: [ContentEncryptionAlgorithm] = [.a256gcm, .a192gcm, .a128gcm]
        guard let enc = preference.first(where: { encryptedResponseEncValues.contains($0.rawValue) }) else { return nil }
        let key = keys.first { key in
            guard key.use == nil || key.use == "enc", key.algorithm == JWE.keyAgreementAlgorithm,
                  key.keyType == .ec, !key.isPrivate else { return false }
            return (try? key.ecPublicKey()) != nil
        }
        guard let key else { return nil }
        return ResponseEncryption(key: key, contentEncryption: enc)
    }
}

/// The verifier key and content encryption a response is encrypted with.
package struct ResponseEncryption: Sendable, Equatable {
    /// The verifier's public key (ECDH-ES).
    let key: JWK
    /// The `enc` of the JWE.
    let contentEncryption: ContentEncryptionAlgorithm

    /// The RFC 7638 thumbprint of the key, which the mdoc handover binds (App. B.2.6).
    var keyThumbprint: [UInt8] { key.thumbprintBytes }
}
