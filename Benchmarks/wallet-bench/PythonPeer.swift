import Foundation

/// Runs a Python reference implementation over the same input in the same run, so that
/// the SDK/peer ratio is taken on one machine state.
enum PythonPeer {
    /// Runs `script` with `python -c`, `arguments` as `sys.argv[1...]`, and `input` as
    /// its standard input. Returns the numbers it prints (seconds, whitespace-separated),
    /// or nil when it could not run, failed, or printed other than `expecting` numbers.
    static func run(_ python: String, script: String, arguments: [String], input: [UInt8] = [],
                    expecting count: Int) -> [Double]? {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: python)
        process.arguments = ["-c", script] + arguments
        let output = Pipe(), feed = Pipe()
        process.standardOutput = output
        process.standardInput = feed
        process.standardError = FileHandle.nullDevice
        do { try process.run() } catch { return nil }
        // Written from another thread: a peer that fills its output pipe before reading
        // all of its input must not dead-lock the two.
        let writer = Thread {
            feed.fileHandleForWriting.write(Data(input))
            try? feed.fileHandleForWriting.close()
        }
        writer.start()
        let printed = output.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        let numbers = String(decoding: printed, as: UTF8.self).split(whereSeparator: \.isWhitespace).compactMap { Double($0) }
        guard process.terminationStatus == 0, numbers.count == count else { return nil }
        return numbers
    }
}
