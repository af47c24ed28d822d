import CBOR
import Foundation
import Mdoc
import Testing
import WalletCrypto
@testable import MdocProximity

/// The bugs of issue 17 item 5, each reproduced by a test that failed before its fix.
@Suite("Proximity lifecycle bugs (issue 17 item 5)")
struct LifecycleBugTests {
    static func endpoint(of engagement: MdocEngagement) throws -> TransportEndpoint {
        TransportEndpoint(retrievalMethod: try #require(engagement.deviceEngagement.deviceRetrievalMethods.first))
    }

    @Test("a connection that arrives while its engagement is being closed is refused; the closed engagement never becomes active")
    func acceptAfterClose() async throws {
        let gated = GatedConnector(gateListenerClose: true)
        let manager = MdocEngagementManager(connector: gated)
        let qr = try await manager.createEngagement(.qr, config: testConfig)
        let reader = try await gated.exchange.connect(to: try Self.endpoint(of: qr), timeout: nil)
        await gated.listenerClose.arrivals(1)          // the accept loop waits in listener.close()
        let closing = Task { await manager.close(qr.id) }
        await gated.listenerClose.arrivals(2)          // so does close(id)
        gated.listenerClose.open()
        await closing.value
        await #expect(throws: ProximityError.connectionClosed) { try await reader.receive(timeout: hangGuard) }
        #expect(manager.activeEngagement.current?.id != qr.id)
        #expect(!manager.eventHub.recentTransferEvents(count: 100).contains { $0.engagementId == qr.id })
        await manager.closeAll()
    }

    @Test("a reverse engagement closed while connecting publishes no error")
    func connectAfterClose() async throws {
        let gated = GatedConnector(gateConnect: true, failConnect: true)
        let manager = MdocEngagementManager(connector: gated)
        let readerKey = try ECPrivateKey.generate(curve: .p256)
        let uri = ReaderEngagement(security: EngagementSecurity(eDeviceKey: readerKey.publicKey),
                                   connectionMethods: [TransportEndpoint.inMemory(name: "reader").retrievalMethod]).uri
        let toApp = try await manager.createEngagement(.toApp, config: testConfig.with(readerEngagementUri: uri))
        await gated.connectGate.arrivals(1)
        await manager.close(toApp.id)
        gated.connectGate.open()
        await gated.connectReturned.arrivals(1)
        _ = await manager.engagements                   // let the manager process what the connect left behind
        let events = manager.eventHub.recentEngagementEvents(count: 100).filter { $0.engagementId == toApp.id }
        #expect(!events.contains { if case .error = $0.kind { return true } else { return false } })
        #expect(manager.eventHub.currentSessionState.terminalOutcome != .error)
    }

    @Test("an engagement whose accept fails (timeout) closes its listener")
    func listenerClosedAfterAcceptError() async throws {
        let clock = TestClock()
        let exchange = InMemoryTransport.Exchange(clock: clock)
        let manager = MdocEngagementManager(connector: exchange)
        let failed = collect(manager.eventHub.engagementEvents) { if case .error = $0.kind { return true } else { return false } }
        var config = testConfig
        config.engagementTimeout = .seconds(60)
        _ = try await manager.createEngagement(.qr, config: config)
        #expect(exchange.listenerCount == 1)
        await clock.waitForSleepers(1)
        clock.advance(by: .seconds(61))
        _ = await failed.value
        _ = await manager.engagements
        #expect(exchange.listenerCount == 0)
        await manager.closeAll()
    }

    /// A provider whose credentials wait at a gate.
    struct GatedProvider: MdocDocumentProvider {
        let inner: StaticDocumentProvider
        let gate: Gate
        func credentials(for request: DeviceRequest) async throws(DocumentProviderError) -> [IssuerSigned] {
            await gate.wait()
            return try await inner.credentials(for: request)
        }
        func authentication(for credential: IssuerSigned) -> DeviceAuthenticationMethod { inner.authentication(for: credential) }
        func consent(for request: DeviceRequest) async throws(DocumentProviderError) -> ConsentSelection {
            try await inner.consent(for: request)
        }
    }

    @Test("a response built while the reader ended the session is refused, and nothing is sent or published after the end")
    func responseAfterEnd() async throws {
        let fixtures = try await SessionFixtures.make()
        let exchange = InMemoryTransport.Exchange()
        let manager = MdocEngagementManager(connector: exchange)
        let qr = try await manager.createEngagement(.qr, config: testConfig)
        let waiting = collect(manager.eventHub.transferEvents) { $0.state == .awaitingConsent }
        let ended = collect(manager.eventHub.transferEvents) { $0.stateOrder >= 200 }
        let reader = try MdocReader(connector: exchange, trustAnchors: [fixtures.iaca], messageTimeout: hangGuard)
        try await reader.engage(qrCodeUri: try #require(qr.qrCodeUri))
        let pending = Task { try await reader.request([SessionFixtures.request()]) }
        let start = try #require(await waiting.value.last)
        guard case .documentsSelectionProcessStart(let data) = start.kind else { Issue.record("no request"); return }
        let transfer = try #require(qr.transferManager)
        let gate = Gate()
        let provider = GatedProvider(inner: fixtures.provider, gate: gate)
        let request = try DeviceRequest(encoded: data)
        let building = Task { try await transfer.createResponse(deviceRequest: request, documentProvider: provider) }
        await gate.arrivals(1)                          // the provider is working...
        await reader.end()                              // ...when the reader ends the session
        _ = await ended.value
        gate.open()
        let built = await building.result
        #expect(throws: ProximityError.self) { try built.get() }
        if case .success(let response) = built {
            await #expect(throws: ProximityError.self) { try await transfer.sendDeviceResponse(response) }
        }
        #expect(await (try? pending.value) == nil)
        let after = manager.eventHub.recentTransferEvents(count: 100).filter { $0.engagementId == qr.id }
        let end = try #require(after.firstIndex { $0.stateOrder >= 200 })
        #expect(after.count == end + 1, "events after the end: \(after[(end + 1)...].map(\.name))")
        await manager.closeAll()
    }

    @Test("a TCP transport whose peer went away never writes to or shuts down a descriptor it no longer owns")
    func tcpDescriptorReuse() async throws {
        let listener = try privateTCPListener()
        let address = try #require(listener.endpoint.tcpAddress)
        let (host, port) = (address.host, address.port)
        async let acceptedA = listener.accept(timeout: hangGuard)
        let a = try await TCPTransport.connect(host: host, port: port)
        let b = try await acceptedA
        await a.close()
        // b's read loop sees the end of the stream.
        await #expect(throws: ProximityError.connectionClosed) { try await b.receive(timeout: hangGuard) }
        // New sockets now take the lowest free descriptor numbers, b's old one among them.
        var pairs: [(any MdocTransport, any MdocTransport)] = []
        for _ in 0..<4 {
            async let accepted = listener.accept(timeout: hangGuard)
            let client = try await TCPTransport.connect(host: host, port: port)
            pairs.append((client, try await accepted))
        }
        await #expect(throws: ProximityError.self) { try await b.send([0xEE, 0xEE]) }
        await b.close()
        for (client, server) in pairs {
            try await client.send([1, 2, 3])
            #expect(try await server.receive(timeout: hangGuard) == [1, 2, 3])
            try await server.send([4])
            #expect(try await client.receive(timeout: hangGuard) == [4])
            await client.close(); await server.close()
        }
        await listener.close()
    }
}
