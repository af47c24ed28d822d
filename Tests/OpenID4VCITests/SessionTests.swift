import Foundation
import JOSE
import Mdoc
import SDJWT
import Testing
import WalletCrypto
import WalletEncoding
import WalletRuntime
import WalletStorage
@testable import OpenID4VCI

/// Sessions driven end to end against the in-process `TestIssuer`.
@Suite("Issuance sessions")
struct SessionTests {
    /// The holder key the stored instance's credential is bound to.
    static func boundKey(_ instance: CredentialInstance, format: CredentialFormat) throws -> PublicKey {
        switch format {
        case .sdJwtVc:
            let sdJWT = try SDJWT(compact: String(decoding: instance.raw, as: UTF8.self))
            return try #require(try sdJWT.payload.confirmationKey()).publicKey()
        case .msoMdoc:
            return try IssuerSigned(encoded: instance.raw).mobileSecurityObject.devicePublicKey()
        }
    }

    @Test("pre-authorized with the tx_code given up front: one verified credential stored with its key and metadata")
    func preAuthorizedWithTxCode() async throws {
        let issuer = try TestIssuer(options: .init(txCode: "493536"))
        let wallet = try TestWalletSetup(issuer: issuer)
        let offer = try await wallet.client.resolveOffer(issuer.offerURI())
        #expect(offer.requiresTxCode)
        let session = wallet.client.start(.fromOffer(offer, configurationId: "identity", txCode: "493536"))
        let terminal = try await terminalState(of: session)
        guard case .completed(let result) = terminal else { Issue.record("ended \(terminal)"); return }
        #expect(result.issued.count == 1)
        let stored = try #require(try await wallet.storage.store.credential(id: result.issued[0]))
        #expect(stored.format == .sdJwtVc)
        #expect(stored.type == TestIssuer.vct)
        #expect(stored.issuer == IssuerInfo(identifier: issuer.base, display: [DisplayMetadata(name: "Test Issuer", locale: "en")]))
        #expect(stored.display == [DisplayMetadata(name: "Identity", locale: "en")])
        #expect(stored.instances.count == 1)
        let keys = try await wallet.keyAliases()
        #expect(keys == stored.instances.map(\.keyAlias))
        #expect(try Self.boundKey(stored.instances[0], format: .sdJwtVc) == (try await wallet.storage.secureArea.publicKey(alias: keys[0])))
        // The token request carried the code; the proof had the issuer's c_nonce and no iss (anonymous access).
        let tokenForm = try FormURLEncoding.decode(String(decoding: try #require(issuer.requests(to: "/token").first?.body), as: UTF8.self))
        #expect(tokenForm.contains { $0 == ("tx_code", "493536") })
        #expect(!tokenForm.contains { $0.0 == "client_id" })
        let proof = try JWT(compact: try #require(issuer.credentialRequests.first?["proofs"]?["jwt"]?.arrayValue?.first?.stringValue))
        #expect(proof.header.type == "openid4vci-proof+jwt")
        #expect(proof.claims.issuer == nil)
        #expect(proof.claims.nonce?.hasPrefix("c-nonce") == true)
        #expect(issuer.notifications.map { $0["event"]?.stringValue } == ["credential_accepted"])
    }

    @Test("pre-authorized with the tx_code asked: the session pauses at .txCodeRequired with the offer's hints")
    func txCodeAsked() async throws {
        let issuer = try TestIssuer(options: .init(txCode: "1234"))
        let wallet = try TestWalletSetup(issuer: issuer)
        let offer = try await wallet.client.resolveOffer(issuer.offerURI())
        let session = wallet.client.start(.fromOffer(offer, configurationId: "identity"))
        let seen = LockedBox<[IssuanceState]>([])
        let terminal = try await terminalState(of: session) { state in
            seen.withLock { $0.append(state) }
            if case .txCodeRequired = state { session.submitTxCode("1234") }
        }
        #expect(seen.withLock { $0 }.contains(.txCodeRequired(TxCodeSpec(inputMode: .numeric, length: 4, description: "Sent by SMS"))))
        guard case .completed = terminal else { Issue.record("ended \(terminal)"); return }
        #expect(seen.withLock { $0 }.contains(.processing))
    }

    @Test("a wrong tx_code ends .failed(authorizationFailed(invalid_grant)) with nothing stored and no key left")
    func wrongTxCode() async throws {
        let issuer = try TestIssuer(options: .init(txCode: "1234"))
        let wallet = try TestWalletSetup(issuer: issuer)
        let offer = try await wallet.client.resolveOffer(issuer.offerURI())
        let terminal = try await terminalState(of: wallet.client.start(.fromOffer(offer, configurationId: "identity", txCode: "9999")))
        #expect(terminal == .failed(.authorizationFailed(oauthError: "invalid_grant", reason: .rejected(status: 400, description: nil))))
        #expect(try await wallet.credentials().isEmpty)
        #expect(try await wallet.keyAliases().isEmpty)
    }
}
