import Foundation
import JOSE
import Mdoc
@testable import OpenID4VP
import SDJWT
import Testing
import WalletCrypto
import WalletEncoding

/// The signing half of a response: a signer's refusal reaches the session unchanged.
@Suite("Presentation builder")
struct PresentationBuilderTests {
    /// A holder key behind a prompt the user dismisses.
    struct CancellingSigner: Signer {
        let key: ECPrivateKey
        var algorithm: SignatureAlgorithm { .es256 }
        var publicKey: PublicKey { .ec(key.publicKey) }
        func sign(_ message: [UInt8]) async throws(KeyOperationError) -> [UInt8] { throw .userCancelled }
    }

    static let context = PresentationContext(
        audience: "x509_san_dns:verifier.example", nonce: "n", issuedAt: testNow,
        sessionTranscript: .openID4VP(.openID4VP(clientId: "x509_san_dns:verifier.example", nonce: "n", jwkThumbprint: nil,
                                                 responseUri: "https://verifier.example/post")))

    @Test("a signer's userCancelled surfaces as unexpected(keyOperation(.userCancelled)) from an SD-JWT presentation")
    func sdJwtUserCancelled() async throws {
        let holder = try ECPrivateKey.generate(curve: .p256), issuer = try ECPrivateKey.generate(curve: .p256)
        let credential = try await SDJWTIssuer(signer: SoftwareSigner(issuer)).issue(
            claims: ["vct": "urn:pid", "given_name": "John"], plan: DisclosurePlan(members: ["given_name": .disclosable]),
            holderKey: JWK(publicKey: holder.publicKey))
        let job = PresentationJob(queryId: "q", credentialId: "c", format: "dc+sd-jwt", disclosedPaths: [["given_name"]],
                                  intentToRetain: [:], holderBound: true, transactionData: [], deviceSignedElements: [])
        await #expect(throws: PresentationError.unexpected(.keyOperation(.userCancelled))) {
            try await PresentationBuilder.sdJwt(job, raw: Array(credential.serialization.utf8),
                                                signer: CancellingSigner(key: holder), context: Self.context)
        }
        // Unbound, no key is used at all.
        let unbound = PresentationJob(queryId: "q", credentialId: "c", format: "dc+sd-jwt", disclosedPaths: [["given_name"]],
                                      intentToRetain: [:], holderBound: false, transactionData: [], deviceSignedElements: [])
        let presentation = try await PresentationBuilder.sdJwt(unbound, raw: Array(credential.serialization.utf8),
                                                               signer: CancellingSigner(key: holder), context: Self.context)
        #expect(presentation.hasSuffix("~"))
    }

    @Test("a signer's userCancelled surfaces unchanged from an mdoc DeviceResponse")
    func mdocUserCancelled() async throws {
        let wallet = try await TestWallet.make()
        let device = try ECPrivateKey.generate(curve: .p256)
        let issued = try await wallet.mdocIssuer.issue(
            docType: TestWallet.mDL, nameSpaces: [NameSpaced(TestWallet.mDLNameSpace, TestWallet.mDLElements)],
            deviceKey: .init(publicKey: .ec(device.publicKey)),
            validity: ValidityInfo(signed: testNow, validFrom: testNow, validUntil: testNow.addingTimeInterval(86_400)))
        let job = PresentationJob(queryId: "q", credentialId: "c", format: "mso_mdoc",
                                  disclosedPaths: [[.key(TestWallet.mDLNameSpace), "family_name"]], intentToRetain: [:],
                                  holderBound: true, transactionData: [], deviceSignedElements: [])
        await #expect(throws: PresentationError.unexpected(.keyOperation(.userCancelled))) {
            try await PresentationBuilder.mdoc(job, raw: issued.encodedBytes, signer: CancellingSigner(key: device), context: Self.context)
        }
        let entry = try await PresentationBuilder.mdoc(job, raw: issued.encodedBytes, signer: SoftwareSigner(device), context: Self.context)
        let response = try DeviceResponse(encoded: try #require(Base64URL.decodeStrict(entry)))
        #expect(response.documents.first?.issuerSigned.nameSpaces.first?.elements.map { $0.item.elementIdentifier } == ["family_name"])
    }

    @Test("bytes that are not the credential's format are unreadableCredential")
    func unreadable() async throws {
        let job = PresentationJob(queryId: "q", credentialId: "c", format: "mso_mdoc", disclosedPaths: [], intentToRetain: [:],
                                  holderBound: true, transactionData: [], deviceSignedElements: [])
        let key = try ECPrivateKey.generate(curve: .p256)
        await #expect(throws: PresentationError.unexpected(.unreadableCredential("c"))) {
            try await PresentationBuilder.mdoc(job, raw: [0xFF], signer: SoftwareSigner(key), context: Self.context)
        }
        await #expect(throws: PresentationError.unexpected(.unreadableCredential("c"))) {
            try await PresentationBuilder.sdJwt(job, raw: [0xFF, 0xFE], signer: SoftwareSigner(key), context: Self.context)
        }
    }
}
