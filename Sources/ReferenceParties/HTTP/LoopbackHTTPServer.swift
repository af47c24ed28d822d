internal import CMicroHTTPD
import WalletEncoding
import Foundation
import WalletRuntime

/// Why a ``LoopbackHTTPServer`` could not start.
public enum LoopbackHTTPServerError: Error, Equatable, Sendable {
    /// libmicrohttpd could not listen on 127.0.0.1 at this port (taken, or not allowed).
    case cannotListen(port: UInt16)
}

/// Serves a handler over HTTP/1.1 on 127.0.0.1, with GNU libmicrohttpd doing all of
/// the HTTP (parsing, keep-alive, chunked bodies, `Expect: 100-continue`).
///
/// libmicrohttpd runs one polling thread of its own. When a request has arrived whole,
/// its connection is suspended, the handler runs as a Swift task, and the connection
/// resumes with the answer, so slow handlers never hold up the others. Requests reach
/// the handler as `HTTPRequest` values whose URL is `http://127.0.0.1:<port>` followed by
/// the request target exactly as sent (an empty body arrives as `nil`).
///
/// Limits: a request target that is not an absolute path of RFC 3986 characters with
/// well-formed escapes is answered 400; a body over `maxRequestBodyBytes` is answered
/// 413 without calling the handler (at once when `Content-Length` announces it); header
/// sections are bounded by libmicrohttpd's per-connection memory (32 KiB: larger ones
/// get 431/414 from it); requests that bend HTTP/1.1 are refused by its strict mode. A
/// handler status outside 200...599 is sent as 500, and `Content-Length` is always
/// libmicrohttpd's own.
///
/// ```swift
/// let server = try LoopbackHTTPServer(handler: router)     // port 0: any free port
/// print(server.baseURL)                                     // http://127.0.0.1:49152
/// ...
/// server.stop()                                             // also done on deinit
/// ```
///
/// `stop()` ends everything the server started: requests still with the handler are
/// cancelled and their connections closed, libmicrohttpd's thread is joined and the
/// listening socket closed, before it returns.
public final class LoopbackHTTPServer: Sendable {
    /// The request body limit unless told otherwise (1 MiB).
    public static let defaultMaxRequestBodyBytes = 1 << 20

    /// The port the server listens on (the one the system chose when asked for 0).
    public let port: UInt16
    /// `http://127.0.0.1:<port>`.
    public let baseURL: URL

    private let core: ServerCore

    /// Starts serving `handler` on 127.0.0.1.
    /// - Parameters:
    ///   - port: the port, or 0 for any free one (read it back from ``port``).
    ///   - maxRequestBodyBytes: larger request bodies are answered 413.
    ///   - keepAlive: whether a connection may carry several requests. Off by default:
    ///     every answer then closes its connection, so that each request arrives on a
    ///     fresh one and a dropped connection always reaches the client as a failure
    ///     (a client retries a request silently when a reused keep-alive connection
    ///     closes without an answer, as libcurl does). Turn it on to test keep-alive.
    public init(handler: some HTTPHandler, port: UInt16 = 0,
                maxRequestBodyBytes: Int = LoopbackHTTPServer.defaultMaxRequestBodyBytes,
                keepAlive: Bool = false) throws(LoopbackHTTPServerError) {
        let core = ServerCore(handler: handler, maxRequestBodyBytes: max(0, maxRequestBodyBytes), keepAlive: keepAlive)
        guard let bound = core.start(port: port) else { throw .cannotListen(port: port) }
        guard let url = URL(string: "http://127.0.0.1:\(bound)") else {
            core.stop()
            throw .cannotListen(port: port)
        }
        self.core = core
        self.port = bound
        self.baseURL = url
    }

    deinit { core.stop() }

    /// Stops the server: cancels the requests still with the handler and closes their
    /// connections, closes every other connection and the listening socket, and joins
    /// libmicrohttpd's thread. Calling it again does nothing.
    public func stop() { core.stop() }

