import CBOR
import Foundation
import WalletCrypto

/// `wallet-bench`: throughput of the SDK's hot paths, printed with the floor they
/// are measured against in the same run (absolute times on shared machines are
/// noisy; ratios taken in one run are not).
@main
struct WalletBench {
    static let usage = """
    usage: wallet-bench <case> [--iterations N] [--python PATH] [--json]
    cases:
      all     every case below, one after another, printed as one table: each
              measurement, its floor, the ratio, the target, and the Python peer where
              one exists (--json: the same rows as one JSON document)
      cbor    decode and re-encode a ~100 KB mdoc-like document (IssuerSigned with
              tag-24 items and an MSO); prints MB/s for each, SHA-256 over the same
              bytes as the floor, and cbor2 (Python) on the same document when
              PATH (a python with cbor2) is given
      storage save and list 1,000 and 10,000 credentials in a file CredentialStore;
              prints the cost per credential, its growth, and the AES-GCM floor
      sdjwt   build an SD-JWT VC presentation of 10 disclosures with a KB-JWT, and
              verify one; each as a ratio to the bare ES256 sign (resp. verify) of
              the same run, and the sd-jwt reference implementation (Python) on
              the same credential when PATH (a python with sd-jwt) is given
      mdoc    an mDL of 12 elements with a 50 KB portrait: the holder derives session
              keys, builds, signs and encrypts a DeviceResponse; the reader decrypts and
              verifies it; each against its floor of ECDH, HKDF, AES-GCM, SHA-256, ECDSA
      presentation  an OpenID4VP remote presentation: resolve a signed request, match
              its DCQL query over 1,000 and 10,000 stored credentials, build and
              encrypt the response, and a whole session; each against its crypto floor
      proximity  one full QR session (mDL with a 50 KB portrait), holder and reader in
              this process, over TCP loopback and over the simulated BLE GATT link
              (mdoc peripheral server mode, MTU 185); prints each time and its ratio
              to the session's crypto floor
      issuance a batch of 50 oneTime SD-JWT VCs from the in-process reference issuer
              (pre-authorized, DPoP, issuer anchors configured); the wallet-side time
              (the issuer's handling subtracted) against its crypto floor of 50 key
              generations, 50 proof signatures and 50 credential verifications
    """

    static func main() throws {
        var arguments = Array(CommandLine.arguments.dropFirst())
        guard let name = arguments.first else { print(usage); exit(2) }
        arguments.removeFirst()
        var iterations = 200
        var python: String?
        var json = false
        while let flag = arguments.first {
            arguments.removeFirst()
            switch flag {
            case "--iterations":
                guard let value = arguments.first.flatMap(Int.init), value > 0 else { print(usage); exit(2) }
                iterations = value
                arguments.removeFirst()
            case "--python":
                guard let value = arguments.first else { print(usage); exit(2) }
                python = value
                arguments.removeFirst()
            case "--json" where name == "all":
                json = true
            default:
                print(usage); exit(2)
            }
        }
        if name == "all" {
            Detail.enabled.withLock { $0 = false }
            var rows: [BenchRow] = []
            for (suite, run) in cases {
                FileHandle.standardError.write(Data("wallet-bench all: \(suite)\n".utf8))
                rows += try run(iterations, python)
            }
            print(json ? BenchTable.json(rows, iterations: iterations)
                       : "wallet-bench all: \(iterations) iterations, median per run; ratios taken in this run\n" + BenchTable.text(rows))
            return
        }
        guard let run = cases.first(where: { $0.name == name })?.run else { print(usage); exit(2) }
        _ = try run(iterations, python)
    }

    /// Every case, in the order `all` runs them.
    static var cases: [(name: String, run: (Int, String?) throws -> [BenchRow])] { [
        ("cbor", CBORBenchmark.run), ("storage", StorageBenchmark.run), ("sdjwt", SDJWTBenchmark.run),
        ("mdoc", MdocBenchmark.run), ("presentation", PresentationBenchmark.run), ("proximity", ProximityBenchmark.run),
        ("issuance", IssuanceBenchmark.run),
    ] }
}

/// Times `body` `iterations` times and returns the median seconds per run.
func medianSeconds(iterations: Int, _ body: () throws -> Void) rethrows -> Double {
    var samples: [Double] = []
    samples.reserveCapacity(iterations)
    for _ in 0..<iterations {
        let start = DispatchTime.now().uptimeNanoseconds
        try body()
        samples.append(Double(DispatchTime.now().uptimeNanoseconds - start) / 1e9)
    }
    samples.sort()
    return samples[samples.count / 2]
}

/// Keeps a value alive so the optimiser cannot drop the work that made it.
@inline(never)
func blackHole<T>(_ value: T) {
    withExtendedLifetime(value) {}
}

/// A benchmark whose work did not produce the expected result.
struct BenchmarkFailure: Error {}
