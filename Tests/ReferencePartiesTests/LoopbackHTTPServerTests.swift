import WalletEncoding
import Foundation
import TestChildProcess
import JOSE
import ReferenceParties
import Testing
import WalletRuntime
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

@Suite("LoopbackHTTPServer", .timeLimit(.minutes(15)))
struct LoopbackHTTPServerTests {
    private let client = PatientHTTPClient()

    private func url(_ server: LoopbackHTTPServer, _ path: String) -> URL {
        URL(string: server.baseURL.absoluteString + path)!
    }

    @Test("URLSessionHTTPClient round trip: method, raw target, headers and body in; status, headers and body out")
    func roundTrip() async throws {
        let seen = Locked<HTTPRequest?>(nil)
        let server = try LoopbackHTTPServer(handler: AnyHTTPHandler { request in
            seen.withLock { $0 = request }
            return .json(["form": .string(String(decoding: request.body ?? [], as: UTF8.self))], status: 201,
                         headers: ["DPoP-Nonce": "n-1", "Cache-Control": "no-store"])
        })
        defer { server.stop() }
        #expect(server.port != 0)
        #expect(server.baseURL.absoluteString == "http://127.0.0.1:\(server.port)")

        let response = try await client.send(HTTPRequest(
            method: .post, url: url(server, "/token/a%2Fb?x=%20y&z=1"),
            headers: ["Content-Type": "application/x-www-form-urlencoded", "DPoP": "eyJ.proof"],
            body: Array("grant_type=authorization_code&code=c%2B1".utf8)))
        #expect(response.status == 201)
        #expect(response.headers["dpop-nonce"] == "n-1")
        #expect(response.headers["Cache-Control"] == "no-store")
        #expect(response.headers["Content-Type"] == "application/json")
        #expect(try JSONValue.parse(response.body) == ["form": "grant_type=authorization_code&code=c%2B1"])

        let request = try #require(seen.current)
        #expect(request.method == .post)
        #expect(request.url.absoluteString == "http://127.0.0.1:\(server.port)/token/a%2Fb?x=%20y&z=1")
        #expect(request.path == "/token/a%2Fb")
        #expect(request.headers["dpop"] == "eyJ.proof")
        #expect(try request.formParameters()["code"] == "c+1")
        #expect(try request.queryParameters()["x"] == " y")
    }

    @Test("a router serves over loopback: 404, 405 and a GET without a body")
    func routerOverLoopback() async throws {
        var router = HTTPRouter()
        router.add(.get, "/.well-known/openid-credential-issuer") { request, _ in
            .json(["credential_issuer": .string(request.url.absoluteString), "body_was_nil": .bool(request.body == nil)])
        }
        let server = try LoopbackHTTPServer(handler: router)
        defer { server.stop() }
        let metadata = try await client.send(HTTPRequest(url: url(server, "/.well-known/openid-credential-issuer")))
        #expect(metadata.status == 200)
        #expect(try JSONValue.parse(metadata.body)["body_was_nil"] == true)
        #expect(try await client.send(HTTPRequest(url: url(server, "/nothing"))).status == 404)
        let wrong = try await client.send(HTTPRequest(method: .post, url: url(server, "/.well-known/openid-credential-issuer"),
                                                      body: Array("x".utf8)))
        #expect(wrong.status == 405)
        #expect(wrong.headers["Allow"] == "GET")
    }

    @Test("URLSessionHTTPClient does not follow a 302: the Location header reaches the caller")
    func redirectNotFollowed() async throws {
        let followed = Locked(0)
        var router = HTTPRouter()
        router.add(.get, "/authorize") { _, _ in
            .redirect(to: URL(string: "http://127.0.0.1:1/callback?code=abc&state=xyz")!)
        }
        router.add(.get, "/see-other") { request, _ in
            .redirect(to: URL(string: request.url.absoluteString.replacingOccurrences(of: "/see-other", with: "/target"))!, status: 303)
        }
        router.add(.get, "/target") { _, _ in
            followed.withLock { $0 += 1 }
            return .text("followed")
        }
        let server = try LoopbackHTTPServer(handler: router)
        defer { server.stop() }
        let response = try await client.send(HTTPRequest(url: url(server, "/authorize")))
        #expect(response.status == 302)
        #expect(response.headers["Location"] == "http://127.0.0.1:1/callback?code=abc&state=xyz")
        let seeOther = try await client.send(HTTPRequest(url: url(server, "/see-other")))
        #expect(seeOther.status == 303)
        #expect(followed.current == 0)
    }

