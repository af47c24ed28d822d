import Foundation
import Mdoc
import Testing
@testable import MdocProximity

/// The spec's "State Transition Flow" diagrams, replayed from synthetic raw events
/// through the hub; each test asserts the exact sequence of `SessionUiState` values.
@Suite("SessionUiProjector flows from synthetic events")
struct SessionUiProjectorTests {
    static let request: [UInt8] = [0xa1, 0x61, 0x61, 0x01]

    @Test("QR display flow with NFC in the background runs ENGAGEMENT → TRANSFER → TERMINAL(SUCCESS)")
    func qrDisplayFlow() async {
        let hub = MdocEventHub()
        let nfc = EngagementID(), qr = EngagementID()
        hub.updateContext(EngagementContext(engagements: [nfc: .init(type: .nfc)], activeId: nfc))
        let recorder = collect(hub.sessionState) { $0.isTerminal }
        hub.updateContext(EngagementContext(engagements: [nfc: .init(type: .nfc), qr: .init(type: .qr)], activeId: qr))
        hub.engagement(qr, .qrShow(qrCodeData: "mdoc:xyz"))
        hub.engagement(qr, .connecting(.tcp))
        hub.transfer(qr, .transmissionTypeSelected(.tcp))      // same UI state: not repeated
        hub.transfer(qr, .connected)
        hub.transfer(qr, .documentsSelectionProcessStart(data: Self.request))
        hub.transfer(qr, .documentsSelectionProcessAccepted)
        hub.transfer(qr, .sessionDataSend(byteCount: 100))
        hub.transfer(qr, .sessionTerminationSend)
        let states = await recorder.value
        #expect(states.first { $0.qrMode == .display && $0.substate == .scanQr }?.qrCodePayload == "mdoc:xyz")
        #expect(states.allSatisfy { $0.qrMode == .display || $0.qrCodePayload == nil })
        #expect(states.dropFirst().allSatisfy { $0.engagementId == qr })
        #expect(states.anonymized == [
            ui(.engagement, .preparingNfc, nfc: .foreground),
            ui(.engagement, .preparingQr, nfc: .background, qr: .display),
            ui(.engagement, .scanQr, nfc: .background, qr: .display),
            ui(.transfer, .connecting, nfc: .background, qr: .none),
            ui(.transfer, .connected, nfc: .background),
            ui(.transfer, .reviewRequest, nfc: .background, interaction: true, request: Self.request),
            ui(.transfer, .sharing, nfc: .background),
            ui(.transfer, .transferring, nfc: .background, progress: 0.7),
            ui(.terminal, .completed, nfc: .background, qr: .none, outcome: .success,
               reason: .transferCompleted),
        ])
    }

    @Test("reverse (to-app) flow keeps qrMode NONE and goes straight to Connecting")
    func reverseFlow() async {
        let hub = MdocEventHub()
        let nfc = EngagementID(), toApp = EngagementID()
        hub.updateContext(EngagementContext(engagements: [nfc: .init(type: .nfc)], activeId: nfc))
        let recorder = collect(hub.sessionState) { $0.isTerminal }
        hub.updateContext(EngagementContext(engagements: [nfc: .init(type: .nfc), toApp: .init(type: .toApp)],
                                            activeId: toApp))
        hub.engagement(toApp, .connecting(.tcp))
        hub.transfer(toApp, .connected)
        hub.transfer(toApp, .documentsSelectionProcessStart(data: Self.request))
        hub.transfer(toApp, .documentsSelectionProcessAccepted)
        hub.transfer(toApp, .sessionDataSend(byteCount: 10))
        hub.transfer(toApp, .sessionTerminationSend)
        let states = await recorder.value.anonymized
        #expect(states.dropFirst().first == ui(.engagement, .preparingToApp, nfc: .background))
        #expect(states.dropFirst(2).first == ui(.transfer, .connecting, nfc: .background))
        #expect(states.dropFirst(3).first == ui(.transfer, .connected, nfc: .background))
        #expect(states.allSatisfy { $0.qrMode == .none })
        #expect(states.last?.terminalOutcome == .success)
        #expect(states.count == 8)
    }

    @Test("NFC foreground flow ends in DECLINED when the user declines")
    func nfcForegroundDeclined() async {
        let hub = MdocEventHub()
        let nfc = EngagementID()
        let recorder = collect(hub.sessionState) { $0.isTerminal }
        hub.updateContext(EngagementContext(engagements: [nfc: .init(type: .nfc)], activeId: nfc))
        hub.engagement(nfc, .nfcEngagement)
        hub.engagement(nfc, .connected(.nfc))
        hub.transfer(nfc, .transmissionTypeSelected(.tcp))
        hub.transfer(nfc, .connected)
        hub.transfer(nfc, .documentsSelectionProcessStart(data: Self.request))
        hub.transfer(nfc, .documentsSelectionProcessDeclined)
        let states = await recorder.value.anonymized
        #expect(states == [
            .idle,
            ui(.engagement, .preparingNfc, nfc: .foreground),
            ui(.engagement, .holdNearReader, nfc: .foreground),
            ui(.transfer, .connecting, nfc: .foreground),
            ui(.transfer, .connected, nfc: .foreground),
            ui(.transfer, .reviewRequest, nfc: .foreground, interaction: true, request: Self.request),
            ui(.terminal, .declined, nfc: .foreground, outcome: .declined, reason: .userDeclined),
        ])
    }

    @Test("NFC background flow: NFC takes over from a shown QR in one step")
    func nfcBackgroundTakeover() async {
        let hub = MdocEventHub()
        let nfc = EngagementID(), qr = EngagementID()
        hub.updateContext(EngagementContext(engagements: [nfc: .init(type: .nfc), qr: .init(type: .qr)], activeId: qr))
        hub.engagement(qr, .qrShow(qrCodeData: "mdoc:abc"))
        let recorder = collect(hub.sessionState) { $0.isTerminal }
        // The manager switches the active engagement together with the NFC event.
        hub.publish(.engagement(MdocEngagementEvent(engagementId: nfc, time: eventTime, kind: .connected(.nfc))),
                    context: EngagementContext(engagements: [nfc: .init(type: .nfc), qr: .init(type: .qr, isSuspended: true)],
                                               activeId: nfc))
        hub.transfer(nfc, .connected)
        hub.engagement(nfc, .error(.timeout(seconds: 2)))
        let states = await recorder.value.anonymized
        #expect(states == [
            ui(.engagement, .scanQr, nfc: .background, qr: .display),
            ui(.transfer, .connecting, nfc: .foreground, qr: .none),
            ui(.transfer, .connected, nfc: .foreground),
            ui(.terminal, .failed, nfc: .foreground, outcome: .error, reason: .failed(.timeout(seconds: 2))),
        ])
    }

    @Test("the reader ending the session before a response gives CANCELED, after one SUCCESS")
    func readerTermination() async {
        var projector = SessionUiProjector()
        let a = EngagementID(), b = EngagementID()
        projector.update(context: EngagementContext(engagements: [a: .init(type: .qr), b: .init(type: .qr)], activeId: a))
        projector.apply(.transfer(MdocRetrievalEvent(engagementId: a, time: eventTime, kind: .connected)))
        projector.apply(.transfer(MdocRetrievalEvent(engagementId: a, time: eventTime, kind: .sessionTerminationReceived(afterResponse: false))))
        #expect(projector.state.terminalOutcome == .canceled)
        #expect(projector.state.phase == .terminal)
        projector.update(context: EngagementContext(engagements: [a: .init(type: .qr), b: .init(type: .qr)], activeId: b))
        projector.apply(.transfer(MdocRetrievalEvent(engagementId: b, time: eventTime, kind: .sessionDataSend(byteCount: 1))))
        projector.apply(.transfer(MdocRetrievalEvent(engagementId: b, time: eventTime, kind: .sessionTerminationReceived(afterResponse: true))))
        #expect(projector.state.terminalOutcome == .success)
    }

    @Test("terminal is final: later events of the same engagement change nothing")
    func terminalIsFinal() {
        var projector = SessionUiProjector()
        let a = EngagementID()
        projector.update(context: EngagementContext(engagements: [a: .init(type: .qr)], activeId: a))
        projector.apply(.transfer(MdocRetrievalEvent(engagementId: a, time: eventTime, kind: .error(.timeout(seconds: 1)))))
        let terminal = projector.state
        projector.apply(.transfer(MdocRetrievalEvent(engagementId: a, time: eventTime, kind: .connected)))
        projector.apply(.engagement(MdocEngagementEvent(engagementId: a, time: eventTime, kind: .qrShow(qrCodeData: "x"))))
        #expect(projector.state == terminal)
        #expect(terminal.terminalOutcome == .error)
        #expect(terminal.terminalReason == .failed(.timeout(seconds: 1)))
        #expect(terminal.terminalMessage == "The reader did not respond in time.")
        #expect(terminal.substateLabel == "Failed")
    }

    @Test("progress is 0.3 on data received and 0.7 on data sent; nil while connecting")
    func progressHints() {
        var projector = SessionUiProjector()
        let a = EngagementID()
        projector.update(context: EngagementContext(engagements: [a: .init(type: .toApp)], activeId: a))
        projector.apply(.transfer(MdocRetrievalEvent(engagementId: a, time: eventTime, kind: .transmissionTypeSelected(.ble))))
        #expect(projector.state.progressHint == nil)
        projector.apply(.transfer(MdocRetrievalEvent(engagementId: a, time: eventTime, kind: .sessionDataReceived(byteCount: 5))))
        #expect(projector.state.progressHint == 0.3)
        projector.apply(.transfer(MdocRetrievalEvent(engagementId: a, time: eventTime, kind: .sessionDataSend(byteCount: 5))))
        #expect(projector.state.progressHint == 0.7)
    }

    @Test("isSuspended mirrors the active engagement; nfcMode follows existence and focus; SCAN is never set")
    func modesAndSuspension() {
        var projector = SessionUiProjector()
        #expect(projector.state == .idle)
        let nfc = EngagementID(), qr = EngagementID()
        projector.update(context: EngagementContext(engagements: [qr: .init(type: .qr)], activeId: qr))
        #expect(projector.state.nfcMode == .disabled)
        #expect(projector.state.qrMode == .display)
        projector.update(context: EngagementContext(engagements: [qr: .init(type: .qr, isSuspended: true),
                                                                  nfc: .init(type: .nfc)], activeId: qr))
        #expect(projector.state.isSuspended)
        #expect(projector.state.nfcMode == .background)
        projector.update(context: EngagementContext(engagements: [qr: .init(type: .qr), nfc: .init(type: .nfc)], activeId: nfc))
        #expect(!projector.state.isSuspended)
        #expect(projector.state.nfcMode == .foreground)
        #expect(projector.state.qrMode == .none)
        projector.update(context: EngagementContext(engagements: [nfc: .init(type: .nfc)], activeId: nil))
        #expect(projector.state.nfcMode == .background)
        #expect(projector.state.phase == .engagement)
        for type in EngagementType.allCases {
            var p = SessionUiProjector()
            let id = EngagementID()
            p.update(context: EngagementContext(engagements: [id: .init(type: type)], activeId: id))
            #expect(p.state.qrMode != .scan)
        }
    }

    @Test("raw events map to the simplified events the spec names")
    func mapping() {
        let id = EngagementID()
        func map(_ kind: MdocEngagementEvent.Kind, _ type: EngagementType) -> SessionEvent? {
            SessionUiProjector.sessionEvent(for: .engagement(MdocEngagementEvent(engagementId: id, time: eventTime, kind: kind)), engagementType: type)
        }
        func map(_ kind: MdocRetrievalEvent.Kind) -> SessionEvent? {
            SessionUiProjector.sessionEvent(for: .transfer(MdocRetrievalEvent(engagementId: id, time: eventTime, kind: kind)), engagementType: .qr)
        }
        #expect(map(.qrShow(qrCodeData: "m"), .qr) == .qrShow(qrCodeData: "m"))
        #expect(map(.nfcEngagement, .nfc) == .nfcPromptShown)
        #expect(map(.connected(.nfc), .nfc) == .nfcHandoverSuccess)
        #expect(map(.connected(.tcp), .qr) == .transferConnected)
        #expect(map(.connecting(.ble), .qr) == .transferConnecting)
        #expect(map(.suspended, .qr) == nil)
        #expect(map(.transmissionTypeSelected(.ble)) == .transferConnecting)
        #expect(map(.connected) == .transferConnected)
        #expect(map(.documentsSelectionProcessStart(data: [1])) == .userInteractionRequired(deviceRequest: [1]))
        #expect(map(.documentsSelectionProcessAccepted) == .userAccepted)
        #expect(map(.documentsSelectionProcessDeclined) == .userDeclined)
        #expect(map(.sessionDataReceived(byteCount: 1)) == .transferProgress(fraction: 0.3))
        #expect(map(.sessionDataSend(byteCount: 1)) == .transferProgress(fraction: 0.7))
        #expect(map(.sessionTerminationSend) == .terminal(outcome: .success, reason: .transferCompleted))
        #expect(map(.sessionTerminationReceived(afterResponse: false)) == .terminal(outcome: .canceled, reason: .readerEnded))
        #expect(map(.cancelled) == .terminal(outcome: .canceled, reason: .canceledByApp))
        #expect(map(.error(.connectionClosed)) == .terminal(outcome: .error, reason: .failed(.connectionClosed)))
    }

    @Test("parseDeviceRequest gives the Mdoc module's DeviceRequest; nil for malformed bytes")
    func parseDeviceRequest() {
        // DeviceRequest {version: "1.0", docRequests: [{itemsRequest: 24(<<{docType, nameSpaces}>>)}]}
        let items: [UInt8] = [0xa2, 0x67] + Array("docType".utf8) + [0x63] + Array("mDL".utf8)
            + [0x6a] + Array("nameSpaces".utf8) + [0xa1, 0x62] + Array("ns".utf8)
            + [0xa2, 0x61, 0x61, 0xf5, 0x61, 0x62, 0xf4]
        let request: [UInt8] = [0xa2, 0x67] + Array("version".utf8) + [0x63] + Array("1.0".utf8)
            + [0x6b] + Array("docRequests".utf8) + [0x81, 0xa1, 0x6c] + Array("itemsRequest".utf8)
            + [0xd8, 0x18, 0x58, UInt8(items.count)] + items
        let state = ui(.transfer, .reviewRequest, interaction: true, request: request)
        let parsed = state.parseDeviceRequest()
        #expect(parsed == (try? DeviceRequest(encoded: request)))
        #expect(parsed?.version == "1.0")
        let itemsRequest = parsed?.docRequests.first?.itemsRequest
        #expect(itemsRequest?.docType == "mDL")
        #expect(itemsRequest?.nameSpaces.first?.elements.map(\.identifier) == ["a", "b"])
        #expect(itemsRequest?.nameSpaces.first?.elements.first?.intentToRetain == true)
        #expect(parsed?.docRequests.first?.readerAuth == nil)
        #expect(ui(.transfer, .idle, request: [0xa0]).parseDeviceRequest() == nil)
        #expect(ui(.transfer, .idle, request: Array(request.dropLast())).parseDeviceRequest() == nil)
        #expect(ui(.transfer, .idle).parseDeviceRequest() == nil)
    }

    @Test("labels and messages come from the strings table, English by default")
    func localizedStrings() {
        for label in SessionUiLabel.allCases {
            #expect(label.text == label.defaultText, "\(label)")
        }
        #expect(SessionUiLabel.scanQr.text == "Scan the QR with reader")
        #expect(TerminalReason.userDeclined.text == "User declined to share data")
        let error: any Error = ProximityError.transportFailed(.bluetooth(.identMismatch))
        #expect(error.localizedDescription == "Connected to a different reader than the one that scanned the code.")
        #expect(ProximityError.responseCreationFailed(.provider(.userCancelled)).errorDescription == "Sharing was cancelled.")
    }
}
