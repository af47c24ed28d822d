import Foundation
import Testing
import WalletRuntime

private enum Phase: Sendable, Equatable {
    case idle, working(Int), done

    var isTerminal: Bool { self == .done }
}

@Suite("StateStream")
struct StateStreamTests {
    @Test("a new subscriber first receives the current state")
    func replaysCurrent() async {
        let stream = StateStream<Phase>(initial: .idle, isTerminal: \.isTerminal)
        stream.send(.working(1))
        var iterator = stream.states.makeAsyncIterator()
        #expect(await iterator.next() == .working(1))
        stream.send(.working(2))
        #expect(await iterator.next() == .working(2))
    }

    @Test("every subscriber sees every state in order and ends after the terminal one")
    func broadcastsToAll() async {
        let stream = StateStream<Phase>(initial: .idle, isTerminal: \.isTerminal)
        let first = stream.states
        let second = stream.states
        for step in 1...50 { stream.send(.working(step)) }
        stream.send(.done)
        let expected: [Phase] = [.idle] + (1...50).map { .working($0) } + [.done]
        async let a = first.reduce(into: [Phase]()) { $0.append($1) }
        async let b = second.reduce(into: [Phase]()) { $0.append($1) }
        #expect(await a == expected)
        #expect(await b == expected)
    }

    @Test("after the terminal state, sends are refused and late subscribers get the final state only")
    func terminalIsFinal() async {
        let stream = StateStream<Phase>(initial: .idle, isTerminal: \.isTerminal)
        #expect(stream.send(.done))
        #expect(stream.isFinished)
        #expect(!stream.send(.working(9)))
        #expect(stream.current == .done)
        let late = await stream.states.reduce(into: [Phase]()) { $0.append($1) }
        #expect(late == [.done])
    }

    @Test("finish() ends subscriptions without a new state")
    func finishEnds() async {
        let stream = StateStream<Phase>(initial: .working(3))
        let subscription = stream.states
        stream.finish()
        let seen = await subscription.reduce(into: [Phase]()) { $0.append($1) }
        #expect(seen == [.working(3)])
        #expect(stream.current == .working(3))
    }

    @Test("concurrent senders and subscribers agree on one order")
    func concurrentOrder() async {
        let stream = StateStream<Phase>(initial: .idle, isTerminal: \.isTerminal)
        let subscriptions = (0..<4).map { _ in stream.states }
        await withTaskGroup(of: Void.self) { group in
            for sender in 0..<4 {
                group.addTask { for step in 0..<100 { stream.send(.working(sender * 1000 + step)) } }
            }
        }
        stream.send(.done)
        var orders: [[Phase]] = []
        for subscription in subscriptions { orders.append(await subscription.reduce(into: []) { $0.append($1) }) }
        #expect(orders.allSatisfy { $0 == orders[0] })
        #expect(orders[0].count == 402)
    }

    @Test("a cancelled subscriber is dropped without disturbing the others")
    func cancelledSubscriber() async {
        let stream = StateStream<Phase>(initial: .idle, isTerminal: \.isTerminal)
        let task = Task { for await _ in stream.states {} }
        task.cancel()
        await task.value
        let kept = stream.states
        stream.send(.working(1))
        stream.send(.done)
        #expect(await kept.reduce(into: [Phase]()) { $0.append($1) } == [.idle, .working(1), .done])
    }
}

@Suite("Clocks and logging")
struct ClockTests {
    @Test("a manual clock only moves when told, and its sleep advances it")
    func manualClock() async throws {
        let start = Date(timeIntervalSince1970: 1_700_000_000)
        let clock = ManualClock(start)
        #expect(clock.now == start)
        clock.advance(by: 60)
        #expect(clock.now == start.addingTimeInterval(60))
        try await clock.sleep(for: .seconds(5))
        #expect(clock.now == start.addingTimeInterval(65))
    }

    @Test("a redacted value never prints its content")
    func redaction() {
        let secret = Redacted("refresh-token-123")
        #expect("\(secret)" == "<redacted>")
        #expect(String(reflecting: secret) == "<redacted>")
        #expect(secret.value == "refresh-token-123")
    }

    @Test("header names are case-insensitive and keep their order")
    func headers() {
        var headers: HTTPHeaders = ["Content-Type": "application/json", "DPoP-Nonce": "n1"]
        #expect(headers["content-type"] == "application/json")
        headers.add(name: "Set-Cookie", value: "a")
        headers.add(name: "set-cookie", value: "b")
        #expect(headers.values(for: "SET-COOKIE") == ["a", "b"])
        headers["dpop-nonce"] = "n2"
        #expect(headers["DPoP-Nonce"] == "n2")
        #expect(headers.fields.map(\.name) == ["Content-Type", "Set-Cookie", "set-cookie", "dpop-nonce"])
    }
}
