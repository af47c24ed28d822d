internal import COpenSSL

/// Comparisons whose running time does not depend on where inputs differ.
public enum ConstantTime {
    /// Whether `a` and `b` hold the same bytes (`CRYPTO_memcmp`). Inputs of different
    /// lengths are unequal; only the length, never the content, affects the timing.
    public static func equals(_ a: [UInt8], _ b: [UInt8]) -> Bool {
        guard a.count == b.count else { return false }
        guard !a.isEmpty else { return true }
        return withBytes(a) { left, count in
            withBytes(b) { right, _ in CRYPTO_memcmp(left, right, count) == 0 }
        }
    }
}
