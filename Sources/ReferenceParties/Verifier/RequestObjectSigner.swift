import Foundation
import JOSE
import WalletCrypto
import WalletEncoding

/// Signs request objects (JAR, RFC 9101) with the reader PKI, building in the faults a
/// transaction asks for. Pure apart from ECDSA's randomness.
struct RequestObjectSigner: Sendable {
    let pki: VerifierReaderPKI

    /// The `typ` OpenID4VP 1.0 §5 requires.
    static let requestObjectType = "oauth-authz-req+jwt"
    /// The `aud` of a request object under static discovery (§5.8).
    static let staticAudience = "https://self-issued.me/v2"

    /// The client identifier a signed request uses for `prefix`, honest or with the
    /// `x509HashMismatch` fault (the hash of a certificate that did not sign).
    func clientId(for prefix: VerifierClientIdPrefix, faults: Set<RequestFault>, responseURI: URL) -> String {
        switch prefix {
        case .x509SanDns:
            return "x509_san_dns:" + pki.dnsName
        case .x509Hash:
            let certificate: X509Certificate
            if faults.contains(.x509HashMismatch) {
                certificate = pki.mismatchedLeaf
            } else if faults.contains(.untrustedChain) {
                certificate = pki.untrustedLeaf
            } else {
                certificate = pki.leaf
            }
            return "x509_hash:" + VerifierReaderPKI.x509Hash(of: certificate)
        case .redirectUri:
            return "redirect_uri:" + responseURI.absoluteString
        }
    }

    /// The client identifier a link carries for the `clientIdMismatch` fault: same prefix,
    /// another identifier.
    func mismatchedClientId(for prefix: VerifierClientIdPrefix) -> String {
        switch prefix {
        case .x509SanDns: "x509_san_dns:" + VerifierReaderPKI.mismatchedDNSName
        case .x509Hash: "x509_hash:" + VerifierReaderPKI.x509Hash(of: pki.mismatchedLeaf)
        case .redirectUri: "redirect_uri:https://" + VerifierReaderPKI.mismatchedDNSName + "/response"
        }
    }

    /// Signs `claims` (with `iat`/`exp` added from `now` and `lifetime`) as a request object.
    func sign(_ claims: JSONObject, faults: Set<RequestFault>, now: Date, lifetime: TimeInterval) async throws(VerifierError)
        -> String {
        var members = claims
        let issuedAt = faults.contains(.expired) ? now.addingTimeInterval(-2 * lifetime) : now
        let expiresAt = faults.contains(.expired) ? now.addingTimeInterval(-lifetime) : now.addingTimeInterval(lifetime)
        members["iat"] = .integer(Int64(issuedAt.timeIntervalSince1970.rounded(.down)))
        members["exp"] = .integer(Int64(expiresAt.timeIntervalSince1970.rounded(.down)))
        let (certificate, key): (X509Certificate, ECPrivateKey)
        if faults.contains(.untrustedChain) {
            (certificate, key) = (pki.untrustedLeaf, pki.untrustedLeafKey)
        } else if faults.contains(.sanMismatch) {
            (certificate, key) = (pki.mismatchedLeaf, pki.mismatchedLeafKey)
        } else {
            (certificate, key) = (pki.leaf, pki.leafKey)
        }
        let jwt: JWT
        do {
            jwt = try await JWT.sign(claims: try JWTClaims(members), signer: SoftwareSigner(key),
                                     type: faults.contains(.wrongType) ? "JWT" : Self.requestObjectType,
                                     x5c: [certificate])
        } catch {
            throw .signingFailed(error)
        }
        let compact = jwt.compactSerialization
        guard faults.contains(.badSignature) else { return compact }
        // Change one byte of the signature (not a base64 character, which could only
        // touch padding bits), so the JWS still parses and the signature fails.
        let parts = compact.split(separator: ".", omittingEmptySubsequences: false)
        guard parts.count == 3, var signature = Base64URL.decodeStrict(parts[2]), !signature.isEmpty else { return compact }
        signature[signature.count / 2] ^= 0x01
        return parts[0] + "." + parts[1] + "." + Base64URL.encode(signature)
    }
}
