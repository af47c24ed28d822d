import CBOR
import Foundation
import WalletCrypto
import WalletRuntime

/// `wallet-bench`: throughput of the SDK's hot paths, printed with the floor they
/// are measured against in the same run (absolute times on shared machines are
/// noisy; ratios taken in one run are not).
@main
struct WalletBench {
    static let usage = """
    usage: wallet-bench <case> [--iterations N] [--python PATH] [--json] [--carrier tcp|ble|memory]
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
              this process, over TCP loopback, over the simulated BLE GATT link
              (mdoc peripheral server mode, MTU 185) and over the in-memory carrier
              (the engine alone); prints each time and its ratio to the session's
              crypto floor (--carrier: that carrier only, e.g. for a profile)
      issuance a batch of 50 oneTime SD-JWT VCs from the in-process reference issuer
              (pre-authorized, DPoP, issuer anchors configured); the wallet-side time
              (the issuer's handling subtracted) against its crypto floor of 50 key
              generations, 50 proof signatures and 50 credential verifications
    """

    static func main() throws {
        warmUpAllocator()
        var arguments = Array(CommandLine.arguments.dropFirst())
        guard let name = arguments.first else { print(usage); exit(2) }
        arguments.removeFirst()
        var iterations = 200
        var python: String?
        var json = false
        var carrier: ProximityBenchmark.Carrier?
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
            case "--carrier" where name == "proximity":
                guard let value = arguments.first.flatMap(ProximityBenchmark.Carrier.init(rawValue:)) else { print(usage); exit(2) }
                carrier = value
                arguments.removeFirst()
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
            let host = BenchHost.current()
            print(json ? BenchTable.json(rows, iterations: iterations, host: host)
                       : "wallet-bench all: \(iterations) iterations, median per run; ratios taken in this run\n"
                         + "host: \(host.line)\n" + BenchTable.text(rows))
            return
        }
        if let carrier {
            _ = try ProximityBenchmark.run(iterations: iterations, python: python, carriers: [carrier])
            return
        }
        guard let run = cases.first(where: { $0.name == name })?.run else { print(usage); exit(2) }
        _ = try run(iterations, python)
    }

    /// Puts glibc's allocator in the state a process reaches once it has freed one large
    /// buffer, as any app that has held a photo or a database page cache has. A fresh
    /// process maps every allocation of 128 KiB or more anew and gives back the heap's
    /// free top past 128 KiB; freeing a mapped 4 MiB buffer raises those thresholds to
    /// 4 MiB and 8 MiB (glibc's dynamic thresholds). Without it, whether a row's 100 KB
    /// buffer was given back and faulted in again on every iteration depended on what
    /// the bodies timed beside it happened to allocate: the CBOR encode row moved from
    /// 0.45x to 1.36x its floor when the decoder allocated less, its own instructions
    /// unchanged (docs/performance.md, 2026-12-04). The SDK work and its floor run in the
    /// same process, so both see the same allocator.
    static func warmUpAllocator() {
        let size = 4 << 20
        let buffer = UnsafeMutableRawPointer.allocate(byteCount: size, alignment: 16)
        buffer.initializeMemory(as: UInt8.self, repeating: 0, count: size)
        blackHole(buffer.load(fromByteOffset: size - 1, as: UInt8.self))
        buffer.deallocate()
    }

    /// Every case, in the order `all` runs them.
    static var cases: [(name: String, run: (Int, String?) throws -> [BenchRow])] { [
        ("cbor", CBORBenchmark.run), ("storage", StorageBenchmark.run), ("sdjwt", SDJWTBenchmark.run),
        ("mdoc", MdocBenchmark.run), ("presentation", PresentationBenchmark.run), ("proximity", { try ProximityBenchmark.run(iterations: $0, python: $1) }),
        ("issuance", IssuanceBenchmark.run),
    ] }
}

/// Nanoseconds on the monotonic clock, the start that `secondsSince` measures from.
func monotonicNanoseconds() -> UInt64 { DispatchTime.now().uptimeNanoseconds }

/// The CPU time of the whole process so far (every thread), in seconds.
func processCPUSeconds() -> Double {
    var time = timespec()
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &time)
    return Double(time.tv_sec) + Double(time.tv_nsec) / 1e9
}

