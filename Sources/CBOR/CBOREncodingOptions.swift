/// Choices for encoding.
///
/// By default the encoder writes integer arguments and lengths in their shortest form
/// (preferred serialization, RFC 8949 §4.1), floats at the width of their case
/// (`.half` 2 bytes, `.float` 4, `.double` 8, so decoded items re-encode to the bytes
/// received), and map entries in their stored order. Lengths are always definite.
public struct CBOREncodingOptions: Sendable, Hashable {
    /// Encode each float in the shortest of binary16/32/64 that holds its value exactly
    /// (NaN payloads included), RFC 8949 §4.1.
    public var shortestFloats: Bool
    /// Sort map entries by the bytewise lexicographic order of their encoded keys
    /// (RFC 8949 §4.2.1). Maps with duplicate keys keep them, in a stable order.
    public var sortMapKeys: Bool

    /// Creates options (both switches off by default).
    public init(shortestFloats: Bool = false, sortMapKeys: Bool = false) {
        self.shortestFloats = shortestFloats
        self.sortMapKeys = sortMapKeys
    }

    /// Core deterministic encoding (RFC 8949 §4.2.1): shortest heads and floats,
    /// definite lengths, sorted map keys.
    public static let deterministic = CBOREncodingOptions(shortestFloats: true, sortMapKeys: true)
}
