import Foundation
import Dispatch
import Testing
@testable import WalletRuntime
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// A one-connection HTTP/1.1 server on 127.0.0.1 for exercising the real client:
/// it reads one request head (and body, by Content-Length), then answers with
/// `response`, or, when `response` is nil, stays silent and keeps the connection open
/// until ``releaseSilentConnection()``: nothing but the client's own timeout can end
/// such an exchange, however long the machine takes to get there.
private final class LoopbackServer: @unchecked Sendable {
    let port: UInt16
    private let listener: Int32
    private let received = LockedBox<[UInt8]>([])
    private let release = DispatchSemaphore(value: 0)
    private let streamed = LockedBox<Int>(0)

    init?() {
        #if canImport(Glibc)
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        #else
        let fd = socket(AF_INET, SOCK_STREAM, 0)
        #endif
        guard fd >= 0 else { return nil }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = 0
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        let bound = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
        }
        guard bound == 0, listen(fd, 4) == 0 else { close(fd); return nil }
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        _ = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(fd, $0, &length) }
        }
        listener = fd
        port = UInt16(bigEndian: address.sin_port)
    }

    deinit { close(listener) }

    /// Lets a silent connection close (the test is over).
    func releaseSilentConnection() { release.signal() }

    var request: String { String(decoding: received.withLock { $0 }, as: UTF8.self) }

    /// What the server answers once it has read the request.
    enum Answer {
        /// These bytes, then the connection closes.
        case whole(String)
        /// Nothing, until ``releaseSilentConnection()``.
        case silent
        /// This head, then nothing until ``releaseSilentConnection()``.
        case headThenSilent(String)
        /// This head, then body bytes (in 64 KiB chunks of the chunked coding, or bare)
        /// for as long as the client reads them.
        case endless(String, chunked: Bool)
    }

    /// Serves one connection on a background thread.
    func serveOnce(answer: Answer) {
        let thread = Thread { [self] in
            let client = accept(listener, nil, nil)
            guard client >= 0 else { return }
            defer { close(client) }
            var buffer = [UInt8](repeating: 0, count: 4096)
            var data: [UInt8] = []
            while true {
                let count = read(client, &buffer, buffer.count)
                if count <= 0 { break }
                data.append(contentsOf: buffer[0..<count])
                let text = String(decoding: data, as: UTF8.self)
                if let headEnd = text.range(of: "\r\n\r\n") {
                    let head = text[..<headEnd.lowerBound].lowercased()
                    var bodyLength = 0
                    if let line = head.split(separator: "\r\n").first(where: { $0.hasPrefix("content-length:") }) {
                        bodyLength = Int(line.dropFirst("content-length:".count).trimmingCharacters(in: .whitespaces)) ?? 0
                    }
                    if text.utf8.count - text.utf8.distance(from: text.startIndex, to: headEnd.upperBound) >= bodyLength { break }
                }
            }
            received.withLock { $0 = data }
            switch answer {
            case .whole(let response):
                let bytes = Array(response.utf8)
                _ = bytes.withUnsafeBytes { write(client, $0.baseAddress, bytes.count) }
            case .silent:
                release.wait()
            case .headThenSilent(let head):
                let bytes = Array(head.utf8)
                _ = bytes.withUnsafeBytes { write(client, $0.baseAddress, bytes.count) }
                release.wait()
            case .endless(let head, let chunked):
                // The head, then 64 KiB chunks until the client hangs up (or 1 GiB, so
                // that a client that never does cannot keep this thread forever).
                var sent = 0
                let headBytes = Array(head.utf8)
                _ = headBytes.withUnsafeBytes { send(client, $0.baseAddress, headBytes.count, Int32(MSG_NOSIGNAL)) }
                let chunk = (chunked ? Array("10000\r\n".utf8) : []) + [UInt8](repeating: 0x78, count: 65_536)
                    + (chunked ? Array("\r\n".utf8) : [])
                while sent < 1 << 30 {
                    let count = chunk.withUnsafeBytes { send(client, $0.baseAddress, chunk.count, Int32(MSG_NOSIGNAL)) }
                    if count <= 0 { break }
                    sent += count
                }
                streamed.withLock { $0 = sent }
            }
        }
        thread.start()
    }

    /// Serves one connection on a background thread with the given answer.
    func serveOnce(response: String?) {
        serveOnce(answer: response.map { .whole($0) } ?? .silent)
    }

    /// The body bytes an `.endless` answer wrote before the client hung up.
    var streamedBytes: Int { streamed.withLock { $0 } }
}

