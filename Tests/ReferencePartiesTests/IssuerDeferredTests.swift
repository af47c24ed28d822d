import Foundation
import JOSE
import ReferenceParties
import SDJWT
import Testing
import WalletCrypto
import WalletEncoding
import WalletRuntime

@Suite("Reference issuer: deferred issuance and notifications")
struct IssuerDeferredTests {
    private let pid = IssuerCredentialConfiguration.pidId

    private func accepted(_ harness: IssuerHarness, grant: TokenGrant, holder: HolderKey) async throws -> HTTPResponse {
        let proof = try await holder.proof(audience: harness.credentialIssuer, nonce: try await harness.cNonce(), at: harness.clock.now)
        return try await harness.credentialRequest(["credential_configuration_id": .string(pid), "proofs": ["jwt": [.string(proof)]]],
                                                   grant: grant)
    }

    @Test("deferred: 202 with transaction_id and interval, 202 again while pending, then the credential bound to the proof key")
    func acceptedStyle() async throws {
        let harness = try await IssuerHarness.make { $0.deferral = DeferredIssuance(interval: 30, pendingPolls: 1) }
        let grant = try await harness.preAuthorizedToken()
        let holder = try HolderKey()
        let first = try await accepted(harness, grant: grant, holder: holder)
        #expect(first.status == 202)
        let body = try json(first)
        #expect(Set(body.keys) == ["transaction_id", "interval"])
        #expect(try body.int("interval") == 30)
        let transaction = try body.string("transaction_id")
        let pending = try await harness.credentialRequest(["transaction_id": .string(transaction)], grant: grant, path: "/deferred_credential")
        #expect(pending.status == 202)
        #expect(try json(pending).string("transaction_id") == transaction)
        let ready = try await harness.credentialRequest(["transaction_id": .string(transaction)], grant: grant, path: "/deferred_credential")
        #expect(ready.status == 200)
        let credential = try json(ready).objectArray("credentials")[0].string("credential")
        #expect(try SDJWT(compact: credential).payload.confirmationKey()?.thumbprint == holder.jwk.thumbprint)
        #expect(try json(ready).optionalString("notification_id") != nil)
        // §9.1: the transaction is over.
        let again = try await harness.credentialRequest(["transaction_id": .string(transaction)], grant: grant, path: "/deferred_credential")
        #expect(oauthError(again) == "invalid_transaction_id")
        #expect(await harness.issuer.inspection.deferredRequests == [transaction, transaction, transaction])
    }

    @Test("legacy deferral: transaction_id without interval, then 400 issuance_pending with interval")
    func legacyStyle() async throws {
        let harness = try await IssuerHarness.make {
            $0.deferral = DeferredIssuance(interval: 5, pendingPolls: 1, style: .legacyIssuancePending)
        }
        let grant = try await harness.preAuthorizedToken()
        let first = try await accepted(harness, grant: grant, holder: try HolderKey())
        #expect(first.status == 202)
        let transaction = try json(first).string("transaction_id")
        #expect(try json(first)["interval"] == nil)
        let pending = try await harness.credentialRequest(["transaction_id": .string(transaction)], grant: grant, path: "/deferred_credential")
        #expect(pending.status == 400)
        #expect(oauthError(pending) == "issuance_pending")
        #expect(try json(pending).int("interval") == 5)
        let ready = try await harness.credentialRequest(["transaction_id": .string(transaction)], grant: grant, path: "/deferred_credential")
        #expect(ready.status == 200)
    }

    @Test("a deferred transaction survives a refresh: a token of the same grant fetches it, another grant's token does not")
    func grantBinding() async throws {
        let harness = try await IssuerHarness.make { $0.deferral = DeferredIssuance() }
        let grant = try await harness.preAuthorizedToken()
        let transaction = try json(try await accepted(harness, grant: grant, holder: try HolderKey())).string("transaction_id")
        let other = try await harness.preAuthorizedToken()
        let foreign = try await harness.credentialRequest(["transaction_id": .string(transaction)], grant: other, path: "/deferred_credential")
        #expect(oauthError(foreign) == "invalid_transaction_id")
        let refreshed = try await harness.postForm(harness.asURL("/token"), [
            ("grant_type", "refresh_token"), ("refresh_token", grant.refreshToken ?? ""), ("client_id", "wallet-dev")])
        let renewed = try TokenGrant(json(refreshed), dpop: nil)
        let ready = try await harness.credentialRequest(["transaction_id": .string(transaction)], grant: renewed, path: "/deferred_credential")
        #expect(ready.status == 200)
    }

    @Test("the deferred endpoint exists only when deferral is configured")
    func noDeferredEndpoint() async throws {
        let harness = try await IssuerHarness.make()
        let grant = try await harness.preAuthorizedToken()
        #expect(try await harness.credentialRequest(["transaction_id": "x"], grant: grant, path: "/deferred_credential").status == 404)
    }

    @Test("notifications: accepted with 204 (idempotently), unknown ids and events refused, all recorded")
    func notifications() async throws {
        let vector = try issuerVector("openid4vci/credential_request_response.json")
        let events = try vector.object("expected").stringArray("notification_events")
        let harness = try await IssuerHarness.make()
        let grant = try await harness.preAuthorizedToken()
        let issued = try await accepted(harness, grant: grant, holder: try HolderKey())
        let id = try json(issued).string("notification_id")
        for event in events {
            let response = try await harness.credentialRequest(["notification_id": .string(id), "event": .string(event)],
                                                               grant: grant, path: "/notification")
            #expect(response.status == 204, "\(event)")
        }
        let described = try await harness.credentialRequest(
            ["notification_id": .string(id), "event": "credential_failure", "event_description": "Could not store the Credential."],
            grant: grant, path: "/notification")
        #expect(described.status == 204)
        let unknown = try await harness.credentialRequest(["notification_id": "nope", "event": "credential_accepted"],
                                                          grant: grant, path: "/notification")
        #expect(oauthError(unknown) == "invalid_notification_id")
        let badEvent = try await harness.credentialRequest(["notification_id": .string(id), "event": "credential_stored"],
                                                           grant: grant, path: "/notification")
        #expect(oauthError(badEvent) == "invalid_notification_request")
        let badText = try await harness.credentialRequest(
            ["notification_id": .string(id), "event": "credential_failure", "event_description": "quote \" here"],
            grant: grant, path: "/notification")
        #expect(oauthError(badText) == "invalid_notification_request")
        let missing = try await harness.credentialRequest(["event": "credential_accepted"], grant: grant, path: "/notification")
        #expect(oauthError(missing) == "invalid_notification_request")
        let recorded = await harness.issuer.inspection.notifications
        #expect(recorded.filter(\.accepted).map(\.event) == events + ["credential_failure"])
        // Malformed requests (bad text, missing id) are refused before they are recorded.
        #expect(recorded.count == events.count + 3)
        let unauthenticated = try await harness.postJSON(harness.url("/notification"), ["notification_id": .string(id), "event": "credential_accepted"])
        #expect(unauthenticated.status == 401)
    }
}
