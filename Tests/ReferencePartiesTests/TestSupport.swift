import Foundation
import ReferenceParties
import WalletRuntime
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// A request to `path` on a placeholder host (in-process transports ignore the host).
func request(_ method: HTTPMethod = .get, _ path: String, headers: HTTPHeaders = HTTPHeaders(), body: [UInt8]? = nil,
             timeout: Duration = .seconds(30)) -> HTTPRequest {
    HTTPRequest(method: method, url: URL(string: "http://reference.test\(path)")!, headers: headers, body: body,
                timeout: timeout)
}

/// The body as UTF-8 text.
func text(_ response: HTTPResponse) -> String { String(decoding: response.body, as: UTF8.self) }

/// A value several tasks can update.
final class Locked<Value>: @unchecked Sendable {
    private let lock = NSLock()
    private var value: Value
    init(_ value: Value) { self.value = value }
    func withLock<Result>(_ body: (inout Value) -> Result) -> Result {
        lock.lock(); defer { lock.unlock() }
        return body(&value)
    }
    var current: Value { withLock { $0 } }
}

/// A one-shot signal: `wait()` returns once `open()` has been called (before or after).
final class Gate: @unchecked Sendable {
    private let lock = NSLock()
    private var isOpen = false
    private var waiters: [CheckedContinuation<Void, Never>] = []

    func open() {
        lock.lock()
        isOpen = true
        let pending = waiters
        waiters = []
        lock.unlock()
        for waiter in pending { waiter.resume() }
    }

    func wait() async {
        await withCheckedContinuation { continuation in
            lock.lock()
            if isOpen {
                lock.unlock()
                continuation.resume()
            } else {
                waiters.append(continuation)
                lock.unlock()
            }
        }
    }
}

/// Suspends until the task is cancelled (a handler that never answers by itself).
func waitForCancellation() async {
    let gate = Gate()
    await withTaskCancellationHandler {
        await gate.wait()
    } onCancel: {
        gate.open()
    }
}

/// A connected TCP socket to 127.0.0.1:`port`, or -1. Reads give up after 60 s, as a hang guard.
func connectLoopback(port: UInt16) -> Int32 {
    #if canImport(Glibc)
    let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
    #else
    let fd = socket(AF_INET, SOCK_STREAM, 0)
    #endif
    guard fd >= 0 else { return -1 }
    var guardTime = timeval(tv_sec: 60, tv_usec: 0)
    _ = setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &guardTime, socklen_t(MemoryLayout<timeval>.size))
    var address = sockaddr_in()
    address.sin_family = sa_family_t(AF_INET)
    address.sin_port = port.bigEndian
    address.sin_addr.s_addr = UInt32(0x7F00_0001).bigEndian
    let connected = withUnsafePointer(to: &address) {
        $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
    }
    guard connected == 0 else { close(fd); return -1 }
    return fd
}

/// Writes `bytes` to a fresh connection and reads until the server closes it, on a
/// thread of its own (blocking socket calls stay off the cooperative pool). `nil` when
/// the connection could not be made.
func rawExchange(port: UInt16, _ bytes: [UInt8]) async -> [UInt8]? {
    await withCheckedContinuation { continuation in
        let thread = Thread {
            let fd = connectLoopback(port: port)
            guard fd >= 0 else { continuation.resume(returning: nil); return }
            var offset = 0
            while offset < bytes.count {
                let written = bytes[offset...].withUnsafeBytes { send(fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
                if written <= 0 { break }
                offset += written
            }
            var received: [UInt8] = []
            var buffer = [UInt8](repeating: 0, count: 4096)
            while true {
                let count = recv(fd, &buffer, buffer.count, 0)
                if count <= 0 { break }
                received.append(contentsOf: buffer[0..<count])
            }
            close(fd)   // before resuming, so that the caller never sees the descriptor still open
            continuation.resume(returning: received)
        }
        thread.start()
    }
}

/// `rawExchange` with text in and out.
func rawExchange(port: UInt16, _ text: String) async -> String? {
    await rawExchange(port: port, Array(text.utf8)).map { String(decoding: $0, as: UTF8.self) }
}

/// The status code of a raw HTTP/1.1 response.
func rawStatus(_ response: String?) -> Int? {
    guard let line = response?.split(separator: "\r\n", maxSplits: 1).first else { return nil }
    let parts = line.split(separator: " ")
    return parts.count >= 2 ? Int(parts[1]) : nil
}

/// The file descriptors this process has open (Linux: /proc/self/fd).
func openFileDescriptorCount() -> Int {
    ((try? FileManager.default.contentsOfDirectory(atPath: "/proc/self/fd")) ?? []).count
}

/// The threads of this process whose name starts with `prefix` (Linux: /proc/self/task/*/comm).
func threadCount(namedWithPrefix prefix: String) -> Int {
    let tasks = (try? FileManager.default.contentsOfDirectory(atPath: "/proc/self/task")) ?? []
    return tasks.filter { task in
        let name = (try? String(contentsOfFile: "/proc/self/task/\(task)/comm", encoding: .utf8)) ?? ""
        return name.hasPrefix(prefix)
    }.count
}
