import Foundation
import JOSE
import OpenID4VCI
import ReferenceParties
import SDJWT
import WalletCrypto
import WalletEncoding
import WalletRuntime
import WalletStorage

/// The `issuance` case: one OpenID4VCI session issuing a batch of 50 oneTime SD-JWT VCs
/// from the reference issuer, in-process. The issuer's handling of each request is timed
/// and subtracted, so what is left is the wallet: metadata, token and DPoP, 50 secure-area
/// keys, 50 proofs, 50 credential checks (chain, signature, disclosures, binding) and the
/// store. Its floor is the bare OpenSSL work it cannot avoid, timed in the same run:
/// 50 P-256 key generations, 50 ES256 signatures and 50 ES256 verifications.
enum IssuanceBenchmark {
    static let batch = 50

    static func run(iterations: Int, python: String?) throws -> [BenchRow] {
        // A session is ~100 ms of work; a handful of runs gives a stable median.
        let runs = max(3, min(iterations, 9))
        let rows = LockedBox<[BenchRow]>([])
        try blocking { let measured = try await runAsync(runs: runs); rows.withLock { $0 = measured } }
        return rows.withLock { $0 }
    }

    /// An in-process client that adds up the time spent inside the issuer.
    final class TimedClient: HTTPClient {
        let inner: InProcessHTTPClient
        private let spent = LockedBox(0.0)

        init(_ inner: InProcessHTTPClient) { self.inner = inner }

        var issuerSeconds: Double { spent.withLock { $0 } }
        func reset() { spent.withLock { $0 = 0 } }

        func send(_ request: HTTPRequest) async throws(HTTPError) -> HTTPResponse {
            let start = monotonicNanoseconds()
            defer {
                let elapsed = secondsSince(start)
                spent.withLock { $0 += elapsed }
            }
            return try await inner.send(request)
        }
    }

    private static func runAsync(runs: Int) async throws -> [BenchRow] {
        let issuer = try ReferenceIssuer(configuration: ReferenceIssuerConfiguration(batchSize: batch))
        let http = TimedClient(InProcessHTTPClient(handler: issuer))
        let anchors = [issuer.trustAnchors.iaca, issuer.trustAnchors.issuerRoot]
        let configuration = IssuerCredentialConfiguration.pidId
        var wallet: [Double] = []
        var total: [Double] = []
        var issuerShare: [Double] = []
        for _ in 0..<runs {
            let storage = try IssuanceStorage.inMemory()
            let client = Openid4VciClient(http: http, config: IssuanceConfig(issuerTrustAnchors: anchors), storage: storage)
            let offer = try await client.resolveOffer(try await issuer.createOffer(.preAuthorized([configuration])).byValue)
            http.reset()
            let start = monotonicNanoseconds()
            let session = client.start(.fromOffer(offer, configurationId: configuration, policy: CredentialPolicy(batchSize: batch, use: .oneTime)))
            var last = session.currentState
            for await state in session.states {
                last = state
                if state.isTerminal { break }
            }
            let elapsed = secondsSince(start)
            guard case .completed(let result) = last, let id = result.issued.first,
                  try await storage.store.remainingInstances(of: id) == batch else {
                print("issuance: the session did not issue \(batch) instances: \(last)")
                throw BenchmarkFailure()
            }
            total.append(elapsed)
            issuerShare.append(http.issuerSeconds)
            wallet.append(elapsed - http.issuerSeconds)
        }

        // The floor, in the same process: what 50 credentials cannot be issued without.
        let message = Array(repeating: UInt8(0x5A), count: 400)
        let keyGen = try medianSeconds(iterations: 50) { blackHole(try ECPrivateKey.generate(curve: .p256)) }
        let key = try ECPrivateKey.generate(curve: .p256)
        let sign = try medianSeconds(iterations: 50) { blackHole(try key.signature(for: message)) }
        let signature = try key.signature(for: message)
        let verify = medianSeconds(iterations: 50) { blackHole(key.publicKey.isValidSignature(signature, for: message)) }
        let floor = Double(batch) * (keyGen + sign + verify)

        func median(_ values: [Double]) -> Double { values.sorted()[values.count / 2] }
        let walletTime = median(wallet)
        detail("issuance: a batch of \(batch) oneTime SD-JWT VCs (pre-authorized, DPoP, anchors), \(runs) sessions, median")
        detail(String(format: "  wallet side        %8.1f ms   %5.2fx the crypto floor (%.2f ms per credential)",
                     walletTime * 1e3, walletTime / floor, walletTime * 1e3 / Double(batch)))
        detail(String(format: "  session in total   %8.1f ms   (the issuer's handling, subtracted above: %.1f ms)",
                     median(total) * 1e3, median(issuerShare) * 1e3))
        detail(String(format: "  crypto floor       %8.1f ms   = %d x (P-256 keygen %.1f µs + ES256 sign %.1f µs + ES256 verify %.1f µs)",
                     floor * 1e3, batch, keyGen * 1e6, sign * 1e6, verify * 1e6))
        return [BenchRow(suite: "issuance", name: "batch of \(batch) SD-JWT VCs, wallet side", sdkSeconds: walletTime,
                         floorSeconds: floor, floorName: "\(batch) x (keygen, sign, verify)")]
    }
}
