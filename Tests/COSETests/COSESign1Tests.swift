import CBOR
import COSE
import Foundation
import Testing
import WalletCrypto

@Suite("COSE_Sign1 signing, verification and rejection")
struct COSESign1Tests {
    static let payload = Array("an mdoc payload".utf8)

    static func signer(_ algorithm: SignatureAlgorithm) throws -> SoftwareSigner {
        switch algorithm {
        case .es256: SoftwareSigner(try ECPrivateKey.generate(curve: .p256))
        case .es384: SoftwareSigner(try ECPrivateKey.generate(curve: .p384))
        case .es512: SoftwareSigner(try ECPrivateKey.generate(curve: .p521))
        case .edDSA: SoftwareSigner(try Ed25519PrivateKey.generate())
        }
    }

    /// Replaces element `index` of an (untagged or tagged) message and re-encodes it.
    static func replacing(_ message: COSESign1, at index: Int, with value: CBOR) -> [UInt8] {
        guard case .array(var parts) = message.cbor.tagContent ?? message.cbor else { return [] }
        parts[index] = value
        return CBOR.tagged(COSESign1.tag, .array(parts)).encoded()
    }

    @Test("ES256, ES384, ES512 and EdDSA messages verify after encoding and parsing", arguments: SignatureAlgorithm.allCases)
    func roundTrip(algorithm: SignatureAlgorithm) async throws {
        let signer = try Self.signer(algorithm)
        let aad = Array("session transcript".utf8)
        let message = try await COSESign1.sign(payload: Self.payload, unprotected: COSEHeaderMap([(.keyID, .byteString([9]))]),
                                               externalAAD: aad, signer: signer)
        let parsed = try COSESign1(encoded: message.encodedBytes)
        #expect(parsed == message)
        #expect(parsed.isTagged)
        #expect(try parsed.headers.algorithm() == COSEAlgorithm(algorithm))
        #expect(parsed.headers.protectedBytes == CBOR.map([CBOR(1): CBOR(COSEAlgorithm(algorithm).rawValue)]).encoded())
        try parsed.verify(publicKey: signer.publicKey, externalAAD: aad)
        #expect(throws: COSEError.invalidSignature) { try parsed.verify(publicKey: signer.publicKey, externalAAD: [1]) }
    }

    @Test("an untagged message stays untagged and its exact bytes are kept")
    func untagged() async throws {
        let signer = try Self.signer(.es256)
        let message = try await COSESign1.sign(payload: Self.payload, tagged: false, signer: signer)
        #expect(message.encodedBytes.first == 0x84)
        let parsed = try COSESign1(encoded: message.encodedBytes)
        #expect(!parsed.isTagged && parsed.encodedBytes == message.encodedBytes)
        try parsed.verify(publicKey: signer.publicKey)
    }