    @Test("a 401 with a DPoP challenge and a 204 reach the caller as they are")
    func challengeAndNoContent() async throws {
        var router = HTTPRouter()
        router.add(.post, "/credential") { _, _ in
            .oauthError("use_dpop_nonce", status: 401,
                        headers: ["WWW-Authenticate": #"DPoP error="use_dpop_nonce", error_description="fresh nonce""#,
                                  "DPoP-Nonce": "n-2"])
        }
        router.add(.post, "/notification") { _, _ in HTTPResponse(status: 204) }
        let server = try LoopbackHTTPServer(handler: router)
        defer { server.stop() }
        let challenge = try await client.send(HTTPRequest(method: .post, url: url(server, "/credential"),
                                                          headers: ["Content-Type": "application/json"], body: Array("{}".utf8)))
        #expect(challenge.status == 401)
        #expect(challenge.headers["WWW-Authenticate"] == #"DPoP error="use_dpop_nonce", error_description="fresh nonce""#)
        #expect(challenge.headers["DPoP-Nonce"] == "n-2")
        #expect(try JSONValue.parse(challenge.body)["error"] == "use_dpop_nonce")
        let none = try await client.send(HTTPRequest(method: .post, url: url(server, "/notification"),
                                                     headers: ["Content-Type": "application/json"], body: Array("{}".utf8)))
        #expect(none.status == 204)
        #expect(none.body.isEmpty)
    }

    @Test("50 concurrent requests each get their own answer")
    func concurrent() async throws {
        let server = try LoopbackHTTPServer(handler: AnyHTTPHandler { request in
            .text("n=" + request.url.lastPathComponent)
        })
        defer { server.stop() }
        let client = self.client
        let answers = try await withThrowingTaskGroup(of: (Int, HTTPResponse).self) { group in
            for index in 0..<50 {
                let target = url(server, "/n/\(index)")
                group.addTask { (index, try await client.send(HTTPRequest(url: target))) }
            }
            return try await group.reduce(into: [Int: HTTPResponse]()) { $0[$1.0] = $1.1 }
        }
        #expect(answers.count == 50)
        for (index, response) in answers {
            #expect(response.status == 200)
            #expect(text(response) == "n=\(index)")
        }
    }

    @Test("a slow handler does not hold up other requests")
    func slowHandlerDoesNotBlock() async throws {
        let release = Gate()
        var router = HTTPRouter()
        router.add(.get, "/slow") { _, _ in
            await release.wait()
            return .text("slow")
        }
        router.add(.get, "/fast") { _, _ in .text("fast") }
        let server = try LoopbackHTTPServer(handler: router)
        defer { server.stop() }
        let client = self.client
        let slowURL = url(server, "/slow")
        let slow = Task { try await client.send(HTTPRequest(url: slowURL)) }
        // If the server served one request at a time, /fast would wait for /slow, which
        // waits for /fast: the suite's time limit would report the hang.
        #expect(text(try await client.send(HTTPRequest(url: url(server, "/fast")))) == "fast")
        release.open()
        #expect(text(try await slow.value) == "slow")
    }

