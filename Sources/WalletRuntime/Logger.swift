import Foundation

/// How much a log line matters.
public enum LogLevel: Int, Comparable, Sendable, CaseIterable {
    /// Step-by-step detail for development.
    case debug
    /// Normal milestones (a session started, a credential stored).
    case info
    /// Something unexpected that the SDK recovered from.
    case warning
    /// A failure the caller will see.
    case error

    /// Orders levels by severity.
    public static func < (lhs: LogLevel, rhs: LogLevel) -> Bool { lhs.rawValue < rhs.rawValue }
}

/// The SDK's logging seam. The SDK never passes secrets (keys, tokens, PINs,
/// credential contents) to a logger; values that are sensitive but useful to
/// correlate go through ``Redacted``.
public protocol Logger: Sendable {
    /// Records `message` at `level`; `module` names the SDK module that speaks.
    func log(_ level: LogLevel, _ message: @autoclosure () -> String, module: String)
}

extension Logger {
    /// Logs at ``LogLevel/debug``.
    public func debug(_ message: @autoclosure () -> String, module: String = "wallet") { log(.debug, message(), module: module) }
    /// Logs at ``LogLevel/info``.
    public func info(_ message: @autoclosure () -> String, module: String = "wallet") { log(.info, message(), module: module) }
    /// Logs at ``LogLevel/warning``.
    public func warning(_ message: @autoclosure () -> String, module: String = "wallet") { log(.warning, message(), module: module) }
    /// Logs at ``LogLevel/error``.
    public func error(_ message: @autoclosure () -> String, module: String = "wallet") { log(.error, message(), module: module) }
}

/// A logger that drops everything: the default.
public struct SilentLogger: Logger {
    /// Creates the silent logger.
    public init() {}
    /// Does nothing; `message` is never evaluated.
    public func log(_ level: LogLevel, _ message: @autoclosure () -> String, module: String) {}
}

/// A logger that writes `LEVEL [module] message` lines to standard error,
/// dropping lines below `minimumLevel`.
public struct StandardErrorLogger: Logger {
    /// Lines below this level are dropped without evaluating their message.
    public let minimumLevel: LogLevel

    /// Creates a logger that prints lines at `minimumLevel` or above.
    public init(minimumLevel: LogLevel = .info) { self.minimumLevel = minimumLevel }

    /// Prints one line to standard error.
    public func log(_ level: LogLevel, _ message: @autoclosure () -> String, module: String) {
        guard level >= minimumLevel else { return }
        let line = "\(String(describing: level).uppercased()) [\(module)] \(message())\n"
        FileHandle.standardError.write(Data(line.utf8))
    }
}

/// Wraps a sensitive value so that interpolating it into a log line prints
/// `<redacted>` (or a short, non-reversible fingerprint when asked) instead.
public struct Redacted<Value: Sendable>: Sendable, CustomStringConvertible, CustomDebugStringConvertible {
    /// The wrapped value, for code that needs it; never for logs.
    public let value: Value

    /// Wraps `value`.
    public init(_ value: Value) { self.value = value }

    /// Always `<redacted>`.
    public var description: String { "<redacted>" }
    /// Always `<redacted>`.
    public var debugDescription: String { "<redacted>" }
}
