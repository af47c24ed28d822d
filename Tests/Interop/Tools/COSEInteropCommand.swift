import COSE
import Dispatch
import Foundation
import WalletCrypto

/// `wallet interop cose <subcommand> ...`: the SDK side of `Tests/Interop/test_cose_pycose.py`.
///
///     sign1-sign   --alg ES256|ES384|ES512|EdDSA --key <private COSE_Key hex> --payload <hex>
///                  [--aad <hex>] [--detached] [--untagged]          prints the COSE_Sign1 hex
///     sign1-verify --key <public COSE_Key hex> [--aad <hex>] [--payload <hex>] <COSE_Sign1 hex>
///                                                                   prints the payload hex
///     mac0-create  --key <k hex> --payload <hex> [--alg HS256|HS256/64|HS384|HS512] [--aad <hex>]
///                  [--detached] [--untagged]                        prints the COSE_Mac0 hex
///     mac0-verify  --key <k hex> [--aad <hex>] [--payload <hex>] <COSE_Mac0 hex>
///                                                                   prints the payload hex
///
/// Exit status: 0 on success, 1 when parsing or verification fails (the typed error is
/// printed to standard error), 2 for a usage error.
enum COSEInteropCommand {
    struct UsageError: Error, CustomStringConvertible {
        let description: String
    }

    static func run(_ args: [String]) throws -> Int32 {
        guard let subcommand = args.first else {
            printError("usage: interop cose sign1-sign|sign1-verify|mac0-create|mac0-verify ...")
            return 2
        }
        do {
            let options = try Options(Array(args.dropFirst()))
            switch subcommand {
            case "sign1-sign": print(hex(try sign1Sign(options)))
            case "sign1-verify": print(hex(try sign1Verify(options)))
            case "mac0-create": print(hex(try mac0Create(options)))
            case "mac0-verify": print(hex(try mac0Verify(options)))
            default:
                printError("unknown subcommand \(subcommand)")
                return 2
            }
            return 0
        } catch let error as UsageError {
            printError("usage error: \(error)")
            return 2
        } catch {
            printError("error: \(error)")
            return 1
        }
    }

    // MARK: Subcommands

    private static func sign1Sign(_ options: Options) throws -> [UInt8] {
        let key = try COSEKey(encoded: try options.hexValue("--key"))
        let signer = try key.signer()
        if let name = options.values["--alg"], name != signer.algorithm.rawValue {
            throw COSEError.algorithmKeyMismatch
        }
        let payload = try options.hexValue("--payload")
        let aad = try options.optionalHex("--aad") ?? []
        let detached = options.flags.contains("--detached")
        let tagged = !options.flags.contains("--untagged")
        let message = try waitFor {
            try await COSESign1.sign(payload: payload, detached: detached, externalAAD: aad, tagged: tagged, signer: signer)
        }
        return message.encodedBytes
    }

    private static func sign1Verify(_ options: Options) throws -> [UInt8] {
        let key = try COSEKey(encoded: try options.hexValue("--key"))
        let message = try COSESign1(encoded: try options.positionalHex())
        let detached = try options.optionalHex("--payload")
        try message.verify(publicKey: try key.publicKey(), externalAAD: try options.optionalHex("--aad") ?? [],
                           detachedPayload: message.payload == nil ? detached : nil)
        return message.payload ?? detached ?? []
    }

    private static func mac0Create(_ options: Options) throws -> [UInt8] {
        let algorithm = try macAlgorithm(options.values["--alg"] ?? "HS256")
        let message = try COSEMac0.create(payload: try options.hexValue("--payload"),
                                          detached: options.flags.contains("--detached"),
                                          key: try options.hexValue("--key"), algorithm: algorithm,
                                          externalAAD: try options.optionalHex("--aad") ?? [],
                                          tagged: !options.flags.contains("--untagged"))
        return message.encodedBytes
    }

