import Foundation
import Testing
@testable import WalletKit
import WalletRuntime
import WalletStorage

/// The list `wallet.credentials.changes` publishes: never an older one after a newer one.
@Suite("Credential monitor")
struct CredentialMonitorTests {
    static func credential(_ id: String) -> StoredCredential {
        StoredCredential(id: id, format: .sdJwtVc, type: "t", issuer: IssuerInfo(identifier: "https://issuer.example"),
                         instances: [CredentialInstance(index: 0, keyAlias: "k-\(id)", raw: Array(id.utf8))])
    }

    @Test("a refresh whose read finishes after a later refresh's does not publish its older list over the newer one")
    func olderReadFinishingLast() async throws {
        let older = [Self.credential("a")], newer = [Self.credential("a"), Self.credential("b")]
        let gate = AsyncGate()
        let reads = LockedBox(0)
        let monitor = CredentialMonitor(read: {
            let call = reads.withLock { count -> Int in count += 1; return count }
            // The first read saw the store before the change; it is held until the second,
            // started after the change, has published.
            if call == 1 { await gate.wait(); return older }
            return newer
        }, logger: SilentLogger())
        let first = Task { await monitor.refresh() }
        while reads.withLock({ $0 }) < 1 { await Task.yield() }
        await monitor.refresh()
        #expect(await monitor.stream.current == newer)
        gate.open()
        await first.value
        #expect(await monitor.stream.current == newer, "the older read came back last and was dropped")
        // Later refreshes publish again.
        await monitor.refresh()
        #expect(await monitor.stream.current == newer)
    }
}

/// Suspends waiters until opened.
final class AsyncGate: Sendable {
    private let state = LockedBox<(open: Bool, waiters: [CheckedContinuation<Void, Never>])>((false, []))

    func wait() async {
        await withCheckedContinuation { continuation in
            let resumeNow = state.withLock { state -> Bool in
                if state.open { return true }
                state.waiters.append(continuation)
                return false
            }
            if resumeNow { continuation.resume() }
        }
    }

    func open() {
        let waiters = state.withLock { state -> [CheckedContinuation<Void, Never>] in
            state.open = true
            defer { state.waiters = [] }
            return state.waiters
        }
        for waiter in waiters { waiter.resume() }
    }
}
