import CBOR
import COSE
import Foundation
import JOSE
import Testing
import WalletCrypto
import WalletRuntime

/// The README's usage snippets, kept compiling and true.
@Suite("README examples")
struct ReadmeExampleTests {
    @Test("the CBOR example decodes with exact bytes and prints diagnostic notation")
    func cborExample() throws {
        let value: CBOR = ["docType": "org.iso.18013.5.1.mDL", "version": "1.0"]
        let bytes = value.encoded(options: .deterministic)
        let item = try CBOR.decodeItem(bytes)
        let docType = item["docType"]?.value.stringValue
        let exact = Array(try #require(item["docType"]).encodedBytes)
        #expect(docType == "org.iso.18013.5.1.mDL")
        #expect(exact == CBOR.textString("org.iso.18013.5.1.mDL").encoded())
        #expect(item.diagnostic() == #"{"docType": "org.iso.18013.5.1.mDL", "version": "1.0"}"#)
    }

    @Test("the crypto and X.509 example signs, verifies and validates a chain at the clock's time")
    func cryptoExample() throws {
        let message = Array("hello".utf8)
        let key = try ECPrivateKey.generate(curve: .p256)
        let signature = try key.signature(for: message)
        #expect(key.publicKey.isValidSignature(signature, for: message))

        let clock = ManualClock(Date(timeIntervalSince1970: 1_800_000_000))
        let caKey = try ECPrivateKey.generate(curve: .p256)
        let now = clock.now
        let iaca = try CertificateBuilder.iaca(
            subject: DistinguishedName([(.commonName, "Test IACA"), (.country, "US")]),
            notBefore: now.addingTimeInterval(-3600), notAfter: now.addingTimeInterval(86400)
        ).selfSigned(with: .ec(caKey))
        let documentSigner = try CertificateBuilder.mdocDocumentSigner(
            subject: DistinguishedName([(.commonName, "Test DS")]),
            subjectPublicKeyInfoDER: try key.publicKey.spkiDER,
            notBefore: now.addingTimeInterval(-60), notAfter: now.addingTimeInterval(3600)
        ).signed(by: iaca, key: .ec(caKey))
        let chain = try X509ChainValidator(anchors: [iaca])
            .validate(leaf: documentSigner, at: clock.now, policy: .mdocDocumentSigner)
        #expect(chain.path == [documentSigner, iaca])
    }

    @Test("the JOSE and COSE example signs through Signer and verifies")
    func joseCOSEExample() async throws {
        let key = try ECPrivateKey.generate(curve: .p256)
        let mso = CBOR.embedded(["version": "1.0"]).encoded()
        let signer = SoftwareSigner(key)
        let jws = try await JWS.sign(payload: Array("hello".utf8), signer: signer, type: "JWT")
        try JWS(compact: jws.compactSerialization).verify(with: .ec(key.publicKey))

        let sign1 = try await COSESign1.sign(payload: mso, signer: signer)
        try COSESign1(encoded: sign1.encodedBytes).verify(publicKey: .ec(key.publicKey))
    }

    enum Phase: Sendable, Equatable { case idle, working, done }

    @Test("the state stream example replays the current state and ends after the terminal one")
    func stateStreamExample() async {
        let states = StateStream<Phase>(initial: .idle, isTerminal: { $0 == .done })
        let subscription = states.states
        Task { states.send(.working); states.send(.done) }
        var seen: [Phase] = []
        for await phase in subscription { seen.append(phase) }
        #expect(seen == [.idle, .working, .done])
    }
}
