import Foundation
import JOSE
import WalletCrypto
import WalletEncoding

/// DPoP proofs (RFC 9449 §4): a JWT signed with the wallet's DPoP key that binds one HTTP
/// request (method and URL), optionally an access token (`ath`) and a server nonce.
enum DPoPProof {
    /// The proof's `typ`.
    static let type = "dpop+jwt"

    /// `ath`: base64url of the SHA-256 of the access token's ASCII (§4.2).
    static func accessTokenHash(_ accessToken: String) -> String {
        Base64URL.encode(SHA256.digest(Array(accessToken.utf8)))
    }

    /// `htu`: the request URL without query and fragment (§4.2).
    static func targetURI(_ url: URL) -> String {
        guard var components = URLComponents(url: url, resolvingAgainstBaseURL: false) else { return url.absoluteString }
        components.query = nil
        components.fragment = nil
        return components.string ?? url.absoluteString
    }

    /// The claims of a proof for `method` `url` at `issuedAt`.
    static func claims(method: String, url: URL, issuedAt: Date, jwtID: String, nonce: String?,
                       accessToken: String?) -> JSONObject {
        var claims: JSONObject = [
            "jti": .string(jwtID),
            "htm": .string(method),
            "htu": .string(targetURI(url)),
            "iat": .integer(issuedAt.wholeSecondsSince1970),
        ]
        if let accessToken { claims["ath"] = .string(accessTokenHash(accessToken)) }
        if let nonce { claims["nonce"] = .string(nonce) }
        return claims
    }

    /// Signs a proof with `signer`, whose public key goes into the `jwk` header.
    static func sign(claims: JSONObject, signer: any Signer) async throws(JOSEError) -> String {
        let jwt = try await JWT.sign(claims: try JWTClaims(claims), signer: signer, type: type,
                                     jwk: JWK(publicKey: signer.publicKey))
        return jwt.compactSerialization
    }
}