@Suite("URLSessionHTTPClient over loopback")
struct URLSessionHTTPClientTests {
    @Test("a POST reaches the server with its headers and body, and the response comes back whole")
    func roundTrip() async throws {
        let server = try #require(LoopbackServer())
        server.serveOnce(response: "HTTP/1.1 201 Created\r\nContent-Type: application/json\r\nDPoP-Nonce: abc\r\nContent-Length: 11\r\nConnection: close\r\n\r\n{\"ok\":true}")
        let client = URLSessionHTTPClient(allowInsecureHTTP: true)
        let url = try #require(URL(string: "http://127.0.0.1:\(server.port)/token"))
        let response = try await client.send(HTTPRequest(method: .post, url: url,
                                                         headers: ["Content-Type": "application/x-www-form-urlencoded"],
                                                         body: Array("grant_type=x".utf8)))
        #expect(response.status == 201)
        #expect(response.headers["dpop-nonce"] == "abc")
        #expect(response.body == Array("{\"ok\":true}".utf8))
        #expect(server.request.hasPrefix("POST /token HTTP/1.1"))
        #expect(server.request.hasSuffix("grant_type=x"))
    }

    // The server never answers and never closes while the request runs, so the only way
    // the exchange can end is the client's timeout: load can delay it, not change it. The
    // time limit reports a hang as a hang.
    @Test("a server that never answers fails with timedOut, not a hang", .timeLimit(.minutes(15)))
    func timeout() async throws {
        let server = try #require(LoopbackServer())
        server.serveOnce(response: nil)
        defer { server.releaseSilentConnection() }
        let client = URLSessionHTTPClient(allowInsecureHTTP: true)
        let url = try #require(URL(string: "http://127.0.0.1:\(server.port)/slow"))
        let clock = ContinuousClock()
        let started = clock.now
        await #expect(throws: HTTPError.timedOut) {
            _ = try await client.send(HTTPRequest(url: url, timeout: .milliseconds(500)))
        }
        // Not before the deadline (load can only make it later): FoundationNetworking
        // truncated sub-second timeouts to none, and this request used to fail at once.
        #expect(clock.now - started >= .milliseconds(500))
    }

    @Test("Foundation's own timer is whole seconds past the deadline, never under one second")
    func backstop() {
        #expect(URLSessionHTTPClient.backstopInterval(for: .milliseconds(500)) == 2)
        #expect(URLSessionHTTPClient.backstopInterval(for: .seconds(30)) == 31)
        #expect(URLSessionHTTPClient.backstopInterval(for: .seconds(1.5)) == 3)
        #expect(URLSessionHTTPClient.backstopInterval(for: .zero) == 2)
    }

    @Test("a body over the limit is refused")
    func sizeLimit() async throws {
        let server = try #require(LoopbackServer())
        let body = String(repeating: "x", count: 2048)
        server.serveOnce(response: "HTTP/1.1 200 OK\r\nContent-Length: 2048\r\nConnection: close\r\n\r\n\(body)")
        let client = URLSessionHTTPClient(maxResponseBytes: 1024, allowInsecureHTTP: true)
        let url = try #require(URL(string: "http://127.0.0.1:\(server.port)/big"))
        await #expect(throws: HTTPError.responseTooLarge(limit: 1024)) {
            _ = try await client.send(HTTPRequest(url: url))
        }
    }

    // Neither server ever ends its answer, and the timeout is far beyond any machine's
    // delay, so only the size limit can end these exchanges: a client that checked the
    // limit once the body was in would fail with timedOut, after buffering all of it.
    @Test("a declared Content-Length over the limit ends the exchange when the head arrives", .timeLimit(.minutes(15)))
    func declaredLengthOverLimit() async throws {
        let server = try #require(LoopbackServer())
        server.serveOnce(answer: .headThenSilent("HTTP/1.1 200 OK\r\nContent-Length: 100000000\r\n\r\n"))
        defer { server.releaseSilentConnection() }
        let client = URLSessionHTTPClient(maxResponseBytes: 1024, allowInsecureHTTP: true)
        let url = try #require(URL(string: "http://127.0.0.1:\(server.port)/declared"))
        await #expect(throws: HTTPError.responseTooLarge(limit: 1024)) {
            _ = try await client.send(HTTPRequest(url: url, timeout: .seconds(600)))
        }
    }

    @Test("an endless body, close-delimited or chunked, ends the exchange once it passes the limit", .timeLimit(.minutes(15)))
    func endlessBodyOverLimit() async throws {
        for chunked in [false, true] {
            let head = chunked ? "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n"
                               : "HTTP/1.1 200 OK\r\nConnection: close\r\n\r\n"
            let server = try #require(LoopbackServer())
            server.serveOnce(answer: .endless(head, chunked: chunked))
            let client = URLSessionHTTPClient(maxResponseBytes: 1 << 20, allowInsecureHTTP: true)
            let url = try #require(URL(string: "http://127.0.0.1:\(server.port)/endless"))
            await #expect(throws: HTTPError.responseTooLarge(limit: 1 << 20), "\(head)") {
                _ = try await client.send(HTTPRequest(url: url, timeout: .seconds(600)))
            }
        }
    }

    @Test("a body exactly at the limit is accepted whole")
    func bodyAtLimit() async throws {
        let server = try #require(LoopbackServer())
        let body = String(repeating: "y", count: 1024)
        server.serveOnce(response: "HTTP/1.1 200 OK\r\nContent-Length: 1024\r\nConnection: close\r\n\r\n\(body)")
        let client = URLSessionHTTPClient(maxResponseBytes: 1024, allowInsecureHTTP: true)
        let url = try #require(URL(string: "http://127.0.0.1:\(server.port)/exact"))
        let response = try await client.send(HTTPRequest(url: url))
        #expect(response.body == Array(body.utf8))
    }

    @Test("allowed plain http reaches loopback hosts only")
    func httpLoopbackOnly() async throws {
        let client = URLSessionHTTPClient(allowInsecureHTTP: true)
        for address in ["http://example.com/", "http://10.0.0.1/", "http://128.0.0.1/", "http://127.0.0.1.example/",
                        "http://[::2]/", "http://localhost.example/"] {
            let url = try #require(URL(string: address))
            await #expect(throws: HTTPError.unsupportedScheme("http"), "\(address)") {
                _ = try await client.send(HTTPRequest(url: url))
            }
        }
    }

    @Test("the loopback hosts are localhost, 127.0.0.0/8 and ::1")
    func loopbackHosts() throws {
        for host in ["localhost", "LOCALHOST", "127.0.0.1", "127.255.0.9", "::1", "[::1]", "0:0:0:0:0:0:0:1"] {
            #expect(LoopbackHost.isLoopback(host: host), "\(host)")
        }
        for host in ["", "example.com", "127.0.0", "127.0.0.1.1", "127.0.0.256", "127.0.0.01x", "128.0.0.1", "::2",
                     "localhost.example", "127.0.0.1.nip.io", "0x7f.0.0.1"] {
            #expect(!LoopbackHost.isLoopback(host: host), "\(host)")
        }
        #expect(LoopbackHost.contains(try #require(URL(string: "http://[::1]:8080/x"))))
        #expect(LoopbackHost.contains(try #require(URL(string: "http://127.0.0.1:9/"))))
        #expect(!LoopbackHost.contains(try #require(URL(string: "http://example.com/"))))
    }

    @Test("plain http is refused unless allowed")
    func httpsOnly() async throws {
        let client = URLSessionHTTPClient()
        let url = try #require(URL(string: "http://127.0.0.1:9/"))
        await #expect(throws: HTTPError.unsupportedScheme("http")) {
            _ = try await client.send(HTTPRequest(url: url))
        }
    }
}
