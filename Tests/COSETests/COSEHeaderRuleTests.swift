import CBOR
import COSE
import Foundation
import Testing
import WalletCrypto

/// COSE_Sign1 and COSE_Mac0 read and build their headers through one implementation, and
/// a verifier may demand that `alg` is covered by the signature or tag (issue 11 item 9,
/// issue 12).
@Suite("COSE header rules shared by Sign1 and Mac0")
struct COSEHeaderRuleTests {
    static let key = SymmetricKey(bytes: [UInt8](repeating: 0x2a, count: 32))
    static let algorithmLabel = COSEHeaderMap([(.algorithm, CBOR(COSEAlgorithm.es256.rawValue))])
    static let macAlgorithmLabel = COSEHeaderMap([(.algorithm, CBOR(COSEAlgorithm.hmac256.rawValue))])

    @Test("an alg the caller puts in the unprotected bucket stays there alone, for Sign1 and Mac0 alike")
    func callerUnprotectedAlgorithm() async throws {
        let signer = SoftwareSigner(try ECPrivateKey.generate(curve: .p256))
        let sign1 = try await COSESign1.sign(payload: [1, 2, 3], unprotected: Self.algorithmLabel, signer: signer)
        let mac0 = try COSEMac0.create(payload: [1, 2, 3], key: Self.key, unprotected: Self.macAlgorithmLabel)
        #expect(sign1.headers.protected.isEmpty && sign1.headers.unprotected[.algorithm] != nil)
        #expect(mac0.headers.protected.isEmpty && mac0.headers.unprotected[.algorithm] != nil)
        // Parsing what was built gives the same headers.
        #expect(try COSESign1(encoded: sign1.encodedBytes).headers == sign1.headers)
        #expect(try COSEMac0(encoded: mac0.encodedBytes).headers == mac0.headers)
    }

    @Test("without an alg from the caller, Sign1 and Mac0 both put it first in the protected bucket")
    func defaultProtectedAlgorithm() async throws {
        let signer = SoftwareSigner(try ECPrivateKey.generate(curve: .p256))
        let extra = COSEHeaderMap([(.contentType, CBOR(UInt64(60)))])
        let sign1 = try await COSESign1.sign(payload: [1], protected: extra, signer: signer)
        let mac0 = try COSEMac0.create(payload: [1], key: Self.key, protected: extra)
        #expect(sign1.headers.protected.labels == [.algorithm, .contentType])
        #expect(mac0.headers.protected.labels == [.algorithm, .contentType])
    }

    @Test("an alg in either bucket that differs from the key's is algorithmKeyMismatch, for Sign1 and Mac0 alike")
    func conflictingAlgorithm() async throws {
        let signer = SoftwareSigner(try ECPrivateKey.generate(curve: .p256))
        let es384 = COSEHeaderMap([(.algorithm, CBOR(COSEAlgorithm.es384.rawValue))])
        let hmac384 = COSEHeaderMap([(.algorithm, CBOR(COSEAlgorithm.hmac384.rawValue))])
        await #expect(throws: COSEError.algorithmKeyMismatch) { try await COSESign1.sign(payload: [1], protected: es384, signer: signer) }
        await #expect(throws: COSEError.algorithmKeyMismatch) { try await COSESign1.sign(payload: [1], unprotected: es384, signer: signer) }
        #expect(throws: COSEError.algorithmKeyMismatch) { try COSEMac0.create(payload: [1], key: Self.key, protected: hmac384) }
        #expect(throws: COSEError.algorithmKeyMismatch) { try COSEMac0.create(payload: [1], key: Self.key, unprotected: hmac384) }
    }

    @Test("alg in both buckets is duplicateHeaderLabel when parsing a Sign1 or a Mac0")
    func duplicateAlgorithmWhenParsing() throws {
        for tag in [COSESign1.tag, COSEMac0.tag] {
            let message = CBOR.tagged(tag, .array([.byteString(CBOR.map(CBORMap([(CBOR(1), CBOR(-7))])).encoded()),
                                                   .map(CBORMap([(CBOR(1), CBOR(-7))])), .byteString([1]), .byteString([0])])).encoded()
            if tag == COSESign1.tag {
                #expect(throws: COSEError.duplicateHeaderLabel(.algorithm)) { try COSESign1(encoded: message) }
            } else {
                #expect(throws: COSEError.duplicateHeaderLabel(.algorithm)) { try COSEMac0(encoded: message) }
            }
        }
    }

    @Test("requireProtectedAlgorithm refuses an unprotected alg with algorithmNotProtected; a protected one passes")
    func requireProtected() async throws {
        let key = try ECPrivateKey.generate(curve: .p256)
        let unprotected = try await COSESign1.sign(payload: [7], unprotected: Self.algorithmLabel, signer: SoftwareSigner(key))
        try unprotected.verify(publicKey: .ec(key.publicKey))
        #expect(throws: COSEError.algorithmNotProtected) {
            try unprotected.verify(publicKey: .ec(key.publicKey), requireProtectedAlgorithm: true)
        }
        let protected = try await COSESign1.sign(payload: [7], signer: SoftwareSigner(key))
        try protected.verify(publicKey: .ec(key.publicKey), requireProtectedAlgorithm: true)

        let mac = try COSEMac0.create(payload: [7], key: Self.key, unprotected: Self.macAlgorithmLabel)
        try mac.verify(key: Self.key)
        #expect(throws: COSEError.algorithmNotProtected) { try mac.verify(key: Self.key, requireProtectedAlgorithm: true) }
        try COSEMac0.create(payload: [7], key: Self.key).verify(key: Self.key, requireProtectedAlgorithm: true)

        let none = try COSESign1(cbor: .array([.byteString([]), .map(CBORMap()), .byteString([7]), .byteString([0])]))
        #expect(throws: COSEError.missingAlgorithm) { try none.verify(publicKey: .ec(key.publicKey), requireProtectedAlgorithm: true) }
    }
}
