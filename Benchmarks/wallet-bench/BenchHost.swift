internal import COpenSSL
internal import CSQLite
import Foundation
import WalletEncoding
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// What a `wallet-bench all` run ran on, printed with its table and its JSON: the
/// ratios are taken in one run, but figures from different runs only compare on the
/// same host, processor and libraries (docs/performance.md, 2026-12-06, second section).
struct BenchHost: Sendable {
    /// The processor's model name (`/proc/cpuinfo`), or `unknown`.
    var processor: String
    /// Logical processors the process may use.
    var processors: Int
    /// The kernel's name and release (`uname`).
    var kernel: String
    /// libcrypto's version string, as the library reports it at run time.
    var openSSL: String
    /// SQLite's version, as the library reports it at run time.
    var sqlite: String

    /// The host this process runs on.
    static func current() -> BenchHost {
        BenchHost(processor: processorName() ?? "unknown", processors: ProcessInfo.processInfo.activeProcessorCount,
                  kernel: kernelRelease(), openSSL: String(cString: OpenSSL_version(OPENSSL_VERSION)),
                  sqlite: String(cString: sqlite3_libversion()))
    }

    /// One line for the text table's header.
    var line: String {
        "\(processor), \(processors) logical processors; \(kernel); \(openSSL); SQLite \(sqlite)"
    }

    var json: JSONValue {
        .object(["processor": .string(processor), "processors": .integer(Int64(processors)), "kernel": .string(kernel),
                 "openssl": .string(openSSL), "sqlite": .string(sqlite)])
    }

    private static func processorName() -> String? {
        guard let text = try? String(contentsOfFile: "/proc/cpuinfo", encoding: .utf8) else { return nil }
        for line in text.split(separator: "\n") where line.hasPrefix("model name") {
            guard let colon = line.firstIndex(of: ":") else { continue }
            return line[line.index(after: colon)...].trimmingCharacters(in: .whitespaces)
        }
        return nil
    }

    private static func kernelRelease() -> String {
        var names = utsname()
        guard uname(&names) == 0 else { return "unknown" }
        func field<T>(_ value: T) -> String {
            withUnsafeBytes(of: value) { bytes in
                String(decoding: bytes.prefix { $0 != 0 }, as: UTF8.self)
            }
        }
        return "\(field(names.sysname)) \(field(names.release)) \(field(names.machine))"
    }
}