    /// Whether the server is still serving.
    public var isRunning: Bool { core.isRunning }
}

/// One request as it arrives: created by libmicrohttpd's URI-log callback (so that
/// the target is the raw one, before any unescaping), owned through the connection's
/// context pointer, released by the request-completed callback.
///
/// Thread use: everything but `outcome`, `task` and `connection` is touched only by
/// libmicrohttpd's thread; those three are guarded by the server core's lock.
private final class RequestContext: @unchecked Sendable {
    let target: String
    var headersRead = false
    var method = ""
    var headers = HTTPHeaders()
    var body: [UInt8] = []
    var bodyTooLarge = false
    var connection: OpaquePointer?
    var task: Task<Void, Never>?
    var outcome: HTTPHandlerOutcome?

    init(target: String) { self.target = target }
}

/// The state shared between the server object, libmicrohttpd's thread and the
/// handler tasks. libmicrohttpd holds an unretained pointer to it, valid because the
/// server keeps it alive until `MHD_stop_daemon` has returned.
private final class ServerCore: @unchecked Sendable {
    let handler: any HTTPHandler
    let maxRequestBodyBytes: Int
    let keepAlive: Bool

    private let lock = NSLock()
    private let lifecycle = NSLock()
    private var daemon: OpaquePointer?
    private var stopping = false
    private var authority = "127.0.0.1"
    // Connections suspended while their handler runs. libmicrohttpd forbids stopping
    // with a suspended connection, so `stop` resumes these first.
    private var suspended: [ObjectIdentifier: RequestContext] = [:]

    // libmicrohttpd's idle limit for a connection between requests, and its connection cap.
    private static let idleTimeoutSeconds: UInt32 = 60
    private static let connectionLimit: UInt32 = 256

    init(handler: some HTTPHandler, maxRequestBodyBytes: Int, keepAlive: Bool) {
        self.handler = handler
        self.maxRequestBodyBytes = maxRequestBodyBytes
        self.keepAlive = keepAlive
    }

    var isRunning: Bool {
        lock.lock(); defer { lock.unlock() }
        return daemon != nil && !stopping
    }

    /// Starts the daemon; the bound port, or nil.
    func start(port: UInt16) -> UInt16? {
        var address = sockaddr_in()
        #if canImport(Darwin)
        address.sin_len = UInt8(MemoryLayout<sockaddr_in>.size)
        #endif
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = port.bigEndian
        address.sin_addr.s_addr = UInt32(0x7F00_0001).bigEndian
        let context = Unmanaged.passUnretained(self).toOpaque()
        lock.lock()
        authority = "127.0.0.1:\(port)"
        lock.unlock()
        let started = withUnsafePointer(to: &address) { pointer in
            wallet_mhd_start(pointer, accessHandler, context, uriLogCallback, context, requestCompleted, context,
                             Self.connectionLimit, Self.idleTimeoutSeconds)
        }
        guard let started else { return nil }
        let bound = wallet_mhd_bound_port(started)
        lock.lock()
        daemon = started
        authority = "127.0.0.1:\(bound)"
        lock.unlock()
        guard bound != 0 else {
            stop()
            return nil
        }
        return bound
    }

    func stop() {
        lifecycle.lock(); defer { lifecycle.unlock() }
        lock.lock()
        guard let running = daemon, !stopping else { lock.unlock(); return }
        stopping = true
        for context in suspended.values {
            context.task?.cancel()
            context.task = nil
            context.outcome = .drop
            if let connection = context.connection { MHD_resume_connection(connection) }
        }
        suspended.removeAll()
        lock.unlock()
        // Joins libmicrohttpd's thread, closes every connection (each one's
        // request-completed callback releases its context) and the listening socket.
        MHD_stop_daemon(running)
        lock.lock()
        daemon = nil
        lock.unlock()
    }

