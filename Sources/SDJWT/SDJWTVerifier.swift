import Foundation
import JOSE
import WalletCrypto
import WalletEncoding

/// Where the verifier gets the issuer's key.
public enum IssuerKeySource: Sendable {
    /// A key the caller knows (configured, or from issuer metadata fetched earlier).
    case jwk(JWK)
    /// The leaf of the header's `x5c`, after its chain validates to one of these anchors
    /// under `policy`. With the SD-JWT VC profile the verifier adds the rule that the leaf
    /// names the credential's `iss` (SD-JWT VC §3.5).
    case certificateChain(trustAnchors: [X509Certificate], policy: X509TrustPolicy = .signingCertificate)
    /// A resolver the application supplies, given the header and the (unverified) payload;
    /// e.g. a lookup in JWT VC issuer metadata by `iss` and `kid`. It returns nil when it
    /// has no key, which is `issuerKeyUnavailable` with the header's `kid`.
    case resolver(@Sendable (JOSEHeader, JWTClaims) -> JWK?)
}

/// The credential profile to check beyond RFC 9901.
public enum SDJWTProfile: Sendable, Equatable {
    /// SD-JWT VC (draft-ietf-oauth-sd-jwt-vc): `typ` `dc+sd-jwt`, a `vct`, and the claims
    /// `iss`, `nbf`, `exp`, `cnf`, `vct`, `status` never selectively disclosed.
    case sdJWTVC
    /// A plain SD-JWT (RFC 9901): no `typ` or `vct` requirement.
    case sdJWT
}

/// How an SD-JWT presentation is verified.
public struct SDJWTVerificationOptions: Sendable {
    /// Where the issuer's key comes from.
    public var issuerKey: IssuerKeySource
    /// The verification time (from the caller's `WalletClock`).
    public var now: Date
    /// Leeway for `exp`, `nbf`, `iat` and the KB-JWT window, in seconds.
    public var clockSkew: TimeInterval
    /// The profile to check.
    public var profile: SDJWTProfile
    /// Whether `typ` `vc+sd-jwt`, the name used before `dc+sd-jwt`, is accepted.
    public var acceptsLegacyVCType: Bool
    /// The `iss` the credential must carry, if any.
    public var expectedIssuer: String?
    /// The `vct` values accepted; `nil` accepts any.
    public var acceptedTypes: Set<String>?
    /// The key binding required; `nil` requires none (a KB-JWT that is present is still
    /// checked for `typ`, signature and `sd_hash`).
    public var keyBinding: KeyBindingExpectation?

    /// Options for verifying at `now` with the issuer key from `issuerKey`.
    public init(issuerKey: IssuerKeySource, now: Date, clockSkew: TimeInterval = 60, profile: SDJWTProfile = .sdJWTVC,
                acceptsLegacyVCType: Bool = false, expectedIssuer: String? = nil, acceptedTypes: Set<String>? = nil,
                keyBinding: KeyBindingExpectation? = nil) {
        self.issuerKey = issuerKey
        self.now = now
        self.clockSkew = clockSkew
        self.profile = profile
        self.acceptsLegacyVCType = acceptsLegacyVCType
        self.expectedIssuer = expectedIssuer
        self.acceptedTypes = acceptedTypes
        self.keyBinding = keyBinding
    }
}

/// A presentation that passed every check: the disclosed claims and what the verifier
/// may want next (holder key, status reference, certificate path).
public struct VerifiedSDJWT: Sendable {
    /// The presentation as received.
    public let sdJWT: SDJWT
    /// The disclosed claims (always-visible claims plus the disclosed ones).
    public let claims: JSONObject
    /// The issuer's key that verified the signature.
    public let issuerKey: JWK?
    /// The validated `x5c` chain, when the key came from `x5c`.
    public let certificateChain: ValidatedChain?
    /// The holder key from `cnf.jwk`, if the credential is bound.
    public let holderKey: JWK?
    /// The verified KB-JWT claims, if a KB-JWT was presented.
    public let keyBinding: JWTClaims?

    /// `vct`.
    public var type: String? { claims["vct"]?.stringValue }
    /// `iss`.
    public var issuer: String? { claims["iss"]?.stringValue }
    /// `status` (e.g. a token status list reference), kept for a later status check.
    public var status: JSONValue? { claims["status"] }
}

/// Verifies SD-JWT (VC) presentations end to end (RFC 9901 §7.1, §7.3; SD-JWT VC §3):
/// issuer signature, disclosures, profile claims and time window, then key binding.
public struct SDJWTVerifier: Sendable {
    /// The options every verification uses.
    public let options: SDJWTVerificationOptions

    /// A verifier with `options`.
    public init(options: SDJWTVerificationOptions) { self.options = options }

    /// Parses and verifies a compact presentation.
    public func verify(_ compact: String) throws(SDJWTError) -> VerifiedSDJWT {
        try verify(try SDJWT(compact: compact))
    }

    /// The claim names SD-JWT VC §3.2.2 keeps out of disclosures.
    static let alwaysVisibleClaims = ["iss", "nbf", "exp", "cnf", "vct", "status"]

