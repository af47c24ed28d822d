import Foundation
import JOSE
import WalletCrypto
import WalletEncoding
import WalletStorage

/// `wallet interop vp <subcommand> ...`: puts credentials minted by independent issuers
/// into a wallet store, so that `Tests/Interop/test_vp_presentation.py` can drive
/// `wallet present` against its own verifier.
///
/// Subcommands (all take `--store DIR`, the layout `wallet present --store` opens):
/// - `holder-key` creates a P-256 holder key and prints `{"alias", "jwk", "sec1"}`
///   (public JWK, and the uncompressed point in hex).
/// - `add --id ID --format dc+sd-jwt|mso_mdoc --type T --key-alias A --credential C`
///   stores a credential: C is the SD-JWT text, or the mdoc IssuerSigned in hex.
enum PresentationInteropCommand {
    static func run(_ args: [String]) async -> Int32 {
        guard let subcommand = args.first else { return usage("missing subcommand") }
        do {
            let parsed = try InteropOptions(Array(args.dropFirst()))
            guard let directory = parsed.values["--store"] else { return usage("\(subcommand) needs --store DIR") }
            let home = try WalletHome(CommandLineOptions(["--store", directory], valued: WalletHome.valuedOptions,
                                                         flags: WalletHome.flagOptions))
            let (area, store) = try await home.open()
            switch subcommand {
            case "holder-key":
                let info = try await area.createKey(alias: "holder-\(UUID().uuidString.lowercased())")
                guard case .ec(let key) = info.publicKey else { return usage("the area made a non-EC key") }
                print(JSONValue.object([
                    "alias": .string(info.alias), "jwk": JWK(publicKey: info.publicKey).jsonValue,
                    "sec1": .string(Hex.encode(key.x963Representation)),
                ]).serialized)
            case "add":
                guard let id = parsed.values["--id"], let formatName = parsed.values["--format"],
                      let format = CredentialFormat(rawValue: formatName), let type = parsed.values["--type"],
                      let alias = parsed.values["--key-alias"], let credential = parsed.values["--credential"] else {
                    return usage("add --id ID --format dc+sd-jwt|mso_mdoc --type T --key-alias A --credential C")
                }
                let raw = format == .msoMdoc ? try parsed.hexValue("--credential") : Array(credential.utf8)
                try await store.save(StoredCredential(
                    id: id, format: format, type: type, issuer: IssuerInfo(identifier: "https://interop-issuer.example"),
                    instances: [CredentialInstance(index: 0, keyAlias: alias, raw: raw)]))
                print(id)
            default:
                return usage("unknown subcommand \(subcommand)")
            }
        } catch {
            FileHandle.standardError.write(Data("vp error: \(error)\n".utf8))
            return 1
        }
        return 0
    }

    private static func usage(_ message: String) -> Int32 {
        FileHandle.standardError.write(Data("usage: wallet interop vp \(message)\n".utf8))
        return 2
    }
}