    private static func mac0Verify(_ options: Options) throws -> [UInt8] {
        let message = try COSEMac0(encoded: try options.positionalHex())
        let detached = try options.optionalHex("--payload")
        try message.verify(key: try options.hexValue("--key"), externalAAD: try options.optionalHex("--aad") ?? [],
                           detachedPayload: message.payload == nil ? detached : nil)
        return message.payload ?? detached ?? []
    }

    private static func macAlgorithm(_ name: String) throws -> COSEAlgorithm {
        switch name {
        case "HS256", "HMAC256/256": .hmac256
        case "HS256/64", "HMAC256/64": .hmac256Truncated64
        case "HS384": .hmac384
        case "HS512": .hmac512
        default: throw UsageError(description: "unknown MAC algorithm \(name)")
        }
    }

    // MARK: Plumbing

    /// `--name value` options, bare `--flag`s and at most one positional argument.
    private struct Options {
        static let flagNames: Set<String> = ["--detached", "--untagged"]
        var values: [String: String] = [:]
        var flags: Set<String> = []
        var positional: [String] = []

        init(_ args: [String]) throws {
            var index = 0
            while index < args.count {
                let arg = args[index]
                if Self.flagNames.contains(arg) {
                    flags.insert(arg)
                } else if arg.hasPrefix("--") {
                    guard index + 1 < args.count else { throw UsageError(description: "\(arg) needs a value") }
                    values[arg] = args[index + 1]
                    index += 1
                } else {
                    positional.append(arg)
                }
                index += 1
            }
        }

        func hexValue(_ name: String) throws -> [UInt8] {
            guard let value = values[name] else { throw UsageError(description: "missing \(name)") }
            return try COSEInteropCommand.bytes(fromHex: value)
        }

        func optionalHex(_ name: String) throws -> [UInt8]? {
            try values[name].map(COSEInteropCommand.bytes(fromHex:))
        }

        func positionalHex() throws -> [UInt8] {
            guard positional.count == 1, let value = positional.first else {
                throw UsageError(description: "expected one hex argument")
            }
            return try COSEInteropCommand.bytes(fromHex: value)
        }
    }

    private static func bytes(fromHex string: String) throws -> [UInt8] {
        let digits = Array(string.utf8)
        guard digits.count % 2 == 0 else { throw UsageError(description: "odd-length hex") }
        var result: [UInt8] = []
        result.reserveCapacity(digits.count / 2)
        var index = 0
        while index + 1 < digits.count {
            guard let high = nibble(digits[index]), let low = nibble(digits[index + 1]) else {
                throw UsageError(description: "invalid hex")
            }
            result.append(high << 4 | low)
            index += 2
        }
        return result
    }

    private static func nibble(_ digit: UInt8) -> UInt8? {
        switch digit {
        case UInt8(ascii: "0")...UInt8(ascii: "9"): digit - UInt8(ascii: "0")
        case UInt8(ascii: "a")...UInt8(ascii: "f"): digit - UInt8(ascii: "a") + 10
        case UInt8(ascii: "A")...UInt8(ascii: "F"): digit - UInt8(ascii: "A") + 10
        default: nil
        }
    }

    private static func hex(_ bytes: [UInt8]) -> String {
        bytes.map { String(format: "%02x", $0) }.joined()
    }

    private static func printError(_ message: String) {
        FileHandle.standardError.write(Data((message + "\n").utf8))
    }

    /// Runs an async operation to completion from synchronous CLI code.
    private static func waitFor<T: Sendable>(_ operation: @escaping @Sendable () async throws -> T) throws -> T {
        let box = ResultBox<T>()
        let semaphore = DispatchSemaphore(value: 0)
        Task {
            do { box.result = .success(try await operation()) } catch { box.result = .failure(error) }
            semaphore.signal()
        }
        semaphore.wait()
        guard let result = box.result else { throw UsageError(description: "operation did not finish") }
        return try result.get()
    }
}

/// Carries a result out of a `Task` to the thread blocked on the semaphore, which reads it
/// only after the task has signalled.
private final class ResultBox<T: Sendable>: @unchecked Sendable {
    var result: Result<T, any Error>?
}
