import CBOR

/// A header parameter label: an integer or a text string (RFC 9052 §3).
public enum COSEHeaderLabel: Hashable, Sendable, CustomStringConvertible {
    /// An integer label (the registered parameters use these).
    case int(Int)
    /// A text label.
    case text(String)

    /// `alg` (1): the algorithm.
    public static let algorithm = COSEHeaderLabel.int(1)
    /// `crit` (2): labels the recipient must understand.
    public static let critical = COSEHeaderLabel.int(2)
    /// `content type` (3).
    public static let contentType = COSEHeaderLabel.int(3)
    /// `kid` (4): the key identifier.
    public static let keyID = COSEHeaderLabel.int(4)
    /// `IV` (5): the full initialization vector.
    public static let iv = COSEHeaderLabel.int(5)
    /// `Partial IV` (6).
    public static let partialIV = COSEHeaderLabel.int(6)
    /// `x5chain` (33): an X.509 certificate or chain, leaf first (RFC 9360).
    public static let x5chain = COSEHeaderLabel.int(33)

    /// The labels this module interprets, which `crit` may therefore list.
    public static let understood: Set<COSEHeaderLabel> = [.algorithm, .critical, .contentType, .keyID, .iv, .partialIV, .x5chain]

    /// Reads a label from a CBOR item: an integer that fits `Int` or a text string.
    public init?(cbor: CBOR) {
        switch cbor {
        case .unsigned, .negative:
            guard let value = cbor.intValue else { return nil }
            self = .int(value)
        case .textString(let text):
            self = .text(text)
        default:
            return nil
        }
    }

    /// The label as a CBOR item.
    public var cbor: CBOR {
        switch self {
        case .int(let value): CBOR(value)
        case .text(let text): .textString(text)
        }
    }

    /// The label as written in diagnostic notation.
    public var description: String {
        switch self {
        case .int(let value): String(value)
        case .text(let text): "\"\(text)\""
        }
    }
}