    @Test("a body over the limit is answered 413 without calling the handler; one at the limit is served")
    func bodyLimit() async throws {
        let calls = Locked(0)
        let server = try LoopbackHTTPServer(handler: AnyHTTPHandler { request in
            calls.withLock { $0 += 1 }
            return .text("\(request.body?.count ?? 0)")
        }, maxRequestBodyBytes: 1024)
        defer { server.stop() }
        let atLimit = try await client.send(HTTPRequest(method: .post, url: url(server, "/upload"),
                                                        body: [UInt8](repeating: 0x61, count: 1024)))
        #expect(atLimit.status == 200)
        #expect(text(atLimit) == "1024")
        let over = try await client.send(HTTPRequest(method: .post, url: url(server, "/upload"),
                                                     body: [UInt8](repeating: 0x61, count: 4096)))
        #expect(over.status == 413)
        #expect(calls.current == 1)

        // A chunked body announces no length: it is counted as it arrives.
        let chunk = String(repeating: "b", count: 600)
        let chunked = "POST /upload HTTP/1.1\r\nHost: 127.0.0.1\r\nTransfer-Encoding: chunked\r\nConnection: close\r\n\r\n"
            + "258\r\n\(chunk)\r\n258\r\n\(chunk)\r\n0\r\n\r\n"
        #expect(rawStatus(await rawExchange(port: server.port, chunked)) == 413)
        let small = "POST /upload HTTP/1.1\r\nHost: 127.0.0.1\r\nTransfer-Encoding: chunked\r\nConnection: close\r\n\r\n"
            + "258\r\n\(chunk)\r\n0\r\n\r\n"
        let smallResponse = await rawExchange(port: server.port, small)
        #expect(rawStatus(smallResponse) == 200)
        #expect(smallResponse?.hasSuffix("\r\n\r\n600") == true)
        #expect(calls.current == 2)
    }

