import Foundation

extension Date {
    /// Whole seconds since 1970-01-01T00:00:00Z, rounded down: a JWT NumericDate (RFC 7519
    /// §2) or a `time_t`; the SDK's one conversion. It never traps: a date past the `Int64`
    /// range reads as its bound, and one that is not a number (which no clock gives, only
    /// `Date(timeIntervalSince1970: .nan)`) as 0.
    public var wholeSecondsSince1970: Int64 {
        Self.wholeSeconds(timeIntervalSince1970)
    }

    /// `seconds` rounded down to whole seconds, clamped to the `Int64` range (0 for NaN).
    public static func wholeSeconds(_ seconds: TimeInterval) -> Int64 {
        let whole = seconds.rounded(.down)
        guard !whole.isNaN else { return 0 }
        // 2^63 is the first Double past Int64.max; -2^63 converts exactly.
        if whole >= 9_223_372_036_854_775_808.0 { return .max }
        if whole <= -9_223_372_036_854_775_808.0 { return .min }
        return Int64(whole)
    }
}
