import Foundation

/// What a JWT must satisfy besides its signature: the time window at `now` with
/// `clockSkew` leeway, and optional expectations on `aud`, `iss`, `typ` and claims.
public struct JWTValidationOptions: Sendable, Equatable {
    /// The instant to check against (from the caller's `WalletClock`).
    public var now: Date
    /// Leeway applied to `exp`, `nbf` and `iat`, in seconds.
    public var clockSkew: TimeInterval
    /// An audience `aud` must contain.
    public var expectedAudience: String?
    /// The issuer `iss` must equal.
    public var expectedIssuer: String?
    /// The header `typ` (case-insensitive, `application/` optional).
    public var expectedType: String?
    /// Claims that must be present (e.g. `["exp", "iat", "nonce"]`).
    public var requiredClaims: Set<String>
    /// Whether an `iat` after `now + clockSkew` is rejected.
    public var rejectsFutureIssuedAt: Bool

    /// Options checking the time window at `now` with a 60-second default skew.
    public init(
        now: Date, clockSkew: TimeInterval = 60, expectedAudience: String? = nil, expectedIssuer: String? = nil,
        expectedType: String? = nil, requiredClaims: Set<String> = [], rejectsFutureIssuedAt: Bool = true
    ) {
        self.now = now
        self.clockSkew = clockSkew
        self.expectedAudience = expectedAudience
        self.expectedIssuer = expectedIssuer
        self.expectedType = expectedType
        self.requiredClaims = requiredClaims
        self.rejectsFutureIssuedAt = rejectsFutureIssuedAt
    }
}
