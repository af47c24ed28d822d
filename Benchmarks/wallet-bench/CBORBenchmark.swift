import CBOR
import Foundation
import WalletCrypto

/// The `cbor` case: an mdoc-like IssuerSigned document of about 100 KB.
enum CBORBenchmark {
    static func run(iterations: Int, python: String?) throws -> [BenchRow] {
        let document = try makeDocument()
        let bytes = document.encoded()
        let megabytes = Double(bytes.count) / 1_000_000
        detail("cbor: document of \(bytes.count) bytes, \(iterations) iterations, median per run")

        let decoded = try CBOR.decode(bytes)
        // Every measurement and the floor in the same rounds (see `interleavedMedians`).
        let medians = try interleavedMedians(iterations: iterations, [
            { blackHole(try CBOR.decode(bytes)) },
            { blackHole(try CBOR.decodeItem(bytes)) },
            // What a verifier does: the document, then every embedded IssuerSignedItem and the MSO.
            {
                let item = try CBOR.decodeItem(bytes)
                for element in item["nameSpaces"]?["org.iso.18013.5.1"]?.children ?? [] {
                    blackHole(try element.embeddedItem())
                }
                if let payload = item["issuerAuth"]?[2]?.value.bytesValue {
                    blackHole(try CBOR.decodeItem(payload).embeddedItem())
                }
            },
            { blackHole(decoded.encoded()) },
            { blackHole(decoded.encoded(options: .deterministic)) },
            { blackHole(HashAlgorithm.sha256.digest(bytes)) },
        ])
        let (decode, decodeItem, decodeDeep) = (medians[0], medians[1], medians[2])
        let (encode, deterministic, sha256) = (medians[3], medians[4], medians[5])

        func line(_ name: String, _ seconds: Double) {
            let rate = megabytes / seconds
            let ratio = seconds / sha256
            detail("  " + pad(name) + String(format: "%9.1f MB/s   %6.2fx the time of the SHA-256 floor", rate, ratio))
        }
        line("decode (value)", decode)
        line("decode (exact-bytes item tree)", decodeItem)
        line("decode + every tag-24 item and MSO", decodeDeep)
        line("encode (preferred)", encode)
        line("encode (deterministic, sorted)", deterministic)
        detail("  " + pad("sha-256 (OpenSSL)") + String(format: "%9.1f MB/s   the floor: hashing the same bytes once", megabytes / sha256))
        guard decoded.encoded() == bytes else {
            print("cbor: re-encoding did not reproduce the document")
            exit(1)
        }
        var peer: (decode: Double, encode: Double)?
        if let python { peer = try comparePython(python, bytes: bytes, iterations: iterations, sdkDecode: decode, sdkEncode: encode) }
        let floor = "1 SHA-256 over the bytes"
        return [
            BenchRow(suite: "cbor", name: "decode + every tag-24 item and the MSO", sdkSeconds: decodeDeep,
                     floorSeconds: sha256, floorName: floor, targetRatio: 4.0),
            BenchRow(suite: "cbor", name: "decode (value)", sdkSeconds: decode, floorSeconds: sha256, floorName: floor,
                     peerName: peer.map { _ in "cbor2 loads" }, peerSeconds: peer?.decode),
            BenchRow(suite: "cbor", name: "encode (preferred)", sdkSeconds: encode, floorSeconds: sha256, floorName: floor,
                     peerName: peer.map { _ in "cbor2 dumps" }, peerSeconds: peer?.encode),
        ]
    }

    private static func pad(_ name: String) -> String {
        name.count >= 36 ? name : name + String(repeating: " ", count: 36 - name.count)
    }

