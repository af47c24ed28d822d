import Foundation

// What the tests that run their own test binary again as a child process share
// (WalletStorageTests' crash safety, ReferencePartiesTests' leak probe). A library target
// of the package that only test targets depend on.

/// Runs `body` (a blocking read of a child's output, a wait for its exit) on a thread of
/// its own: blocking a thread of the cooperative pool (on Linux, dispatch's root-queue
/// workers, two on a 2-core machine) for a child's lifetime would stall every other
/// test's tasks, and their loopback requests would time out.
public func offPool<T: Sendable>(_ body: @escaping @Sendable () -> T) async -> T {
    await withCheckedContinuation { continuation in
        Thread { continuation.resume(returning: body()) }.start()
    }
}

/// Runs this test binary again as a child process, selecting one test by `filter`, with
/// extra environment variables. Its stdout comes back through the pipe; its stderr goes
/// to `errorLog` when given, and is discarded otherwise.
public func launchTestChild(filter: String, environment: [String: String], errorLog: URL? = nil) throws -> (Process, Pipe) {
    let process = Process()
    process.executableURL = URL(fileURLWithPath: "/proc/self/exe").resolvingSymlinksInPath()
    process.arguments = ["--testing-library", "swift-testing", "--filter", filter]
    var env = ProcessInfo.processInfo.environment
    for (name, value) in environment { env[name] = value }
    process.environment = env
    let pipe = Pipe()
    process.standardOutput = pipe
    var errorFile: FileHandle?
    if let errorLog {
        guard FileManager.default.createFile(atPath: errorLog.path, contents: nil) else {
            throw CocoaError(.fileWriteUnknown)
        }
        errorFile = try FileHandle(forWritingTo: errorLog)
    }
    process.standardError = errorFile ?? FileHandle.nullDevice
    defer { try? errorFile?.close() }   // the child has its own copy once running
    try process.run()
    return (process, pipe)
}
