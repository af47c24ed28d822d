import Foundation
import ReferenceParties
import Testing
@testable import wallet
import WalletEncoding
import WalletRuntime

/// `wallet issue`, `resume`, `reissue` and `credentials` against the reference issuer,
/// in-process (the interop script and `wallet serve issuer` cover real sockets).
@Suite("wallet issue against the reference issuer")
struct IssueCommandEndToEndTests {
    /// Answers prompts from a script of lines.
    final class ScriptedTerminal: IssuanceTerminal, @unchecked Sendable {
        private let lock = NSLock()
        private var lines: [String]
        private(set) var prompts: [String] = []
        init(_ lines: [String]) { self.lines = lines }
        func ask(_ prompt: String) -> String? {
            lock.lock(); defer { lock.unlock() }
            prompts.append(prompt)
            return lines.isEmpty ? nil : lines.removeFirst()
        }
    }

    static func environment(_ issuer: ReferenceIssuer, terminal: any IssuanceTerminal = ScriptedTerminal([])) -> IssueCommand.Environment {
        var environment = IssueCommand.Environment()
        environment.http = { _ in InProcessHTTPClient(handler: issuer) }
        environment.terminal = terminal
        environment.variables = [:]
        return environment
    }

    static func json(_ text: String) throws -> JSONObject { try JSONValue.parseObject(text) }

    @Test("issue with a tx_code asked on the terminal, list, show, reissue and delete")
    func lifecycle() async throws {
        let store = IssuanceCommandTests.temporaryStore()
        defer { try? FileManager.default.removeItem(atPath: store) }
        let issuer = try ReferenceIssuer(configuration: ReferenceIssuerConfiguration(dpop: .requiredWithNonce))
        let offer = try await issuer.createOffer(.preAuthorized([IssuerCredentialConfiguration.pidId], txCode: .init(value: "493536")))
        let terminal = ScriptedTerminal(["493536"])
        let output = try await IssueCommand.issue([offer.byValue, "--batch", "3", "--one-time", "--store", store, "--json"],
                                                  environment: Self.environment(issuer, terminal: terminal))
        let result = try Self.json(output)
        #expect(result["state"]?.stringValue == "completed")
        let id = try #require(result["issued"]?.arrayValue?.first?.stringValue)
        #expect(terminal.prompts.count == 1)
        #expect(terminal.prompts.first?.contains("6 digits") == true)

        let list = try JSONValue.parse(try await CredentialsCommand.run(["--store", store, "--json"], environment: Self.environment(issuer)))
        let row = try #require(list.arrayValue?.first?.objectValue)
        #expect(row["id"]?.stringValue == id)
        #expect(row["type"]?.stringValue == "urn:eudi:pid:1")
        #expect(row["remaining"]?.intValue == 3)
        #expect(row["name"]?.stringValue == "Personal ID")
        let shown = try Self.json(try await CredentialsCommand.run(["show", id, "--store", store, "--json"], environment: Self.environment(issuer)))
        #expect(shown["claims"]?["given_name"]?.stringValue == "Erika")
        #expect(shown["claims"]?["cnf"] == nil)
        // Each instance's key in the secure area is the key its credential binds, and no two share one.
        let keys = try #require(shown["instanceKeys"]?.arrayValue)
        #expect(keys.count == 3)
        #expect(keys.allSatisfy { $0["holderKey"] != nil && $0["holderKey"] != .null && $0["holderKey"] == $0["boundKey"] })
        #expect(Set(keys.compactMap { $0["holderKey"]?.serialized }).count == 3)

        let renewed = try Self.json(try await IssueCommand.reissue([id, "--store", store, "--json"], environment: Self.environment(issuer)))
        #expect(renewed["issued"]?.arrayValue?.first?.stringValue == id)

        #expect(try await CredentialsCommand.run(["delete", id, "--store", store], environment: Self.environment(issuer)) == "deleted \(id)")
        #expect(try await CredentialsCommand.run(["--store", store], environment: Self.environment(issuer)) == "no credentials")
        #expect(await issuer.inspection.notifications.map(\.event).contains("credential_deleted"))
    }

    @Test("--auto-authorize follows the authorization redirect; deferred then resume; a failure prints JSON and exits 1")
    func authorizeDeferAndFail() async throws {
        let store = IssuanceCommandTests.temporaryStore()
        defer { try? FileManager.default.removeItem(atPath: store) }
        let issuer = try ReferenceIssuer(configuration: ReferenceIssuerConfiguration(deferral: DeferredIssuance(interval: 1)))
        let output = try await IssueCommand.issue(
            [issuer.credentialIssuer, "--config", IssuerCredentialConfiguration.mDLId, "--auto-authorize", "--store", store, "--json"],
            environment: Self.environment(issuer))
        let deferred = try Self.json(output)
        #expect(deferred["state"]?.stringValue == "deferred")
        let id = try #require(deferred["credentialId"]?.stringValue)
        let resumed = try Self.json(try await IssueCommand.resume([id, "--store", store, "--json"], environment: Self.environment(issuer)))
        #expect(resumed["issued"]?.arrayValue?.first?.stringValue == id)
        let shown = try Self.json(try await CredentialsCommand.run(["show", id, "--store", store, "--json"], environment: Self.environment(issuer)))
        #expect(shown["claims"]?["org.iso.18013.5.1"]?["family_name"]?.stringValue == "Mustermann")

        let offer = try await issuer.createOffer(.preAuthorized([IssuerCredentialConfiguration.pidId], txCode: .init(value: "111111")))
        do {
            _ = try await IssueCommand.issue([offer.byValue, "--tx-code", "222222", "--store", store, "--json"],
                                             environment: Self.environment(issuer))
            Issue.record("a wrong tx_code succeeded")
        } catch {
            #expect(error.exitCode == 1)
            #expect(error.message.hasPrefix("issuance failed: authorizationFailed: invalid_grant"))
        }
    }
}
