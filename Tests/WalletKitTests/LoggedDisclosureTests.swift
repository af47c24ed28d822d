import Foundation
import JOSE
import SDJWT
import Testing
import WalletCrypto
import WalletEncoding
@testable import WalletKit

/// What the transaction log says an SD-JWT VC presentation showed: what the verifier can
/// read once the disclosures are applied, not only the paths it asked for.
@Suite("The log's view of an SD-JWT VC presentation")
struct LoggedDisclosureTests {
    /// `address` is one disclosure whose members are plain; `birthdate` is not selectively
    /// disclosable; `family_name` and `given_name` each have their own disclosure;
    /// `age_equals_or_over` is a plain object whose members are all disclosable.
    static func credential() async throws -> [UInt8] {
        let issuerKey = try ECPrivateKey.generate(curve: .p256)
        let holderKey = try ECPrivateKey.generate(curve: .p256)
        let claims: JSONObject = [
            "iss": "https://issuer.example", "vct": "urn:eudi:pid:1", "iat": 1_800_000_000,
            "family_name": "Mustermann", "given_name": "Erika", "birthdate": "1964-08-12",
            "address": ["street_address": "Heidestrasse 17", "locality": "Koeln"],
            "age_equals_or_over": ["18": true, "65": false],
            "nationalities": ["DE"],
        ]
        let plan = DisclosurePlan(members: [
            "family_name": .disclosable, "given_name": .disclosable, "address": .disclosable,
            "age_equals_or_over": .object(["18": .disclosable, "65": .disclosable]),
            "nationalities": DisclosurePlan.array([:], every: .disclosable).disclosable,
        ])
        let sdJwt = try await SDJWTIssuer(signer: SoftwareSigner(issuerKey))
            .issue(claims: claims, plan: plan, holderKey: JWK(publicKey: holderKey.publicKey))
        return Array(sdJwt.serialization.utf8)
    }

    @Test("a path inside a disclosure revealing a whole object logs every member it shows, and the claims that are always shown")
    func revealedNotRequested() async throws {
        let raw = try await Self.credential()
        let (credential, values) = try #require(CredentialClaims.loggedPresentation(
            ofSDJWT: raw, disclosing: [ClaimPath(["address", "locality"])], id: "c1", type: "urn:eudi:pid:1"))
        #expect(credential.claimPaths == [[.string("address"), .string("locality")], [.string("address"), .string("street_address")],
                                          [.string("birthdate")]])
        #expect(values == [#"["address","locality"]"#: "Koeln", #"["address","street_address"]"#: "Heidestrasse 17",
                           #"["birthdate"]"#: "1964-08-12"])
    }

    @Test("separately disclosable claims log only those asked for; arrays log as one path with the elements shown")
    func onlyRequested() async throws {
        let raw = try await Self.credential()
        let (credential, values) = try #require(CredentialClaims.loggedPresentation(
            ofSDJWT: raw, disclosing: [ClaimPath(["family_name"]), ClaimPath(["age_equals_or_over", "18"]), ClaimPath(["nationalities", nil])],
            id: "c1", type: "urn:eudi:pid:1"))
        #expect(credential.claimPaths == [[.string("age_equals_or_over"), .string("18")], [.string("birthdate")],
                                          [.string("family_name")], [.string("nationalities")]])
        #expect(values[#"["age_equals_or_over","18"]"#] == true)
        #expect(values[#"["nationalities"]"#] == ["DE"])
        #expect(values[#"["given_name"]"#] == nil)
        // No path asked: what is always shown.
        let (bare, _) = try #require(CredentialClaims.loggedPresentation(ofSDJWT: raw, disclosing: [], id: "c1", type: "urn:eudi:pid:1"))
        #expect(bare.claimPaths == [[.string("birthdate")]])
        #expect(CredentialClaims.loggedPresentation(ofSDJWT: Array("not an sd-jwt".utf8), disclosing: [], id: "c1", type: "t") == nil)
    }
}
