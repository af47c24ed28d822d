import Foundation
import WalletEncoding
import WalletRuntime

/// One line of the `wallet-bench all` table: what a case measured, the floor it is
/// measured against in the same run, the target, and a Python peer where one
/// exists.
struct BenchRow: Sendable {
    /// The case the row comes from (`cbor`, `sdjwt`, ...).
    var suite: String
    var name: String
    var sdkSeconds: Double
    var floorSeconds: Double?
    var floorName: String
    /// The ratio to the floor the issue asks for (at most this many times the floor).
    var targetRatio: Double?
    var peerName: String?
    var peerSeconds: Double?
    /// How many times faster than the peer the issue asks the SDK to be.
    var peerTargetSpeedup: Double?

    init(suite: String, name: String, sdkSeconds: Double, floorSeconds: Double?, floorName: String,
         targetRatio: Double? = nil, peerName: String? = nil, peerSeconds: Double? = nil, peerTargetSpeedup: Double? = nil) {
        self.suite = suite
        self.name = name
        self.sdkSeconds = sdkSeconds
        self.floorSeconds = floorSeconds
        self.floorName = floorName
        self.targetRatio = targetRatio
        self.peerName = peerName
        self.peerSeconds = peerSeconds
        self.peerTargetSpeedup = peerTargetSpeedup
    }

    /// SDK time over floor time (1.0 = nothing but the floor's work).
    var ratio: Double? { floorSeconds.map { sdkSeconds / $0 } }
    /// How many times faster the SDK is than the peer.
    var peerSpeedup: Double? { peerSeconds.map { $0 / sdkSeconds } }

    var json: JSONValue {
        var object: JSONObject = ["case": .string(suite), "name": .string(name), "sdk_seconds": .number(sdkSeconds),
                                  "floor": .string(floorName)]
        object["floor_seconds"] = floorSeconds.map(JSONValue.number) ?? .null
        object["ratio"] = ratio.map(JSONValue.number) ?? .null
        object["target_ratio"] = targetRatio.map(JSONValue.number) ?? .null
        object["peer"] = peerName.map(JSONValue.string) ?? .null
        object["peer_seconds"] = peerSeconds.map(JSONValue.number) ?? .null
        object["peer_speedup"] = peerSpeedup.map(JSONValue.number) ?? .null
        object["target_peer_speedup"] = peerTargetSpeedup.map(JSONValue.number) ?? .null
        return .object(object)
    }
}

/// Where a case's detailed lines go: stdout when the case runs alone; nowhere under
/// `all`, which prints only its table (or its JSON document).
enum Detail {
    static let enabled = LockedBox(true)
}

/// Prints one of a case's detailed lines (see `Detail`).
func detail(_ line: String) {
    if Detail.enabled.withLock({ $0 }) { print(line) }
}

/// The `all` table: one row per measurement, every case.
enum BenchTable {
    static func text(_ rows: [BenchRow]) -> String {
        let header = ["case", "measurement", "SDK", "floor", "ratio", "target", "peer", "peer time", "SDK faster", "peer target"]
        var lines: [[String]] = [header]
        for row in rows {
            lines.append([
                row.suite, row.name, time(row.sdkSeconds),
                row.floorSeconds.map { "\(time($0)) (\(row.floorName))" } ?? row.floorName,
                row.ratio.map { String(format: "%.2fx", $0) } ?? "-",
                row.targetRatio.map { String(format: "<= %.1fx", $0) } ?? "-",
                row.peerName ?? "-",
                row.peerSeconds.map(time) ?? "-",
                row.peerSpeedup.map { String(format: "%.1fx", $0) } ?? "-",
                row.peerTargetSpeedup.map { String(format: ">= %.0fx", $0) } ?? "-",
            ])
        }
        let widths = header.indices.map { column in lines.map { $0[column].count }.max() ?? 0 }
        return lines.map { cells in
            cells.enumerated().map { column, cell in
                column == cells.count - 1 ? cell : cell.padding(toLength: widths[column], withPad: " ", startingAt: 0)
            }.joined(separator: "  ")
        }.joined(separator: "\n")
    }

    static func json(_ rows: [BenchRow], iterations: Int, host: BenchHost) -> String {
        JSONWriter(indent: "  ").string(.object(["iterations": .integer(Int64(iterations)), "host": host.json,
                                                 "rows": .array(rows.map(\.json))]))
    }

    /// Seconds in the unit that keeps three significant digits readable.
    static func time(_ seconds: Double) -> String {
        if seconds >= 1 { return String(format: "%.2f s", seconds) }
        if seconds >= 1e-3 { return String(format: "%.2f ms", seconds * 1e3) }
        return String(format: "%.1f µs", seconds * 1e6)
    }
}
