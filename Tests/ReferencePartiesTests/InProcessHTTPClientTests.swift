import WalletEncoding
import Foundation
import JOSE
import ReferenceParties
import Testing
import WalletRuntime

@Suite("InProcessHTTPClient")
struct InProcessHTTPClientTests {
    /// Echoes what it received: method, path and query, one header, the body.
    static let echo = AnyHTTPHandler { request in
        .json([
            "method": .string(request.method.rawValue),
            "target": .string(request.url.absoluteString),
            "dpop": request.headers["DPoP"].map(JSONValue.string) ?? .null,
            "body": .string(String(decoding: request.body ?? [], as: UTF8.self)),
        ], status: 201, headers: ["DPoP-Nonce": "server-nonce"])
    }

    @Test("a request reaches the handler whole and its response comes back whole")
    func roundTrip() async throws {
        let client = InProcessHTTPClient(handler: Self.echo)
        let response = try await client.send(request(.post, "/token?x=1", headers: ["DPoP": "proof"], body: Array("a=1".utf8)))
        #expect(response.status == 201)
        #expect(response.headers["dpop-nonce"] == "server-nonce")
        #expect(try JSONValue.parse(response.body) == [
            "method": "POST", "target": "http://reference.test/token?x=1", "dpop": "proof", "body": "a=1",
        ])
    }

    @Test("a dropped connection fails with a transport error")
    func drop() async {
        let client = InProcessHTTPClient(handler: AnyHTTPHandler { _ throws(HTTPHandlerError) in throw .dropConnection })
        await #expect(throws: HTTPError.transport(.networkConnectionLost)) {
            _ = try await client.send(request(.get, "/"))
        }
    }

    @Test("an early exit thrown by the handler is the response")
    func earlyExit() async throws {
        let client = InProcessHTTPClient(handler: AnyHTTPHandler { _ throws(HTTPHandlerError) in
            throw .response(.oauthError("invalid_grant"))
        })
        let response = try await client.send(request(.post, "/token"))
        #expect(response.status == 400)
        #expect(text(response) == #"{"error":"invalid_grant"}"#)
    }

    @Test("a request body over the limit is answered 413 without calling the handler")
    func requestBodyLimit() async throws {
        let calls = Locked(0)
        let client = InProcessHTTPClient(handler: AnyHTTPHandler { _ in
            calls.withLock { $0 += 1 }
            return .text("ok")
        }, maxRequestBodyBytes: 16)
        #expect(try await client.send(request(.post, "/", body: [UInt8](repeating: 1, count: 16))).status == 200)
        #expect(try await client.send(request(.post, "/", body: [UInt8](repeating: 1, count: 17))).status == 413)
        #expect(calls.current == 1)
    }

    @Test("a response body over the limit fails with responseTooLarge")
    func responseBodyLimit() async {
        let client = InProcessHTTPClient(handler: AnyHTTPHandler { _ in .text(String(repeating: "x", count: 65)) },
                                         maxResponseBytes: 64)
        await #expect(throws: HTTPError.responseTooLarge(limit: 64)) { _ = try await client.send(request(.get, "/")) }
    }

    @Test("with a manual clock, a fault delay longer than the timeout fails with timedOut at once, a shorter one passes")
    func clockTimeouts() async throws {
        let clock = ManualClock(Date(timeIntervalSince1970: 1_700_000_000))
        let faults = FaultInjector(wrapping: Self.echo, rules: [
            FaultRule(path: "/slow", fault: .delay(.seconds(31))),
            FaultRule(path: "/ok", fault: .delay(.seconds(30))),
        ], clock: clock)
        let client = InProcessHTTPClient(handler: faults, clock: clock)
        await #expect(throws: HTTPError.timedOut) { _ = try await client.send(request(.get, "/slow", timeout: .seconds(30))) }
        #expect(clock.now == Date(timeIntervalSince1970: 1_700_000_031))
        #expect(try await client.send(request(.get, "/ok", timeout: .seconds(30))).status == 201)
        #expect(clock.now == Date(timeIntervalSince1970: 1_700_000_061))
    }

    @Test("without a clock, a handler still busy at the timeout is cancelled and the exchange times out",
          .timeLimit(.minutes(15)))
    func realTimeTimeout() async {
        let cancelled = Gate()
        let client = InProcessHTTPClient(handler: AnyHTTPHandler { _ in
            await waitForCancellation()
            cancelled.open()
            return .text("too late")
        })
        await #expect(throws: HTTPError.timedOut) {
            _ = try await client.send(request(.get, "/", timeout: .milliseconds(20)))
        }
        await cancelled.wait()   // the handler saw the cancellation (a hang here is the failure)
    }

    @Test("cancelling the caller cancels the handler and fails with cancelled", .timeLimit(.minutes(15)))
    func callerCancellation() async {
        let started = Gate()
        let cancelled = Gate()
        let client = InProcessHTTPClient(handler: AnyHTTPHandler { _ in
            started.open()
            await waitForCancellation()
            cancelled.open()
            return .text("too late")
        })
        let exchange = Task { () -> HTTPError? in
            do {
                _ = try await client.send(request(.get, "/", timeout: .seconds(3600)))
                return nil
            } catch {
                return error as? HTTPError
            }
        }
        await started.wait()
        exchange.cancel()
        #expect(await exchange.value == .cancelled)
        await cancelled.wait()
    }

    @Test("an already cancelled caller does not reach the handler")
    func cancelledBeforeSending() async {
        let calls = Locked(0)
        let client = InProcessHTTPClient(handler: AnyHTTPHandler { _ in
            calls.withLock { $0 += 1 }
            return .text("ok")
        })
        let exchange = Task { () -> HTTPError? in
            withUnsafeCurrentTask { $0?.cancel() }
            do {
                _ = try await client.send(request(.get, "/"))
                return nil
            } catch {
                return error as? HTTPError
            }
        }
        #expect(await exchange.value == .cancelled)
        #expect(calls.current == 0)
    }

    @Test("50 concurrent requests each get their own answer")
    func concurrent() async throws {
        let client = InProcessHTTPClient(handler: AnyHTTPHandler { request in
            await Task.yield()
            return .text(request.url.lastPathComponent)
        })
        let answers = try await withThrowingTaskGroup(of: (Int, String).self) { group in
            for index in 0..<50 {
                group.addTask { (index, text(try await client.send(request(.get, "/n/\(index)")))) }
            }
            return try await group.reduce(into: [Int: String]()) { $0[$1.0] = $1.1 }
        }
        #expect(answers.count == 50)
        #expect(answers.allSatisfy { $0.value == String($0.key) })
    }
}
