import CBOR
import COSE
import Foundation
import Mdoc
import Testing
import WalletCrypto
@testable import MdocProximity

/// Holder ↔ reader in one process over the simulated BLE GATT link in both modes and
/// over the SDK's in-memory and TCP test carriers; each test asserts the exact
/// `SessionUiState` sequence of the spec's "State Transition Flow" for its flow.
@Suite("Proximity sessions end to end")
struct ProximitySessionTests {
    static let nfcWaiting = ui(.engagement, .holdNearReader, nfc: .foreground)

    @Test("QR display flow reaches SUCCESS and the reader holds the verified elements", arguments: Carrier.allCases)
    func qrSuccess(carrier: Carrier) async throws {
        let fixtures = try await SessionFixtures.make()
        let (holder, readerSide) = carrier.connectors()
        let manager = MdocEngagementManager(connector: holder)
        try await manager.createEngagement(.nfc, config: testConfig)
        let recorder = collect(manager.eventHub.sessionState) { $0.isTerminal }
        let consent = respond(on: manager, provider: fixtures.provider, choice: .accept)
        let qr = try await manager.createEngagement(.qr, config: testConfig)
        let uri = try #require(qr.qrCodeUri)
        let reader = try MdocReader(connector: readerSide, trustAnchors: [fixtures.iaca], messageTimeout: hangGuard)
        try await reader.engage(qrCodeUri: uri)
        let verified = try await reader.request([SessionFixtures.request()])
        let states = await recorder.value
        await consent.value
        let document = try #require(verified.documents.first)
        #expect(document.docType == SessionFixtures.mDL)
        #expect(document.value(nameSpace: SessionFixtures.nameSpace, identifier: "family_name") == "Doe")
        #expect(document.value(nameSpace: SessionFixtures.nameSpace, identifier: "age_over_18") == true)
        #expect(document.value(nameSpace: SessionFixtures.nameSpace, identifier: "given_name") == nil)
        let request = states.first { $0.userInteractionRequired }?.deviceRequest
        #expect(request.flatMap { try? DeviceRequest(encoded: $0) }?.docRequests.first?.itemsRequest.nameSpaces.first?.elements
            .map(\.identifier) == ["family_name", "age_over_18"])
        #expect(states.filter { $0.qrMode == .display }.allSatisfy { $0.qrCodePayload == uri })
        #expect(states.dropFirst().allSatisfy { $0.engagementId == qr.id })
        #expect(states.anonymized == [
            Self.nfcWaiting,
            ui(.engagement, .preparingQr, nfc: .background, qr: .display),
            ui(.engagement, .scanQr, nfc: .background, qr: .display),
            ui(.transfer, .connecting, nfc: .background, qr: .none),
            ui(.transfer, .connected, nfc: .background),
            ui(.transfer, .reviewRequest, nfc: .background, interaction: true, request: request),
            ui(.transfer, .sharing, nfc: .background),
            ui(.transfer, .transferring, nfc: .background, progress: 0.7),
            ui(.terminal, .completed, nfc: .background, qr: .none, outcome: .success, reason: .transferCompleted),
        ])
        #expect(manager.eventHub.recentTransferEvents(count: 100).first { $0.engagementId == qr.id }?.kind
                == .transmissionTypeSelected(carrier.transmissionType))
        await manager.closeAll()
    }

    @Test("declining consent ends in DECLINED and the reader sees the session end", arguments: Carrier.allCases)
    func declined(carrier: Carrier) async throws {
        let fixtures = try await SessionFixtures.make()
        let (holder, readerSide) = carrier.connectors()
        let manager = MdocEngagementManager(connector: holder)
        let consent = respond(on: manager, provider: fixtures.provider, choice: .decline)
        let qr = try await manager.createEngagement(.qr, config: testConfig)
        let recorder = collect(manager.eventHub.sessionState) { $0.isTerminal }
        let reader = try MdocReader(connector: readerSide, trustAnchors: [fixtures.iaca], messageTimeout: hangGuard)
        try await reader.engage(qrCodeUri: try #require(qr.qrCodeUri))
        await #expect(throws: ProximityError.sessionTerminated) { try await reader.request([SessionFixtures.request()]) }
        let states = await recorder.value.anonymized
        await consent.value
        let request = states.first { $0.userInteractionRequired }?.deviceRequest
        #expect(request != nil)
        #expect(states == [
            ui(.engagement, .scanQr, qr: .display),
            ui(.transfer, .connecting),
            ui(.transfer, .connected),
            ui(.transfer, .reviewRequest, interaction: true, request: request),
            ui(.terminal, .declined, outcome: .declined, reason: .userDeclined),
        ])
        await manager.closeAll()
    }

    @Test("the reader ending the session before the response gives CANCELED", arguments: Carrier.allCases)
    func readerAborts(carrier: Carrier) async throws {
        let fixtures = try await SessionFixtures.make()
        let (holder, readerSide) = carrier.connectors()
        let manager = MdocEngagementManager(connector: holder)
        let qr = try await manager.createEngagement(.qr, config: testConfig)
        let recorder = collect(manager.eventHub.sessionState) { $0.isTerminal }
        let waiting = collect(manager.eventHub.transferEvents) { $0.state == .awaitingConsent }
        let reader = try MdocReader(connector: readerSide, trustAnchors: [fixtures.iaca], messageTimeout: hangGuard)
        try await reader.engage(qrCodeUri: try #require(qr.qrCodeUri))
        let pending = Task { try await reader.request([SessionFixtures.request()]) }
        _ = await waiting.value
        await reader.end()
        let states = await recorder.value.anonymized
        #expect(await (try? pending.value) == nil)
        let request = states.first { $0.userInteractionRequired }?.deviceRequest
        #expect(states == [
            ui(.engagement, .scanQr, qr: .display),
            ui(.transfer, .connecting),
            ui(.transfer, .connected),
            ui(.transfer, .reviewRequest, interaction: true, request: request),
            ui(.terminal, .canceled, outcome: .canceled, reason: .readerEnded),
        ])
        await manager.closeAll()
    }

    @Test("a corrupted SessionEstablishment gives ERROR and status 10 to the reader", arguments: Carrier.allCases)
    func corrupted(carrier: Carrier) async throws {
        let (holder, readerSide) = carrier.connectors()
        let manager = MdocEngagementManager(connector: holder)
        let qr = try await manager.createEngagement(.qr, config: testConfig)
        let recorder = collect(manager.eventHub.sessionState) { $0.isTerminal }
        let engagement = try DeviceEngagement(uri: try #require(qr.qrCodeUri))
        let endpoint = TransportEndpoint(retrievalMethod: try #require(engagement.deviceRetrievalMethods.first))
        let transport = try await readerSide.connect(to: endpoint, context: ConnectionContext(eDeviceKeyBytes: engagement.security.eDeviceKeyBytes),
                                                     timeout: hangGuard)
        let readerKey = try ECPrivateKey.generate(curve: .p256)
        // Ciphertext that cannot authenticate under SKReader.
        try await transport.send(SessionEstablishment(eReaderKey: readerKey.publicKey, data: [UInt8](repeating: 0x42, count: 48)).encodedBytes)
        let reply = try SessionData(encoded: try await transport.receive(timeout: hangGuard))
        #expect(reply.status == .sessionEncryptionError)
        #expect(reply.data == nil)
        let states = await recorder.value.anonymized
        #expect(states == [
            ui(.engagement, .scanQr, qr: .display),
            ui(.transfer, .connecting),
            ui(.transfer, .connected),
            ui(.terminal, .failed, outcome: .error, reason: .failed(.sessionEncryptionFailed(.decryptionFailed(counter: 1)))),
        ])
        await transport.close()
        await manager.closeAll()
    }

    @Test("a SessionEstablishment that is not CBOR is answered with status 11")
    func notCBOR() async throws {
        let exchange = InMemoryTransport.Exchange()
        let manager = MdocEngagementManager(connector: exchange)
        let qr = try await manager.createEngagement(.qr, config: testConfig)
        let ended = collect(manager.eventHub.sessionState) { $0.isTerminal }
        let endpoint = TransportEndpoint(retrievalMethod: try #require(qr.deviceEngagement.deviceRetrievalMethods.first))
        let transport = try await exchange.connect(to: endpoint, timeout: hangGuard)
        try await transport.send([0xff, 0x00])
        let reply = try SessionData(encoded: try await transport.receive(timeout: hangGuard))
        #expect(reply.status == .cborDecodingError)
        let last = try #require(await ended.value.last)
        #expect(last.terminalOutcome == .error)
        guard case .failed(.invalidMessage(.sessionEstablishment)) = last.terminalReason else {
            Issue.record("unexpected reason \(String(describing: last.terminalReason))")
            return
        }
        await manager.closeAll()
    }

    @Test("reverse (to-app) flow: the holder connects to a scanned ReaderEngagement", arguments: Carrier.allCases)
    func reverse(carrier: Carrier) async throws {
        let fixtures = try await SessionFixtures.make()
        let (holder, readerSide) = carrier.connectors()
        let manager = MdocEngagementManager(connector: holder)
        try await manager.createEngagement(.nfc, config: testConfig)
        let reader = try MdocReader(connector: readerSide, trustAnchors: [fixtures.iaca], messageTimeout: hangGuard)
        let uri = try await reader.offerReverseEngagement()
        #expect(uri.hasPrefix("mdoc:"))
        #expect(try ReaderEngagement(uri: uri).encodedBytes == (try ReaderEngagement(uri: "mdoc://" + uri.dropFirst(5))).encodedBytes)
        let recorder = collect(manager.eventHub.sessionState) { $0.isTerminal }
        let consent = respond(on: manager, provider: fixtures.provider, choice: .accept)
        let toApp = try await manager.createEngagement(.toApp, config: testConfig.with(readerEngagementUri: uri))
        try await reader.awaitHolder(timeout: hangGuard)
        let verified = try await reader.request([SessionFixtures.request(["document_number"])])
        let states = await recorder.value.anonymized
        await consent.value
        #expect(verified.documents.first?.value(nameSpace: SessionFixtures.nameSpace, identifier: "document_number") == "123456789")
        // Both sides bound the session to the ReaderEngagement bytes as scanned.
        let holderTranscript = try #require(await toApp.transferManager?.sessionTranscript)
        #expect(holderTranscript.handover == .reverseEngagement(readerEngagementEncoded: try ReaderEngagement(uri: uri).encodedBytes))
        #expect(await reader.sessionTranscript == holderTranscript)
        let request = states.first { $0.userInteractionRequired }?.deviceRequest
        #expect(states == [
            Self.nfcWaiting,
            ui(.engagement, .preparingToApp, nfc: .background, qr: .none),
            ui(.transfer, .connecting, nfc: .background, qr: .none),
            ui(.transfer, .connected, nfc: .background),
            ui(.transfer, .reviewRequest, nfc: .background, interaction: true, request: request),
            ui(.transfer, .sharing, nfc: .background),
            ui(.transfer, .transferring, nfc: .background, progress: 0.7),
            ui(.terminal, .completed, nfc: .background, outcome: .success, reason: .transferCompleted),
        ])
        #expect(states.allSatisfy { $0.qrMode == .none })
        await manager.closeAll()
    }

    @Test("NFC foreground flow: tap, static handover, consent declined", arguments: Carrier.allCases)
    func nfcForeground(carrier: Carrier) async throws {
        let fixtures = try await SessionFixtures.make()
        let (holder, readerSide) = carrier.connectors()
        let manager = MdocEngagementManager(connector: holder)
        let recorder = collect(manager.eventHub.sessionState) { $0.isTerminal }
        let consent = respond(on: manager, provider: fixtures.provider, choice: .decline)
        let nfc = try await manager.createEngagement(.nfc, config: testConfig)
        let reader = try MdocReader(connector: readerSide, trustAnchors: [fixtures.iaca], messageTimeout: hangGuard)
        // The reader taps: it reads the Handover Select through the NFC entry point.
        try await reader.engage(nfc: manager.nfc)
        await #expect(throws: ProximityError.sessionTerminated) { try await reader.request([SessionFixtures.request()]) }
        let states = await recorder.value.anonymized
        await consent.value
        let transcript = try #require(await nfc.transferManager?.sessionTranscript)
        #expect(transcript.handover == .nfc(handoverSelect: try #require(nfc.nfcHandoverSelect), handoverRequest: nil))
        let request = states.first { $0.userInteractionRequired }?.deviceRequest
        #expect(states == [
            .idle,
            ui(.engagement, .preparingNfc, nfc: .foreground),
            ui(.engagement, .holdNearReader, nfc: .foreground),
            ui(.transfer, .connecting, nfc: .foreground),
            ui(.transfer, .connected, nfc: .foreground),
            ui(.transfer, .reviewRequest, nfc: .foreground, interaction: true, request: request),
            ui(.terminal, .declined, nfc: .foreground, outcome: .declined, reason: .userDeclined),
        ])
        await manager.closeAll()
    }

    @Test("NFC background flow: NFC takes over from a shown QR code", arguments: Carrier.allCases)
    func nfcBackground(carrier: Carrier) async throws {
        let fixtures = try await SessionFixtures.make()
        let (holder, readerSide) = carrier.connectors()
        let manager = MdocEngagementManager(connector: holder)
        let nfc = try await manager.createEngagement(.nfc, config: testConfig)
        let qr = try await manager.createEngagement(.qr, config: testConfig)
        #expect(await manager.engagements.count == 2)
        #expect(manager.activeEngagement.current?.id == qr.id)
        let recorder = collect(manager.eventHub.sessionState) { $0.isTerminal }
        // The QR engagement resumes after the NFC session's terminal state is published.
        let qrResumed = collect(manager.eventHub.engagementEvents) { $0.engagementId == qr.id && $0.kind == .resumed }
        let consent = respond(on: manager, provider: fixtures.provider, choice: .accept)
        let reader = try MdocReader(connector: readerSide, trustAnchors: [fixtures.iaca], messageTimeout: hangGuard)
        try await reader.engage(nfc: manager.nfc)
        let verified = try await reader.request([SessionFixtures.request()])
        let states = await recorder.value.anonymized
        await consent.value
        #expect(verified.documents.count == 1)
        #expect(manager.activeEngagement.current?.id == nfc.id)
        #expect(await qrResumed.value.last?.kind == .resumed)
        #expect(qr.isSuspended == false)       // resumed once the NFC session ended
        let request = states.first { $0.userInteractionRequired }?.deviceRequest
        #expect(states == [
            ui(.engagement, .scanQr, nfc: .background, qr: .display),
            ui(.transfer, .connecting, nfc: .foreground, qr: .none),
            ui(.transfer, .connected, nfc: .foreground),
            ui(.transfer, .reviewRequest, nfc: .foreground, interaction: true, request: request),
            ui(.transfer, .sharing, nfc: .foreground),
            ui(.transfer, .transferring, nfc: .foreground, progress: 0.7),
            ui(.terminal, .completed, nfc: .foreground, outcome: .success, reason: .transferCompleted),
        ])
        await manager.closeAll()
    }

    @Test("NFC data transfer: engagement and the whole session over the APDU entry point")
    func nfcDataTransfer() async throws {
        let fixtures = try await SessionFixtures.make()
        let manager = MdocEngagementManager(connector: InMemoryTransport.Exchange(),
                                            nfcSettings: NFCEngagementSettings(offersConnector: false, offersNFCDataTransfer: true))
        let recorder = collect(manager.eventHub.sessionState) { $0.isTerminal }
        let consent = respond(on: manager, provider: fixtures.provider, choice: .accept)
        let nfc = try await manager.createEngagement(.nfc, config: testConfig)
        let select = try ConnectionHandover.parseHandoverSelect(try #require(nfc.nfcHandoverSelect))
        #expect(select.carriers.map(\.carrier) == [.nfc(maxCommandDataLength: 255, maxResponseDataLength: 256)])
        // A portrait large enough that the response needs GET RESPONSE chaining.
        let reader = try MdocReader(connector: NFCReaderConnector(channel: manager.nfc), trustAnchors: [fixtures.iaca],
                                    messageTimeout: hangGuard)
        try await reader.engage(nfc: manager.nfc)
        let verified = try await reader.request([SessionFixtures.request()])
        let states = await recorder.value.anonymized
        await consent.value
        #expect(verified.documents.first?.value(nameSpace: SessionFixtures.nameSpace, identifier: "family_name") == "Doe")
        #expect(await nfc.transferManager?.transmissionType == .nfc)
        let request = states.first { $0.userInteractionRequired }?.deviceRequest
        #expect(states == [
            .idle,
            ui(.engagement, .preparingNfc, nfc: .foreground),
            ui(.engagement, .holdNearReader, nfc: .foreground),
            ui(.transfer, .connecting, nfc: .foreground),
            ui(.transfer, .connected, nfc: .foreground),
            ui(.transfer, .reviewRequest, nfc: .foreground, interaction: true, request: request),
            ui(.transfer, .sharing, nfc: .foreground),
            ui(.transfer, .transferring, nfc: .foreground, progress: 0.7),
            ui(.terminal, .completed, nfc: .foreground, outcome: .success, reason: .transferCompleted),
        ])
        await manager.closeAll()
    }

    @Test("NFC data transfer: the re-arm after the session ends leaves the rest of the chained response to GET RESPONSE")
    func nfcDataTransferRearmMidChain() async throws {
        let fixtures = try await SessionFixtures.make()
        let manager = MdocEngagementManager(connector: InMemoryTransport.Exchange(),
                                            nfcSettings: NFCEngagementSettings(offersConnector: false, offersNFCDataTransfer: true))
        let consent = respond(on: manager, provider: fixtures.provider, choice: .accept)
        let nfc = try await manager.createEngagement(.nfc, config: testConfig)
        let id = nfc.id
        let rearmed = collect(manager.eventHub.engagementEvents) { $0.kind == .nfcEngagement && $0.engagementId != id }
        // Every GET RESPONSE waits until the session has ended and the tag was armed for
        // the next engagement: the order a slow reader meets (the tag had dropped the
        // selection and answered 6985).
        let channel = HeldGetResponse(tag: manager.nfc) { _ = await rearmed.value }
        let reader = try MdocReader(connector: NFCReaderConnector(channel: channel), trustAnchors: [fixtures.iaca],
                                    messageTimeout: hangGuard)
        try await reader.engage(nfc: manager.nfc)
        let verified = try await reader.request([SessionFixtures.request()])
        await consent.value
        #expect(verified.documents.first?.value(nameSpace: SessionFixtures.nameSpace, identifier: "family_name") == "Doe")
        #expect(channel.heldCount > 1)
        // The ended session's link refuses a further message; a tap engages the new engagement.
        let envelope = try CommandAPDU(ins: NFCDataTransfer.envelope, data: NFCDataTransfer.wrap([0xA0]), le: 256).encoded()
        #expect(try ResponseAPDU(encoded: await manager.nfc.process(envelope)).statusWord == ResponseAPDU.conditionsNotSatisfied)
        let next = try #require(await rearmed.value.last).engagementId
        let armed = try #require(await manager.engagements.first { $0.id == next })
        let outcome = try await NFCReaderEngagement.engage(over: manager.nfc, request: nil)
        #expect(outcome.select.encodedBytes == armed.nfcHandoverSelect)
        await manager.closeAll()
    }

    @Test("negotiated handover: the reader's request picks BLE central client mode, and the session runs over it")
    func negotiatedHandover() async throws {
        let fixtures = try await SessionFixtures.make()
        let air = SimulatedBLEAir()
        let manager = MdocEngagementManager(
            connector: BLEConnector(party: .mdoc, modes: [.centralClient], peripheralAddress: [1, 2, 3, 4, 5, 6]) { air.makeRadio() },
            nfcSettings: NFCEngagementSettings(handover: .negotiated))
        let consent = respond(on: manager, provider: fixtures.provider, choice: .accept)
        let nfc = try await manager.createEngagement(.nfc, config: testConfig)
        #expect(nfc.nfcHandoverSelect == nil)
        let readerUUID = UUID()
        let request = try ConnectionHandover.handoverRequest(
            carriers: [.ble(BLEOutOfBandData(role: .peripheralPreferred, serviceUUID: readerUUID)),
                       .nfc(maxCommandDataLength: nil, maxResponseDataLength: nil)],
            randomNumber: 0x1234)
        let reader = try MdocReader(connector: BLEConnector(party: .reader, modes: [.centralClient]) { air.makeRadio() },
                                    trustAnchors: [fixtures.iaca], messageTimeout: hangGuard)
        try await reader.engage(nfc: manager.nfc, handoverRequest: request)
        let verified = try await reader.request([SessionFixtures.request()])
        await consent.value
        #expect(verified.documents.count == 1)
        let select = try ConnectionHandover.parseHandoverSelect(try #require(nfc.nfcHandoverSelect))
        #expect(select.carriers.map(\.carrier) == [.ble(BLEOutOfBandData(deviceAddress: [1, 2, 3, 4, 5, 6, 1], role: .centralOnly))])
        let transcript = try #require(await nfc.transferManager?.sessionTranscript)
        #expect(transcript.handover == .nfc(handoverSelect: select.encodedBytes, handoverRequest: request))
        #expect(await reader.sessionTranscript == transcript)
        await manager.closeAll()
    }

    @Test("a suspended engagement refuses readers; resume and closeQrEngagement update the UI state")
    func suspension() async throws {
        let exchange = InMemoryTransport.Exchange()
        let manager = MdocEngagementManager(connector: exchange)
        let nfc = try await manager.createEngagement(.nfc, config: testConfig)
        let qr = try await manager.createEngagement(.qr, config: testConfig)
        await manager.suspend()
        #expect(manager.eventHub.currentSessionState.isSuspended)
        #expect(qr.isSuspended)
        let reader = try MdocReader(connector: exchange, trustAnchors: [], messageTimeout: hangGuard)
        try await reader.engage(qrCodeUri: try #require(qr.qrCodeUri))
        await #expect(throws: ProximityError.connectionClosed) { try await reader.request([SessionFixtures.request()]) }
        await manager.resume()
        #expect(!manager.eventHub.currentSessionState.isSuspended)
        #expect(manager.eventHub.currentSessionState.qrMode == .display)
        await manager.closeQrEngagement()
        #expect(manager.activeEngagement.current?.id == nfc.id)
        #expect(manager.eventHub.currentSessionState.anonymized == ui(.engagement, .holdNearReader, nfc: .foreground))
        await manager.closeAll()
        #expect(manager.activeEngagement.current == nil)
        #expect(manager.eventHub.currentSessionState == .idle)
        #expect(exchange.listenerCount == 0)
        #expect(await manager.nfc.isArmed == false)
    }

    @Test("each engagement has a fresh ephemeral key, a parseable QR code and NFC handover, and typed errors")
    func engagementShapes() async throws {
        let manager = MdocEngagementManager(connector: InMemoryTransport.Exchange())
        let a = try await manager.createEngagement(.qr, config: testConfig)
        let b = try await manager.createEngagement(.qr, config: testConfig)
        let n = try await manager.createEngagement(.nfc, config: testConfig)
        #expect(a.deviceEngagement.security.eDeviceKeyEncoded != b.deviceEngagement.security.eDeviceKeyEncoded)
        #expect(try DeviceEngagement(uri: try #require(a.qrCodeUri)).encodedBytes == a.deviceEngagement.encodedBytes)
        let select = try ConnectionHandover.parseHandoverSelect(try #require(n.nfcHandoverSelect))
        #expect(select.deviceEngagement.encodedBytes == n.deviceEngagement.encodedBytes)
        #expect(n.deviceEngagement.deviceRetrievalMethods.isEmpty)   // static handover: carriers are in the Hs
        #expect(select.carriers.count == 1)
        #expect(manager.activeEngagement.current?.id == b.id)     // the newest QR is active
        await #expect(throws: ProximityError.invalidEngagement(.missingReaderEngagementURI)) {
            try await manager.createEngagement(.toApp)
        }
        await #expect(throws: ProximityError.invalidEngagement(.invalidURI)) {
            try await manager.createEngagement(.toApp, config: EngagementConfig(readerEngagementUri: "https://x"))
        }
        let bleOnly = ReaderEngagement(security: a.deviceEngagement.security,
                                       connectionMethods: [.ble(.init(peripheralServerMode: true, centralClientMode: false))]).uri
        await #expect(throws: ProximityError.invalidEngagement(.noUsableConnectionMethod)) {
            try await manager.createEngagement(.toApp, config: EngagementConfig(readerEngagementUri: bleOnly))
        }
        #expect(throws: ProximityError.self) { try ConnectionHandover.parseHandoverSelect([0xd1, 0x02, 0x05]) }
        await manager.closeAll()
    }
}

/// A reader's channel to a tag that holds each GET RESPONSE until `release` returns.
private final class HeldGetResponse: APDUChannel, @unchecked Sendable {
    private let tag: NFCHostCardEmulation
    private let release: @Sendable () async -> Void
    private let lock = NSLock()
    private var held = 0

    init(tag: NFCHostCardEmulation, release: @escaping @Sendable () async -> Void) {
        self.tag = tag
        self.release = release
    }

    /// How many GET RESPONSE commands were held.
    var heldCount: Int { lock.withLock { held } }

    func transceive(_ command: [UInt8]) async throws(ProximityError) -> [UInt8] {
        if command.count > 1, command[1] == NFCDataTransfer.getResponse {
            lock.withLock { held += 1 }
            await release()
        }
        return await tag.process(command)
    }
}
