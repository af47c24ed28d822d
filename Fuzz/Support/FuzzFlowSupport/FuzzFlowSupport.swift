import Foundation
import WalletRuntime

// What the end-to-end fuzz targets (FuzzIssuanceFlow, FuzzPresentationFlow) share: a
// reference party answers a wallet in-process, the input stands in for one of its
// answers, and the target checks what the wallet did with it.

/// Reports a broken invariant and aborts, which libFuzzer reports as a crash.
public func breach(_ message: String, target: String = ProcessInfo.processInfo.processName) -> Never {
    FileHandle.standardError.write(Data("\(target): \(message)\n".utf8))
    abort()
}

/// Blocks the fuzzer's thread until `body` is done (the entry point is synchronous).
public func blocking(_ body: @escaping @Sendable () async -> Void) {
    let done = DispatchSemaphore(value: 0)
    Task {
        await body()
        done.signal()
    }
    done.wait()
}

/// Follows the session `start` makes to its terminal state with `terminal`, then waits
/// until the session is released. A session's driver task may still hold it for a moment
/// after its terminal state; waiting for the release ends that before the input does, so
/// that LeakSanitizer, which checks after each input, never sees a live object as lost. A
/// session never released would be a leak, which the fuzzer reports as a timeout.
public func settled<Session: AnyObject, State>(_ start: () -> Session,
                                               terminal: (Session) async -> State) async -> State {
    weak var watched: Session?
    let state: State
    do {
        let session = start()
        watched = session
        state = await terminal(session)
    }
    while watched != nil { try? await Task.sleep(for: .milliseconds(1)) }
    return state
}

/// What a hostile party's handler saw: one entry per exchange, in order.
public final class ExchangeLog<Entry: Sendable>: @unchecked Sendable {
    private let lock = NSLock()
    private var entries: [Entry] = []

    /// An empty log.
    public init() {}

    /// Records `entry`; the index it takes (0-based).
    public func append(_ entry: Entry) -> Int {
        lock.lock(); defer { lock.unlock() }
        entries.append(entry)
        return entries.count - 1
    }

    /// Changes the entry at `index`.
    public func update(_ index: Int, _ change: (inout Entry) -> Void) {
        lock.lock(); defer { lock.unlock() }
        change(&entries[index])
    }

    /// Every entry so far.
    public var all: [Entry] { lock.lock(); defer { lock.unlock() }; return entries }

    /// How many exchanges there were.
    public var count: Int { lock.lock(); defer { lock.unlock() }; return entries.count }
}

/// The answer served in place of `real`: `real`'s headers but its Content-Type and
/// Content-Length; as Content-Type, by `contentType` (the input's two bits), `real`'s own,
/// JSON, `jwtMediaType`, or none; `status` (nil keeps `real`'s) and `body`.
public func replacement(for real: HTTPResponse, contentType: Int, jwtMediaType: String, status: Int?,
                        body: [UInt8]) -> HTTPResponse {
    var headers = HTTPHeaders()
    for field in real.headers where !["content-type", "content-length"].contains(field.name.lowercased()) {
        headers.add(name: field.name, value: field.value)
    }
    switch contentType {
    case 0: if let type = real.headers["Content-Type"] { headers.add(name: "Content-Type", value: type) }
    case 1: headers.add(name: "Content-Type", value: "application/json")
    case 2: headers.add(name: "Content-Type", value: jwtMediaType)
    default: break
    }
    return HTTPResponse(status: status ?? real.status, headers: headers, body: body)
}
