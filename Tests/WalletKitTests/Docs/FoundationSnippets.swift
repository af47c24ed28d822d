import CBOR
import COSE
import Foundation
import JOSE
import Testing
import WalletCrypto
import WalletRuntime

/// The examples of docs/foundation.md, run.
@Suite("docs/foundation.md examples")
struct FoundationSnippets {
    @Test("CBOR: deterministic encoding, decoding with exact bytes, diagnostic notation")
    func cbor() throws {
        // snippet: docs/foundation.md#1
        let value: CBOR = ["docType": "org.iso.18013.5.1.mDL", "version": "1.0"]
        let bytes = value.encoded(options: .deterministic)       // RFC 8949 §4.2.1
        let item = try CBOR.decodeItem(bytes)                     // keeps the bytes received
        let docType = item["docType"]?.value.stringValue          // "org.iso.18013.5.1.mDL"
        let exact = Array(item["docType"]!.encodedBytes)          // what a digest is computed over
        print(item.diagnostic())                                  // {"docType": "org.iso.18013.5.1.mDL", "version": "1.0"}
        // end snippet
        #expect(docType == "org.iso.18013.5.1.mDL")
        #expect(exact == CBOR.textString("org.iso.18013.5.1.mDL").encoded())
        #expect(bytes == value.encoded(options: .deterministic))
    }

    @Test("crypto and X.509: sign, verify, validate a document signer under its IACA at the clock's time")
    func crypto() throws {
        let message = Array("hello".utf8)
        let clock = ManualClock(Date(timeIntervalSince1970: 1_800_000_000))
        let caKey = try ECPrivateKey.generate(curve: .p256)
        let iaca = try CertificateBuilder.iaca(
            subject: DistinguishedName([(.commonName, "Test IACA"), (.country, "US")]),
            notBefore: clock.now.addingTimeInterval(-3600), notAfter: clock.now.addingTimeInterval(86_400)
        ).selfSigned(with: .ec(caKey))
        let documentSigner = try CertificateBuilder.mdocDocumentSigner(
            subject: DistinguishedName([(.commonName, "Test DS")]),
            subjectPublicKeyInfoDER: try ECPrivateKey.generate(curve: .p256).publicKey.spkiDER,
            notBefore: clock.now.addingTimeInterval(-60), notAfter: clock.now.addingTimeInterval(3600)
        ).signed(by: iaca, key: .ec(caKey))
        // snippet: docs/foundation.md#2
        let key = try ECPrivateKey.generate(curve: .p256)
        let signature = try key.signature(for: message)
        let valid = key.publicKey.isValidSignature(signature, for: message)

        // A chain checked at the time the injected clock gives, under the policy of its use
        // (here an ISO 18013-5 document signer under an IACA); a typed TrustFailure on failure.
        let chain = try X509ChainValidator(anchors: [iaca])
            .validate(leaf: documentSigner, at: clock.now, policy: .mdocDocumentSigner)
        // end snippet
        #expect(valid)
        #expect(chain.path == [documentSigner, iaca])
    }

    @Test("JOSE and COSE: sign through Signer, verify")
    func signer() async throws {
        let key = try ECPrivateKey.generate(curve: .p256)
        let mso = CBOR.embedded(["version": "1.0"]).encoded()
        // snippet: docs/foundation.md#3
        let signer = SoftwareSigner(key)                          // a SecureArea key signs the same way
        let jws = try await JWS.sign(payload: Array("hello".utf8), signer: signer, type: "JWT")
        try JWS(compact: jws.compactSerialization).verify(with: .ec(key.publicKey))

        let sign1 = try await COSESign1.sign(payload: mso, signer: signer)
        try COSESign1(encoded: sign1.encodedBytes).verify(publicKey: .ec(key.publicKey))
        // end snippet
    }

    enum Phase: Sendable, Equatable { case idle, working, done }

    @Test("state streams: the current state first, ending after the terminal one")
    func stateStream() async {
        // snippet: docs/foundation.md#4
        let states = StateStream<Phase>(initial: .idle, isTerminal: { $0 == .done })
        Task { states.send(.working); states.send(.done) }
        for await phase in states.states { print(phase) }         // .idle (the current state) first, ends after .done
        // end snippet
        #expect(states.current == .done)
    }
}
