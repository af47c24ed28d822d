import Foundation
import Testing
@testable import wallet
import WalletRuntime
import WalletEncoding

/// The CLI's commands, run in-process on the samples shipped in the repository.
@Suite("wallet CLI")
struct WalletCommandTests {
    static let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()

    static func sample(_ name: String) -> String { root.appendingPathComponent("Samples/\(name)").path }

    @Test("inspect expands the ItemsRequest inside an ISO 18013-5 DeviceRequest")
    func deviceRequest() async throws {
        let output = try await WalletCommand.run(["inspect", Self.sample("device-request.hex")])
        #expect(output.contains("\"itemsRequest\": 24(<< {"))
        #expect(output.contains("\"docType\": \"org.iso.18013.5.1.mDL\""))
        #expect(output.contains("\"family_name\": true"))
        #expect(output.contains("at docRequests[0].readerAuth: COSE_Sign1 (untagged)"))
        #expect(output.contains("payload: detached"))
        #expect(output.contains("mdoc reader authentication (1.0.18013.5.1.6)"))
    }

    @Test("inspect shows the IssuerAuth's MSO and summarises its x5chain")
    func issuerAuth() async throws {
        let output = try await WalletCommand.run(["inspect", Self.sample("issuer-auth.hex")])
        #expect(output.contains("\"valueDigests\": {"))
        #expect(output.contains("\"docType\": \"org.iso.18013.5.1.mDL\""))
        #expect(output.contains("subject:    C=US,CN=utopia ds"))
        #expect(output.contains("mdoc document signer (1.0.18013.5.1.2)"))
    }

    @Test("inspect summarises a DER certificate and a PEM one")
    func certificate() async throws {
        let output = try await WalletCommand.run(["inspect", Self.sample("iaca-cert.hex")])
        #expect(output.contains("subject:    C=US,CN=utopia iaca"))
        #expect(output.contains("(self-signed)"))
        let hex = try String(contentsOfFile: Self.sample("iaca-cert.hex"), encoding: .utf8)
            .trimmingCharacters(in: .whitespacesAndNewlines)
        let der = try #require(Hex.decode(hex))
        let pem = "-----BEGIN CERTIFICATE-----\n\(Data(der).base64EncodedString(options: .lineLength64Characters))\n-----END CERTIFICATE-----\n"
        let fromPEM = try await WalletCommand.run(["inspect", pem])
        #expect(fromPEM == output)
    }

    @Test("inspect decodes a JWS header and payload")
    func jws() async throws {
        // header {"alg":"ES256","typ":"JWT"}, payload {"iss":"https://issuer.example"}
        let token = "eyJhbGciOiJFUzI1NiIsInR5cCI6IkpXVCJ9.eyJpc3MiOiJodHRwczovL2lzc3Vlci5leGFtcGxlIn0.c2ln"
        let output = try await WalletCommand.run(["inspect", token])
        #expect(output.hasPrefix("JWS (compact)"))
        #expect(output.contains("\"alg\": \"ES256\""))
        #expect(output.contains("\"iss\": \"https://issuer.example\""))
        #expect(output.contains("signature: 3 bytes"))
    }

    @Test("cbor canonical sorts map keys and shortens floats")
    func canonical() async throws {
        // {"b": 1, "a": 1.5 as a double}
        let output = try await WalletCommand.run(["cbor", "canonical", "a26162016161fb3ff8000000000000"])
        #expect(output == "a26161f93e00616201")
    }

    @Test("malformed input is one typed error, not a crash")
    func malformed() async {
        await #expect(throws: CLIError.self) { _ = try await WalletCommand.run(["inspect", "ff00"]) }
        await #expect(throws: CLIError.self) { _ = try await WalletCommand.run(["inspect", "bf"]) }
        do {
            _ = try await WalletCommand.run(["inspect", "9b7fffffffffffffff"])
            Issue.record("a 2^63-element array claim was accepted")
        } catch {
            #expect(error.exitCode == 1)
            #expect(error.message.contains("not CBOR"))
        }
    }

    @Test("wrong usage exits with status 2")
    func usage() async {
        do {
            _ = try await WalletCommand.run(["frobnicate"])
            Issue.record("an unknown command was accepted")
        } catch {
            #expect(error.exitCode == 2)
        }
        do {
            _ = try await WalletCommand.run(["inspect"])
            Issue.record("inspect without input was accepted")
        } catch {
            #expect(error.exitCode == 2)
        }
    }
}

@Suite("wallet inspect on JOSE and COSE")
struct InspectJOSECOSETests {
    @Test("inspect shows a JWE's protected header (the OpenID4VP 1.0 encrypted response)")
    func jweHeader() async throws {
        let file = WalletCommandTests.root.deletingLastPathComponent()
            .appendingPathComponent("shared/vectors/openid4vp/encrypted_response_jwe.json")
        let json = try #require(try JSONSerialization.jsonObject(with: Data(contentsOf: file)) as? [String: Any])
        let inputs = try #require(json["inputs"] as? [String: Any])
        let compact = try #require(inputs["response_jwe_compact"] as? String)
        let output = try await WalletCommand.run(["inspect", compact])
        #expect(output.hasPrefix("JWE (compact)"))
        #expect(output.contains("\"alg\": \"ECDH-ES\""))
        #expect(output.contains("\"enc\": \"A128GCM\""))
        #expect(output.contains("\"kid\": \"ac\""))
        #expect(output.contains("\"epk\": {"))
        #expect(output.contains("authentication tag: 16 bytes"))
    }
}
