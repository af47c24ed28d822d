/// A level of resistance against attack potential per ISO/IEC 18045, as used in the
/// `key_storage` and `user_authentication` claims (OpenID4VCI 1.0 Appendix D.2).
public struct AttackPotentialResistance: RawRepresentable, Sendable, Hashable, CustomStringConvertible {
    /// The claim value (`iso_18045_high` ...); other values are kept as received.
    public let rawValue: String

    /// Wraps a claim value.
    public init(rawValue: String) { self.rawValue = rawValue }

    /// Resistant to attackers with high attack potential.
    public static let iso18045High = AttackPotentialResistance(rawValue: "iso_18045_high")
    /// Resistant to attackers with moderate attack potential.
    public static let iso18045Moderate = AttackPotentialResistance(rawValue: "iso_18045_moderate")
    /// Resistant to attackers with enhanced-basic attack potential.
    public static let iso18045EnhancedBasic = AttackPotentialResistance(rawValue: "iso_18045_enhanced-basic")
    /// Resistant to attackers with basic attack potential.
    public static let iso18045Basic = AttackPotentialResistance(rawValue: "iso_18045_basic")

    /// The claim value.
    public var description: String { rawValue }
}
