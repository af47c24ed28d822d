/// A stable, machine-readable name for a typed SDK error: the error type, then the case
/// names down through every nested error or reason enum, e.g.
/// `SDJWTError.untrustedIssuer.subjectAlternativeNameMismatch`, `CBORError.workLimitExceeded`.
///
/// The names are the Swift case names, which are public API; scripts (Tests/Interop) match
/// on them instead of on message text.
enum ErrorIdentifier {
    static func of(_ error: any Error) -> String {
        String(describing: type(of: error)) + caseNames(error)
    }

    /// `.case` for an enum value, followed by the names of a single enum payload; values
    /// of other kinds (strings, numbers, structs, tuples of several values) end the path.
    private static func caseNames(_ value: Any) -> String {
        let mirror = Mirror(reflecting: value)
        guard mirror.displayStyle == .enum else { return "" }
        guard let child = mirror.children.first, let label = child.label else {
            return "." + String(describing: value)   // a case without payload prints as its name
        }
        return "." + label + caseNames(child.value)
    }
}
