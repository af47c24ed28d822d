/// Why JSON text did not parse, or a parsed value does not have the shape a caller needs.
public struct JSONError: Error, Hashable, Sendable, CustomStringConvertible {
    /// What went wrong.
    public enum Reason: Hashable, Sendable {
        /// The text ended inside a value.
        case unexpectedEnd
        /// A byte that cannot start or continue the value being read.
        case unexpectedCharacter(UInt8)
        /// `true`, `false` or `null` misspelt.
        case invalidLiteral
        /// Bytes after the one top-level value.
        case trailingData
        /// Arrays and objects nested deeper than the limit.
        case nestingTooDeep(limit: Int)
        /// The document is larger than the limit.
        case documentTooLarge(limit: Int)
        /// An object names a member twice.
        case duplicateMember(String)
        /// A number that is not RFC 8259 syntax.
        case invalidNumber
        /// A number too large for a finite double.
        case numberOutOfRange
        /// A backslash escape that is not one of RFC 8259's.
        case invalidEscape
        /// A `\u` escape of a lone or misordered UTF-16 surrogate.
        case invalidSurrogate
        /// A string whose bytes are not UTF-8.
        case invalidUTF8
        /// An unescaped control character inside a string.
        case controlCharacterInString
        /// A required member is absent (`member` names it).
        case missingMember(String)
        /// A value has the wrong JSON type (`member` names it when it is an object member).
        case wrongType(member: String?, expected: JSONKind, actual: JSONKind)
        /// A value has the right type but is not allowed (`member` names it).
        case invalidValue(member: String)
    }

    /// What went wrong.
    public let reason: Reason
    /// The byte offset in the text, for syntax errors.
    public let offset: Int?

    /// An error with its reason and, for syntax errors, the offset.
    public init(_ reason: Reason, at offset: Int? = nil) {
        self.reason = reason
        self.offset = offset
    }

    /// A one-line description for logs (member names, never member values).
    public var description: String {
        let position = offset.map { " at offset \($0)" } ?? ""
        switch reason {
        case .unexpectedEnd: return "JSON ends unexpectedly\(position)"
        case .unexpectedCharacter(let byte): return "unexpected byte 0x\(Hex.encode([byte]))\(position)"
        case .invalidLiteral: return "invalid literal\(position)"
        case .trailingData: return "trailing data\(position)"
        case .nestingTooDeep(let limit): return "nesting deeper than \(limit)\(position)"
        case .documentTooLarge(let limit): return "document larger than \(limit) bytes"
        case .duplicateMember(let name): return "duplicate member \"\(name)\"\(position)"
        case .invalidNumber: return "invalid number\(position)"
        case .numberOutOfRange: return "number out of range\(position)"
        case .invalidEscape: return "invalid escape\(position)"
        case .invalidSurrogate: return "invalid UTF-16 surrogate escape\(position)"
        case .invalidUTF8: return "invalid UTF-8\(position)"
        case .controlCharacterInString: return "control character in string\(position)"
        case .missingMember(let name): return "member \"\(name)\" is missing"
        case .wrongType(let member, let expected, let actual):
            return "\(member.map { "member \"\($0)\"" } ?? "value") is \(actual.rawValue), expected \(expected.rawValue)"
        case .invalidValue(let member): return "member \"\(member)\" has an invalid value"
        }
    }
}
