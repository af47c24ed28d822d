import Foundation
import Mdoc
import Testing
import WalletCrypto
import WalletRuntime
@testable import MdocProximity

/// `ProximityExecutor`: one thread for a session's jobs, on Linux the TCP carrier's
/// reactor, elsewhere (and here as well, for its own tests) a thread with a condition.
@Suite("ProximityExecutor")
struct ProximityExecutorTests {
    /// The kinds of loop an executor runs on.
    enum Loop: String, CaseIterable, Sendable, CustomStringConvertible {
        case shared, condition
        var description: String { rawValue }

        /// `shared` is the process's executor (the reactor on Linux); `condition` a new
        /// executor on a thread of its own.
        var executor: ProximityExecutor {
            switch self {
            case .shared: ProximityExecutor.shared
            case .condition: ProximityExecutor(loop: ConditionJobLoop(name: "ProximityExecutorTests"))
            }
        }
    }

    @Test("a task that prefers it runs each of its jobs on the executor's one thread", arguments: Loop.allCases)
    func oneThread(loop: Loop) async throws {
        let executor = loop.executor
        let threads = await withTaskExecutorPreference(executor) { () -> [pthread_t] in
            var seen = [currentThread()]
            let counter = Counter()
            for _ in 0..<50 {
                await counter.increment()          // a default actor: runs on the preferred executor
                seen.append(currentThread())
                await Task.yield()
                seen.append(currentThread())
            }
            async let child = currentThreadAsync()   // a child task inherits the preference
            seen.append(await child)
            seen.append(await Task(executorPreference: executor) { currentThread() }.value)
            return seen
        }
        let thread = try #require(threads.first)
        #expect(threads.allSatisfy { pthread_equal($0, thread) != 0 })
        let pooled = await Task.detached { currentThread() }.value
        #expect(pthread_equal(pooled, thread) == 0)
    }

    @Test("jobs queued from other threads while it waits all run (no lost wake-up)", arguments: Loop.allCases)
    func wakeUps(loop: Loop) async throws {
        let executor = loop.executor
        let count = LockedBox(0)
        let tasks = LockedBox<[Task<Void, Never>]>([])
        // Four threads of their own queue 500 tasks each, in bursts and one at a time, so
        // that some arrive while the executor's thread runs jobs and some while it waits.
        DispatchQueue.concurrentPerform(iterations: 4) { thread in
            for index in 0..<500 {
                let task = Task(executorPreference: executor) { count.withLock { $0 += 1 } }
                tasks.withLock { $0.append(task) }
                if (index + thread) % 50 == 0 { usleep(200) }
            }
        }
        for task in tasks.withLock({ $0 }) { await task.value }
        #expect(count.withLock { $0 } == 2_000)
    }

    @Test("a QR session with the manager's tasks and the app's on the executor completes there",
          arguments: [Carrier.inMemory, .tcp, .blePeripheralServer])
    func session(carrier: Carrier) async throws {
        let executor = ProximityExecutor.shared
        let executorThread = await withTaskExecutorPreference(executor) { currentThread() }
        let fixtures = try await SessionFixtures.make()
        let consentThreads = LockedBox<[pthread_t]>([])
        let provider = StaticDocumentProvider(documents: [fixtures.credential], signer: SoftwareSigner(fixtures.deviceKey)) {
            consentThreads.withLock { $0.append(currentThread()) }
            return .everythingRequested(by: $0)
        }
        let (holder, readerSide) = carrier.connectors()
        let manager = MdocEngagementManager(connector: holder, executor: executor)
        let recorder = collect(manager.eventHub.sessionState) { $0.isTerminal }
        let consent = respond(on: manager, provider: provider, choice: .accept, executor: executor)
        let verified = try await withTaskExecutorPreference(executor) {
            let qr = try await manager.createEngagement(.qr, config: testConfig)
            let reader = try MdocReader(connector: readerSide, trustAnchors: [fixtures.iaca], messageTimeout: hangGuard)
            try await reader.engage(qrCodeUri: try #require(qr.qrCodeUri))
            return try await reader.request([SessionFixtures.request(["family_name", "given_name"])])
        }
        let states = await recorder.value
        await consent.value
        let document = try #require(verified.documents.first)
        #expect(document.value(nameSpace: SessionFixtures.nameSpace, identifier: "family_name") == "Doe")
        #expect(document.value(nameSpace: SessionFixtures.nameSpace, identifier: "given_name") == "John")
        #expect(states.last?.terminalOutcome == .success)
        // The provider is called from the transfer's own task: it ran on the executor.
        let threads = consentThreads.withLock { $0 }
        #expect(threads.count == 1)
        #expect(threads.allSatisfy { pthread_equal($0, executorThread) != 0 })
        await manager.closeAll()
    }
}

private actor Counter {
    var value = 0
    func increment() { value += 1 }
}

/// The calling thread (a synchronous function, so that async code may ask).
private func currentThread() -> pthread_t { pthread_self() }

private func currentThreadAsync() async -> pthread_t { currentThread() }
