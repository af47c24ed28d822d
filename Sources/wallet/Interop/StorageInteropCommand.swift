import Foundation
import JOSE
import OpenID4VCI
import WalletCrypto
import WalletRuntime
import WalletStorage
import WalletEncoding

/// `wallet interop storage <subcommand> ...`: the SDK side of `Tests/Interop/test_storage_jwcrypto.py`.
///
/// Subcommands:
/// - `key-attestation [--nonce N] [--count K]` makes a wallet-provider root and leaf, creates
///   K P-256 keys in an in-memory `SoftwareSecureArea` and prints JSON
///   `{"attestation": <compact JWT>, "anchor": <base64 DER root>, "keys": [<public JWK>...]}`.
/// - `verify-key-attestation --anchor <base64 DER> [--nonce N] <compact>` prints the attested
///   keys as a JSON array, or exits 1 with the reason on stderr.
enum StorageInteropCommand {
    static func run(_ args: [String]) async -> Int32 {
        guard let subcommand = args.first else { return usage("missing subcommand") }
        let parsed: InteropOptions
        do {
            parsed = try InteropOptions(Array(args.dropFirst()))
        } catch {
            return usage("\(error)")
        }
        do {
            switch subcommand {
            case "key-attestation":
                let count = Int(parsed.values["--count"] ?? "1") ?? 0
                guard (1...32).contains(count) else { return usage("key-attestation --count 1...32") }
                let now = Date()
                let rootKey = try ECPrivateKey.generate(curve: .p256)
                let root = try CertificateBuilder.certificateAuthority(
                    subject: try DistinguishedName([(.commonName, "Interop Wallet Provider Root")]),
                    notBefore: now.addingTimeInterval(-3600), notAfter: now.addingTimeInterval(86_400)
                ).selfSigned(with: .ec(rootKey))
                let leafKey = try ECPrivateKey.generate(curve: .p256)
                let leaf = try CertificateBuilder.endEntity(
                    subject: try DistinguishedName([(.commonName, "Interop Wallet Provider")]),
                    subjectPublicKeyInfoDER: leafKey.publicKey.spkiDER,
                    notBefore: now.addingTimeInterval(-3600), notAfter: now.addingTimeInterval(86_400)
                ).signed(by: root, key: .ec(rootKey))
                let attester = KeyAttestationIssuer(
                    signer: SoftwareSigner(leafKey), certificateChain: [leaf], issuer: "https://wallet-provider.example",
                    keyStorage: [.iso18045Basic], userAuthentication: [.iso18045Basic], validity: 3600)
                let area = try SoftwareSecureArea(location: .inMemory, wrapping: try EphemeralWrappingProvider())
                let infos = try await area.createKeys(count: count, options: KeyCreationOptions())
                let keys = infos.map { JWK(publicKey: $0.publicKey).jsonValue }
                let attestation = try await attester.attest(infos.map(\.publicKey), nonce: parsed.values["--nonce"], now: now)
                let output: JSONValue = [
                    "attestation": .string(attestation.compactSerialization),
                    "anchor": .string(Base64.encode(root.derEncoded)),
                    "keys": .array(keys),
                ]
                print(output.serialized)
            case "verify-key-attestation":
                guard let anchorText = parsed.values["--anchor"], let anchorDER = Base64.decodeStrict(anchorText),
                      let compact = parsed.positional.first else {
                    return usage("verify-key-attestation --anchor <base64 DER> [--nonce N] <compact>")
                }
                let anchor = try X509Certificate(derEncoded: [UInt8](anchorDER))
                let verified = try KeyAttestationVerifier(trustAnchors: [anchor])
                    .verify(compact, expectedNonce: parsed.values["--nonce"], at: Date())
                print(JSONValue.array(verified.attestedKeys.map(\.jsonValue)).serialized)
            default:
                return usage("unknown subcommand \(subcommand)")
            }
        } catch {
            FileHandle.standardError.write(Data("storage error: \(error)\n".utf8))
            return 1
        }
        return 0
    }

    private static func usage(_ message: String) -> Int32 {
        FileHandle.standardError.write(Data("usage: wallet interop storage \(message)\n".utf8))
        return 2
    }
}