    @Test("a handler that drops the connection leaves the client with a transport error")
    func drop() async throws {
        let server = try LoopbackHTTPServer(handler: AnyHTTPHandler { _ throws(HTTPHandlerError) in throw .dropConnection })
        defer { server.stop() }
        await #expect {
            _ = try await client.send(HTTPRequest(url: url(server, "/x")))
        } throws: { error in
            // A reply of no bytes: libcurl (FoundationNetworking) reports a bad server
            // response, Apple's URLSession a lost connection.
            guard let error = error as? HTTPError, case .transport(let reason) = error else { return false }
            return reason == .badServerResponse || reason == .networkConnectionLost
        }
        let raw = await rawExchange(port: server.port, "GET /x HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n")
        #expect(raw == "")   // closed without a byte
    }

    @Test("without keep-alive every answer closes its connection; with it a connection carries several requests")
    func keepAlive() async throws {
        let closing = try LoopbackHTTPServer(handler: AnyHTTPHandler { _ in .text("ok") })
        defer { closing.stop() }
        let answer = await rawExchange(port: closing.port, "GET /a HTTP/1.1\r\nHost: x\r\n\r\nGET /b HTTP/1.1\r\nHost: x\r\n\r\n")
        #expect(answer?.components(separatedBy: "HTTP/1.1 200").count == 2)   // one answer, then closed
        #expect(answer?.lowercased().contains("connection: close") == true)

        let keeping = try LoopbackHTTPServer(handler: AnyHTTPHandler { _ in .text("ok") }, keepAlive: true)
        defer { keeping.stop() }
        let both = await rawExchange(port: keeping.port,
                                     "GET /a HTTP/1.1\r\nHost: x\r\n\r\nGET /b HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
        #expect(both?.components(separatedBy: "HTTP/1.1 200").count == 3)      // two answers on one connection
    }

    @Test("fault rules act over loopback too")
    func faultsOverLoopback() async throws {
        let faults = FaultInjector(wrapping: AnyHTTPHandler { _ in .json(["credential": "abc"]) }, rules: [
            FaultRule(.post, path: "/credential", schedule: .onlyCall(1), fault: .status(500, body: "try again")),
            FaultRule(.post, path: "/credential", schedule: .onlyCall(2), fault: .malformedBody),
            FaultRule(.post, path: "/credential", schedule: .onlyCall(3), fault: .dropConnection),
        ])
        let server = try LoopbackHTTPServer(handler: faults)
        defer { server.stop() }
        let target = url(server, "/credential")
        let first = try await client.send(HTTPRequest(method: .post, url: target, body: Array("{}".utf8)))
        #expect(first.status == 500)
        #expect(text(first) == "try again")
        let second = try await client.send(HTTPRequest(method: .post, url: target, body: Array("{}".utf8)))
        #expect(second.status == 200)
        #expect(second.body == Array(#"{"credenti"#.utf8) + [0xFF])
        await #expect(throws: HTTPError.self) {
            _ = try await client.send(HTTPRequest(method: .post, url: target, body: Array("{}".utf8)))
        }
        let fourth = try await client.send(HTTPRequest(method: .post, url: target, body: Array("{}".utf8)))
        #expect(try JSONValue.parse(fourth.body) == ["credential": "abc"])
    }

    @Test("requests libmicrohttpd cannot parse are refused before the handler")
    func malformedRequests() async throws {
        let calls = Locked(0)
        let server = try LoopbackHTTPServer(handler: AnyHTTPHandler { _ in
            calls.withLock { $0 += 1 }
            return .text("ok")
        })
        defer { server.stop() }
        let badVersion = await rawExchange(port: server.port, "GET / HTTP/9.9\r\nHost: x\r\n\r\n")
        #expect((rawStatus(badVersion) ?? 0) >= 400 || badVersion == "")
        let spaceInTarget = await rawExchange(port: server.port, "GET /a b HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
        #expect((rawStatus(spaceInTarget) ?? 0) >= 400 || spaceInTarget == "")
        let noHost = await rawExchange(port: server.port, "GET / HTTP/1.1\r\nConnection: close\r\n\r\n")
        #expect(rawStatus(noHost) == 400)
        let hugeHeader = "GET / HTTP/1.1\r\nHost: x\r\nX-Big: \(String(repeating: "h", count: 64 * 1024))\r\nConnection: close\r\n\r\n"
        #expect((rawStatus(await rawExchange(port: server.port, hugeHeader)) ?? 0) >= 400)
        let absoluteForm = await rawExchange(port: server.port, "GET http://elsewhere/x HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
        #expect(rawStatus(absoluteForm) == 400)
        for target in ["/a%zz", "/a%4", "/a|b", "/a?b=\"c\"", "/a#frag", "/\u{e9}"] {
            let response = await rawExchange(port: server.port, "GET \(target) HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
            #expect(rawStatus(response) == 400, "target \(target)")
        }
        #expect(calls.current == 0)
        let fine = await rawExchange(port: server.port, "GET / HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
        #expect(rawStatus(fine) == 200)
        #expect(calls.current == 1)
    }

    @Test("a handler status outside 200...599 is sent as 500")
    func invalidStatus() async throws {
        let server = try LoopbackHTTPServer(handler: AnyHTTPHandler { _ in HTTPResponse(status: 42) })
        defer { server.stop() }
        #expect(try await client.send(HTTPRequest(url: url(server, "/"))).status == 500)
    }

    @Test("stop cancels a request still with the handler, closes its connection and returns")
    func stopWithRequestInFlight() async throws {
        let started = Gate()
        let cancelled = Gate()
        let server = try LoopbackHTTPServer(handler: AnyHTTPHandler { _ in
            started.open()
            await waitForCancellation()
            cancelled.open()
            return .text("late")
        })
        let port = server.port
        let exchange = Task { await rawExchange(port: port, "GET /hang HTTP/1.1\r\nHost: x\r\n\r\n") }
        await started.wait()
        #expect(server.isRunning)
        server.stop()
        #expect(!server.isRunning)
        await cancelled.wait()
        #expect(await exchange.value == "")   // closed without an answer
        server.stop()                          // a second stop does nothing
        #expect(await rawExchange(port: port, "GET / HTTP/1.1\r\nHost: x\r\n\r\n") == nil)   // nobody listens
    }

    @Test("a port in use cannot be taken twice")
    func portInUse() throws {
        let first = try LoopbackHTTPServer(handler: HTTPRouter())
        defer { first.stop() }
        #expect(throws: LoopbackHTTPServerError.cannotListen(port: first.port)) {
            _ = try LoopbackHTTPServer(handler: HTTPRouter(), port: first.port)
        }
    }

    @Test("starting and stopping 50 times leaves no descriptor, thread or socket behind (in a child process)")
    func noLeaks() async throws {
        // The child's stderr goes to a file (a second pipe could fill while stdout is
        // read), so that a failed child (an issue it recorded, a LeakSanitizer report)
        // says why.
        let errorLog = FileManager.default.temporaryDirectory.appendingPathComponent("leak-probe-\(UUID().uuidString).err")
        defer { try? FileManager.default.removeItem(at: errorLog) }
        let (child, pipe) = try launchTestChild(filter: "LoopbackChildProcess/leakProbe",
                                                environment: ["WALLET_REFHTTP_LEAK_PROBE": "50"], errorLog: errorLog)
        let output = await offPool { () -> String in
            let text = String(decoding: pipe.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
            child.waitUntilExit()
            return text
        }
        let line = try #require(output.split(separator: "\n").first { $0.hasPrefix("leak-probe ") }, "child output: \(output)")
        let values = Dictionary(uniqueKeysWithValues: line.split(separator: " ").dropFirst().compactMap { pair -> (String, Int)? in
            let parts = pair.split(separator: "=")
            guard parts.count == 2, let value = Int(parts[1]) else { return nil }
            return (String(parts[0]), value)
        })
        #expect(values["cycles"] == 50)
        #expect(values["answered"] == 100)
        #expect(values["fdsBefore"] != nil)
        #expect(values["fdsAfter"] == values["fdsBefore"])
        #expect(values["mhdThreadsDuring"] == 1)
        #expect(values["mhdThreadsAfter"] == 0)
        let errors = (try? String(contentsOf: errorLog, encoding: .utf8)) ?? ""
        #expect(child.terminationStatus == 0, "child stderr (last 4,000 characters): \(errors.suffix(4_000))")
    }
}

/// The leak probe, run alone in a child process so that no other test's descriptors or
/// threads blur the counts; a no-op without its variable.
@Suite("LoopbackChildProcess")
struct LoopbackChildProcess {
    @Test("child: start and stop the server repeatedly, with answered, idle and in-flight connections")
    func leakProbe() async throws {
        guard let cyclesText = ProcessInfo.processInfo.environment["WALLET_REFHTTP_LEAK_PROBE"],
              let cycles = Int(cyclesText) else { return }
        var answered = 0
        var fdsBefore = 0
        var mhdThreadsDuring = 0
        // Cycle 0 warms up what the runtime opens once (the dispatch and concurrency
        // machinery); counting starts after it.
        for cycle in 0...cycles {
            if cycle == 1 { fdsBefore = openFileDescriptorCount() }
            let started = Gate()
            var router = HTTPRouter()
            router.add(.post, "/echo") { request, _ in HTTPResponse(status: 200, body: request.body ?? []) }
            router.add(.get, "/hang") { _, _ in
                started.open()
                await waitForCancellation()
                return .text("late")
            }
            let server = try LoopbackHTTPServer(handler: router)
            let port = server.port
            for _ in 0..<2 {
                let body = "ping \(cycle)"
                let response = await rawExchange(port: port, "POST /echo HTTP/1.1\r\nHost: x\r\nContent-Length: \(body.utf8.count)\r\nConnection: close\r\n\r\n\(body)")
                if cycle > 0, rawStatus(response) == 200, response?.hasSuffix(body) == true { answered += 1 }
            }
            // libmicrohttpd names its thread from inside it: count once it has served.
            if cycle == cycles { mhdThreadsDuring = threadCount(namedWithPrefix: "MHD") }
            let idle = connectLoopback(port: port)                      // connected, never sends
            let hanging = Task { await rawExchange(port: port, "GET /hang HTTP/1.1\r\nHost: x\r\n\r\n") }
            await started.wait()
            server.stop()
            _ = await hanging.value
            if idle >= 0 { close(idle) }
        }
        let fdsAfter = openFileDescriptorCount()
        // MHD_stop_daemon's pthread_join returns once the kernel clears the thread's id,
        // a moment before it takes the thread out of /proc/self/task: count again until
        // it has (a leaked thread stays, and is still counted after the bound).
        var mhdThreadsAfter = threadCount(namedWithPrefix: "MHD")
        for _ in 0..<10_000 where mhdThreadsAfter > 0 {
            try? await Task.sleep(for: .milliseconds(1))
            mhdThreadsAfter = threadCount(namedWithPrefix: "MHD")
        }
        let report = "leak-probe cycles=\(cycles) answered=\(answered) fdsBefore=\(fdsBefore) fdsAfter=\(fdsAfter) "
            + "mhdThreadsDuring=\(mhdThreadsDuring) mhdThreadsAfter=\(mhdThreadsAfter)\n"
        FileHandle.standardOutput.write(Data(report.utf8))
    }
}
