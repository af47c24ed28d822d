import COSE
import Foundation
import Mdoc
import Testing
import WalletCrypto

/// A device key behind a prompt the user dismissed (or that needs authentication, or
/// that was invalidated): every use fails with `failure`.
private struct FailingDeviceKey: Signer {
    let key: ECPrivateKey
    let failure: KeyOperationError
    var algorithm: SignatureAlgorithm { .es256 }
    var publicKey: PublicKey { .ec(key.publicKey) }
    func sign(_ message: [UInt8]) async throws(KeyOperationError) -> [UInt8] { throw failure }
}

extension FailingDeviceKey {
    /// The agreement view of the key (the `KeyAgreement` public key is the EC key itself).
    var agreement: FailingAgreement { FailingAgreement(key: key, failure: failure) }
}

private struct FailingAgreement: KeyAgreement {
    let key: ECPrivateKey
    let failure: KeyOperationError
    var publicKey: ECPublicKey { key.publicKey }
    func sharedSecret(with peer: ECPublicKey) async throws(KeyOperationError) -> SharedSecret { throw failure }
}

/// Issue 11, acceptance 1 (second half): a signer's `.userCancelled` reaches the app
/// unchanged from an mdoc DeviceResponse.
@Suite("mdoc signer failures")
struct MdocSignerFailureTests {
    typealias S = MdocTestSupport

    @Test("a device signer's cancelled prompt surfaces from the DeviceResponse as keyOperation(.userCancelled), and so do the other key failures")
    func deviceSignature() async throws {
        let issuer = try S.pki("IACA")
        let deviceKey = try ECPrivateKey.generate(curve: .p256)
        let credential = try await S.issueMDL(issuer: issuer, deviceKey: deviceKey.publicKey)
        let (transcript, _, _) = try S.transcript()
        let request = DeviceRequest(docRequests: [DocRequest(itemsRequest: S.mDLRequest(["family_name"]))])
        for failure in [KeyOperationError.userCancelled, .authenticationRequired, .keyInvalidated] {
            let signer = FailingDeviceKey(key: deviceKey, failure: failure)
            await #expect(throws: MdocError.keyOperation(failure)) {
                _ = try await DeviceResponseBuilder.respond(
                    to: request, with: [credential], sessionTranscript: transcript,
                    consented: [S.mDL: [S.mDLNameSpace: ["family_name"]]],
                    authentication: { _ in .signature(signer) })
            }
        }
    }

    @Test("a device key agreement's cancelled prompt (deviceMac) surfaces as keyOperation(.userCancelled)")
    func deviceMac() async throws {
        let issuer = try S.pki("IACA")
        let deviceKey = try ECPrivateKey.generate(curve: .p256)
        let credential = try await S.issueMDL(issuer: issuer, deviceKey: deviceKey.publicKey)
        let (transcript, _, eReaderKey) = try S.transcript()
        let request = DeviceRequest(docRequests: [DocRequest(itemsRequest: S.mDLRequest(["family_name"]))])
        let agreement = FailingDeviceKey(key: deviceKey, failure: .userCancelled).agreement
        await #expect(throws: MdocError.keyOperation(.userCancelled)) {
            _ = try await DeviceResponseBuilder.respond(
                to: request, with: [credential], sessionTranscript: transcript,
                consented: [S.mDL: [S.mDLNameSpace: ["family_name"]]],
                authentication: { _ in .mac(deviceKey: agreement, eReaderKey: eReaderKey.publicKey) })
        }
    }

    @Test("an issuer signer's cancelled prompt surfaces from MdocIssuer as keyOperation(.userCancelled)")
    func issuerSignature() async throws {
        let issuer = try S.pki("IACA")
        let documentSignerKey = try ECPrivateKey.generate(curve: .p256)
        let failing = FailingDeviceKey(key: documentSignerKey, failure: .userCancelled)
        let deviceKey = try ECPrivateKey.generate(curve: .p256)
        await #expect(throws: MdocError.keyOperation(.userCancelled)) {
            _ = try await MdocIssuer(signer: failing, certificateChain: [issuer.anchor]).issue(
                docType: S.mDL, nameSpaces: [NameSpaced(nameSpace: S.mDLNameSpace, elements: [DataElement(identifier: "family_name", value: "Doe")])],
                deviceKey: COSEKey(publicKey: .ec(deviceKey.publicKey)),
                validity: ValidityInfo(signed: Date(), validFrom: Date(), validUntil: Date().addingTimeInterval(60)))
        }
    }
}
