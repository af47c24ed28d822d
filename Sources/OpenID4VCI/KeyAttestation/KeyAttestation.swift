import Foundation
import JOSE
import WalletCrypto
import WalletEncoding

/// A key attestation in JWT form (OpenID4VCI 1.0 Appendix D.1): a wallet provider
/// vouches, under a key certified by `x5c`, for how the `attested_keys` are stored.
public struct KeyAttestation: Sendable, Equatable {
    /// The JOSE `typ` of a key attestation.
    public static let jwtType = "key-attestation+jwt"

    /// The compact JWT, exactly as signed.
    public let compactSerialization: String
    /// The attested public keys (`attested_keys`).
    public let attestedKeys: [JWK]
    /// `key_storage`: how the keys are protected.
    public let keyStorage: [AttackPotentialResistance]
    /// `user_authentication`: how the user is authenticated before a key is used.
    public let userAuthentication: [AttackPotentialResistance]
    /// `iat`.
    public let issuedAt: Date
    /// `exp`.
    public let expiresAt: Date
    /// `nonce`, when the attestation answers a challenge.
    public let nonce: String?
    /// `iss`, when present.
    public let issuer: String?
    /// The `x5c` chain, leaf first.
    public let certificateChain: [X509Certificate]

    /// Reads a key attestation's claims without checking anything; use
    /// `KeyAttestationVerifier` before trusting it.
    public init(unverified compact: String) throws(KeyAttestationError) {
        let jwt: JWT
        do { jwt = try JWT(compact: compact) } catch { throw .malformed(error) }
        let claims = jwt.claims
        compactSerialization = compact
        guard let keys = claims["attested_keys"]?.arrayValue, !keys.isEmpty else {
            throw .invalidAttestedKeys(.missingOrEmpty)
        }
        var parsed: [JWK] = []
        for key in keys {
            guard let members = key.objectValue else { throw .invalidAttestedKeys(.notAnObject) }
            let jwk: JWK
            do { jwk = try JWK(members: members) } catch { throw .invalidAttestedKeys(.invalidKey(error)) }
            guard !jwk.isPrivate, jwk.keyType != .oct else {
                throw .invalidAttestedKeys(.notAPublicAsymmetricKey)
            }
            parsed.append(jwk)
        }
        attestedKeys = parsed
        keyStorage = try Self.levels(claims["key_storage"], "key_storage")
        userAuthentication = try Self.levels(claims["user_authentication"], "user_authentication")
        guard let iat = claims["iat"]?.doubleValue else { throw .invalidClaim("iat") }
        guard let exp = claims["exp"]?.doubleValue else { throw .invalidClaim("exp") }
        issuedAt = Date(timeIntervalSince1970: iat)
        expiresAt = Date(timeIntervalSince1970: exp)
        if let value = claims["nonce"], value.stringValue == nil { throw .invalidClaim("nonce") }
        nonce = claims.nonce
        if let value = claims["iss"], value.stringValue == nil { throw .invalidClaim("iss") }
        issuer = claims.issuer
        do {
            certificateChain = try jwt.header.certificateChain() ?? []
        } catch .untrusted(let failure) {
            throw .untrusted(failure)
        } catch {
            throw .malformed(error)
        }
    }

    private static func levels(_ value: JSONValue?, _ name: String) throws(KeyAttestationError) -> [AttackPotentialResistance] {
        guard let value else { return [] }
        guard let array = value.arrayValue else { throw .invalidClaim(name) }
        var levels: [AttackPotentialResistance] = []
        for element in array {
            guard let text = element.stringValue else { throw .invalidClaim(name) }
            levels.append(AttackPotentialResistance(rawValue: text))
        }
        return levels
    }
}

/// The wallet provider's side: signs key attestations with its key and certificate chain.
public struct KeyAttestationIssuer: Sendable {
    /// The wallet provider's signing key (in its own secure area or HSM).
    public let signer: any Signer
    /// The chain for `x5c`, leaf (certifying `signer`'s key) first.
    public let certificateChain: [X509Certificate]
    /// `iss`, when the provider names itself.
    public let issuer: String?
    /// The `key_storage` levels claimed for keys of the secure area it serves.
    public let keyStorage: [AttackPotentialResistance]
    /// The `user_authentication` levels claimed.
    public let userAuthentication: [AttackPotentialResistance]
    /// How long an attestation is valid.
    public let validity: TimeInterval

    /// An issuer with every field explicit. Claim only the levels the secure area it serves
    /// really meets: `SoftwareSecureArea` is at best `iso18045Basic`.
    public init(signer: any Signer, certificateChain: [X509Certificate], issuer: String? = nil,
                keyStorage: [AttackPotentialResistance], userAuthentication: [AttackPotentialResistance],
                validity: TimeInterval = 24 * 3600) {
        self.signer = signer
        self.certificateChain = certificateChain
        self.issuer = issuer
        self.keyStorage = keyStorage
        self.userAuthentication = userAuthentication
        self.validity = validity
    }

