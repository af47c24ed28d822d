import CBOR
import COSE
import Foundation
import Mdoc
import MdocProximity
import WalletCrypto
import WalletRuntime

/// The `proximity` case: one full QR session, holder and reader in this process, an
/// mDL with a 50 KB portrait, over TCP on 127.0.0.1 (the SDK's test carrier), over
/// the simulated BLE GATT link (the ISO carrier's state machines, values of MTU − 3
/// bytes) and over the in-memory carrier (no socket and no carrier thread: what the
/// session engine costs by itself); each compared with the bare OpenSSL operations the
/// session needs.
enum ProximityBenchmark {
    static let docType = "org.iso.18013.5.1.mDL"
    static let nameSpace = "org.iso.18013.5.1"
    static let portraitSize = 50_000

    struct Fixture: Sendable {
        let iaca: X509Certificate
        let credential: IssuerSigned
        let deviceKey: ECPrivateKey
    }

    enum Carrier: String, CaseIterable {
        case tcp, ble, memory

        var title: String {
            switch self {
            case .tcp: "TCP loopback (not an ISO carrier)"
            case .ble: "simulated BLE GATT, MTU 185"
            case .memory: "the in-memory carrier (engine only)"
            }
        }

        var rowName: String {
            switch self {
            case .tcp: "whole QR session, TCP loopback"
            case .ble: "whole QR session, simulated BLE"
            case .memory: "whole QR session, in-memory carrier"
            }
        }
    }

    /// Measures `carriers` (every carrier unless `wallet-bench proximity --carrier`
    /// names one, e.g. to profile the engine alone over the in-memory carrier).
    static func run(iterations: Int, python: String?, carriers: [Carrier] = Carrier.allCases) throws -> [BenchRow] {
        let rows = LockedBox<[BenchRow]>([])
        try blocking {
            let measured = try await runAsync(iterations: iterations, carriers: carriers)
            rows.withLock { $0 = measured }
        }
        return rows.withLock { $0 }
    }

    /// Times the sessions and the floor from async code, as an app drives the SDK (and as
    /// the `mdoc` and `sdjwt` cases time theirs): a session timed from the benchmark's
    /// synchronous loop also paid a hop to the cooperative pool and back, 20-33 µs of
    /// the harness's, not the SDK's (docs/performance.md, 2026-12-05, second session).
    private static func runAsync(iterations: Int, carriers: [Carrier]) async throws -> [BenchRow] {
        let fixture = try await makeFixture()
        let sessions = max(1, min(iterations, 100))
        detail("proximity: one QR session (mDL, \(portraitSize)-byte portrait), \(sessions) sessions per carrier, median per session")
        // Warm-up sessions (thread pools, first sockets), then the carriers and the floor
        // in the same rounds (see `interleavedMedians`).
        var responseBytes = 0
        for carrier in carriers { responseBytes = try await session(fixture, carrier: carrier) }
        let floorBody = try cryptoFloor(fixture: fixture, responseBytes: responseBytes)
        let (medians, floor) = try await sessionMedians(fixture, carriers: carriers, sessions: sessions, floorBody: floorBody,
                                                         executor: nil)
        // The same sessions with everything on `ProximityExecutor.shared`: the manager's
        // tasks, the holder's and the reader's side, and the timing loop with its floor
        // (an app that runs its session there, as the executor's documentation shows).
        let executor = ProximityExecutor.shared
        let (onExecutor, executorFloor) = try await withTaskExecutorPreference(executor) {
            for carrier in carriers { _ = try await session(fixture, carrier: carrier, executor: executor) }
            return try await sessionMedians(fixture, carriers: carriers, sessions: sessions, floorBody: floorBody, executor: executor)
        }
        for (carrier, elapsed) in zip(carriers, medians) {
            detail(String(format: "  full session over %@ %8.2f ms  (%.2fx the crypto floor)", carrier.title, elapsed * 1000, elapsed / floor))
        }
        detail(String(format: "  crypto floor (2 keygen, 2 ECDH, 4 HKDF, AES-GCM of %d B, 1 sign, 3 verify, SHA-256) %8.2f ms",
                     responseBytes, floor * 1000))
        for (carrier, elapsed) in zip(carriers, onExecutor) {
            detail(String(format: "  on ProximityExecutor, full session over %@ %8.2f ms  (%.2fx the crypto floor, %.2f ms on that thread)",
                          carrier.title, elapsed * 1000, elapsed / executorFloor, executorFloor * 1000))
        }
        if Detail.enabled.withLock({ $0 }) {
            try await cpuAndSwitches(fixture, carriers: carriers, sessions: sessions, floor: floor, executor: nil)
            try await withTaskExecutorPreference(executor) {
                try await cpuAndSwitches(fixture, carriers: carriers, sessions: sessions, floor: executorFloor, executor: executor)
            }
            try await carriersAlone(carriers.filter { $0 != .ble }, responseBytes: responseBytes, rounds: 2 * sessions)
        }
        return zip(carriers, medians).map { carrier, elapsed in
            BenchRow(suite: "proximity", name: carrier.rowName,
                     sdkSeconds: elapsed, floorSeconds: floor, floorName: "the session's crypto",
                     targetRatio: carrier == .tcp ? 2.0 : nil)
        } + zip(carriers, onExecutor).map { carrier, elapsed in
            BenchRow(suite: "proximity", name: carrier.rowName + ", on ProximityExecutor",
                     sdkSeconds: elapsed, floorSeconds: executorFloor, floorName: "the session's crypto",
                     targetRatio: carrier == .tcp ? 2.0 : nil)
        }
    }

