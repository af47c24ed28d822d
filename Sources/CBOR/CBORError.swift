/// Everything that can go wrong when reading, writing or interpreting CBOR.
///
/// Wire-level errors carry `offset`: the index in the input buffer of the byte where the
/// problem was found (for items, the offset of their initial byte). When an item inside a
/// larger buffer is decoded in place (tag 24 content read through ``CBORItem``), offsets
/// are indices into that larger buffer.
public enum CBORError: Error, Equatable, Sendable {
    /// The input ended where another byte was required; `offset` is where it was needed.
    case unexpectedEnd(offset: Int)
    /// Additional information 28, 29 or 30 was used (RFC 8949 §3, reserved).
    case reservedAdditionalInfo(offset: Int, value: UInt8)
    /// Additional information 31 was used with major type 0, 1 or 6 (RFC 8949 §3.2.4).
    case invalidIndefiniteLength(offset: Int)
    /// A text string is not valid UTF-8; `offset` is that of the first bad byte.
    case invalidUTF8(offset: Int)
    /// A "break" stop code appeared outside an indefinite-length item, or as a map value.
    case unexpectedBreak(offset: Int)
    /// A chunk of an indefinite-length string is not a definite-length string of the same
    /// major type (RFC 8949 §3.2.3).
    case invalidIndefiniteChunk(offset: Int)
    /// A declared string length or element count cannot fit in the remaining input, or
    /// exceeds ``CBORDecodingOptions/maxStringLength``.
    case lengthTooLarge(offset: Int, length: UInt64)
    /// Nesting deeper than ``CBORDecodingOptions/maxDepth``.
    case depthLimitExceeded(offset: Int)
    /// More data items than ``CBORDecodingOptions/maxItems``.
    case itemLimitExceeded(offset: Int)
    /// The input is larger than ``CBORDecodingOptions/maxInputSize``.
    case inputTooLarge(size: Int)
    /// Bytes follow the single top-level item.
    case trailingBytes(offset: Int)
    /// A simple value below 32 was encoded in two bytes (RFC 8949 §3.3).
    case invalidSimpleValue(offset: Int)
    /// An argument or float is not in preferred (shortest) form while
    /// ``CBORDecodingOptions/requirePreferredSerialization`` is on.
    case nonPreferredEncoding(offset: Int)
    /// An indefinite-length item while ``CBORDecodingOptions/allowIndefiniteLength`` is off.
    case indefiniteLengthNotAllowed(offset: Int)
    /// A map repeats a key while ``CBORDecodingOptions/rejectDuplicateMapKeys`` is on;
    /// `offset` is that of the repeated key.
    case duplicateMapKey(offset: Int)
    /// Map keys are not in bytewise lexicographic order of their encodings (RFC 8949
    /// §4.2.1) while ``CBORDecodingOptions/requireSortedMapKeys`` is on.
    case unsortedMapKeys(offset: Int)
    /// A date string or number does not denote a valid date (tags 0, 1, 100, 1004).
    case invalidDate(String)
    /// A value has another type than required; `path` locates it ("" at the top level).
    case typeMismatch(expected: String, path: String)
    /// A required map key is absent.
    case keyNotFound(key: String, path: String)
    /// A required value is null, undefined, or past the end of an array.
    case valueNotFound(expected: String, path: String)
    /// An integer does not fit the requested Swift integer type.
    case integerOutOfRange(path: String)
    /// A `Codable` implementation reported an error; `description` says what it was.
    case dataCorrupted(description: String, path: String)
    /// Rendering diagnostic notation would read, allocate and print more than the
    /// allowed work (``CBORDiagnosticOptions/maxWork``), in bytes.
    case workLimitExceeded(limit: Int)
    /// A value cannot be represented (for example a `Date` outside years 0000-9999 as
    /// an RFC 3339 string).
    case unsupportedValue(String)
}
