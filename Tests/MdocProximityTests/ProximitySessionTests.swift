import CBOR
import COSE
import Foundation
import Mdoc
import Testing
import WalletCrypto
@testable import MdocProximity

/// Holder ↔ reader in one process, over the in-memory transport and TCP on
/// 127.0.0.1; each test asserts the exact `SessionUiState` sequence of the
/// spec's "State Transition Flow" for its flow.
@Suite("Proximity sessions end to end")
struct ProximitySessionTests {
    static let scanQr = ui(.engagement, "Scan the QR with reader", nfc: .background, qr: .display)
    static let nfcWaiting = ui(.engagement, "Hold near reader", nfc: .foreground)

    @Test("QR display flow reaches SUCCESS and the reader holds the verified elements", arguments: Carrier.allCases)
    func qrSuccess(carrier: Carrier) async throws {
        let fixtures = try await SessionFixtures.make()
        let connector = carrier.connector()
        let manager = MdocEngagementManager(connector: connector)
        try await manager.createEngagement(.nfc, config: testConfig)
        let recorder = collect(manager.eventHub.sessionState) { $0.isTerminal }
        let consent = respond(on: manager, provider: fixtures.provider, choice: .accept)
        let qr = try await manager.createEngagement(.qr, config: testConfig)
        let reader = try MdocReader(connector: connector, trustAnchors: [fixtures.iaca], messageTimeout: hangGuard)
        try await reader.engage(qrCodeUri: try #require(qr.qrCodeUri))
        let verified = try await reader.request([SessionFixtures.request()])
        let states = await recorder.value
        await consent.value
        let document = try #require(verified.documents.first)
        #expect(document.docType == SessionFixtures.mDL)
        #expect(document.value(nameSpace: SessionFixtures.nameSpace, identifier: "family_name") == "Doe")
        #expect(document.value(nameSpace: SessionFixtures.nameSpace, identifier: "age_over_18") == true)
        #expect(document.value(nameSpace: SessionFixtures.nameSpace, identifier: "given_name") == nil)
        let request = states.first { $0.userInteractionRequired }?.deviceRequest
        #expect(request.flatMap { ParsedDeviceRequest(cbor: $0) }?.documents.first?.nameSpaces.first?.1
                == ["family_name", "age_over_18"])
        #expect(states == [
            Self.nfcWaiting,
            ui(.engagement, "Preparing QR code", nfc: .background, qr: .display),
            Self.scanQr,
            ui(.transfer, "Connecting…", nfc: .background, qr: .none),
            ui(.transfer, "Connected", nfc: .background),
            ui(.transfer, "Review request", nfc: .background, interaction: true, request: request),
            ui(.transfer, "Sharing credentials…", nfc: .background),
            ui(.transfer, "Transferring…", nfc: .background, progress: 0.7),
            ui(.terminal, "Completed", nfc: .background, qr: .none, outcome: .success, message: "Transfer completed successfully"),
        ])
        await manager.closeAll()
    }

    @Test("declining consent ends in DECLINED and the reader sees the session end", arguments: Carrier.allCases)
    func declined(carrier: Carrier) async throws {
        let fixtures = try await SessionFixtures.make()
        let connector = carrier.connector()
        let manager = MdocEngagementManager(connector: connector)
        let consent = respond(on: manager, provider: fixtures.provider, choice: .decline)
        let qr = try await manager.createEngagement(.qr, config: testConfig)
        let recorder = collect(manager.eventHub.sessionState) { $0.isTerminal }
        let reader = try MdocReader(connector: connector, trustAnchors: [fixtures.iaca], messageTimeout: hangGuard)
        try await reader.engage(qrCodeUri: try #require(qr.qrCodeUri))
        await #expect(throws: ProximityError.sessionTerminated) { try await reader.request([SessionFixtures.request()]) }
        let states = await recorder.value
        await consent.value
        let request = states.first { $0.userInteractionRequired }?.deviceRequest
        #expect(request != nil)
        #expect(states == [
            ui(.engagement, "Scan the QR with reader", qr: .display),
            ui(.transfer, "Connecting…"),
            ui(.transfer, "Connected"),
            ui(.transfer, "Review request", interaction: true, request: request),
            ui(.terminal, "Declined", outcome: .declined, message: "User declined to share data"),
        ])
        await manager.closeAll()
    }

    @Test("the reader ending the session before the response gives CANCELED", arguments: Carrier.allCases)
    func readerAborts(carrier: Carrier) async throws {
        let fixtures = try await SessionFixtures.make()
        let connector = carrier.connector()
        let manager = MdocEngagementManager(connector: connector)
        let qr = try await manager.createEngagement(.qr, config: testConfig)
        let recorder = collect(manager.eventHub.sessionState) { $0.isTerminal }
        let waiting = collect(manager.eventHub.transferEvents) { $0.state == .awaitingConsent }
        let reader = try MdocReader(connector: connector, trustAnchors: [fixtures.iaca], messageTimeout: hangGuard)
        try await reader.engage(qrCodeUri: try #require(qr.qrCodeUri))
        let pending = Task { try await reader.request([SessionFixtures.request()]) }
        _ = await waiting.value
        await reader.end()
        let states = await recorder.value
        #expect(await (try? pending.value) == nil)
        let request = states.first { $0.userInteractionRequired }?.deviceRequest
        #expect(states == [
            ui(.engagement, "Scan the QR with reader", qr: .display),
            ui(.transfer, "Connecting…"),
            ui(.transfer, "Connected"),
            ui(.transfer, "Review request", interaction: true, request: request),
            ui(.terminal, "Canceled", outcome: .canceled, message: "The reader ended the session"),
        ])
        await manager.closeAll()
    }

    @Test("a corrupted SessionEstablishment gives ERROR and status 10 to the reader", arguments: Carrier.allCases)
    func corrupted(carrier: Carrier) async throws {
        let connector = carrier.connector()
        let manager = MdocEngagementManager(connector: connector)
        let qr = try await manager.createEngagement(.qr, config: testConfig)
        let recorder = collect(manager.eventHub.sessionState) { $0.isTerminal }
        let engagement = try DeviceEngagement(uri: try #require(qr.qrCodeUri))
        let endpoint = try #require(engagement.deviceRetrievalMethods.compactMap(TransportEndpoint.init(retrievalMethod:)).first)
        let transport = try await connector.connect(to: endpoint, timeout: hangGuard)
        let readerKey = try ECPrivateKey.generate(curve: .p256)
        // Ciphertext that cannot authenticate under SKReader.
        try await transport.send(SessionEstablishment(eReaderKey: readerKey.publicKey, data: [UInt8](repeating: 0x42, count: 48)).encodedBytes)
        let reply = try SessionData(encoded: try await transport.receive(timeout: hangGuard))
        #expect(reply.status == .sessionEncryptionError)
        #expect(reply.data == nil)
        let states = await recorder.value
        #expect(states == [
            ui(.engagement, "Scan the QR with reader", qr: .display),
            ui(.transfer, "Connecting…"),
            ui(.transfer, "Connected"),
            ui(.terminal, "Failed", outcome: .error,
               message: ProximityError.sessionEncryptionFailed("\(MdocError.decryptionFailed(counter: 1))").description),
        ])
        await transport.close()
        await manager.closeAll()
    }

    @Test("a SessionEstablishment that is not CBOR is answered with status 11")
    func notCBOR() async throws {
        let connector = InMemoryTransport.Exchange()
        let manager = MdocEngagementManager(connector: connector)
        let qr = try await manager.createEngagement(.qr, config: testConfig)
        let engagement = try DeviceEngagement(uri: try #require(qr.qrCodeUri))
        let endpoint = try #require(engagement.deviceRetrievalMethods.compactMap(TransportEndpoint.init(retrievalMethod:)).first)
        let transport = try await connector.connect(to: endpoint, timeout: hangGuard)
        try await transport.send([0xff, 0x00])
        let reply = try SessionData(encoded: try await transport.receive(timeout: hangGuard))
        #expect(reply.status == .cborDecodingError)
        #expect(manager.eventHub.currentSessionState.terminalOutcome == .error)
        await manager.closeAll()
    }

    @Test("reverse (to-app) flow: the holder connects to a scanned reader engagement", arguments: Carrier.allCases)
    func reverse(carrier: Carrier) async throws {
        let fixtures = try await SessionFixtures.make()
        let connector = carrier.connector()
        let manager = MdocEngagementManager(connector: connector)
        try await manager.createEngagement(.nfc, config: testConfig)
        let reader = try MdocReader(connector: connector, trustAnchors: [fixtures.iaca], messageTimeout: hangGuard)
        let uri = try await reader.offerReverseEngagement()
        #expect(uri.hasPrefix("mdoc-reader:"))
        let recorder = collect(manager.eventHub.sessionState) { $0.isTerminal }
        let consent = respond(on: manager, provider: fixtures.provider, choice: .accept)
        try await manager.createEngagement(.toApp, config: testConfig.with(readerEngagementUri: uri))
        try await reader.awaitHolder(timeout: hangGuard)
        let verified = try await reader.request([SessionFixtures.request(["document_number"])])
        let states = await recorder.value
        await consent.value
        #expect(verified.documents.first?.value(nameSpace: SessionFixtures.nameSpace, identifier: "document_number") == "123456789")
        let request = states.first { $0.userInteractionRequired }?.deviceRequest
        #expect(states == [
            Self.nfcWaiting,
            ui(.engagement, "Starting engagement", nfc: .background, qr: .none),
            ui(.transfer, "Connecting…", nfc: .background, qr: .none),
            ui(.transfer, "Connected", nfc: .background),
            ui(.transfer, "Review request", nfc: .background, interaction: true, request: request),
            ui(.transfer, "Sharing credentials…", nfc: .background),
            ui(.transfer, "Transferring…", nfc: .background, progress: 0.7),
            ui(.terminal, "Completed", nfc: .background, outcome: .success, message: "Transfer completed successfully"),
        ])
        #expect(states.allSatisfy { $0.qrMode == .none })
        await manager.closeAll()
    }

    @Test("NFC foreground flow: tap, handover, consent declined", arguments: Carrier.allCases)
    func nfcForeground(carrier: Carrier) async throws {
        let fixtures = try await SessionFixtures.make()
        let connector = carrier.connector()
        let manager = MdocEngagementManager(connector: connector)
        let recorder = collect(manager.eventHub.sessionState) { $0.isTerminal }
        let consent = respond(on: manager, provider: fixtures.provider, choice: .decline)
        let nfc = try await manager.createEngagement(.nfc, config: testConfig)
        let reader = try MdocReader(connector: connector, trustAnchors: [fixtures.iaca], messageTimeout: hangGuard)
        // The reader reads the Handover Select over NFC (served by the platform's NFC service).
        try await reader.engage(nfcHandoverSelect: try #require(nfc.nfcHandoverSelect))
        await #expect(throws: ProximityError.sessionTerminated) { try await reader.request([SessionFixtures.request()]) }
        let states = await recorder.value
        await consent.value
        let request = states.first { $0.userInteractionRequired }?.deviceRequest
        #expect(states == [
            .idle,
            ui(.engagement, "Preparing NFC", nfc: .foreground),
            ui(.engagement, "Hold near reader", nfc: .foreground),
            ui(.transfer, "Connecting…", nfc: .foreground),
            ui(.transfer, "Connected", nfc: .foreground),
            ui(.transfer, "Review request", nfc: .foreground, interaction: true, request: request),
            ui(.terminal, "Declined", nfc: .foreground, outcome: .declined, message: "User declined to share data"),
        ])
        await manager.closeAll()
    }

    @Test("NFC background flow: NFC takes over from a shown QR code", arguments: Carrier.allCases)
    func nfcBackground(carrier: Carrier) async throws {
        let fixtures = try await SessionFixtures.make()
        let connector = carrier.connector()
        let manager = MdocEngagementManager(connector: connector)
        let nfc = try await manager.createEngagement(.nfc, config: testConfig)
        let qr = try await manager.createEngagement(.qr, config: testConfig)
        #expect(await manager.engagements.count == 2)
        #expect(manager.activeEngagement.current?.id == qr.id)
        let recorder = collect(manager.eventHub.sessionState) { $0.isTerminal }
        let consent = respond(on: manager, provider: fixtures.provider, choice: .accept)
        let reader = try MdocReader(connector: connector, trustAnchors: [fixtures.iaca], messageTimeout: hangGuard)
        try await reader.engage(nfcHandoverSelect: try #require(nfc.nfcHandoverSelect))
        let verified = try await reader.request([SessionFixtures.request()])
        let states = await recorder.value
        await consent.value
        #expect(verified.documents.count == 1)
        #expect(manager.activeEngagement.current?.id == nfc.id)
        #expect(qr.isSuspended)
        let request = states.first { $0.userInteractionRequired }?.deviceRequest
        #expect(states == [
            Self.scanQr,
            ui(.transfer, "Connecting…", nfc: .foreground, qr: .none),
            ui(.transfer, "Connected", nfc: .foreground),
            ui(.transfer, "Review request", nfc: .foreground, interaction: true, request: request),
            ui(.transfer, "Sharing credentials…", nfc: .foreground),
            ui(.transfer, "Transferring…", nfc: .foreground, progress: 0.7),
            ui(.terminal, "Completed", nfc: .foreground, outcome: .success, message: "Transfer completed successfully"),
        ])
        await manager.closeAll()
    }

    @Test("a suspended engagement refuses readers; resume and closeQrEngagement update the UI state")
    func suspension() async throws {
        let connector = InMemoryTransport.Exchange()
        let manager = MdocEngagementManager(connector: connector)
        let nfc = try await manager.createEngagement(.nfc, config: testConfig)
        let qr = try await manager.createEngagement(.qr, config: testConfig)
        await manager.suspend()
        #expect(manager.eventHub.currentSessionState.isSuspended)
        #expect(qr.isSuspended)
        let reader = try MdocReader(connector: connector, trustAnchors: [], messageTimeout: .seconds(2))
        try await reader.engage(qrCodeUri: try #require(qr.qrCodeUri))
        await #expect(throws: ProximityError.self) { try await reader.request([SessionFixtures.request()]) }
        await manager.resume()
        #expect(!manager.eventHub.currentSessionState.isSuspended)
        #expect(manager.eventHub.currentSessionState.qrMode == .display)
        await manager.closeQrEngagement()
        #expect(manager.activeEngagement.current?.id == nfc.id)
        #expect(manager.eventHub.currentSessionState == ui(.engagement, "Hold near reader", nfc: .foreground))
        await manager.closeAll()
        #expect(manager.activeEngagement.current == nil)
        #expect(manager.eventHub.currentSessionState == .idle)
        #expect(connector.listenerCount == 0)
    }

    @Test("each engagement has a fresh ephemeral key and a parseable QR and NFC handover")
    func engagementShapes() async throws {
        let manager = MdocEngagementManager(connector: InMemoryTransport.Exchange())
        let a = try await manager.createEngagement(.qr, config: testConfig)
        let b = try await manager.createEngagement(.qr, config: testConfig)
        let n = try await manager.createEngagement(.nfc, config: testConfig)
        #expect(a.deviceEngagement.security.eDeviceKeyEncoded != b.deviceEngagement.security.eDeviceKeyEncoded)
        #expect(try DeviceEngagement(uri: try #require(a.qrCodeUri)).encodedBytes == a.deviceEngagement.encodedBytes)
        let (parsed, carriers) = try NDEFMessage.parseHandoverSelect(try #require(n.nfcHandoverSelect))
        #expect(parsed.encodedBytes == n.deviceEngagement.encodedBytes)
        #expect(carriers.contains { $0.type == NDEFMessage.tcpCarrierType })
        #expect(manager.activeEngagement.current?.id == b.id)     // the newest QR is active
        await #expect(throws: ProximityError.invalidEngagement("no reader engagement URI")) {
            try await manager.createEngagement(.toApp)
        }
        await #expect(throws: ProximityError.invalidEngagement("not an mdoc-reader: URI")) {
            try await manager.createEngagement(.toApp, config: EngagementConfig(readerEngagementUri: "https://x"))
        }
        #expect(throws: ProximityError.self) { try NDEFMessage.parseHandoverSelect([0xd1, 0x02, 0x05]) }
        await manager.closeAll()
    }
}
