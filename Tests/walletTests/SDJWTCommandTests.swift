import Foundation
import JOSE
import Testing
@testable import wallet
import WalletCrypto
import WalletEncoding

/// `wallet sdjwt verify`, run in-process on the RFC 9901 §5 presentation.
@Suite("wallet sdjwt")
struct SDJWTCommandTests {
    static let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()

    /// The §5 vector: the KB presentation and the issuer key, written to temporary files.
    static func files() throws -> (presentation: String, jwk: String, pem: String) {
        let url = root.deletingLastPathComponent().appendingPathComponent("shared/vectors/sdjwt/rfc9901_section5_example.json")
        let vector = try JSONValue.parse([UInt8](try Data(contentsOf: url)))
        let presentation = try #require(vector["expected"]?["sd_jwt_kb_presentation"]?.stringValue)
        let jwk = try JWK(members: try #require(vector["inputs"]?["issuer_public_jwk"]?.objectValue))
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("sdjwt-cli-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        let paths = (directory.appendingPathComponent("presentation.txt"), directory.appendingPathComponent("issuer.jwk"),
                     directory.appendingPathComponent("issuer.pem"))
        try Data(presentation.utf8).write(to: paths.0)
        try Data(jwk.jsonString.utf8).write(to: paths.1)
        try Data(try jwk.ecPublicKey().pem.utf8).write(to: paths.2)
        return (paths.0.path, paths.1.path, paths.2.path)
    }

    /// Just after the KB-JWT's iat (1748537243).
    static let at = "2025-05-29T16:47:30Z"

    @Test("verify prints the disclosed claims of a KB presentation, with a JWK or a PEM issuer key")
    func verifies() async throws {
        let files = try Self.files()
        for key in [files.jwk, files.pem] {
            let output = try await WalletCommand.run([
                "sdjwt", "verify", files.presentation, "--issuer-key", key, "--profile", "sd-jwt",
                "--aud", "https://verifier.example.org", "--nonce", "1234567890", "--at", Self.at,
            ])
            let claims = try JSONValue.parse(output)
            #expect(claims["given_name"] == "John" && claims["family_name"] == "Doe")
            #expect(claims["nationalities"] == ["US"] && claims["email"] == nil && claims["_sd"] == nil)
        }
    }

    @Test("a wrong nonce, a stale KB-JWT or a wrong key fails with one line")
    func failures() async throws {
        let files = try Self.files()
        let base = ["sdjwt", "verify", files.presentation, "--issuer-key", files.jwk, "--profile", "sd-jwt",
                    "--aud", "https://verifier.example.org"]
        let cases = [(base + ["--nonce", "other", "--at", Self.at], "SDJWTError.keyBinding.nonceMismatch"),
                     (base + ["--nonce", "1234567890"], "SDJWTError.keyBinding.invalidTime.issuedTooLongAgo")]
        for (arguments, identifier) in cases {
            do {
                _ = try await WalletCommand.run(arguments)
                Issue.record("verification passed")
            } catch {
                guard case .rejected = error else { Issue.record("unexpected \(error)"); continue }
                #expect(error.message.hasPrefix("SD-JWT verification failed [\(identifier)]: ") && !error.message.contains("\n"))
                #expect(error.exitCode == 1)
            }
        }
        let stranger = FileManager.default.temporaryDirectory.appendingPathComponent("sdjwt-cli-\(UUID().uuidString).jwk")
        try Data(JWK(publicKey: try ECPrivateKey.generate(curve: .p256).publicKey).jsonString.utf8).write(to: stranger)
        await #expect(throws: CLIError.self) {
            try await WalletCommand.run(["sdjwt", "verify", files.presentation, "--issuer-key", stranger.path, "--at", Self.at])
        }
    }

    @Test("the caller's profile decides: without --profile sd-jwt, a plain SD-JWT (typ example+sd-jwt) is refused as not an SD-JWT VC")
    func profileIsTheCallers() async throws {
        let files = try Self.files()
        let arguments = ["sdjwt", "verify", files.presentation, "--issuer-key", files.jwk, "--at", Self.at]
        for profile in [[], ["--profile", "sd-jwt-vc"]] {
            do {
                _ = try await WalletCommand.run(arguments + profile)
                Issue.record("a plain SD-JWT passed as an SD-JWT VC")
            } catch {
                #expect(error.message.hasPrefix("SD-JWT verification failed [SDJWTError.invalidCredentialType]"))
            }
        }
        await #expect(throws: CLIError.self) { try await WalletCommand.run(arguments + ["--profile", "jwt"]) }
        #expect(try await WalletCommand.run(arguments + ["--profile", "sd-jwt"]).contains("given_name"))
    }

    @Test("missing keys, a lone --aud and a bad --at are usage errors")
    func usage() async throws {
        let files = try Self.files()
        for arguments in [
            ["sdjwt", "verify", files.presentation],
            ["sdjwt", "verify", files.presentation, "--issuer-key", files.jwk, "--aud", "x"],
            ["sdjwt", "verify", files.presentation, "--issuer-key", files.jwk, "--at", "yesterday"],
            ["sdjwt", "check", files.presentation],
        ] {
            do {
                _ = try await WalletCommand.run(arguments)
                Issue.record("accepted \(arguments)")
            } catch {
                #expect(error.exitCode == 2)
            }
        }
    }
}
