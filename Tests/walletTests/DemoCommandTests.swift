#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import Foundation
import Testing
@testable import WalletKit
import WalletEncoding
import WalletStorage

/// `wallet demo`, run as the built binary in a child process: the README's run command
/// (issue 15 acceptance 1) and its crash consistency (acceptance 3).
@Suite("wallet demo", .serialized, .timeLimit(.minutes(30)))
struct DemoCommandTests {
    /// The `wallet` executable built beside this test binary.
    static var walletBinary: URL? { WalletProcess.binary }

    typealias Run = WalletProcess.Run

    /// Runs `wallet demo` with `arguments` and waits for it (the hang guard is the suite's limit).
    static func demo(_ arguments: [String], environment: [String: String] = [:], qr: Bool = false) async throws -> Run {
        try await WalletProcess.run(["demo"] + (qr ? [] : ["--no-qr"]) + arguments, environment: environment)
    }

    /// Starts `wallet demo` told to halt at `checkpoint`, waits until it says it halted
    /// there, and kills it with SIGKILL. Returns whether it halted (false: it ended first).
    static func killAt(_ checkpoint: String, store: URL) async throws -> Bool {
        let binary = try #require(walletBinary)
        let process = Process()
        process.executableURL = binary
        process.arguments = ["demo", "--no-qr", "--json", "--store", store.path]
        process.environment = ProcessInfo.processInfo.environment.merging(["WALLET_DEMO_HALT_AT": checkpoint]) { $1 }
        let err = Pipe()
        process.standardOutput = FileHandle.nullDevice
        process.standardError = err
        try process.run()
        let halted = await withCheckedContinuation { continuation in
            Thread {
                var text = ""
                while true {
                    let chunk = err.fileHandleForReading.availableData
                    if chunk.isEmpty { continuation.resume(returning: false); return }   // the child ended
                    text += String(decoding: chunk, as: UTF8.self)
                    if text.contains("halted at \(checkpoint)\n") { continuation.resume(returning: true); return }
                }
            }.start()
        }
        if halted { kill(process.processIdentifier, SIGKILL) }
        process.waitUntilExit()
        return halted
    }

    /// The store's consistency, read without repairing anything.
    static func inspect(_ folder: URL) async throws -> StorageReport {
        let keys = folder.appendingPathComponent("keys.sqlite")
        let wrapping = try KeyFileWrappingProvider(nextTo: keys)
        let area = try SoftwareSecureArea(location: .file(keys), wrapping: wrapping)
        let store = try CredentialStore(location: .file(folder.appendingPathComponent("credentials.sqlite")), secureArea: area,
                                        wrapping: wrapping)
        defer { Task { await store.close(); await area.close() } }
        return try await WalletStorageSetup.report(area: area, store: store)
    }

    static func temporaryStore() -> URL {
        FileManager.default.temporaryDirectory.appendingPathComponent("wallet-demo-test-\(UUID().uuidString)", isDirectory: true)
    }

    @Test("the README's run command completes: two issuances, three presentations accepted, one log entry each, a sound store")
    func completes() async throws {
        let run = try await Self.demo(["--json"], qr: true)
        #expect(run.status == 0, "\(run.stderr.suffix(20).joined(separator: "\n"))")
        let report = try JSONValue.parseObject(Array(run.stdout.utf8))
        #expect(report["remote"]?["accepted"] == .bool(true))
        #expect(report["dcApi"]?["accepted"] == .bool(true))
        #expect(report["proximity"]?["documents"]?.arrayValue?.first?["received"]
            == ["family_name", "given_name", "age_over_18"], "the portrait was withheld")
        let kinds = report["transactionLog"]?.arrayValue?.compactMap { $0["kind"]?.stringValue } ?? []
        #expect(kinds == ["proximity_presentation", "dc_api_presentation", "remote_presentation", "issuance", "issuance"])
        #expect(report["transactionLog"]?.arrayValue?.allSatisfy { $0["outcome"] == "completed" && $0["trusted"] == .bool(true) } == true)
        #expect(report["storage"]?["consistent"] == .bool(true))
        #expect(report["temporary"] == .bool(true))
        let store = try #require(report["store"]?.stringValue)
        #expect(!FileManager.default.fileExists(atPath: store), "the temporary store is removed")
        // Each SessionUiState of the proximity session is shown, from the QR code to the outcome.
        let ui = run.stderr.filter { $0.contains("wallet ui: ") }
        #expect(ui.first { $0.contains("Scan the QR with reader") } != nil)
        #expect(ui.last?.contains("terminal · Completed") == true)
        #expect(run.stderr.contains { $0.hasPrefix("[6/6]") })
        // A QR code where a person would scan one: the offer, the request, the engagement
        // (libqrencode symbols, drawn black on white; QRCodeTests decodes one back).
        let symbols = run.stderr.indices.filter { index in
            run.stderr[index].hasPrefix("\u{1B}[30;107m") && (index == 0 || !run.stderr[index - 1].hasPrefix("\u{1B}[30;107m"))
        }
        #expect(symbols.count == 3)
        for caption in ["issuer: credential offer", "verifier: authorization request", "wallet: device engagement"] {
            #expect(run.stderr.contains { $0.contains(caption) }, "\(caption)")
        }
    }

    @Test("SIGKILL at every checkpoint of both issuances, then a rerun on the same store: repaired, consistent, completed")
    func killedDuringIssuance() async throws {
        let traced = try await Self.demo(["--store", Self.temporaryStore().path], environment: ["WALLET_DEMO_CHECKPOINTS": "1"])
        #expect(traced.status == 0)
        let checkpoints = traced.stderr.compactMap { line -> String? in
            guard line.hasPrefix("checkpoint ") else { return nil }
            let name = String(line.dropFirst("checkpoint ".count))
            return name.hasPrefix("pid: ") || name.hasPrefix("mdl: ") ? name : nil
        }
        #expect(checkpoints.contains("pid: POST /credential") && checkpoints.contains("mdl: POST /notification"))
        #expect(checkpoints.count >= 12)
        var orphansSeen = 0
        for checkpoint in checkpoints {
            let store = Self.temporaryStore()
            defer { try? FileManager.default.removeItem(at: store) }
            #expect(try await Self.killAt(checkpoint, store: store), "halted at \(checkpoint)")
            let killed = try await Self.inspect(store)
            #expect(killed.integrity == ["ok"], "\(checkpoint)")
            #expect(killed.missingKeys.isEmpty, "\(checkpoint)")
            orphansSeen += killed.orphanKeys.count

            let rerun = try await Self.demo(["--json", "--store", store.path])
            #expect(rerun.status == 0, "\(checkpoint): \(rerun.stderr.suffix(10).joined(separator: "\n"))")
            let report = try JSONValue.parseObject(Array(rerun.stdout.utf8))
            #expect(report["recovered"]?["removedOrphanKeys"]?.int64Value == Int64(killed.orphanKeys.count), "\(checkpoint)")
            #expect(report["storage"]?["consistent"] == .bool(true), "\(checkpoint)")
            let after = try await Self.inspect(store)
            #expect(after.isConsistent, "\(checkpoint): \(after)")
            #expect(after.credentialCount >= 2, "\(checkpoint)")
        }
        #expect(orphansSeen > 0, "some checkpoints leave keys without a credential, which the rerun removes")
    }
}
