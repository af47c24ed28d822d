import Foundation
import JOSE
import WalletCrypto
import WalletRuntime
import WalletEncoding

/// `wallet interop jose <subcommand> ...`: the SDK side of `Tests/Interop/test_jose_jwcrypto.py`.
///
/// Subcommands (JWKs as JSON text, binary data as base64url):
/// - `jws-sign --alg ES256|ES384|ES512|EdDSA --jwk <private JWK> --payload <b64url>` prints a compact JWS.
/// - `jws-verify --jwk <public JWK> <compact>` prints the payload (base64url), or exits 1.
/// - `jwe-encrypt --jwk <public JWK> --enc A128GCM|A192GCM|A256GCM --plaintext <b64url> [--zip]` prints a compact JWE.
/// - `jwe-decrypt --jwk <private JWK> <compact>` prints the plaintext (base64url), or exits 1.
enum JOSEInteropCommand {
    /// Runs one subcommand; returns the process exit status (0 success, 1 verification or
    /// decryption failure, 2 usage error).
    static func run(_ args: [String]) async -> Int32 {
        guard let subcommand = args.first else { return usage("missing subcommand") }
        let parsed: InteropOptions
        do {
            parsed = try InteropOptions(Array(args.dropFirst()), flags: ["--zip"])
        } catch {
            return usage("\(error)")
        }
        let options = parsed.values, flags = parsed.flags, positional = parsed.positional
        do {
            switch subcommand {
            case "jws-sign":
                guard let alg = options["--alg"], let jwkText = options["--jwk"], let payloadText = options["--payload"],
                      let payload = Base64URL.decode(payloadText) else { return usage("jws-sign --alg --jwk --payload") }
                let jwk = try JWK(json: jwkText)
                let signer: SoftwareSigner
                switch try JWSAlgorithm(header: alg) {
                case .es256, .es384, .es512: signer = SoftwareSigner(try jwk.ecPrivateKey())
                case .edDSA: signer = SoftwareSigner(try jwk.ed25519PrivateKey())
                case .hs256: return usage("HS256 is not an interop algorithm")
                }
                guard JWSAlgorithm(signer.algorithm).rawValue == alg else { return usage("alg does not fit the key") }
                let jws = try await JWS.sign(payload: payload, signer: signer, keyID: jwk.keyID)
                print(jws.compactSerialization)
            case "jws-verify":
                guard let jwkText = options["--jwk"], let compact = positional.first else {
                    return usage("jws-verify --jwk <compact>")
                }
                let jws = try JWS(compact: compact)
                try jws.verify(with: try JWK(json: jwkText))
                print(Base64URL.encode(jws.payload))
            case "jwe-encrypt":
                guard let jwkText = options["--jwk"], let encText = options["--enc"],
                      let enc = ContentEncryptionAlgorithm(rawValue: encText), let plaintextText = options["--plaintext"],
                      let plaintext = Base64URL.decode(plaintextText) else {
                    return usage("jwe-encrypt --jwk --enc --plaintext")
                }
                let jwe = try JWE.encrypt(
                    plaintext, to: try JWK(json: jwkText), contentEncryption: enc, compress: flags.contains("--zip"))
                print(jwe.compactSerialization)
            case "jwe-decrypt":
                guard let jwkText = options["--jwk"], let compact = positional.first else {
                    return usage("jwe-decrypt --jwk <compact>")
                }
                let plaintext = try JWE(compact: compact).decrypt(with: try JWK(json: jwkText))
                print(Base64URL.encode(plaintext))
            default:
                return usage("unknown subcommand \(subcommand)")
            }
        } catch {
            FileHandle.standardError.write(Data("jose error: \(error)\n".utf8))
            return 1
        }
        return 0
    }

    private static func usage(_ message: String) -> Int32 {
        FileHandle.standardError.write(Data("usage: wallet interop jose \(message)\n".utf8))
        return 2
    }
}
