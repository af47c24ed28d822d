/// A map key that is an integer or a definite-length string, seen where it lies in the
/// input. ``CBORParser`` and ``CBORNodeScanner`` both compare keys through this one type,
/// so that they find the same duplicates and the same increasing runs.
///
/// Two such keys are equal exactly when major type, argument (an integer's value or a
/// string's length) and content bytes are; a definite string equals an indefinite one of
/// the same content, which is why an indefinite key is never a plain key.
struct PlainMapKey {
    /// The major type, 0 to 3.
    var major: UInt8
    /// The head's argument: an integer's value or a string's length.
    var argument: UInt64
    /// A string's content bytes; empty for an integer. Valid only while its input is.
    var content: UnsafeBufferPointer<UInt8>

    /// True when `a` and `b` are the same key.
    static func equal(_ a: PlainMapKey, _ b: PlainMapKey) -> Bool {
        guard a.major == b.major, a.argument == b.argument else { return false }
        // Equal arguments mean equal lengths.
        for k in 0..<a.content.count where a.content[k] != b.content[k] { return false }
        return true
    }

    /// A total order consistent with ``equal(_:_:)``: major type, argument, then content.
    /// Keys that arrive in increasing order (a deterministic or sorted encoding) are
    /// distinct without a lookup.
    static func precedes(_ a: PlainMapKey, _ b: PlainMapKey) -> Bool {
        if a.major != b.major { return a.major < b.major }
        if a.argument != b.argument { return a.argument < b.argument }
        for k in 0..<a.content.count where a.content[k] != b.content[k] { return a.content[k] < b.content[k] }
        return false
    }
}
