import Foundation
import Testing

/// The built `wallet` executable, run as a child process the way a user or a script runs it.
enum WalletProcess {
    /// The `wallet` executable built beside this test binary (or `WALLET_BIN`).
    static var binary: URL? {
        if let path = ProcessInfo.processInfo.environment["WALLET_BIN"] { return URL(fileURLWithPath: path) }
        // Linux: the test executable; Apple platforms: the .xctest bundle. `wallet` is built beside either.
        var starts = [URL(fileURLWithPath: "/proc/self/exe").resolvingSymlinksInPath()]
        #if canImport(Darwin)
        starts += Bundle.allBundles.map(\.bundleURL).filter { $0.pathExtension == "xctest" }
        #endif
        for start in starts {
            var directory = start.deletingLastPathComponent()
            for _ in 0..<4 {
                let candidate = directory.appendingPathComponent("wallet")
                if FileManager.default.isExecutableFile(atPath: candidate.path) { return candidate }
                directory = directory.deletingLastPathComponent()
            }
        }
        return nil
    }

    /// How a run ended and what it printed.
    struct Run {
        let status: Int32
        let stdout: String
        let stderr: [String]
    }

    /// Runs `wallet arguments` with `environment` added to this process's, standard input
    /// empty, and waits for it to end (a hang is bounded by the caller's suite time limit).
    static func run(_ arguments: [String], environment: [String: String] = [:]) async throws -> Run {
        let executable = try #require(binary, "the wallet binary is built with the tests")
        let process = Process()
        process.executableURL = executable
        process.arguments = arguments
        process.environment = ProcessInfo.processInfo.environment.merging(environment) { $1 }
        let out = Pipe(), err = Pipe()
        process.standardInput = FileHandle.nullDevice
        process.standardOutput = out
        process.standardError = err
        try process.run()
        // Both pipes are drained off the cooperative pool, so a full pipe never blocks the child.
        async let stdout = readAll(out.fileHandleForReading)
        async let stderr = readAll(err.fileHandleForReading)
        let (output, errors) = await (stdout, stderr)
        process.waitUntilExit()
        return Run(status: process.terminationStatus, stdout: String(decoding: output, as: UTF8.self),
                   stderr: String(decoding: errors, as: UTF8.self).split(separator: "\n").map(String.init))
    }

    /// Everything `handle` yields until end of file, read on a thread of its own (not one of
    /// the few that run every test's tasks).
    static func readAll(_ handle: FileHandle) async -> [UInt8] {
        await withCheckedContinuation { continuation in
            Thread { continuation.resume(returning: Array(handle.readDataToEndOfFile())) }.start()
        }
    }
}
