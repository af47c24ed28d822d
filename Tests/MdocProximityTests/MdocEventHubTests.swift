import Foundation
import Testing
@testable import MdocProximity

@Suite("MdocEventHub")
struct MdocEventHubTests {
    /// One session's worth of raw events for engagement `id`, ending in a final transfer event.
    static func script(_ id: EngagementID) -> [MdocEvent] {
        [
            .engagement(MdocEngagementEvent(engagementId: id, time: eventTime, kind: .qrShow(qrCodeData: "mdoc:q"))),
            .engagement(MdocEngagementEvent(engagementId: id, time: eventTime, kind: .connecting(.tcp))),
            .engagement(MdocEngagementEvent(engagementId: id, time: eventTime, kind: .connected(.tcp))),
            .transfer(MdocRetrievalEvent(engagementId: id, time: eventTime, kind: .transmissionTypeSelected(.tcp))),
            .transfer(MdocRetrievalEvent(engagementId: id, time: eventTime, kind: .connected)),
            .transfer(MdocRetrievalEvent(engagementId: id, time: eventTime, kind: .documentsSelectionProcessStart(data: [0xa0]))),
            .transfer(MdocRetrievalEvent(engagementId: id, time: eventTime, kind: .documentsSelectionProcessAccepted)),
            .transfer(MdocRetrievalEvent(engagementId: id, time: eventTime, kind: .sessionDataSend(byteCount: 9))),
            .transfer(MdocRetrievalEvent(engagementId: id, time: eventTime, kind: .sessionTerminationSend)),
            .engagement(MdocEngagementEvent(engagementId: id, time: eventTime, kind: .closed)),
        ]
    }

    static func isClosed(_ event: MdocEvent) -> Bool {
        if case .engagement(let e) = event, case .closed = e.kind { return true }
        return false
    }