    /// Signs an attestation for `keys`, issued at `now`, with `nonce` when given.
    public func attest(_ keys: [PublicKey], nonce: String?, now: Date) async throws(KeyAttestationError) -> KeyAttestation {
        guard !keys.isEmpty else { throw .invalidAttestedKeys(.missingOrEmpty) }
        guard !certificateChain.isEmpty else { throw .missingCertificateChain }
        let issued = now.wholeSecondsSince1970
        var members: JSONObject = [
            "iat": .integer(issued),
            "exp": .integer(Date.wholeSeconds(Double(issued) + validity.rounded(.down))),
            "attested_keys": .array(keys.map { JWK(publicKey: $0).jsonValue }),
        ]
        if !keyStorage.isEmpty { members["key_storage"] = .array(keyStorage.map { .string($0.rawValue) }) }
        if !userAuthentication.isEmpty {
            members["user_authentication"] = .array(userAuthentication.map { .string($0.rawValue) })
        }
        if let nonce { members["nonce"] = .string(nonce) }
        if let issuer { members["iss"] = .string(issuer) }
        let jwt: JWT
        do {
            jwt = try await JWT.sign(
                claims: try JWTClaims(members), signer: signer, type: KeyAttestation.jwtType, x5c: certificateChain)
        } catch {
            throw .signingFailed(error)
        }
        return try KeyAttestation(unverified: jwt.compactSerialization)
    }
}

/// Checks key attestations (what a credential issuer does with them): the `typ`, the
/// `x5c` chain to a trust anchor, the signature by the leaf, `iat`/`exp`, the nonce and
/// the shape of `attested_keys`.
public struct KeyAttestationVerifier: Sendable {
    /// The wallet-provider roots accepted.
    public let trustAnchors: [X509Certificate]
    /// What the `x5c` leaf must be trusted for.
    public let policy: X509TrustPolicy
    /// Leeway for `iat` and `exp`, in seconds.
    public let clockSkew: TimeInterval

    /// A verifier trusting `trustAnchors` for certificates that meet `policy` (a signing
    /// certificate under a CA unless the caller asks for more).
    public init(trustAnchors: [X509Certificate], policy: X509TrustPolicy = .keyAttestationSigner, clockSkew: TimeInterval = 60) {
        self.trustAnchors = trustAnchors
        self.policy = policy
        self.clockSkew = clockSkew
    }

    /// Verifies `compact` at `now`. When `expectedNonce` is given the attestation must
    /// carry exactly that nonce. Returns the verified attestation.
    public func verify(_ compact: String, expectedNonce: String?, at now: Date) throws(KeyAttestationError) -> KeyAttestation {
        let jwt: JWT
        do { jwt = try JWT(compact: compact) } catch { throw .malformed(error) }
        // OpenID4VCI 1.0 Appendix D.1: typ MUST be key-attestation+jwt.
        guard jwt.header.type == KeyAttestation.jwtType else { throw .wrongType(jwt.header.type) }
        do {
            try jwt.jws.verifyWithCertificateChain(trustAnchors: trustAnchors, at: now, policy: policy)
        } catch .untrusted(let failure) {
            throw .untrusted(failure)
        } catch .invalidSignature, .malformedSignature, .algorithmKeyMismatch, .wrongCurve {
            throw .invalidSignature
        } catch {
            throw .malformed(error)
        }
        let attestation = try KeyAttestation(unverified: compact)
        do {
            try JWTTimeRules(clockSkew: clockSkew, required: [.issuedAt, .expiration]).check(jwt.claims, at: now)
        } catch {
            throw .invalidTime(error)
        }
        if let expectedNonce {
            guard let nonce = attestation.nonce,
                  ConstantTime.equals(Array(nonce.utf8), Array(expectedNonce.utf8)) else {
                throw .nonceMismatch
            }
        }
        return attestation
    }
}

/// Why a key attestation could not be made, read or trusted.
public enum KeyAttestationError: Error, Equatable, Sendable {
    /// The compact JWT does not parse.
    case malformed(JOSEError)
    /// A claim is missing or has the wrong JSON type (`iat`, `exp`, `nonce`, `iss`,
    /// `key_storage`, `user_authentication`); the value names it.
    case invalidClaim(String)
    /// The header `typ` is not `key-attestation+jwt`.
    case wrongType(String?)
    /// The `x5c` chain is absent or unparsable, does not lead to a trust anchor, or its
    /// leaf is not a key-attestation signing certificate.
    case untrusted(TrustFailure)
    /// The signature does not verify with the `x5c` leaf key.
    case invalidSignature
    /// `iat` or `exp` does not hold at the verification time (beyond the skew).
    case invalidTime(JWTTimeFailure)
    /// The nonce is absent or differs from the expected one.
    case nonceMismatch
    /// `attested_keys` is not a non-empty array of public asymmetric JWKs.
    case invalidAttestedKeys(AttestedKeysProblem)
    /// The issuer has no certificate chain to put in `x5c`.
    case missingCertificateChain
    /// Signing the attestation failed (the wallet provider's signer, or the JOSE encoding).
    case signingFailed(JOSEError)

    /// What is wrong with `attested_keys`.
    public enum AttestedKeysProblem: Equatable, Sendable {
        /// Absent, not an array, or empty.
        case missingOrEmpty
        /// An entry is not a JSON object.
        case notAnObject
        /// An entry is not a valid JWK.
        case invalidKey(JOSEError)
        /// An entry holds private or symmetric key material.
        case notAPublicAsymmetricKey
    }
}
