import CBOR
import COSE
import Foundation
import Mdoc
import MdocProximity
import WalletCrypto

/// The `proximity` case: one full QR session over TCP on 127.0.0.1, holder and
/// reader in this process, an mDL with a 50 KB portrait; compared with the bare
/// OpenSSL operations the same session needs (its crypto floor).
enum ProximityBenchmark {
    static let docType = "org.iso.18013.5.1.mDL"
    static let nameSpace = "org.iso.18013.5.1"
    static let portraitSize = 50_000

    struct Fixture: Sendable {
        let iaca: X509Certificate
        let credential: IssuerSigned
        let deviceKey: ECPrivateKey
    }

    static func run(iterations: Int, python: String?) throws {
        let fixture = try blocking { try await makeFixture() }
        let sessions = max(1, min(iterations, 100))
        print("proximity: one QR session over TCP loopback (mDL, \(portraitSize)-byte portrait), \(sessions) sessions, median per session")
        var responseBytes = 0
        // Warm-up session (thread pools, first sockets).
        responseBytes = try blocking { try await session(fixture) }
        let elapsed = try medianSeconds(iterations: sessions) { responseBytes = try blocking { try await Self.session(fixture) } }
        let floor = try cryptoFloor(fixture: fixture, responseBytes: responseBytes, iterations: max(sessions, 20))
        print(String(format: "  full session (engage, request, consent, response, verify) %8.2f ms", elapsed * 1000))
        print(String(format: "  crypto floor (2 keygen, 2 ECDH, 4 HKDF, AES-GCM of %d B, 1 sign, 3 verify, SHA-256) %8.2f ms",
                     responseBytes, floor * 1000))
        print(String(format: "  ratio: %.2fx the crypto floor", elapsed / floor))
    }

    /// Runs async work from the synchronous benchmark driver (not on the cooperative pool).
    static func blocking<T: Sendable>(_ body: @escaping @Sendable () async throws -> T) throws -> T {
        let semaphore = DispatchSemaphore(value: 0)
        let box = ResultBox<T>()
        Task {
            do { box.result = .success(try await body()) } catch { box.result = .failure(error) }
            semaphore.signal()
        }
        semaphore.wait()
        guard let result = box.result else { throw ProximityError.cancelled }
        return try result.get()
    }

    final class ResultBox<T>: @unchecked Sendable { var result: Result<T, any Error>? }

    struct Provider: MdocDocumentProvider {
        let fixture: Fixture
        func credentials(for request: DeviceRequest) async throws -> [IssuerSigned] { [fixture.credential] }
        func authentication(for credential: IssuerSigned) -> DeviceAuthenticationMethod { .signature(SoftwareSigner(fixture.deviceKey)) }
    }

    /// One session; returns the size of the response SessionData.
    static func session(_ fixture: Fixture) async throws -> Int {
        let connector = TCPConnector()
        let manager = MdocEngagementManager(connector: connector)
        let qr = try await manager.createEngagement(.qr)
        let events = manager.eventHub.transferEvents
        let holder = Task { () -> Int in
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
        let reader = try MdocReader(connector: connector, trustAnchors: [fixture.iaca])
        try await reader.engage(qrCodeUri: qr.qrCodeUri ?? "")
        let verified = try await reader.request([ItemsRequest(docType: docType, nameSpaces: [(nameSpace, [
            ("family_name", false), ("given_name", false), ("portrait", false), ("age_over_18", false)])])])
        guard verified.documents.first?.value(nameSpace: nameSpace, identifier: "portrait")?.bytesValue?.count == portraitSize else {
            throw ProximityError.responseVerificationFailed("portrait missing")
        }
        let sent = await holder.value
        await manager.closeAll()
        return sent
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
            nameSpaces: [(nameSpace, [("family_name", "Doe"), ("given_name", "John"), ("age_over_18", true),
                                      ("portrait", .byteString(portrait)), ("document_number", "123456789")])],
            deviceKey: COSEKey(publicKey: .ec(deviceKey.publicKey)),
            validity: ValidityInfo(signed: now, validFrom: now.addingTimeInterval(-60), validUntil: now.addingTimeInterval(86_400)))
        return Fixture(iaca: root, credential: credential, deviceKey: deviceKey)
    }

    /// The bare OpenSSL work of one session, timed the same way.
    static func cryptoFloor(fixture: Fixture, responseBytes: Int, iterations: Int) throws -> Double {
        let peer = try ECPrivateKey.generate(curve: .p256)
        let key = SymmetricKey(bytes: [UInt8](repeating: 7, count: 32))
        let nonce = [UInt8](repeating: 1, count: 12)
        let response = [UInt8](repeating: 3, count: responseBytes)
        let request = [UInt8](repeating: 4, count: 200)
        let message = [UInt8](repeating: 5, count: 300)
        let signature = try fixture.deviceKey.signature(for: message)
        return try medianSeconds(iterations: iterations) {
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