    /// Runs cbor2 over the same document in the same run, for the SDK/Python ratio.
    private static func comparePython(_ python: String, bytes: [UInt8], iterations: Int,
                                      sdkDecode: Double, sdkEncode: Double) throws -> (decode: Double, encode: Double)? {
        let script = """
        import sys, time, statistics, cbor2
        data = sys.stdin.buffer.read(); n = int(sys.argv[1])
        def median(f):
            samples = []
            for _ in range(n):
                t = time.perf_counter(); f(); samples.append(time.perf_counter() - t)
            return statistics.median(samples)
        value = cbor2.loads(data)
        print(median(lambda: cbor2.loads(data)), median(lambda: cbor2.dumps(value)))
        """
        guard let numbers = PythonPeer.run(python, script: script, arguments: [String(iterations)], input: bytes, expecting: 2) else {
            detail("  cbor2: could not run \(python) with cbor2")
            return nil
        }
        let megabytes = Double(bytes.count) / 1_000_000
        detail("  " + pad("cbor2 decode (Python)") + String(format: "%9.1f MB/s   SDK/cbor2 speed ratio %.2f", megabytes / numbers[0], numbers[0] / sdkDecode))
        detail("  " + pad("cbor2 encode (Python)") + String(format: "%9.1f MB/s   SDK/cbor2 speed ratio %.2f", megabytes / numbers[1], numbers[1] / sdkEncode))
        return (numbers[0], numbers[1])
    }

    /// An IssuerSigned-like structure: 600 tag-24 IssuerSignedItemBytes (strings,
    /// full-dates, driving privileges, a 20 KB portrait) and an issuerAuth whose
    /// payload is a tag-24 MSO with a digest per element.
    static func makeDocument() throws -> CBOR {
        var generator = SplitMix64(seed: 18013)
        var items: [CBOR] = []
        var digests = CBORMap()
        for digestID in 0..<600 {
            let value: CBOR
            switch digestID % 6 {
            case 0: value = .textString("Given name number \(digestID)")
            case 1: value = CBOR.fullDate(try CBORFullDate(year: 1990 + digestID % 30, month: 1 + digestID % 12, day: 1 + digestID % 28))
            case 2: value = .array([["vehicle_category_code": "B", "issue_date": CBOR.fullDate(try CBORFullDate(year: 2024, month: 1, day: 31))],
                                    ["vehicle_category_code": "A", "codes": [["code": "01"]]]])
            case 3: value = .unsigned(generator.next() % 100_000)
            case 4: value = .boolean(digestID % 4 == 0)
            default: value = .byteString(generator.bytes(digestID == 5 ? 20_000 : 64))
            }
            let item: CBOR = .map(CBORMap([
                ("digestID", .unsigned(UInt64(digestID))),
                ("random", .byteString(generator.bytes(16))),
                ("elementIdentifier", .textString("element_\(digestID)")),
                ("elementValue", value),
            ]))
            items.append(CBOR.embedded(item))
            digests[.unsigned(UInt64(digestID))] = .byteString(generator.bytes(32))
        }
        let mso: CBOR = .map(CBORMap([
            ("version", "1.0"), ("digestAlgorithm", "SHA-256"),
            ("valueDigests", .map(CBORMap([("org.iso.18013.5.1", .map(digests))]))),
            ("docType", "org.iso.18013.5.1.mDL"),
        ]))
        let issuerAuth: CBOR = .array([.byteString([0xa1, 0x01, 0x26]),
                                       .map(CBORMap([(.unsigned(33), .byteString(generator.bytes(500)))])),
                                       .byteString(CBOR.embedded(mso).encoded()),
                                       .byteString(generator.bytes(64))])
        return .map(CBORMap([
            ("nameSpaces", .map(CBORMap([("org.iso.18013.5.1", .array(items))]))),
            ("issuerAuth", issuerAuth),
        ]))
    }
}

/// A small deterministic generator so every run benchmarks the same document.
struct SplitMix64 {
    private var state: UInt64
    init(seed: UInt64) { state = seed }
    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
    mutating func bytes(_ count: Int) -> [UInt8] { (0..<count).map { _ in UInt8(truncatingIfNeeded: next()) } }
}
