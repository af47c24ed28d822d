import Foundation
import Testing
@testable import MdocProximity

/// Issue 10: every wait owns its timer. The listener and the message queues share
/// one implementation (`Mailbox`); these tests drive its timers with a `TestClock`.
@Suite("Waits own their timers (in-memory listener, message queues)")
struct ListenerTimerTests {
    @Test("the timer of an accept that was already served does not fail a later accept (issue 10)")
    func staleTimer() async throws {
        let exchange = InMemoryTransport.Exchange()
        let listener = try await exchange.listen()
        // An accept with a short timeout, served at once by a connecting reader.
        async let first = listener.accept(timeout: .milliseconds(10))
        let a = try await exchange.connect(to: listener.endpoint, timeout: nil)
        _ = try await first
        // A second accept without a timeout waits while the first accept's timer comes due
        // (with the timer fixed, the wait below can only make this test slower, never fail it).
        let second = Task { try await listener.accept(timeout: nil) }
        try await Task.sleep(for: .milliseconds(300))
        let b = try await exchange.connect(to: listener.endpoint, timeout: nil)
        let accepted = try await second.value
        try await b.send([7])
        #expect(try await accepted.receive(timeout: nil) == [7])
        await a.close(); await b.close(); await accepted.close()
        await listener.close()
    }

    @Test("with a test clock: a served accept's timer coming due fails nothing, and no timer outlives its wait")
    func staleTimerOnTestClock() async throws {
        let clock = TestClock()
        let exchange = InMemoryTransport.Exchange(clock: clock)
        let listener = try await exchange.listen()
        let first = Task { try await listener.accept(timeout: hangGuard) }
        await clock.waitForSleepers(1)
        let a = try await exchange.connect(to: listener.endpoint, timeout: nil)
        _ = try await first.value
        #expect(clock.sleeperCount == 0)          // the served accept's timer was cancelled
        let second = Task { try await listener.accept(timeout: .seconds(10)) }
        await clock.waitForSleepers(1)
        clock.advance(by: .seconds(5))           // past the first deadline, before the second
        let b = try await exchange.connect(to: listener.endpoint, timeout: nil)
        let accepted = try await second.value
        #expect(clock.sleeperCount == 0)
        await a.close(); await b.close(); await accepted.close(); await listener.close()
    }

    @Test("each waiter times out on its own deadline, in any order")
    func ownDeadlines() async throws {
        let clock = TestClock()
        let mailbox = Mailbox<Int>(clock: clock)
        let long = Task { () throws(ProximityError) -> Int in try await mailbox.next(timeout: .seconds(10)) }
        await clock.waitForSleepers(1)
        let short = Task { () throws(ProximityError) -> Int in try await mailbox.next(timeout: .seconds(1)) }
        await clock.waitForSleepers(2)
        clock.advance(by: .seconds(2))
        #expect(await short.result.error as? ProximityError == .timeout(seconds: 1))
        #expect(mailbox.waiterCount == 1)
        #expect(mailbox.push(42))                // the long waiter is still served
        #expect(try await long.value == 42)
        #expect(clock.sleeperCount == 0)
    }

    @Test("a cancelled receive fails with .cancelled and leaves no waiter or timer behind")
    func cancellation() async throws {
        let clock = TestClock()
        let mailbox = Mailbox<Int>(clock: clock)
        let waiting = Task { () throws(ProximityError) -> Int in try await mailbox.next(timeout: .seconds(10)) }
        await clock.waitForSleepers(1)
        waiting.cancel()
        #expect(await waiting.result.error as? ProximityError == .cancelled)
        #expect(mailbox.waiterCount == 0)
        #expect(clock.sleeperCount == 0)
    }

    @Test("an ended mailbox still hands out what was queued, then the end's error; a closed listener closes queued connections")
    func endings() async throws {
        let mailbox = Mailbox<Int>()
        mailbox.push(1)
        mailbox.finish(.connectionClosed)
        #expect(!mailbox.push(2))
        #expect(try await mailbox.next(timeout: nil) == 1)
        await #expect(throws: ProximityError.connectionClosed) { try await mailbox.next(timeout: nil) }

        let exchange = InMemoryTransport.Exchange()
        let listener = try await exchange.listen()
        let reader = try await exchange.connect(to: listener.endpoint, timeout: nil)   // queued, never accepted
        await listener.close()
        await #expect(throws: ProximityError.connectionClosed) { try await reader.receive(timeout: nil) }
        await #expect(throws: ProximityError.connectionClosed) { try await listener.accept(timeout: nil) }
    }
}

extension Result {
    var error: Failure? { if case .failure(let error) = self { return error } else { return nil } }
}