/// The context switches of the whole process so far (every thread; voluntary, when a
/// thread waits, and involuntary, when the scheduler takes its core).
func processContextSwitches() -> Int {
    var usage = rusage()
    #if canImport(Glibc)
    getrusage(RUSAGE_SELF.rawValue, &usage)   // an enum case in Glibc's overlay
    #else
    getrusage(RUSAGE_SELF, &usage)
    #endif
    return usage.ru_nvcsw + usage.ru_nivcsw
}

/// Seconds elapsed since `start` (a value of `monotonicNanoseconds()`).
func secondsSince(_ start: UInt64) -> Double { Double(monotonicNanoseconds() - start) / 1e9 }

/// The median of `samples` (the upper one of an even count).
private func median(_ samples: [Double]) -> Double { samples.sorted()[samples.count / 2] }

/// Times `body` `iterations` times and returns the median seconds per run.
func medianSeconds(iterations: Int, _ body: () throws -> Void) rethrows -> Double {
    var samples: [Double] = []
    samples.reserveCapacity(iterations)
    for _ in 0..<iterations {
        let start = monotonicNanoseconds()
        try body()
        samples.append(secondsSince(start))
    }
    return median(samples)
}

/// Times an async `body` `iterations` times and returns the median seconds per run.
func asyncMedianSeconds(iterations: Int, _ body: () async throws -> Void) async rethrows -> Double {
    var samples: [Double] = []
    samples.reserveCapacity(iterations)
    for _ in 0..<iterations {
        let start = monotonicNanoseconds()
        try await body()
        samples.append(secondsSince(start))
    }
    return median(samples)
}

/// The median seconds of each of `bodies`, timed in `iterations` rounds: each round
/// times every body once, in order.
///
/// A measurement and its floor are timed this way, not one after the other, for two
/// reasons (docs/performance.md, "2026-12-03, fifth session"):
/// - The speed these shared machines give general code drifts (by up to 1.9x, for
///   stretches of a second and more) while SHA-NI and, less, ECDSA keep their pace, so
///   two medians taken a few hundred milliseconds apart can come from different
///   stretches. Taken in the same rounds, both come from the same.
/// - A loop of one operation alone frees its large buffers at the top of an almost
///   empty heap, which glibc then gives back to the kernel (its trim threshold, 128 KB)
///   and faults in again on the next run: a cost of the bare loop, not of the work.
///   Between the other bodies' allocations the heap keeps its pages.
func interleavedMedians(iterations: Int, _ bodies: [() throws -> Void]) throws -> [Double] {
    var samples = [[Double]](repeating: [], count: bodies.count)
    for _ in 0..<iterations {
        for (index, body) in bodies.enumerated() {
            let start = monotonicNanoseconds()
            try body()
            samples[index].append(secondsSince(start))
        }
    }
    return samples.map(median)
}

/// ``interleavedMedians(iterations:_:)`` for async bodies.
func asyncInterleavedMedians(iterations: Int, _ bodies: [() async throws -> Void]) async throws -> [Double] {
    var samples = [[Double]](repeating: [], count: bodies.count)
    for _ in 0..<iterations {
        for (index, body) in bodies.enumerated() {
            let start = monotonicNanoseconds()
            try await body()
            samples[index].append(secondsSince(start))
        }
    }
    return samples.map(median)
}

/// Runs async work to completion from the benchmark's synchronous entry point (off the
/// cooperative pool's threads, which it waits on).
func blocking<T: Sendable>(_ body: @escaping @Sendable () async throws -> T) throws -> T {
    let box = LockedBox<Result<T, any Error>?>(nil)
    let done = DispatchSemaphore(value: 0)
    Task {
        let result: Result<T, any Error>
        do { result = .success(try await body()) } catch { result = .failure(error) }
        box.withLock { $0 = result }
        done.signal()
    }
    done.wait()
    guard let result = box.withLock({ $0 }) else { throw BenchmarkFailure() }
    return try result.get()
}

/// Keeps a value alive so the optimiser cannot drop the work that made it.
@inline(never)
func blackHole<T>(_ value: T) {
    withExtendedLifetime(value) {}
}

/// A benchmark whose work did not produce the expected result.
struct BenchmarkFailure: Error {}