    /// The median session over each carrier and the floor's median, in the same rounds
    /// (see `interleavedMedians`), with the holder's side on `executor` when there is one.
    private static func sessionMedians(_ fixture: Fixture, carriers: [Carrier], sessions: Int,
                                       floorBody: @escaping () throws -> Void,
                                       executor: ProximityExecutor?) async throws -> ([Double], Double) {
        let medians = try await asyncInterleavedMedians(iterations: sessions, carriers.map { carrier in
            { _ = try await session(fixture, carrier: carrier, executor: executor) }
        } + [floorBody])
        return (Array(medians.prefix(carriers.count)), medians[carriers.count])
    }

    struct Provider: MdocDocumentProvider {
        let fixture: Fixture
        func credentials(for request: DeviceRequest) async throws(DocumentProviderError) -> [IssuerSigned] { [fixture.credential] }
        func authentication(for credential: IssuerSigned) -> DeviceAuthenticationMethod { .signature(SoftwareSigner(fixture.deviceKey)) }
        func consent(for request: DeviceRequest) async throws(DocumentProviderError) -> ConsentSelection {
            .everythingRequested(by: request)
        }
    }

    /// One session; returns the size of the response SessionData. With an `executor`, the
    /// holder's manager and task prefer it (the caller runs the reader's side there).
    static func session(_ fixture: Fixture, carrier: Carrier, executor: ProximityExecutor? = nil) async throws -> Int {
        let holderConnector: any MdocTransportConnector
        let readerConnector: any MdocTransportConnector
        switch carrier {
        case .tcp:
            holderConnector = TCPConnector()
            readerConnector = holderConnector
        case .ble:
            let air = SimulatedBLEAir(mtu: 185)
            holderConnector = BLEConnector(party: .mdoc, modes: [.peripheralServer]) { air.makeRadio() }
            readerConnector = BLEConnector(party: .reader, modes: [.peripheralServer]) { air.makeRadio() }
        case .memory:
            holderConnector = InMemoryTransport.Exchange()
            readerConnector = holderConnector
        }
        let manager = MdocEngagementManager(connector: holderConnector, executor: executor)
        let qr = try await manager.createEngagement(.qr)
        let events = manager.eventHub.transferEvents
        let holder = Task(executorPreference: executor) { () -> Int in
            var sent = 0
            for await event in events {
                switch event.kind {
                case .documentsSelectionProcessStart(let data):
                    guard let transfer = qr.transferManager, let request = try? DeviceRequest(encoded: data),
                          let response = try? await transfer.createResponse(deviceRequest: request, documentProvider: Provider(fixture: fixture))
                    else { return 0 }
                    try? await transfer.sendDeviceResponse(response)
                case .sessionDataSend(let count): sent = count
                default: if event.stateOrder >= 200 { return sent }
                }
            }
            return sent
        }
        let reader = try MdocReader(connector: readerConnector, trustAnchors: [fixture.iaca])
        try await reader.engage(qrCodeUri: qr.qrCodeUri ?? "")
        let verified = try await reader.request([ItemsRequest(docType: docType, nameSpaces: [NameSpaced(nameSpace, [
            RequestedElement("family_name", false), RequestedElement("given_name", false), RequestedElement("portrait", false),
            RequestedElement("age_over_18", false)])])])
        guard verified.documents.first?.value(nameSpace: nameSpace, identifier: "portrait")?.bytesValue?.count == portraitSize else {
            throw BenchmarkFailure()
        }
        let sent = await holder.value
        await manager.closeAll()
        return sent
    }

