import Foundation
import Testing
import WalletEncoding

@Suite("Whole seconds since 1970")
struct DateSecondsTests {
    @Test("rounded down, clamped to the Int64 range, 0 for NaN: no date traps", arguments: [
        (0, 0), (1.5, 1), (-1.5, -2), (1_700_000_000.999, 1_700_000_000),
        (9_223_372_036_854_774_784, 9_223_372_036_854_774_784), // the largest Double below 2^63
        (9_223_372_036_854_775_808, .max), (-9_223_372_036_854_775_808, .min), (1e300, .max), (-1e300, .min),
        (.infinity, .max), (-.infinity, .min), (.nan, 0),
    ] as [(Double, Int64)])
    func wholeSeconds(seconds: Double, expected: Int64) {
        #expect(Date.wholeSeconds(seconds) == expected)
        #expect(Date(timeIntervalSince1970: seconds).wholeSecondsSince1970 == expected)
    }
}
