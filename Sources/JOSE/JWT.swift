import Foundation
import WalletCrypto
import WalletEncoding

/// A signed JWT (RFC 7519): a compact JWS whose payload is a JSON claims set.
public struct JWT: Sendable, Equatable {
    /// The underlying JWS (verify its signature with its `verify` methods or `verified(with:options:)`).
    public let jws: JWS
    /// The claims, read from the exact payload bytes.
    public let claims: JWTClaims

    /// Parses a compact JWT (no signature check yet).
    public init(compact: String) throws(JOSEError) {
        let jws = try JWS(compact: compact)
        self.jws = jws
        self.claims = try JWTClaims(json: jws.payload)
    }

    private init(jws: JWS, claims: JWTClaims) {
        self.jws = jws
        self.claims = claims
    }

    /// The protected header.
    public var header: JOSEHeader { jws.header }
    /// The compact serialization.
    public var compactSerialization: String { jws.compactSerialization }

    /// Signs `claims` with `signer`; `type` goes into `typ` (e.g. `dpop+jwt`, `openid4vci-proof+jwt`).
    public static func sign(
        claims: JWTClaims, signer: any Signer, type: String? = "JWT", keyID: String? = nil, jwk: JWK? = nil,
        x5c: [X509Certificate]? = nil, additionalHeaders: JSONObject = [:]
    ) async throws(JOSEError) -> JWT {
        let jws = try await JWS.sign(
            payload: claims.rawBytes, signer: signer, type: type, keyID: keyID, jwk: jwk, x5c: x5c,
            additionalHeaders: additionalHeaders)
        return JWT(jws: jws, claims: claims)
    }

    /// Checks the claims and header against `options` (no signature check).
    public func validate(_ options: JWTValidationOptions) throws(JOSEError) {
        for name in options.requiredClaims.sorted() where claims[name] == nil { throw .missingClaim(name) }
        do {
            try JWTTimeRules(clockSkew: options.clockSkew, rejectsFutureIssuedAt: options.rejectsFutureIssuedAt)
                .check(claims, at: options.now)
        } catch {
            throw .invalidTime(error)
        }
        if let expected = options.expectedIssuer, claims.issuer != expected {
            throw .issuerMismatch(expected: expected, actual: claims.issuer)
        }
        if let expected = options.expectedAudience, !claims.audience.contains(expected) {
            throw .audienceMismatch(expected: expected, actual: claims.audience)
        }
        if let expected = options.expectedType, !header.typeMatches(expected) {
            throw .typeMismatch(expected: expected, actual: header.type)
        }
    }

    /// Verifies the signature with `key`, then validates against `options`.
    public func verify(with key: PublicKey, options: JWTValidationOptions, understoodCriticalHeaders: Set<String> = []) throws(JOSEError) {
        try jws.verify(with: key, understoodCriticalHeaders: understoodCriticalHeaders)
        try validate(options)
    }

    /// Verifies the signature with `jwk`, then validates against `options`.
    public func verify(with jwk: JWK, options: JWTValidationOptions, understoodCriticalHeaders: Set<String> = []) throws(JOSEError) {
        try jws.verify(with: jwk, understoodCriticalHeaders: understoodCriticalHeaders)
        try validate(options)
    }
}
