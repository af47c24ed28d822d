import Foundation
@testable import MdocProximity

/// Collects every value of an async sequence until `stop` says so (inclusive).
/// The subscription is made by the caller (synchronously), so nothing published
/// after this call is missed.
func collect<T: Sendable>(_ stream: AsyncStream<T>, until stop: @escaping @Sendable (T) -> Bool) -> Task<[T], Never> {
    Task {
        var values: [T] = []
        for await value in stream {
            values.append(value)
            if stop(value) { break }
        }
        return values
    }
}

/// Same, for an observed value (subscribed now, replaying the current value).
func collect<T: Sendable>(_ observed: ObservedValue<T>, until stop: @escaping @Sendable (T) -> Bool) -> Task<[T], Never> {
    collect(observed.values, until: stop)
}

/// Builds an expected `SessionUiState` in the terms of the spec's flow diagrams.
func ui(_ phase: UiPhase, _ label: String, nfc: NfcMode = .disabled, qr: QrMode = .none,
        suspended: Bool = false, progress: Float? = nil, outcome: TerminalOutcome? = nil,
        message: String? = nil, interaction: Bool = false, request: [UInt8]? = nil) -> SessionUiState {
    SessionUiState(phase: phase, substateLabel: label, nfcMode: nfc, qrMode: qr, isSuspended: suspended,
                   progressHint: progress, terminalOutcome: outcome, terminalMessage: message,
                   userInteractionRequired: interaction, deviceRequest: request)
}

extension MdocEventHub {
    func engagement(_ id: EngagementID, _ kind: MdocEngagementEvent.Kind) {
        publish(MdocEngagementEvent(engagementId: id, kind: kind))
    }
    func transfer(_ id: EngagementID, _ kind: MdocRetrievalEvent.Kind) {
        publish(MdocRetrievalEvent(engagementId: id, kind: kind))
    }
}

/// Runs `body` with a deadline, failing (returning nil) rather than hanging.
func withDeadline<T: Sendable>(seconds: Double, _ body: @escaping @Sendable () async throws -> T) async throws -> T? {
    try await withThrowingTaskGroup(of: T?.self) { group in
        group.addTask { try await body() }
        group.addTask { try await Task.sleep(for: .seconds(seconds)); return nil }
        let first = try await group.next() ?? nil
        group.cancelAll()
        return first
    }
}