    /// Prints, for `sessions` more sessions over each carrier in turn, the process's CPU
    /// time (every thread) and its context switches per session. A session's CPU time is
    /// about its wall time (it computes, it seldom waits), and the switches count the
    /// hand-offs between threads that the remaining gap is made of (docs/performance.md,
    /// "What is left", item 1).
    static func cpuAndSwitches(_ fixture: Fixture, carriers: [Carrier], sessions: Int, floor: Double,
                               executor: ProximityExecutor?) async throws {
        for carrier in carriers {
            let (cpu, switches) = (processCPUSeconds(), processContextSwitches())
            for _ in 0..<sessions { _ = try await session(fixture, carrier: carrier, executor: executor) }
            let cpuPerSession = (processCPUSeconds() - cpu) / Double(sessions)
            let switchesPerSession = Double(processContextSwitches() - switches) / Double(sessions)
            detail(String(format: "  per session over %@%@: CPU (all threads) %7.1f µs (%.2fx the floor), %5.1f context switches",
                          carrier.rawValue, executor == nil ? "" : " on ProximityExecutor",
                          cpuPerSession * 1e6, cpuPerSession / floor, switchesPerSession))
        }
    }

    /// Prints what each carrier costs by itself: a listener, a connect and its accept,
    /// a 200-byte request and a response of `responseBytes` (each with a 4-byte length
    /// on TCP), both ends closed; no crypto and no engine. For TCP, compare
    /// `Benchmarks/loopback/loopback.c`, the same socket calls on one thread, with no
    /// thread to wake.
    static func carriersAlone(_ carriers: [Carrier], responseBytes: Int, rounds: Int) async throws {
        let connectors: [any MdocTransportConnector] = carriers.map { $0 == .tcp ? TCPConnector() as any MdocTransportConnector : InMemoryTransport.Exchange() }
        let request = [UInt8](repeating: 1, count: 200), response = [UInt8](repeating: 2, count: responseBytes)
        let bodies: [() async throws -> Void] = connectors.map { connector in
            {
                let listener = try await connector.listen(context: ConnectionContext())
                async let accepted = listener.accept(timeout: .seconds(30))
                let reader = try await connector.connect(to: listener.endpoint, context: ConnectionContext(), timeout: .seconds(30))
                let holder = try await accepted
                await listener.close()
                try await reader.send(request)
                guard try await holder.receive(timeout: .seconds(30)).count == request.count else { throw BenchmarkFailure() }
                try await holder.send(response)
                guard try await reader.receive(timeout: .seconds(30)).count == response.count else { throw BenchmarkFailure() }
                await holder.close()
                await reader.close()
            }
        }
        for body in bodies { try await body() }
        let medians = try await asyncInterleavedMedians(iterations: rounds, bodies)
        for (carrier, elapsed) in zip(carriers, medians) {
            detail(String(format: "  the carrier alone, %@: connect, a request, a %d-byte response, close %8.1f µs",
                          carrier.rawValue, responseBytes, elapsed * 1e6))
        }
    }

