import WalletEncoding
import Foundation
import JOSE
import ReferenceParties
import Testing
import WalletRuntime

@Suite("FaultInjector")
struct FaultInjectorTests {
    /// Answers `{"ok": <path>}` and counts its calls.
    final class CountingHandler: HTTPHandler {
        let calls = Locked(0)
        func respond(to request: HTTPRequest) async throws(HTTPHandlerError) -> HTTPResponse {
            calls.withLock { $0 += 1 }
            return .json(["ok": .string(request.path)], headers: ["X-Real": "1"])
        }
    }

    private func statuses(_ client: InProcessHTTPClient, _ path: String, method: HTTPMethod = .post, times: Int) async throws -> [Int] {
        var result: [Int] = []
        for _ in 0..<times { result.append(try await client.send(request(method, path)).status) }
        return result
    }

    @Test("first(n) fails the first n calls, then lets them through")
    func firstCalls() async throws {
        let handler = CountingHandler()
        let faults = FaultInjector(wrapping: handler, rules: [
            FaultRule(.post, path: "/credential", schedule: .first(2), fault: .status(500, body: "boom")),
        ])
        let client = InProcessHTTPClient(handler: faults)
        #expect(try await statuses(client, "/credential", times: 4) == [500, 500, 200, 200])
        #expect(handler.calls.current == 2)
        #expect(await faults.firedCounts == [2])
    }

    @Test("everyNth(n) fires on calls n, 2n, ... and onlyCall(n) on call n alone")
    func periodicAndSingle() async throws {
        let faults = FaultInjector(wrapping: CountingHandler(), rules: [
            FaultRule(path: "/nonce", schedule: .everyNth(3), fault: .status(503)),
            FaultRule(path: "/token", schedule: .onlyCall(2), fault: .respond(.oauthError("invalid_grant"))),
        ])
        let client = InProcessHTTPClient(handler: faults)
        #expect(try await statuses(client, "/nonce", times: 7) == [200, 200, 503, 200, 200, 503, 200])
        #expect(try await statuses(client, "/token", times: 4) == [200, 400, 200, 200])
        #expect(await faults.firedCounts == [2, 1])
    }

    @Test("a rule only counts requests with its method and path; {name} matches one segment")
    func matching() async throws {
        let faults = FaultInjector(wrapping: CountingHandler(), rules: [
            FaultRule(.get, path: "/offers/{id}", schedule: .onlyCall(2), fault: .status(404)),
        ])
        let client = InProcessHTTPClient(handler: faults)
        #expect(try await client.send(request(.post, "/offers/1")).status == 200)      // other method: not counted
        #expect(try await client.send(request(.get, "/offers/1/x")).status == 200)     // other path: not counted
        #expect(try await client.send(request(.get, "/offers/1")).status == 200)       // call 1
        #expect(try await client.send(request(.get, "/offers/2")).status == 404)       // call 2
        #expect(try await client.send(request(.get, "/offers/3")).status == 200)       // call 3
    }

    @Test("when two rules fire on one request the first wins, and both count the call")
    func firstRuleWins() async throws {
        let faults = FaultInjector(wrapping: CountingHandler(), rules: [
            FaultRule(path: "/token", schedule: .onlyCall(1), fault: .status(500)),
            FaultRule(path: "/token", schedule: .first(2), fault: .status(502)),
        ])
        let client = InProcessHTTPClient(handler: faults)
        #expect(try await statuses(client, "/token", times: 3) == [500, 502, 200])
        #expect(await faults.firedCounts == [1, 1])
    }

    @Test("a malformed body keeps the real status and headers, and no longer parses")
    func malformedBody() async throws {
        let faults = FaultInjector(wrapping: CountingHandler(), rules: [FaultRule(path: "/credential", fault: .malformedBody)])
        let client = InProcessHTTPClient(handler: faults)
        let response = try await client.send(request(.post, "/credential"))
        let real = HTTPResponse.json(["ok": "/credential"]).body
        #expect(response.status == 200)
        #expect(response.headers["X-Real"] == "1")
        #expect(response.body == Array(real.prefix(real.count / 2)) + [0xFF])
        #expect(throws: JSONError.self) { try JSONValue.parse(response.body) }
    }

    @Test("a delay sleeps on the injected clock, then the handler answers")
    func delay() async throws {
        let clock = ManualClock(Date(timeIntervalSince1970: 0))
        let handler = CountingHandler()
        let faults = FaultInjector(wrapping: handler, rules: [FaultRule(path: "/deferred", fault: .delay(.seconds(5)))], clock: clock)
        let response = try await InProcessHTTPClient(handler: faults).send(request(.post, "/deferred"))
        #expect(response.status == 200)
        #expect(clock.now == Date(timeIntervalSince1970: 5))
        #expect(handler.calls.current == 1)
    }

    @Test("a dropped connection never reaches the handler")
    func drop() async {
        let handler = CountingHandler()
        let faults = FaultInjector(wrapping: handler, rules: [FaultRule(path: "/x", fault: .dropConnection)])
        await #expect(throws: HTTPError.self) { _ = try await InProcessHTTPClient(handler: faults).send(request(.get, "/x")) }
        #expect(handler.calls.current == 0)
    }

    @Test("replacing the rules starts the counts again; an added rule counts from its own first call")
    func rulesChange() async throws {
        let faults = FaultInjector(wrapping: CountingHandler(), rules: [FaultRule(path: "/a", schedule: .onlyCall(2), fault: .status(500))])
        let client = InProcessHTTPClient(handler: faults)
        #expect(try await statuses(client, "/a", method: .get, times: 1) == [200])
        await faults.setRules([FaultRule(path: "/a", schedule: .onlyCall(2), fault: .status(501))])
        #expect(try await statuses(client, "/a", method: .get, times: 2) == [200, 501])
        await faults.add(FaultRule(path: "/a", schedule: .first(1), fault: .status(502)))
        #expect(try await statuses(client, "/a", method: .get, times: 2) == [502, 200])
        #expect(await faults.firedCounts == [1, 1])
    }

    @Test("without a matching rule every request passes through unchanged")
    func passThrough() async throws {
        let handler = CountingHandler()
        let faults = FaultInjector(wrapping: handler)
        let response = try await faults.respond(to: request(.get, "/anything"))
        #expect(response == .json(["ok": "/anything"], headers: ["X-Real": "1"]))
        #expect(handler.calls.current == 1)
    }
}
