/// Limits and strictness switches for decoding.
///
/// Every limit is checked before memory is reserved for the item concerned, so hostile
/// input cannot make the decoder allocate more than a small multiple of its own size.
public struct CBORDecodingOptions: Sendable, Hashable {
    /// The most deeply nested levels of arrays, maps, tags and indefinite-length string
    /// chunks below the top-level item. Clamped to ``maxSupportedDepth``.
    public var maxDepth: Int
    /// The most data items (each container, string chunk and leaf counts as one).
    public var maxItems: Int
    /// The largest accepted input, in bytes.
    public var maxInputSize: Int
    /// The longest accepted byte or text string, in bytes; nil means only the input size
    /// bounds it.
    public var maxStringLength: Int?
    /// Reject integer arguments, lengths and floats not in preferred serialization
    /// (RFC 8949 §4.1): non-shortest heads, or floats that a shorter width represents
    /// exactly.
    public var requirePreferredSerialization: Bool
    /// Accept indefinite-length strings, arrays and maps (RFC 8949 §3.2.2).
    public var allowIndefiniteLength: Bool
    /// Reject maps that repeat a key (RFC 8949 §5.6). On by default: a wallet must not
    /// let two parties read two different values from one signed map.
    public var rejectDuplicateMapKeys: Bool
    /// Accept the two-byte forms `f8 18`...`f8 1f` as the reserved simple values 24...31,
    /// as RFC 7049 Appendix A did (`simple(24)`). RFC 8949 §3.3 and Appendix F.1 make
    /// them not well-formed, so this is off by default; `f8 00`...`f8 17` stay rejected.
    public var allowReservedSimpleValues: Bool
    /// Reject maps whose keys are not sorted by their encoded bytes (RFC 8949 §4.2.1).
    /// Keys are compared as received.
    public var requireSortedMapKeys: Bool

    /// The hard ceiling on ``maxDepth``. The decoder, the encoder and the diagnostic
    /// printer recurse once per level, so the ceiling keeps the deepest accepted value
    /// within a 512 KiB thread stack (the size of secondary threads on Apple platforms)
    /// even in unoptimised, sanitizer-instrumented builds.
    public static let maxSupportedDepth = 512

    /// Creates options; the defaults accept any well-formed input up to 64 MiB with at
    /// most 256 nested levels and 4,194,304 items, and reject duplicate map keys.
    public init(maxDepth: Int = 256,
                maxItems: Int = 4_194_304,
                maxInputSize: Int = 64 << 20,
                maxStringLength: Int? = nil,
                requirePreferredSerialization: Bool = false,
                allowIndefiniteLength: Bool = true,
                rejectDuplicateMapKeys: Bool = true,
                requireSortedMapKeys: Bool = false,
                allowReservedSimpleValues: Bool = false) {
        self.maxDepth = maxDepth
        self.maxItems = maxItems
        self.maxInputSize = maxInputSize
        self.maxStringLength = maxStringLength
        self.requirePreferredSerialization = requirePreferredSerialization
        self.allowIndefiniteLength = allowIndefiniteLength
        self.rejectDuplicateMapKeys = rejectDuplicateMapKeys
        self.requireSortedMapKeys = requireSortedMapKeys
        self.allowReservedSimpleValues = allowReservedSimpleValues
    }

    /// The default options.
    public static let `default` = CBORDecodingOptions()

    /// Accept only core deterministic encoding (RFC 8949 §4.2.1): preferred
    /// serialization, definite lengths, unique keys sorted bytewise.
    public static let deterministic = CBORDecodingOptions(requirePreferredSerialization: true,
                                                          allowIndefiniteLength: false,
                                                          rejectDuplicateMapKeys: true,
                                                          requireSortedMapKeys: true)

    var effectiveMaxDepth: Int { min(max(maxDepth, 0), Self.maxSupportedDepth) }
}
