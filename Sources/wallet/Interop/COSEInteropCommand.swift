import COSE
import Foundation
import WalletCrypto
import WalletRuntime
import WalletEncoding

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
    static func run(_ args: [String]) async -> Int32 {
        guard let subcommand = args.first else {
            printError("usage: interop cose sign1-sign|sign1-verify|mac0-create|mac0-verify ...")
            return 2
        }
        do {
            let options = try InteropOptions(Array(args.dropFirst()), flags: ["--detached", "--untagged"])
            switch subcommand {
            case "sign1-sign": print(Hex.encode(try await sign1Sign(options)))
            case "sign1-verify": print(Hex.encode(try sign1Verify(options)))
            case "mac0-create": print(Hex.encode(try mac0Create(options)))
            case "mac0-verify": print(Hex.encode(try mac0Verify(options)))
            default:
                printError("unknown subcommand \(subcommand)")
                return 2
            }
            return 0
        } catch let error as InteropOptions.UsageError {
            printError("usage error: \(error)")
            return 2
        } catch {
            printError("error: \(error)")
            return 1
        }
    }

    // MARK: Subcommands

    private static func sign1Sign(_ options: InteropOptions) async throws -> [UInt8] {
        let key = try COSEKey(encoded: try options.hexValue("--key"))
        let signer = try key.signer()
        if let name = options.values["--alg"], name != signer.algorithm.rawValue {
            throw COSEError.algorithmKeyMismatch
        }
        let payload = try options.hexValue("--payload")
        let aad = try options.optionalHex("--aad") ?? []
        let detached = options.flags.contains("--detached")
        let tagged = !options.flags.contains("--untagged")
        let message = try await COSESign1.sign(payload: payload, detached: detached, externalAAD: aad, tagged: tagged,
                                               signer: signer)
        return message.encodedBytes
    }

    private static func sign1Verify(_ options: InteropOptions) throws -> [UInt8] {
        let key = try COSEKey(encoded: try options.hexValue("--key"))
        let message = try COSESign1(encoded: try options.positionalHex())
        let detached = try options.optionalHex("--payload")
        try message.verify(publicKey: try key.publicKey(), externalAAD: try options.optionalHex("--aad") ?? [],
                           detachedPayload: message.payload == nil ? detached : nil)
        return message.payload ?? detached ?? []
    }

    private static func mac0Create(_ options: InteropOptions) throws -> [UInt8] {
        let algorithm = try macAlgorithm(options.values["--alg"] ?? "HS256")
        let message = try COSEMac0.create(payload: try options.hexValue("--payload"),
                                          detached: options.flags.contains("--detached"),
                                          key: SymmetricKey(bytes: try options.hexValue("--key")), algorithm: algorithm,
                                          externalAAD: try options.optionalHex("--aad") ?? [],
                                          tagged: !options.flags.contains("--untagged"))
        return message.encodedBytes
    }

    private static func mac0Verify(_ options: InteropOptions) throws -> [UInt8] {
        let message = try COSEMac0(encoded: try options.positionalHex())
        let detached = try options.optionalHex("--payload")
        try message.verify(key: SymmetricKey(bytes: try options.hexValue("--key")), externalAAD: try options.optionalHex("--aad") ?? [],
                           detachedPayload: message.payload == nil ? detached : nil)
        return message.payload ?? detached ?? []
    }

    private static func macAlgorithm(_ name: String) throws -> COSEAlgorithm {
        switch name {
        case "HS256", "HMAC256/256": .hmac256
        case "HS256/64", "HMAC256/64": .hmac256Truncated64
        case "HS384": .hmac384
        case "HS512": .hmac512
        default: throw InteropOptions.UsageError(description: "unknown MAC algorithm \(name)")
        }
    }

    // MARK: Plumbing

    private static func printError(_ message: String) {
        FileHandle.standardError.write(Data((message + "\n").utf8))
    }
}