    static func makeFixture() async throws -> Fixture {
        let rootKey = try ECPrivateKey.generate(curve: .p256)
        let dsKey = try ECPrivateKey.generate(curve: .p256)
        let from = Date().addingTimeInterval(-86_400), until = Date().addingTimeInterval(365 * 86_400)
        let root = try CertificateBuilder.iaca(
            subject: try DistinguishedName([(.commonName, "Bench IACA"), (.country, "UT")]), notBefore: from, notAfter: until
        ).selfSigned(with: .ec(rootKey))
        let ds = try CertificateBuilder.mdocDocumentSigner(
            subject: try DistinguishedName([(.commonName, "Bench DS"), (.country, "UT")]),
            subjectPublicKeyInfoDER: dsKey.publicKey.spkiDER, notBefore: from, notAfter: until
        ).signed(by: root, key: .ec(rootKey))
        let deviceKey = try ECPrivateKey.generate(curve: .p256)
        let portrait = (0..<portraitSize).map { UInt8(truncatingIfNeeded: $0 &* 131) }
        let now = Date()
        let credential = try await MdocIssuer(signer: SoftwareSigner(dsKey), certificateChain: [ds]).issue(
            docType: docType,
            nameSpaces: [NameSpaced(nameSpace, [DataElement("family_name", "Doe"), DataElement("given_name", "John"),
                                                DataElement("age_over_18", true), DataElement("portrait", .byteString(portrait)),
                                                DataElement("document_number", "123456789")])],
            deviceKey: COSEKey(publicKey: .ec(deviceKey.publicKey)),
            validity: ValidityInfo(signed: now, validFrom: now.addingTimeInterval(-60), validUntil: now.addingTimeInterval(86_400)))
        return Fixture(iaca: root, credential: credential, deviceKey: deviceKey)
    }

    /// The bare OpenSSL work of one session.
    static func cryptoFloor(fixture: Fixture, responseBytes: Int) throws -> () throws -> Void {
        let peer = try ECPrivateKey.generate(curve: .p256)
        let key = SymmetricKey(bytes: [UInt8](repeating: 7, count: 32))
        let nonce = [UInt8](repeating: 1, count: 12)
        let response = [UInt8](repeating: 3, count: responseBytes)
        let request = [UInt8](repeating: 4, count: 200)
        let message = [UInt8](repeating: 5, count: 300)
        let signature = try fixture.deviceKey.signature(for: message)
        return {
            let a = try ECPrivateKey.generate(curve: .p256), b = try ECPrivateKey.generate(curve: .p256)
            let z1 = try a.sharedSecret(with: peer.publicKey), z2 = try b.sharedSecret(with: peer.publicKey)
            for (z, info) in [(z1, "SKReader"), (z1, "SKDevice"), (z2, "SKReader"), (z2, "SKDevice")] {
                blackHole(try z.hkdfDerivedSymmetricKey(salt: message, info: Array(info.utf8), outputByteCount: 32))
            }
            for payload in [request, response] {
                let box = try AESGCM.seal(payload, key: key, nonce: nonce)
                blackHole(try AESGCM.open(combined: box.ciphertextAndTag, key: key, nonce: nonce))
            }
            blackHole(try fixture.deviceKey.signature(for: message))
            for _ in 0..<3 { blackHole(fixture.deviceKey.publicKey.isValidSignature(signature, for: message)) }
            blackHole(HashAlgorithm.sha256.digest(response))
        }
    }
}