    @Test("a detached payload (DeviceSignature) is signed, sent as nil and verified when supplied")
    func detachedPayload() async throws {
        let signer = try Self.signer(.es256)
        let message = try await COSESign1.sign(payload: Self.payload, detached: true, signer: signer)
        let parsed = try COSESign1(encoded: message.encodedBytes)
        #expect(parsed.payload == nil)
        try parsed.verify(publicKey: signer.publicKey, detachedPayload: Self.payload)
        #expect(throws: COSEError.missingPayload) { try parsed.verify(publicKey: signer.publicKey) }
        #expect(throws: COSEError.invalidSignature) {
            try parsed.verify(publicKey: signer.publicKey, detachedPayload: Array("other".utf8))
        }
        let attached = try await COSESign1.sign(payload: Self.payload, signer: signer)
        #expect(throws: COSEError.unexpectedDetachedPayload) {
            try attached.verify(publicKey: signer.publicKey, detachedPayload: Self.payload)
        }
    }

    @Test("a tampered payload fails with invalidSignature")
    func tamperedPayload() async throws {
        let signer = try Self.signer(.es256)
        let message = try await COSESign1.sign(payload: Self.payload, signer: signer)
        let tampered = try COSESign1(encoded: Self.replacing(message, at: 2, with: .byteString(Array("an mdoc paylоad".utf8))))
        #expect(throws: COSEError.invalidSignature) { try tampered.verify(publicKey: signer.publicKey) }
    }

    @Test("a protected header re-encoded with the same meaning but other bytes fails: bytes are never rebuilt")
    func reencodedProtectedHeader() async throws {
        let signer = try Self.signer(.es256)
        let message = try await COSESign1.sign(payload: Self.payload, signer: signer)
        // {1: -7} with -7 in a two-byte head: same map, different bytes.
        let tampered = try COSESign1(encoded: Self.replacing(message, at: 0, with: .byteString([0xa1, 0x01, 0x38, 0x06])))
        #expect(try tampered.headers.algorithm() == .es256)
        #expect(tampered.headers.protectedBytes == [0xa1, 0x01, 0x38, 0x06])
        #expect(throws: COSEError.invalidSignature) { try tampered.verify(publicKey: signer.publicKey) }
        let added = try COSESign1(encoded: Self.replacing(message, at: 0, with: .byteString(CBOR.map([CBOR(1): CBOR(-7), CBOR(3): CBOR(0)]).encoded())))
        #expect(throws: COSEError.invalidSignature) { try added.verify(publicKey: signer.publicKey) }
    }

    @Test("a truncated or extended signature fails with invalidSignatureLength", arguments: SignatureAlgorithm.allCases)
    func wrongSignatureLength(algorithm: SignatureAlgorithm) async throws {
        let signer = try Self.signer(algorithm)
        let message = try await COSESign1.sign(payload: Self.payload, signer: signer)
        let length = message.signature.count
        let truncated = try COSESign1(encoded: Self.replacing(message, at: 3, with: .byteString(Array(message.signature.dropLast()))))
        #expect(throws: COSEError.invalidSignatureLength(expected: length, actual: length - 1)) {
            try truncated.verify(publicKey: signer.publicKey)
        }
        let extended = try COSESign1(encoded: Self.replacing(message, at: 3, with: .byteString(message.signature + [0])))
        #expect(throws: COSEError.invalidSignatureLength(expected: length, actual: length + 1)) {
            try extended.verify(publicKey: signer.publicKey)
        }
    }

    @Test("a key that does not fit the algorithm fails with algorithmKeyMismatch")
    func algorithmKeyMismatch() async throws {
        let message = try await COSESign1.sign(payload: Self.payload, signer: try Self.signer(.es256))
        for other in [SignatureAlgorithm.es384, .es512, .edDSA] {
            #expect(throws: COSEError.algorithmKeyMismatch) { try message.verify(publicKey: try Self.signer(other).publicKey) }
        }
        // A signer whose algorithm differs from the alg header.
        await #expect(throws: COSEError.algorithmKeyMismatch) {
            _ = try await COSESign1.sign(payload: Self.payload, protected: COSEHeaderMap([(.algorithm, CBOR(-35))]),
                                         signer: try Self.signer(.es256))
        }
        // A MAC algorithm on a Sign1.
        let macAlg = try COSESign1(encoded: Self.replacing(message, at: 0, with: .byteString([0xa1, 0x01, 0x05])))
        #expect(throws: COSEError.algorithmKeyMismatch) { try macAlg.verify(publicKey: try Self.signer(.es256).publicKey) }
    }

    @Test("crit naming a label the verifier does not understand fails with unknownCriticalHeader")
    func unknownCritical() throws {
        let protected = CBOR.map([CBOR(1): CBOR(-7), CBOR(2): .array([CBOR(99)]), CBOR(99): CBOR(1)]).encoded()
        let bytes = CBOR.array([.byteString(protected), .map([:]), .byteString([1]), .byteString(Array(repeating: 0, count: 64))]).encoded()
        #expect(throws: COSEError.unknownCriticalHeader(.int(99))) { _ = try COSESign1(encoded: bytes) }
        let accepted = try COSESign1(encoded: bytes, understoodCriticalLabels: [.int(99)])
        #expect(accepted.headers.critical == [.int(99)])
        // crit naming a label that is only in the unprotected bucket, or nowhere.
        let absent = CBOR.map([CBOR(1): CBOR(-7), CBOR(2): .array([CBOR(4)])]).encoded()
        let unprotectedBytes = CBOR.array([.byteString(absent), .map([CBOR(4): .byteString([1])]), .byteString([1]), .byteString([])]).encoded()
        #expect(throws: COSEError.unknownCriticalHeader(.keyID)) { _ = try COSESign1(encoded: unprotectedBytes) }
        let absentOnly = CBOR.array([.byteString(absent), .map([:]), .byteString([1]), .byteString([])]).encoded()
        #expect(throws: COSEError.unknownCriticalHeader(.keyID)) { _ = try COSESign1(encoded: absentOnly) }
    }

    @Test("a label in both the protected and unprotected bucket fails with duplicateHeaderLabel")
    func labelInBothBuckets() throws {
        let protected = CBOR.map([CBOR(1): CBOR(-7)]).encoded()
        let bytes = CBOR.array([.byteString(protected), .map([CBOR(1): CBOR(-7)]), .byteString([1]), .byteString([])]).encoded()
        #expect(throws: COSEError.duplicateHeaderLabel(.algorithm)) { _ = try COSESign1(encoded: bytes) }
        #expect(throws: COSEError.duplicateHeaderLabel(.keyID)) {
            _ = try COSEHeaders(protected: COSEHeaderMap([(.keyID, .byteString([1]))]),
                                unprotected: COSEHeaderMap([(.keyID, .byteString([2]))]))
        }
    }

    @Test("malformed structures fail with malformed, unexpectedTag or cbor errors")
    func malformedStructures() async throws {
        let protected = CBOR.byteString([0xa1, 0x01, 0x26])
        let body: [CBOR] = [protected, .map([:]), .byteString([1]), .byteString([])]
        func parse(_ value: CBOR) throws { _ = try COSESign1(encoded: value.encoded()) }
        #expect(throws: COSEError.malformed(.wrongElementCount(expected: 4, actual: 3))) { try parse(.array(Array(body.prefix(3)))) }
        #expect(throws: COSEError.malformed(.wrongElementCount(expected: 4, actual: 5))) { try parse(.array(body + [.null])) }
        #expect(throws: COSEError.malformed(.notAnArray)) { try parse(.map([:])) }
        #expect(throws: COSEError.malformed(.wrongElementType(.protectedHeader))) {
            try parse(.array([.map([CBOR(1): CBOR(-7)])] + body.dropFirst()))
        }
        #expect(throws: COSEError.malformed(.wrongElementType(.unprotectedHeader))) {
            try parse(.array([protected, .array([]), .byteString([1]), .byteString([])]))
        }
        #expect(throws: COSEError.malformed(.wrongElementType(.payload))) {
            try parse(.array([protected, .map([:]), .textString("x"), .byteString([])]))
        }
        #expect(throws: COSEError.malformed(.wrongElementType(.signatureOrTag))) {
            try parse(.array([protected, .map([:]), .byteString([1]), .null]))
        }
        #expect(throws: COSEError.malformed(.headerNotAMap)) {
            try parse(.array([.byteString([0x01])] + body.dropFirst()))
        }
        #expect(throws: COSEError.malformed(.invalidHeaderValue(.keyID))) {
            try parse(.array([protected, .map([CBOR(4): .textString("11")]), .byteString([1]), .byteString([])]))
        }
        #expect(throws: COSEError.unexpectedTag(17)) { try parse(.tagged(17, .array(body))) }
        #expect(throws: COSEError.self) { _ = try COSESign1(encoded: [0xd2, 0x84, 0x43]) }
        let signed = try await COSESign1.sign(payload: [1], signer: try Self.signer(.es256))
        #expect(throws: COSEError.unexpectedTag(18)) { _ = try COSEMac0(encoded: signed.encodedBytes) }
        #expect(throws: COSEError.cbor(.trailingBytes(offset: signed.encodedBytes.count))) {
            _ = try COSESign1(encoded: signed.encodedBytes + [0])
        }
    }

    @Test("a protected byte string holding an empty map (a0) is kept as received; empty protected is h''")
    func emptyProtectedForms() throws {
        let bytes = CBOR.array([.byteString([0xa0]), .map([CBOR(1): CBOR(-7)]), .byteString([1]), .byteString([])]).encoded()
        let message = try COSESign1(encoded: bytes)
        #expect(message.headers.protectedBytes == [0xa0])
        #expect(message.headers.protected.isEmpty)
        #expect(message.encodedBytes == bytes)
        #expect(message.cbor.encoded() == bytes)
        #expect(try message.toBeSigned() == COSESign1.signatureStructure(bodyProtected: [], externalAAD: [], payload: [1]))
        let built = try COSEHeaders(unprotected: COSEHeaderMap([(.algorithm, CBOR(-7))]))
        #expect(built.protectedBytes.isEmpty)
    }

    @Test("x5chain accepts one certificate or an array, and a missing chain is invalidCertificate")
    func x5chainForms() throws {
        let root = try COSETestSupport.json("mdoc/annex_d_issuer_auth.json")
        let expected = try #require(root["expected"] as? [String: Any])
        let ds = try COSETestSupport.hex(try #require(expected["ds_cert_der_hex"] as? String))
        let iaca = try COSETestSupport.hex(try #require(expected["iaca_cert_der_hex"] as? String))
        let protected = CBOR.byteString([0xa1, 0x01, 0x26])
        let array = try COSESign1(cbor: .array([protected, .map([CBOR(33): .array([.byteString(ds), .byteString(iaca)])]), .byteString([1]), .byteString([])]))
        #expect(try array.x5chain().map(\.derEncoded) == [ds, iaca])
        let none = try COSESign1(cbor: .array([protected, .map([:]), .byteString([1]), .byteString([])]))
        #expect(throws: COSEError.invalidCertificate) { _ = try none.x5chain() }
        let garbage = try COSESign1(cbor: .array([protected, .map([CBOR(33): .byteString([0x30, 0x00])]), .byteString([1]), .byteString([])]))
        #expect(throws: COSEError.invalidCertificate) { _ = try garbage.x5chain() }
        #expect(throws: COSEError.malformed(.invalidHeaderValue(.x5chain))) {
            _ = try COSESign1(cbor: .array([protected, .map([CBOR(33): .array([])]), .byteString([1]), .byteString([])]))
        }
    }

    struct FailingSigner: Signer {
        let algorithm = SignatureAlgorithm.es256
        let publicKey: PublicKey
        let failure: KeyOperationError
        func sign(_ message: [UInt8]) async throws(KeyOperationError) -> [UInt8] { throw failure }
    }

    @Test("a signer's failure reaches the caller unchanged (a cancelled prompt stays .userCancelled)")
    func signerFailure() async throws {
        for failure in [KeyOperationError.userCancelled, .authenticationRequired, .keyInvalidated] {
            let signer = FailingSigner(publicKey: try Self.signer(.es256).publicKey, failure: failure)
            await #expect(throws: COSEError.keyOperation(failure)) {
                _ = try await COSESign1.sign(payload: [1], signer: signer)
            }
        }
    }
}
