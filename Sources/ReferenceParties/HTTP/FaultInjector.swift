import Foundation
import WalletRuntime

/// What a ``FaultRule`` does to a request it fires on.
public enum Fault: Sendable, Equatable {
    /// Answer with this response instead of calling the handler (a 500, an OAuth error...).
    case respond(HTTPResponse)
    /// Sleep this long on the injector's clock, then let the handler answer.
    case delay(Duration)
    /// Let the handler answer, then keep its status and headers but replace the body
    /// with its first half followed by the byte 0xFF. That byte is not UTF-8, so no
    /// JSON document, compact JWS/JWE or form body parses; a CBOR item fails on the
    /// bytes cut off.
    case malformedBody
    /// Close the connection without answering (`HTTPError.transport(.networkConnectionLost)` in-process).
    case dropConnection

    /// Answer `status` with a plain-text body.
    public static func status(_ status: Int, body: String = "") -> Fault {
        .respond(HTTPResponse(status: status, headers: ["Content-Type": "text/plain; charset=utf-8"],
                              body: Array(body.utf8)))
    }
}

/// Which of the calls a rule matches it fires on. Calls are counted per rule from 1.
public enum FaultSchedule: Sendable, Equatable {
    /// Every call.
    case always
    /// Calls 1 through n, then never again ("fail twice, then work").
    case first(Int)
    /// Calls n, 2n, 3n, ...
    case everyNth(Int)
    /// Call n only.
    case onlyCall(Int)

    func fires(onCall call: Int) -> Bool {
        switch self {
        case .always: return true
        case .first(let count): return call <= count
        case .everyNth(let period): return period > 0 && call % period == 0
        case .onlyCall(let number): return call == number
        }
    }
}

/// A deterministic fault: for requests with this method (any when `nil`) and path
/// pattern (``HTTPRouter``'s syntax, `{name}` matching one segment), on the calls its
/// schedule picks, do `fault`.
public struct FaultRule: Sendable, Equatable {
    /// The method it applies to, or `nil` for any.
    public var method: HTTPMethod?
    /// The path pattern it applies to.
    public var path: String
    /// The calls it fires on.
    public var schedule: FaultSchedule
    /// What it does.
    public var fault: Fault

    /// Creates a rule.
    public init(_ method: HTTPMethod? = nil, path: String, schedule: FaultSchedule = .always, fault: Fault) {
        self.method = method
        self.path = path
        self.schedule = schedule
        self.fault = fault
    }
}

/// A handler that wraps another and injects faults by rule: status codes, delays on an
/// injected clock, malformed bodies and dropped connections, for given paths and
/// methods on given calls. Nothing is random: every rule counts the requests that match
/// its method and path, and fires on the call numbers its schedule names. When several
/// rules fire on one request the first in the list wins; all of them count the call.
///
/// ```swift
/// let faults = FaultInjector(wrapping: issuer, rules: [
///     FaultRule(.post, path: "/credential", schedule: .first(1), fault: .status(500)),
///     FaultRule(.post, path: "/token", schedule: .onlyCall(2), fault: .delay(.seconds(60))),
/// ], clock: clock)
/// ```
public actor FaultInjector: HTTPHandler {
    private let handler: any HTTPHandler
    private let clock: any WalletClock
    private var rules: [(rule: FaultRule, pattern: PathPattern)] = []
    private var calls: [Int] = []
    private var fired: [Int] = []

    /// Wraps `handler`; delays sleep on `clock`.
    public init(wrapping handler: some HTTPHandler, rules: [FaultRule] = [], clock: any WalletClock = SystemClock()) {
        self.handler = handler
        self.clock = clock
        self.rules = rules.map { (rule: $0, pattern: PathPattern($0.path)) }
        self.calls = Array(repeating: 0, count: rules.count)
        self.fired = Array(repeating: 0, count: rules.count)
    }

    /// Replaces the rules and starts every count again.
    public func setRules(_ newRules: [FaultRule]) {
        rules = newRules.map { (rule: $0, pattern: PathPattern($0.path)) }
        calls = Array(repeating: 0, count: newRules.count)
        fired = Array(repeating: 0, count: newRules.count)
    }

    /// Adds a rule after the others, counting from its first call.
    public func add(_ rule: FaultRule) {
        rules.append((rule: rule, pattern: PathPattern(rule.path)))
        calls.append(0)
        fired.append(0)
    }

    /// How many times each rule, in order, has done its fault.
    public var firedCounts: [Int] { fired }

    /// Applies the first rule that fires, or passes the request through.
    public func respond(to request: HTTPRequest) async throws(HTTPHandlerError) -> HTTPResponse {
        var chosen: Fault?
        let segments = PathPattern.segments(ofPath: request.path)
        for index in rules.indices {
            let (rule, pattern) = rules[index]
            guard rule.method.map({ $0 == request.method }) ?? true,
                  let segments, pattern.match(segments) != nil else { continue }
            calls[index] += 1
            if chosen == nil, rule.schedule.fires(onCall: calls[index]) {
                chosen = rule.fault
                fired[index] += 1
            }
        }
        guard let fault = chosen else { return try await handler.respond(to: request) }
        switch fault {
        case .respond(let response):
            return response
        case .dropConnection:
            throw .dropConnection
        case .delay(let duration):
            do {
                try await clock.sleep(for: duration)
            } catch {
                throw .dropConnection   // cancelled while waiting: the exchange is over anyway
            }
            return try await handler.respond(to: request)
        case .malformedBody:
            let response: HTTPResponse
            do {
                response = try await handler.respond(to: request)
            } catch {
                guard case .response(let early) = error else { throw error }
                response = early
            }
            var broken = response
            broken.body = Array(response.body.prefix(response.body.count / 2)) + [0xFF]
            return broken
        }
    }
}
