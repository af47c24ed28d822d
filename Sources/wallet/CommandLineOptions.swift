import Foundation

/// The parsed arguments of one subcommand: positional values, options with a value, and
/// flags. Options may repeat (`--issuer-anchor A --issuer-anchor B`).
struct CommandLineOptions {
    /// Arguments that are not options, in order.
    private(set) var positional: [String] = []
    private var values: [String: [String]] = [:]
    private var flags: Set<String> = []

    /// Parses `arguments`: `valued` names take the next argument, `flagNames` take none;
    /// any other `--name` is a usage error. `-` alone is positional (standard input).
    init(_ arguments: [String], valued: Set<String>, flags flagNames: Set<String>) throws(CLIError) {
        var index = 0
        while index < arguments.count {
            let argument = arguments[index]
            if valued.contains(argument) {
                guard index + 1 < arguments.count else { throw .usage("\(argument) needs a value") }
                values[argument, default: []].append(arguments[index + 1])
                index += 2
                continue
            }
            if flagNames.contains(argument) {
                flags.insert(argument)
            } else if argument.hasPrefix("--") {
                throw .usage("unknown option \(argument)")
            } else {
                positional.append(argument)
            }
            index += 1
        }
    }

    /// The last value of option `name`.
    subscript(name: String) -> String? { values[name]?.last }
    /// Every value of option `name`, in order.
    func all(_ name: String) -> [String] { values[name] ?? [] }
    /// Whether flag `name` was given.
    func has(_ name: String) -> Bool { flags.contains(name) }
}

/// Where the wallet keeps its data, and the options every wallet-data command shares
/// (DESIGN.md, "The `wallet` command"): `--store DIR` (or `WALLET_STORE`), `--allow-http`
/// (http to loopback hosts only), `--json`, and `--timeout SECONDS` for the requests to
/// issuers and verifiers.
struct WalletHome {
    /// The options every store-using command accepts with a value.
    static let valuedOptions: Set<String> = ["--store", "--timeout"]
    /// The flags every store-using command accepts.
    static let flagOptions: Set<String> = ["--allow-http", "--json"]

    /// The directory holding `keys.sqlite`, its key file and `credentials.sqlite`.
    let directory: URL
    /// Whether http URLs to loopback hosts are allowed.
    let allowHTTP: Bool
    /// Whether the command prints one JSON document on standard output.
    let json: Bool
    /// How long a request to an issuer or verifier may go unanswered (`--timeout`, 30 s).
    let requestTimeout: Duration

    /// Reads the shared options; the store defaults to `WALLET_STORE`, then the platform's
    /// application-support folder (`~/.local/share/wallet` on Linux).
    init(_ options: CommandLineOptions, environment: [String: String] = ProcessInfo.processInfo.environment) throws(CLIError) {
        if let path = options["--store"] ?? environment["WALLET_STORE"] {
            guard !path.isEmpty else { throw .usage("--store needs a directory") }
            directory = URL(fileURLWithPath: path, isDirectory: true)
        } else {
            guard let base = FileManager.default.urls(for: .applicationSupportDirectory, in: .userDomainMask).first else {
                throw .input("no application-support folder on this system: give --store DIR")
            }
            directory = base.appendingPathComponent("wallet", isDirectory: true)
        }
        allowHTTP = options.has("--allow-http")
        json = options.has("--json")
        if let text = options["--timeout"] {
            guard let seconds = Int(text), seconds > 0, seconds <= 86_400 else {
                throw .usage("--timeout takes a number of seconds from 1 to 86400")
            }
            requestTimeout = .seconds(seconds)
        } else {
            requestTimeout = .seconds(30)
        }
    }

    /// The key database.
    var keysURL: URL { directory.appendingPathComponent("keys.sqlite") }
    /// The credential database.
    var credentialsURL: URL { directory.appendingPathComponent("credentials.sqlite") }

    /// Creates the directory (owner-only) when it does not exist yet.
    func prepare() throws(CLIError) {
        do {
            try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true,
                                                    attributes: [.posixPermissions: 0o700])
        } catch {
            throw .input("cannot create the store directory \(directory.path)")
        }
    }
}

/// Writes a progress line to standard error (standard output carries the result).
func progress(_ line: String) {
    FileHandle.standardError.write(Data((line + "\n").utf8))
}

import WalletStorage

extension WalletHome {
    /// Opens the secure area and the credential store in the directory (created when
    /// absent), and finishes key deletions a crash interrupted when no other wallet has
    /// the directory open (its ``StorageFolderLock``, which the store keeps held).
    func open() async throws(CLIError) -> (area: SoftwareSecureArea, store: CredentialStore) {
        try prepare()
        do {
            let lock = try StorageFolderLock(folder: directory)
            let wrapping = try KeyFileWrappingProvider(nextTo: keysURL)
            let area = try SoftwareSecureArea(location: .file(keysURL), wrapping: wrapping)
            let store = try CredentialStore(location: .file(credentialsURL), secureArea: area, wrapping: wrapping,
                                            folderLock: lock)
            _ = try await lock.whileAlone { () throws(StorageError) in try await store.purgeSpentKeys() }
            return (area, store)
        } catch {
            throw .failed("cannot open the wallet store in \(directory.path): \(error)")
        }
    }
}