    /// Verifies a parsed presentation.
    public func verify(_ sdJWT: SDJWT) throws(SDJWTError) -> VerifiedSDJWT {
        let jwt = sdJWT.issuerSignedJWT
        if options.profile == .sdJWTVC {
            let accepted = options.acceptsLegacyVCType ? ["dc+sd-jwt", "vc+sd-jwt"] : ["dc+sd-jwt"]
            guard accepted.contains(where: { jwt.header.typeMatches($0) }) else {
                throw .invalidCredentialType(jwt.header.type)
            }
        }
        let (issuerKey, chain) = try verifyIssuerSignature(jwt)
        let processed = try sdJWT.processed()
        let payload = jwt.claims
        try checkClaims(payload, processed: processed.claims)

        let holderKey = try Self.holderKey(of: payload)
        if let keyBinding = sdJWT.keyBindingJWT {
            guard let holderKey else { throw .keyBinding(.missingHolderKey) }
            if let expectation = options.keyBinding {
                try expectation.check(keyBinding, of: sdJWT, holderKey: holderKey, now: options.now, clockSkew: options.clockSkew)
            } else {
                try KeyBindingExpectation.checkBinding(keyBinding, of: sdJWT, holderKey: holderKey)
            }
        } else if options.keyBinding != nil {
            guard holderKey != nil else { throw .keyBinding(.missingHolderKey) }
            throw .keyBinding(.missing)
        }
        return VerifiedSDJWT(sdJWT: sdJWT, claims: processed.claims, issuerKey: issuerKey, certificateChain: chain,
                             holderKey: holderKey, keyBinding: sdJWT.keyBindingJWT?.claims)
    }

    private func verifyIssuerSignature(_ jwt: JWT) throws(SDJWTError) -> (JWK?, ValidatedChain?) {
        switch options.issuerKey {
        case .jwk(let key):
            do {
                try jwt.jws.verify(with: key)
            } catch {
                throw .invalidIssuerSignature(error)
            }
            return (key, nil)
        case .certificateChain(let anchors, var policy):
            if options.profile == .sdJWTVC {
                // SD-JWT VC §3.5: the leaf's subjectAltName must name the issuer.
                guard let issuer = jwt.claims.issuer else { throw .missingClaim("iss") }
                policy = policy + X509TrustPolicy([.leafNamesIssuer(issuer)])
            }
            do {
                let chain = try jwt.jws.verifyWithCertificateChain(trustAnchors: anchors, at: options.now, policy: policy)
                return ((try? chain.leafPublicKey()).map { JWK(publicKey: $0) }, chain)
            } catch .untrusted(let failure) {
                throw .untrustedIssuer(failure)
            } catch {
                throw .invalidIssuerSignature(error)
            }
        case .resolver(let resolve):
            guard let key = resolve(jwt.header, jwt.claims) else { throw .issuerKeyUnavailable(keyID: jwt.header.keyID) }
            do {
                try jwt.jws.verify(with: key)
            } catch {
                throw .invalidIssuerSignature(error)
            }
            return (key, nil)
        }
    }

    /// The `cnf.jwk`, if any, once it is known to be a public asymmetric signature key:
    /// EC on P-256/P-384/P-521 or Ed25519 (RFC 9901 §4.1.2, RFC 7800 §3.2).
    static func holderKey(of payload: JWTClaims) throws(SDJWTError) -> JWK? {
        let key: JWK?
        do { key = try payload.confirmationKey() } catch { throw .keyBinding(.invalidHolderKey(error)) }
        guard let key else { return nil }
        switch key.keyType {
        case .oct: throw .keyBinding(.unsupportedHolderKey(.symmetricKey))
        case .rsa: throw .keyBinding(.unsupportedHolderKey(.unsupportedKeyType("RSA")))
        case .okp where key.curveName != "Ed25519":
            throw .keyBinding(.unsupportedHolderKey(.unsupportedKeyType("OKP/" + (key.curveName ?? ""))))
        case .ec, .okp: break
        }
        guard !key.isPrivate else { throw .keyBinding(.unsupportedHolderKey(.privateKeyMaterial)) }
        do { _ = try key.publicKey() } catch { throw .keyBinding(.invalidHolderKey(error)) }
        return key
    }

    private func checkClaims(_ payload: JWTClaims, processed: JSONObject) throws(SDJWTError) {
        if options.profile == .sdJWTVC {
            for name in Self.alwaysVisibleClaims where processed[name] != nil && payload[name] == nil {
                throw .invalidClaim(.selectivelyDisclosed(name))
            }
            guard let vct = payload["vct"] else { throw .missingClaim("vct") }
            guard let type = vct.stringValue else { throw .invalidClaim(.wrongType("vct")) }
            if let accepted = options.acceptedTypes, !accepted.contains(type) { throw .invalidClaim(.typeNotAccepted(type)) }
        }
        // After disclosure: a plain SD-JWT may disclose `exp`, which then counts like a visible one.
        do { try JWTTimeRules(clockSkew: options.clockSkew).check(processed, at: options.now) } catch { throw .invalidTime(error) }
        if let expected = options.expectedIssuer, payload.issuer != expected {
            throw .issuerMismatch(expected: expected, actual: payload.issuer)
        }
    }
}
