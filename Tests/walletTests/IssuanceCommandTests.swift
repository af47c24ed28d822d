import Foundation
import Testing
@testable import wallet
import WalletEncoding

/// `wallet issue`, `resume`, `reissue` and `credentials`: what needs no issuer.
@Suite("wallet issue and credentials")
struct IssuanceCommandTests {
    static func temporaryStore() -> String {
        FileManager.default.temporaryDirectory.appendingPathComponent("wallet-cli-\(UUID().uuidString)").path
    }

    @Test("usage errors exit 2: no input, an issuer URL without --config, a bad --batch, --encryption or --timeout")
    func usage() async throws {
        let store = Self.temporaryStore()
        defer { try? FileManager.default.removeItem(atPath: store) }
        for arguments in [["issue", "--store", store], ["issue", "https://issuer.example", "--store", store],
                          ["issue", "{}", "--batch", "0", "--store", store], ["issue", "{}", "--encryption", "always", "--store", store],
                          ["issue", "{}", "--bogus"], ["resume", "--store", store], ["credentials", "show", "--store", store],
                          ["credentials", "frobnicate", "--store", store], ["issue", "{}", "--timeout", "0", "--store", store],
                          ["present", "openid4vp://?client_id=x", "--timeout", "soon", "--store", store]] {
            await #expect(throws: CLIError.self) { _ = try await WalletCommand.run(arguments) }
            do { _ = try await WalletCommand.run(arguments) } catch { #expect(error.exitCode == 2, "\(arguments)") }
        }
    }

    @Test("offers are told from issuer URLs; --encryption names map to the policies")
    func classification() throws {
        #expect(IssueCommand.isOffer("openid-credential-offer://?credential_offer_uri=https%3A%2F%2Fi.example%2Fo"))
        #expect(IssueCommand.isOffer("https://wallet.example/offer?credential_offer=%7B%7D"))
        #expect(IssueCommand.isOffer(#" {"credential_issuer":"https://i.example"}"#))
        #expect(!IssueCommand.isOffer("https://issuer.example/tenant"))
        #expect(try IssueCommand.encryptionPolicy(nil) == .whenRequired)
        #expect(try IssueCommand.encryptionPolicy("preferred") == .preferred)
        #expect(try IssueCommand.encryptionPolicy("required") == .required)
    }

    @Test("an empty store lists nothing; an unknown id is a failure with exit 1")
    func emptyStore() async throws {
        let store = Self.temporaryStore()
        defer { try? FileManager.default.removeItem(atPath: store) }
        #expect(try await WalletCommand.run(["credentials", "--store", store]) == "no credentials")
        #expect(try await WalletCommand.run(["credentials", "--store", store, "--json"]) == "[]")
        do {
            _ = try await WalletCommand.run(["credentials", "show", "nope", "--store", store])
            Issue.record("an unknown id was shown")
        } catch {
            #expect(error.exitCode == 1)
        }
        do {
            _ = try await WalletCommand.run(["resume", "nope", "--store", store, "--json"])
            Issue.record("an unknown id was resumed")
        } catch {
            #expect(error.exitCode == 1)
            #expect(error.message.contains("credentialNotFound"))
        }
    }

    @Test("an offer naming an http issuer is refused without --allow-http")
    func httpRefused() async throws {
        let store = Self.temporaryStore()
        defer { try? FileManager.default.removeItem(atPath: store) }
        do {
            _ = try await WalletCommand.run(["issue", #"{"credential_issuer":"http://127.0.0.1:9","credential_configuration_ids":["a"]}"#,
                                             "--store", store])
            Issue.record("http was allowed")
        } catch {
            #expect(error.exitCode == 1)
            #expect(error.message.contains("invalidOffer"))
            #expect(error.message.contains("insecureURL"))
        }
    }
}
