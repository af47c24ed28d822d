import Foundation
import WalletEncoding

/// A time claim of a JWT (RFC 7519 §4.1.4-4.1.6): a NumericDate in seconds since the epoch.
public enum JWTTimeClaim: String, Sendable, Hashable, CaseIterable {
    /// `exp`: the time on or after which the JWT must not be accepted.
    case expiration = "exp"
    /// `nbf`: the time before which the JWT must not be accepted.
    case notBefore = "nbf"
    /// `iat`: the time the JWT was issued.
    case issuedAt = "iat"
}

/// Why a JWT's time claims do not hold at the verification time.
public enum JWTTimeFailure: Error, Hashable, Sendable {
    /// A time claim the rules require is absent.
    case missing(JWTTimeClaim)
    /// A time claim is present but not a JSON number.
    case notANumber(JWTTimeClaim)
    /// `exp` (plus the skew) is not after the verification time.
    case expired(exp: Date, now: Date)
    /// `nbf` (minus the skew) is after the verification time.
    case notYetValid(nbf: Date, now: Date)
    /// `iat` (minus the skew) is after the verification time.
    case issuedInFuture(iat: Date, now: Date)
    /// `iat` is older than the maximum age (plus the skew) allows.
    case issuedTooLongAgo(iat: Date, now: Date, maximumAge: TimeInterval)
}

/// The one check of JWT time claims in the SDK, used for plain JWTs, SD-JWT credentials
/// (on the claims after disclosure, so a disclosed `exp` counts), Key Binding JWTs, key
/// attestations, OpenID4VP request objects, and the reference issuer's key and DPoP
/// proofs (RFC 7519 §4.1.4-4.1.6).
///
/// Present claims are always checked: `exp` must lie after now, `nbf` and `iat` not after
/// now. `required` claims must be present, and with a `maximumAge` the `iat` must not be
/// older than that. Two leeways apply: `clockSkew` to the claims that fail by lying in
/// the future (`nbf`, `iat`: the signer's clock runs ahead), `expirySkew` to those that
/// fail by lying in the past (`exp`, the maximum age of `iat`: the signer's clock runs
/// behind). They are equal unless a caller that demands freshness, such as a proof of
/// possession, takes the second away.
public struct JWTTimeRules: Sendable, Hashable {
    /// Leeway for `nbf` and `iat` in the future, in seconds.
    public var clockSkew: TimeInterval
    /// Leeway for `exp` and for the maximum age of `iat`, in seconds.
    public var expirySkew: TimeInterval
    /// The time claims that must be present.
    public var required: Set<JWTTimeClaim>
    /// How old `iat` may be, in seconds; nil for no limit.
    public var maximumAge: TimeInterval?
    /// Whether an `iat` after now (plus skew) is refused.
    public var rejectsFutureIssuedAt: Bool

    /// Rules with `clockSkew` seconds of leeway (60 by default); `expirySkew` is the
    /// same unless given.
    public init(clockSkew: TimeInterval = 60, expirySkew: TimeInterval? = nil, required: Set<JWTTimeClaim> = [],
                maximumAge: TimeInterval? = nil, rejectsFutureIssuedAt: Bool = true) {
        self.clockSkew = clockSkew
        self.expirySkew = expirySkew ?? clockSkew
        self.required = required
        self.maximumAge = maximumAge
        self.rejectsFutureIssuedAt = rejectsFutureIssuedAt
    }

    /// The rules of a proof of possession (an OpenID4VCI key proof, a DPoP proof): `iat`
    /// required, at most `maximumAge` old and at most `clockSkew` ahead; an `exp` or the
    /// age limit counts without leeway, since freshness is what the proof is for.
    public static func proofOfPossession(maximumAge: TimeInterval, clockSkew: TimeInterval) -> JWTTimeRules {
        JWTTimeRules(clockSkew: clockSkew, expirySkew: 0, required: [.issuedAt], maximumAge: maximumAge)
    }

    /// Checks the time claims of `claims` at `now`.
    /// - Throws: the first `JWTTimeFailure`, in the order `exp`, `nbf`, `iat`.
    public func check(_ claims: JSONObject, at now: Date) throws(JWTTimeFailure) {
        if let exp = try date(.expiration, in: claims), exp.addingTimeInterval(expirySkew) <= now {
            throw .expired(exp: exp, now: now)
        }
        if let nbf = try date(.notBefore, in: claims), nbf.addingTimeInterval(-clockSkew) > now {
            throw .notYetValid(nbf: nbf, now: now)
        }
        if let iat = try date(.issuedAt, in: claims) {
            if rejectsFutureIssuedAt, iat.addingTimeInterval(-clockSkew) > now { throw .issuedInFuture(iat: iat, now: now) }
            if let maximumAge, iat.addingTimeInterval(maximumAge + expirySkew) < now {
                throw .issuedTooLongAgo(iat: iat, now: now, maximumAge: maximumAge)
            }
        }
    }

    /// Checks the time claims of a JWT's claims set at `now`.
    public func check(_ claims: JWTClaims, at now: Date) throws(JWTTimeFailure) {
        try check(claims.members, at: now)
    }

    private func date(_ claim: JWTTimeClaim, in claims: JSONObject) throws(JWTTimeFailure) -> Date? {
        guard let value = claims[claim.rawValue] else {
            if required.contains(claim) { throw .missing(claim) }
            return nil
        }
        guard let seconds = value.doubleValue else { throw .notANumber(claim) }
        return Date(timeIntervalSince1970: seconds)
    }
}
