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
        byRequest.withLock { $0[request.encodedBytes] = documents }
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

    init(hub: MdocEventHub, disclosures: ProximityDisclosures, recorder: TransactionRecorder, monitor: CredentialMonitor,
         readerAnchorsConfigured: Bool) {
        let events = hub.transferEvents
        let started = Task {
            var requests: [EngagementID: [UInt8]] = [:]
            for await event in events {
                switch event.kind {
                case .documentsSelectionProcessStart(let data):
                    requests[event.engagementId] = data
                case .sessionTerminationSend, .sessionTerminationReceived, .documentsSelectionProcessDeclined, .cancelled, .error:
                    guard let outcome = Self.outcome(of: event.kind) else { continue }
                    let requestBytes = requests.removeValue(forKey: event.engagementId)
                    await Self.record(requestBytes, outcome: outcome, disclosures: disclosures, recorder: recorder,
                                      readerAnchorsConfigured: readerAnchorsConfigured)
                    await monitor.refresh()
                default:
                    continue
                }
            }
        }
        task.withLock { $0 = started }
    }

    /// Stops following the sessions.
    func stop() { task.withLock { $0?.cancel() } }

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
    /// request carries reader authentication (the session verified it when anchors are
    /// configured, and would have ended otherwise).
    static func counterparty(_ request: DeviceRequest?, readerAnchorsConfigured: Bool) -> TransactionCounterparty {
        let certificates = request?.docRequests.compactMap(\.readerCertificate) ?? []
        guard let request, let certificate = certificates.first else {
            return TransactionCounterparty(identifier: "unidentified reader", trusted: readerAnchorsConfigured ? false : nil)
        }
        let allAuthenticated = certificates.count == request.docRequests.count
        return TransactionCounterparty(identifier: certificate.subject.rfc4514String, name: certificate.subject.commonName,
                                       trusted: readerAnchorsConfigured ? allAuthenticated : nil)
    }

    static func record(_ requestBytes: [UInt8]?, outcome: TransactionOutcome, disclosures: ProximityDisclosures,
                       recorder: TransactionRecorder, readerAnchorsConfigured: Bool) async {
        let request = requestBytes.flatMap { try? DeviceRequest(encoded: $0) }
        let released = requestBytes.map(disclosures.take(for:)) ?? []
        var credentials: [TransactionCredential] = []
        var values = JSONObject()
        // Nothing left the wallet unless the response was sent.
        if outcome == .completed {
            for document in released {
                let stored = CredentialClaims(mdoc: document.raw, id: document.credentialId)
                let paths = document.paths.map { $0.elements.map(\.jsonValue) }
                credentials.append(TransactionCredential(credentialId: document.credentialId, type: document.docType, claimPaths: paths))
                if let stored { values[document.credentialId] = .object(stored.logged(document.paths, type: document.docType).1) }
            }
        }
        await recorder.record(kind: .proximityPresentation,
                              counterparty: counterparty(request, readerAnchorsConfigured: readerAnchorsConfigured),
                              credentials: credentials, outcome: outcome, claimValues: values.isEmpty ? nil : values)
    }
}
