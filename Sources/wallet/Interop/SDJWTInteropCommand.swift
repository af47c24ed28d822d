import Foundation
import JOSE
import SDJWT
import WalletCrypto
import WalletEncoding

/// `wallet interop sdjwt <subcommand> ...`: the SDK side of `Tests/Interop/test_sdjwt_reference.py`.
///
/// Subcommands (JWKs and JSON as text; times as Unix seconds, default now):
/// - `verify --issuer-jwk <JWK> [--aud A --nonce N] [--plain] [--at T] <compact>` prints the disclosed claims.
/// - `present --issuer-jwk <JWK> --holder-jwk <private JWK> --paths <JSON array of claim paths>
///   [--aud A --nonce N] [--plain] [--at T] <compact>` verifies the credential, then prints a
///   presentation of `paths`, with a KB-JWT when `--aud` and `--nonce` are given.
/// - `issue --issuer-jwk <private JWK> [--holder-jwk <JWK>] --claims <JSON object> --sd-paths <JSON array>
///   [--type T] [--decoys N]` prints a new SD-JWT with every disclosure.
enum SDJWTInteropCommand {
    /// Runs one subcommand; returns the exit status (0 success, 1 failure, 2 usage error).
    static func run(_ args: [String]) async -> Int32 {
        guard let subcommand = args.first else { return usage("missing subcommand") }
        let parsed: InteropOptions
        do {
            parsed = try InteropOptions(Array(args.dropFirst()), flags: ["--plain"])
        } catch {
            return usage("\(error)")
        }
        let options = parsed.values
        do {
            var now = Date()
            if let at = options["--at"] {
                // Seconds since 1970: a finite number, within a few thousand years of it.
                guard let seconds = Double(at), seconds.isFinite, abs(seconds) < 1e11 else { return usage("--at takes seconds since 1970") }
                now = Date(timeIntervalSince1970: seconds)
            }
            switch subcommand {
            case "verify", "present":
                guard let issuerText = options["--issuer-jwk"], let compact = parsed.positional.first else {
                    return usage("\(subcommand) --issuer-jwk <compact>")
                }
                var keyBinding: KeyBindingExpectation?
                if subcommand == "verify", let audience = options["--aud"], let nonce = options["--nonce"] {
                    keyBinding = KeyBindingExpectation(audience: audience, nonce: nonce)
                }
                let verifier = SDJWTVerifier(options: SDJWTVerificationOptions(
                    issuerKey: .jwk(try JWK(json: issuerText)), now: now,
                    profile: parsed.flags.contains("--plain") ? .sdJWT : .sdJWTVC, keyBinding: keyBinding))
                let verified = try verifier.verify(compact)
                guard subcommand == "present" else {
                    print(JSONValue.object(verified.claims).serialized)
                    return 0
                }
                guard let holderText = options["--holder-jwk"], let pathsText = options["--paths"],
                      let paths = try JSONValue.parse(pathsText).arrayValue else {
                    return usage("present --holder-jwk --paths")
                }
                let claimPaths = try paths.map { try ClaimPath(json: $0) }
                let sdJWT = verified.sdJWT
                if let audience = options["--aud"], let nonce = options["--nonce"] {
                    let signer = SoftwareSigner(try JWK(json: holderText).ecPrivateKey())
                    let presentation = try await sdJWT.presentation(
                        disclosing: claimPaths, keyBinding: KeyBindingParameters(audience: audience, nonce: nonce, issuedAt: now),
                        signer: signer)
                    print(presentation.serialization)
                } else {
                    print(try sdJWT.presentation(disclosing: claimPaths).serialization)
                }
            case "issue":
                guard let issuerText = options["--issuer-jwk"], let claimsText = options["--claims"],
                      let pathsText = options["--sd-paths"], let claims = try JSONValue.parse(claimsText).objectValue,
                      let paths = try JSONValue.parse(pathsText).arrayValue else {
                    return usage("issue --issuer-jwk --claims --sd-paths")
                }
                let plan = try DisclosurePlan(selectivelyDisclosable: try paths.map { try ClaimPath(json: $0) },
                                              decoysPerObject: options["--decoys"].flatMap(Int.init) ?? 0)
                let issuer = SDJWTIssuer(signer: SoftwareSigner(try JWK(json: issuerText).ecPrivateKey()),
                                         type: options["--type"] ?? "dc+sd-jwt")
                let holder = try options["--holder-jwk"].map { try JWK(json: $0).publicJWK }
                print(try await issuer.issue(claims: claims, plan: plan, holderKey: holder).serialization)
            default:
                return usage("unknown subcommand \(subcommand)")
            }
        } catch {
            FileHandle.standardError.write(Data("sdjwt error: \(error)\n".utf8))
            return 1
        }
        return 0
    }

    private static func usage(_ message: String) -> Int32 {
        FileHandle.standardError.write(Data("usage: wallet interop sdjwt \(message)\n".utf8))
        return 2
    }
}