    /// One call of libmicrohttpd's access handler, on its thread: the first call has the
    /// headers, the next ones the body in pieces, the last one (no data) ends the
    /// request. The last call suspends the connection and starts the handler; when the
    /// handler is done the connection resumes and libmicrohttpd calls once more, which
    /// queues the answer.
    func access(_ connection: OpaquePointer, _ context: RequestContext, method: String,
                uploadData: UnsafePointer<CChar>?, uploadDataSize: UnsafeMutablePointer<Int>) -> MHD_Result {
        lock.lock()
        let outcome = context.outcome
        lock.unlock()
        if let outcome { return queue(outcome, on: connection) }

        if !context.headersRead {
            context.headersRead = true
            context.method = method
            context.headers = Self.headers(of: connection)
            if let declared = context.headers["Content-Length"].flatMap({ Int($0) }), declared > maxRequestBodyBytes {
                return queue(.respond(.contentTooLarge(limit: maxRequestBodyBytes)), on: connection)
            }
            return .YES
        }

        let size = uploadDataSize.pointee
        if size > 0 {
            if !context.bodyTooLarge {
                if context.body.count + size > maxRequestBodyBytes {
                    context.bodyTooLarge = true
                    context.body = []
                } else if let uploadData {
                    uploadData.withMemoryRebound(to: UInt8.self, capacity: size) { bytes in
                        context.body.append(contentsOf: UnsafeBufferPointer(start: bytes, count: size))
                    }
                }
            }
            uploadDataSize.pointee = 0
            return .YES
        }

        if context.bodyTooLarge {
            return queue(.respond(.contentTooLarge(limit: maxRequestBodyBytes)), on: connection)
        }
        lock.lock()
        let base = authority
        lock.unlock()
        guard Self.isOriginForm(context.target), let url = URL(string: "http://\(base)\(context.target)") else {
            return queue(.respond(.text("the request target is not an absolute path", status: 400)), on: connection)
        }
        let request = HTTPRequest(method: HTTPMethod(rawValue: context.method), url: url, headers: context.headers,
                                  body: context.body.isEmpty ? nil : context.body)
        context.body = []

        lock.lock(); defer { lock.unlock() }
        guard !stopping else { return .NO }
        // Suspend before the handler can possibly finish: resuming a connection that is
        // not yet suspended would be lost (libmicrohttpd's suspend cancels a pending resume).
        MHD_suspend_connection(connection)
        context.connection = connection
        suspended[ObjectIdentifier(context)] = context
        let handler = self.handler
        context.task = Task {
            let outcome = await handler.outcome(for: request)
            self.finish(context, with: outcome)
        }
        return .YES
    }

    /// Hands a handler's outcome back to libmicrohttpd, unless `stop` got there first.
    private func finish(_ context: RequestContext, with outcome: HTTPHandlerOutcome) {
        lock.lock(); defer { lock.unlock() }
        guard suspended.removeValue(forKey: ObjectIdentifier(context)) != nil,
              let connection = context.connection else { return }
        context.outcome = outcome
        context.task = nil
        MHD_resume_connection(connection)
    }

    private func queue(_ outcome: HTTPHandlerOutcome, on connection: OpaquePointer) -> MHD_Result {
        guard case .respond(let answer) = outcome else { return .NO }
        let status = (200...599).contains(answer.status) ? answer.status : 500
        let response = answer.body.withUnsafeBytes { bytes in
            MHD_create_response_from_buffer(bytes.count, UnsafeMutableRawPointer(mutating: bytes.baseAddress),
                                            .RESPMEM_MUST_COPY)
        }
        guard let response else { return .NO }
        defer { MHD_destroy_response(response) }
        for field in answer.headers where field.name.caseInsensitiveCompare("Content-Length") != .orderedSame {
            // libmicrohttpd refuses names and values with line breaks; such a field is left out.
            _ = MHD_add_response_header(response, field.name, field.value)
        }
        if !keepAlive {
            // libmicrohttpd closes the connection once this answer is sent.
            _ = MHD_add_response_header(response, "Connection", "close")
        }
        return MHD_queue_response(connection, UInt32(status), response)
    }

