import Foundation
import Mdoc
import MdocProximity
import SDJWT
import WalletCrypto
import WalletEncoding
import WalletRuntime
import WalletStorage

/// What the wallet's document providers released, by request, until the session that
/// asked ends and the recorder logs it.
final class ProximityDisclosures: Sendable {
    struct Document: Sendable {
        let credentialId: CredentialId
        let docType: String
        let raw: [UInt8]
        let paths: [ClaimPath]
    }

    private let byRequest = LockedBox<[[UInt8]: [Document]]>([:])

    func register(_ documents: [Document], for request: DeviceRequest) {
        byRequest.withLock { $0[request.encodedBytes, default: []] += documents }
    }

    func take(for requestBytes: [UInt8]) -> [Document] {
        byRequest.withLock { $0.removeValue(forKey: requestBytes) } ?? []
    }
}

/// Follows the proximity sessions of `wallet.proximity` and logs each when it ends:
/// the reader (its certificate's subject, when it authenticated), whether reader
/// authentication held against the configured anchors, what was released, the outcome.
final class ProximityRecorder: Sendable {
    private let task = LockedBox<Task<Void, Never>?>(nil)
    /// Ends the subscription to the hub: what was published before is still handled.
    private let endEvents: @Sendable () -> Void

    init(hub: MdocEventHub, disclosures: ProximityDisclosures, recorder: TransactionRecorder, monitor: CredentialMonitor,
         readerAnchorsConfigured: Bool) {
        let (events, end) = hub.transferEventSubscription()
        endEvents = end
        let started = Task {
            // Per engagement: the request waiting for its answer, and the requests answered
            // with what each response released, taken when it was sent (a response sent with
            // `terminate: false` lets the reader ask again, the same request included).
            var pending: [EngagementID: [UInt8]] = [:]
            var answered: [EngagementID: [Answered]] = [:]
            for await event in events {
                switch event.kind {
                case .documentsSelectionProcessStart(let data):
                    if let unanswered = pending.updateValue(data, forKey: event.engagementId) { _ = disclosures.take(for: unanswered) }
                case .sessionDataSend:
                    if let request = pending.removeValue(forKey: event.engagementId) {
                        answered[event.engagementId, default: []].append(Answered(request: request, documents: disclosures.take(for: request)))
                    }
                case .sessionTerminationSend, .sessionTerminationReceived, .documentsSelectionProcessDeclined, .cancelled, .error:
                    guard let outcome = Self.outcome(of: event.kind) else { continue }
                    let unanswered = pending.removeValue(forKey: event.engagementId)
                    if let unanswered { _ = disclosures.take(for: unanswered) }
                    let sent = answered.removeValue(forKey: event.engagementId) ?? []
                    await Self.record(sent: sent, unanswered: unanswered, outcome: outcome,
                                      recorder: recorder, readerAnchorsConfigured: readerAnchorsConfigured)
                    await monitor.refresh()
                default:
                    continue
                }
            }
        }
        task.withLock { $0 = started }
    }

    /// Stops following the sessions at once (what was not handled yet is not logged).
    func stop() { task.withLock { $0?.cancel() } }

    /// Handles every event published so far, logging the sessions they end, then stops
    /// following the sessions.
    func finish() async {
        endEvents()
        await task.withLock { $0 }?.value
    }

    /// A request a response was sent for, and what that response released.
    struct Answered: Sendable {
        let request: [UInt8]
        let documents: [ProximityDisclosures.Document]
    }

    /// How a final event ends the exchange; nil for events that are not the end.
    static func outcome(of kind: MdocRetrievalEvent.Kind) -> TransactionOutcome? {
        switch kind {
        case .sessionTerminationSend: .completed
        case .sessionTerminationReceived(let afterResponse): afterResponse ? .completed : .cancelled
        case .documentsSelectionProcessDeclined: .declined
        case .cancelled: .cancelled
        case .error(let error): .failed(reason: TransactionRecorder.caseName(error))
        default: nil
        }
    }

    /// The reader as the request names it: its certificate's subject when every document
    /// request carries reader authentication (the session verified the chain when anchors
    /// are configured, and the signature under that certificate otherwise, and would have
    /// ended had either failed).
    static func counterparty(_ request: DeviceRequest?, readerAnchorsConfigured: Bool) -> TransactionCounterparty {
        let certificates = request?.docRequests.compactMap(\.readerCertificate) ?? []
        guard let request, let certificate = certificates.first else {
            return TransactionCounterparty(identifier: "unidentified reader", trusted: readerAnchorsConfigured ? false : nil)
        }
        let allAuthenticated = certificates.count == request.docRequests.count
        return TransactionCounterparty(identifier: certificate.subject.rfc4514String, name: certificate.subject.commonName,
                                       trusted: readerAnchorsConfigured ? allAuthenticated : nil)
    }

    /// Logs one session: what the responses to the `sent` requests released (whatever
    /// the outcome: once a response is sent, the reader holds it), the reader as the
    /// first request names it.
    static func record(sent: [Answered], unanswered: [UInt8]?, outcome: TransactionOutcome,
                       recorder: TransactionRecorder, readerAnchorsConfigured: Bool) async {
        let request = (sent.first?.request ?? unanswered).flatMap { try? DeviceRequest(encoded: $0) }
        var credentials: [TransactionCredential] = []
        var values = JSONObject()
        // Nothing left the wallet unless a response was sent. A credential that answered
        // more than one request is one entry, with every path it released.
        for answer in sent {
            for document in answer.documents {
                let paths = document.paths.map { $0.elements.map(\.jsonValue) }
                if let index = credentials.firstIndex(where: { $0.credentialId == document.credentialId && $0.type == document.docType }) {
                    let known = credentials[index]
                    credentials[index] = TransactionCredential(credentialId: known.credentialId, type: known.type,
                                                               claimPaths: known.claimPaths + paths.filter { !known.claimPaths.contains($0) })
                } else {
                    credentials.append(TransactionCredential(credentialId: document.credentialId, type: document.docType, claimPaths: paths))
                }
                if let stored = CredentialClaims(mdoc: document.raw, id: document.credentialId) {
                    var merged = values[document.credentialId]?.objectValue ?? [:]
                    for (path, value) in stored.logged(document.paths, type: document.docType).1 { merged[path] = value }
                    values[document.credentialId] = .object(merged)
                }
            }
        }
        await recorder.record(kind: .proximityPresentation,
                              counterparty: counterparty(request, readerAnchorsConfigured: readerAnchorsConfigured),
                              credentials: credentials, outcome: outcome, claimValues: values.isEmpty ? nil : values)
    }
}
