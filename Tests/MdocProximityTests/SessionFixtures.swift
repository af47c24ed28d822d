import CBOR
import COSE
import Foundation
import Mdoc
import WalletCrypto
import WalletRuntime
@testable import MdocProximity

/// Issuer PKI, a holder credential and a reader, shared by the end-to-end tests.
struct SessionFixtures: Sendable {
    static let mDL = "org.iso.18013.5.1.mDL"
    static let nameSpace = "org.iso.18013.5.1"

    let iaca: X509Certificate
    let credential: IssuerSigned
    let deviceKey: ECPrivateKey
    var provider: StaticDocumentProvider {
        StaticDocumentProvider(documents: [credential], signer: SoftwareSigner(deviceKey), consent: { .everythingRequested(by: $0) })
    }

    static func make(portraitBytes: Int = 0) async throws -> SessionFixtures {
        let rootKey = try ECPrivateKey.generate(curve: .p256)
        let dsKey = try ECPrivateKey.generate(curve: .p256)
        let notBefore = Date().addingTimeInterval(-86_400), notAfter = Date().addingTimeInterval(365 * 86_400)
        let root = try CertificateBuilder.iaca(
            subject: try DistinguishedName([(.commonName, "Test IACA"), (.country, "UT")]),
            notBefore: notBefore, notAfter: notAfter).selfSigned(with: .ec(rootKey))
        let ds = try CertificateBuilder.mdocDocumentSigner(
            subject: try DistinguishedName([(.commonName, "Test DS"), (.country, "UT")]),
            subjectPublicKeyInfoDER: dsKey.publicKey.spkiDER, notBefore: notBefore, notAfter: notAfter
        ).signed(by: root, key: .ec(rootKey))
        let deviceKey = try ECPrivateKey.generate(curve: .p256)
        var elements: [DataElement] = [
            DataElement("family_name", "Doe"), DataElement("given_name", "John"), DataElement("age_over_18", true),
            DataElement("document_number", "123456789"),
        ]
        if portraitBytes > 0 {
            elements.append(DataElement("portrait", .byteString((0..<portraitBytes).map { UInt8(truncatingIfNeeded: $0 &* 7) })))
        }
        let now = Date()
        let credential = try await MdocIssuer(signer: SoftwareSigner(dsKey), certificateChain: [ds]).issue(
            docType: mDL, nameSpaces: [NameSpaced(nameSpace, elements)], deviceKey: COSEKey(publicKey: .ec(deviceKey.publicKey)),
            validity: ValidityInfo(signed: now, validFrom: now.addingTimeInterval(-60), validUntil: now.addingTimeInterval(86_400)))
        return SessionFixtures(iaca: root, credential: credential, deviceKey: deviceKey)
    }

    static func request(_ elements: [String] = ["family_name", "age_over_18"]) -> ItemsRequest {
        ItemsRequest(docType: mDL, nameSpaces: [NameSpaced(nameSpace, elements.map { RequestedElement($0, false) })])
    }
}

/// Which carrier an end-to-end test runs over: the ISO BLE carrier in both modes over
/// the simulated GATT link, and the SDK's in-memory and TCP test carriers.
enum Carrier: String, CaseIterable, Sendable, CustomStringConvertible {
    case blePeripheralServer, bleCentralClient, inMemory, tcp
    var description: String { rawValue }

    /// The holder's and the reader's connectors (one object for the test carriers), their
    /// waits timed by `clock`.
    func connectors(clock: any WalletClock = SystemClock()) -> (holder: any MdocTransportConnector, reader: any MdocTransportConnector) {
        switch self {
        case .inMemory:
            let exchange = InMemoryTransport.Exchange(clock: clock)
            return (exchange, exchange)
        case .tcp:
            let tcp = TCPConnector(clock: clock)
            return (tcp, tcp)
        case .blePeripheralServer, .bleCentralClient:
            let air = SimulatedBLEAir(mtu: 64)
            let mode: BLEMode = self == .blePeripheralServer ? .peripheralServer : .centralClient
            return (BLEConnector(party: .mdoc, modes: [mode], clock: clock) { air.makeRadio() },
                    BLEConnector(party: .reader, modes: [mode], clock: clock) { air.makeRadio() })
        }
    }

    var transmissionType: TransmissionType {
        switch self {
        case .blePeripheralServer, .bleCentralClient: return .ble
        case .inMemory: return .inMemory
        case .tcp: return .tcp
        }
    }
}

/// The holder's consent behaviour in a test.
enum HolderChoice: Sendable { case accept, decline, none }

/// Answers the first request of engagement `id` (or any, when nil) as `choice` says, in
/// a task that prefers `executor` when there is one.
func respond(on manager: MdocEngagementManager, provider: StaticDocumentProvider, choice: HolderChoice,
             engagement id: EngagementID? = nil, executor: (any TaskExecutor)? = nil) -> Task<Void, Never> {
    let events = manager.eventHub.transferEvents
    return Task(executorPreference: executor) {
        for await event in events {
            if let id, event.engagementId != id { continue }
            guard case .documentsSelectionProcessStart(let data) = event.kind else {
                if event.stateOrder >= 200 { return }
                continue
            }
            let engagement = await manager.engagements.first { $0.id == event.engagementId }
            guard let transfer = engagement?.transferManager else { return }
            switch choice {
            case .accept:
                guard let request = try? DeviceRequest(encoded: data),
                      let response = try? await transfer.createResponse(deviceRequest: request, documentProvider: provider)
                else { return }
                try? await transfer.sendDeviceResponse(response)
            case .decline:
                try? await transfer.decline()
            case .none:
                break
            }
            return
        }
    }
}

/// Resident set size figures of this process, from /proc (kB); nil off Linux.
func memoryFigures() -> (rss: Int, peak: Int)? {
    guard let status = try? String(contentsOfFile: "/proc/self/status", encoding: .utf8) else { return nil }
    func value(_ key: String) -> Int? {
        status.split(separator: "\n").first { $0.hasPrefix(key) }?
            .split(separator: " ", omittingEmptySubsequences: true).dropFirst().first.flatMap { Int($0) }
    }
    guard let rss = value("VmRSS:"), let peak = value("VmHWM:") else { return nil }
    return (rss, peak)
}

/// Open file descriptors of this process, from /proc/self/fd; nil where there is no
/// /proc (off Linux), so that a leak check fails there instead of comparing -1 with -1.
func openDescriptorCount() -> Int? {
    try? FileManager.default.contentsOfDirectory(atPath: "/proc/self/fd").count
}