    /// Whether `target` is an RFC 9112 origin-form target (an absolute path and an
    /// optional query) built only of RFC 3986 characters with well-formed escapes, so
    /// that `URL` keeps it exactly as sent instead of re-escaping it.
    static func isOriginForm(_ target: String) -> Bool {
        let bytes = Array(target.utf8)
        guard bytes.first == UInt8(ascii: "/") else { return false }
        var index = 0
        while index < bytes.count {
            let byte = bytes[index]
            if byte == UInt8(ascii: "%") {
                guard index + 2 < bytes.count, Hex.digitValue(bytes[index + 1]) != nil,
                      Hex.digitValue(bytes[index + 2]) != nil else { return false }
                index += 3
                continue
            }
            switch byte {
            case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"),
                 UInt8(ascii: "0")...UInt8(ascii: "9"),
                 UInt8(ascii: "-"), UInt8(ascii: "."), UInt8(ascii: "_"), UInt8(ascii: "~"),
                 UInt8(ascii: "!"), UInt8(ascii: "$"), UInt8(ascii: "&"), UInt8(ascii: "'"), UInt8(ascii: "("),
                 UInt8(ascii: ")"), UInt8(ascii: "*"), UInt8(ascii: "+"), UInt8(ascii: ","), UInt8(ascii: ";"),
                 UInt8(ascii: "="), UInt8(ascii: ":"), UInt8(ascii: "@"), UInt8(ascii: "/"), UInt8(ascii: "?"):
                index += 1
            default:
                return false
            }
        }
        return true
    }

    private static func headers(of connection: OpaquePointer) -> HTTPHeaders {
        var headers = HTTPHeaders()
        withUnsafeMutablePointer(to: &headers) { pointer in
            _ = MHD_get_connection_values_n(connection, .HEADER_KIND, { target, _, key, keySize, value, valueSize in
                guard let target, let key else { return .YES }
                let name = String(decoding: UnsafeRawBufferPointer(start: key, count: keySize), as: UTF8.self)
                let text = value.map {
                    String(decoding: UnsafeRawBufferPointer(start: $0, count: valueSize), as: UTF8.self)
                } ?? ""
                target.assumingMemoryBound(to: HTTPHeaders.self).pointee.add(name: name, value: text)
                return .YES
            }, pointer)
        }
        return headers
    }
}

// libmicrohttpd's callbacks. `cls` is the server core; `con_cls` holds the request context.

private let uriLogCallback: wallet_mhd_uri_log_callback = { _, uri, _ in
    let context = RequestContext(target: uri.map { String(cString: $0) } ?? "")
    return Unmanaged.passRetained(context).toOpaque()
}

private let requestCompleted: MHD_RequestCompletedCallback = { _, _, contextPointer, _ in
    guard let contextPointer, let raw = contextPointer.pointee else { return }
    Unmanaged<RequestContext>.fromOpaque(raw).release()
    contextPointer.pointee = nil
}

private let accessHandler: MHD_AccessHandlerCallback = { cls, connection, _, method, _, uploadData, uploadDataSize, contextPointer in
    guard let cls, let connection, let uploadDataSize, let contextPointer else { return .NO }
    let core = Unmanaged<ServerCore>.fromOpaque(cls).takeUnretainedValue()
    let context: RequestContext
    if let raw = contextPointer.pointee {
        context = Unmanaged<RequestContext>.fromOpaque(raw).takeUnretainedValue()
    } else {
        // Not reached while the URI-log callback is installed; kept so that a request
        // is never served without its context.
        context = RequestContext(target: "")
        contextPointer.pointee = Unmanaged.passRetained(context).toOpaque()
    }
    return core.access(connection, context, method: method.map { String(cString: $0) } ?? "",
                       uploadData: uploadData, uploadDataSize: uploadDataSize)
}