    @Test("allEvents delivers every event in order to each of several subscribers")
    func allEventsManySubscribers() async {
        let hub = MdocEventHub()
        let id = EngagementID()
        let recorders = (0..<5).map { _ in collect(hub.allEvents) { Self.isClosed($0) } }
        let script = Self.script(id)
        for event in script { hub.publish(event, context: nil) }
        for recorder in recorders { #expect(await recorder.value == script) }
    }

    @Test("engagementEvents and transferEvents split the stream by kind")
    func splitStreams() async {
        let hub = MdocEventHub()
        let id = EngagementID()
        let engagement = collect(hub.engagementEvents) { if case .closed = $0.kind { return true } else { return false } }
        let transfer = collect(hub.transferEvents) { $0.stateOrder >= 200 }
        for event in Self.script(id) { hub.publish(event, context: nil) }
        #expect(await engagement.value.map(\.state) == [.qrShown, .connecting, .connected, .closed])
        #expect(await transfer.value.map(\.state) == [.transmissionTypeSelected, .connected, .awaitingConsent,
                                                      .accepted, .sessionDataSent, .completed])
    }

    @Test("finalStateEvents, activeTransferEvents, eventsInStateRange and onTransferCompletion filter by state order")
    func filters() async {
        let hub = MdocEventHub()
        let id = EngagementID()
        let finals = collect(hub.finalStateEvents()) { Self.isClosed($0) }
        let active = collect(hub.activeTransferEvents()) { $0.state == .sessionDataSent }
        let range = collect(hub.eventsInStateRange(minOrder: 100, maxOrder: 150)) { $0.stateOrder == 150 }
        let completion = collect(hub.onTransferCompletion) { _ in true }
        for event in Self.script(id) { hub.publish(event, context: nil) }
        #expect(await finals.value.map(\.stateOrder) == [200, 210])
        #expect(await active.value.map(\.stateOrder) == [100, 110, 130, 140, 150])
        #expect(await range.value.map(\.stateOrder) == [100, 110, 130, 140, 150])
        #expect(await completion.value.map(\.state) == [.completed])
        #expect(Self.script(id).allSatisfy { event in
            switch event {
            case .engagement(let e): return e.stateOrder < 100 || e.stateOrder >= 200
            case .transfer(let t): return t.stateOrder >= 100
            }
        })
    }

    @Test("sessionEvents carries the simplified events; sessionState replays the current state to a late subscriber")
    func projection() async {
        let hub = MdocEventHub()
        let id = EngagementID()
        hub.updateContext(EngagementContext(engagements: [id: .init(type: .qr)], activeId: id))
        let events = collect(hub.sessionEvents) { if case .terminal = $0 { return true } else { return false } }
        for event in Self.script(id) { hub.publish(event, context: nil) }
        #expect(await events.value == [.qrShow(qrCodeData: "mdoc:q"), .transferConnecting, .transferConnected, .transferConnecting,
                                       .transferConnected, .userInteractionRequired(deviceRequest: [0xa0]), .userAccepted,
                                       .transferProgress(fraction: 0.7),
                                       .terminal(outcome: .success, reason: .transferCompleted)])
        var late = hub.sessionState.makeAsyncIterator()
        let first = await late.next()
        #expect(first?.terminalOutcome == .success)
        #expect(hub.currentSessionState == first)
        #expect(hub.sessionState.current == first)
    }

    @Test("latest event, latest transfer event and current states are tracked per engagement")
    func perEngagement() async {
        let hub = MdocEventHub()
        let a = EngagementID(), b = EngagementID()
        hub.engagement(a, .qrShow(qrCodeData: "x"))
        hub.engagement(b, .nfcEngagement)
        hub.transfer(a, .connected)
        #expect(hub.latestEventByEngagement().current[a]?.state == .qrShown)
        #expect(hub.latestEventByEngagement().current[b]?.state == .nfcReady)
        #expect(hub.latestTransferEventByEngagement().current[a]?.state == .connected)
        #expect(hub.latestTransferEventByEngagement().current[b] == nil)
        #expect(hub.currentStateByEngagement().current == [a: .qrShown, b: .nfcReady])
        #expect(hub.currentTransferStateByEngagement().current == [a: .connected])
        // The observed values replay the present and then follow changes.
        let states = collect(hub.currentTransferStateByEngagement()) { $0[b] == .failed }
        hub.transfer(b, .error(.connectionClosed))
        #expect(await states.value == [[a: .connected], [a: .connected, b: .failed]])
    }

    @Test("recent-event buffers are bounded by a settable size and keep the newest events")
    func bufferLimits() {
        let hub = MdocEventHub()
        #expect(hub.eventBufferSize == MdocEventHub.defaultBufferSize)
        let id = EngagementID()
        for i in 0..<150 { hub.transfer(id, .sessionDataReceived(byteCount: i)) }
        for _ in 0..<3 { hub.engagement(id, .nfcEngagement) }
        #expect(hub.recentEvents(count: 1000).count == 100)
        #expect(hub.recentTransferEvents(count: 1000).count == 100)
        #expect(hub.recentTransferEvents(count: 1).first?.kind == .sessionDataReceived(byteCount: 149))
        #expect(hub.recentEngagementEvents(count: 10).count == 3)
        #expect(hub.recentEvents(count: 2).map(\.stateOrder) == [10, 10])
        hub.setEventBufferSize(50)
        #expect(hub.eventBufferSize == 50)
        #expect(hub.recentEvents(count: 1000).count == 50)
        #expect(hub.recentTransferEvents(count: 1000).first?.kind == .sessionDataReceived(byteCount: 100))
        #expect(hub.eventTimeline().count == 50)
        hub.setEventBufferSize(0)
        #expect(hub.eventBufferSize == 1)
        #expect(hub.recentEvents(count: 5).count == 1)
        hub.setEventBufferSize(Int.max)
        #expect(hub.eventBufferSize == MdocEventHub.maximumBufferSize)
        #expect(hub.recentEvents(count: -3).isEmpty)
    }

    @Test("the timeline numbers events in publication order, also with concurrent publishers")
    func timelineConcurrent() async {
        let hub = MdocEventHub()
        hub.setEventBufferSize(10_000)
        let ids = (0..<8).map { _ in EngagementID() }
        let all = collect(hub.allEvents) { _ in false }
        await withTaskGroup(of: Void.self) { group in
            for id in ids {
                group.addTask { for i in 0..<200 { hub.transfer(id, .sessionDataReceived(byteCount: i)) } }
            }
        }
        let timeline = hub.eventTimeline()
        #expect(timeline.count == 1600)
        #expect(zip(timeline, timeline.dropFirst()).allSatisfy { $0.sequenceNumber + 1 == $1.sequenceNumber })
        for id in ids {
            let counts = timeline.filter { $0.event.engagementId == id }.compactMap { entry -> Int? in
                if case .transfer(let t) = entry.event, case .sessionDataReceived(let n) = t.kind { return n }
                return nil
            }
            #expect(counts == Array(0..<200))
        }
        // Subscribers see the same order as the timeline.
        all.cancel()
        let seen = await all.value
        #expect(seen == Array(timeline.map(\.event).prefix(seen.count)))
    }

    @Test("clearStateForEngagement forgets one engagement; clearAllState forgets everything but keeps numbering")
    func clearing() {
        let hub = MdocEventHub()
        let a = EngagementID(), b = EngagementID()
        hub.updateContext(EngagementContext(engagements: [a: .init(type: .qr), b: .init(type: .nfc)], activeId: a))
        hub.engagement(a, .qrShow(qrCodeData: "x"))
        hub.engagement(a, .connecting(.tcp))
        hub.engagement(b, .nfcEngagement)
        hub.transfer(b, .connected)
        #expect(hub.currentSessionState.phase == .transfer)
        hub.clearStateForEngagement(a)
        #expect(hub.recentEvents(count: 10).allSatisfy { $0.engagementId == b })
        #expect(hub.recentEngagementEvents(count: 10).count == 1)
        #expect(hub.latestEventByEngagement().current[a] == nil)
        #expect(hub.latestEventByEngagement().current[b] != nil)
        #expect(hub.currentStateByEngagement().current.keys.sorted { $0.description < $1.description } == [b])
        #expect(hub.currentSessionState.anonymized == ui(.engagement, .preparingQr, nfc: .background, qr: .display))
        let last = hub.eventTimeline().last?.sequenceNumber
        hub.clearAllState()
        #expect(hub.eventTimeline().isEmpty)
        #expect(hub.recentTransferEvents(count: 10).isEmpty)
        #expect(hub.latestTransferEventByEngagement().current.isEmpty)
        #expect(hub.currentTransferStateByEngagement().current.isEmpty)
        hub.engagement(a, .qrShow(qrCodeData: "y"))
        #expect(hub.eventTimeline().first?.sequenceNumber == (last ?? 0) + 1)
    }

    @Test("cancelled subscribers are detached")
    func detach() async {
        let hub = MdocEventHub()
        let task = collect(hub.allEvents) { _ in false }
        #expect(hub.subscriberCount == 1)
        task.cancel()
        _ = await task.value
        #expect(hub.subscriberCount == 0)
    }
}
