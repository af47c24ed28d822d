import Testing
@testable import WalletCrypto

private struct ECDHFile: Decodable {
    struct Test: Decodable {
        let tcId: Int
        let comment: String
        let `public`: String
        let `private`: String
        let shared: String
        let result: String
    }
    let tests: [Test]
}

@Suite("ECDH key agreement")
struct ECDHTests {
    @Test("Wycheproof ECDH secp256r1 (SEC1 point) subset: valid secrets match, invalid and off-curve points are rejected")
    func wycheproof() throws {
        let file = try TestVectors.local("wycheproof_ecdh_secp256r1_ecpoint_subset.json", as: ECDHFile.self)
        var rejected = 0
        for test in file.tests {
            let privateKey = try ECPrivateKey(rawRepresentation: fixedWidth(hex(test.private), 32), curve: .p256)
            if test.result == "invalid" {
                #expect(throws: CryptoError.self, "tcId \(test.tcId)") {
                    let peer = try ECPublicKey(x963Representation: hex(test.public), curve: .p256)
                    _ = try privateKey.sharedSecret(with: peer)
                }
                rejected += 1
            } else {
                let peer = try ECPublicKey(x963Representation: hex(test.public), curve: .p256)
                #expect(try privateKey.sharedSecret(with: peer) == SharedSecret(bytes: hex(test.shared)), "tcId \(test.tcId)")
            }
        }
        #expect(rejected >= 20)
    }

    @Test("Off-curve points are rejected with invalidKey at import")
    func offCurve() throws {
        let file = try TestVectors.local("wycheproof_ecdh_secp256r1_ecpoint_subset.json", as: ECDHFile.self)
        for test in file.tests where test.comment == "point is not on curve" {
            #expect(throws: CryptoError.self, "tcId \(test.tcId)") {
                try ECPublicKey(x963Representation: hex(test.public), curve: .p256)
            }
            #expect(throws: CryptoError.invalidKey(.notOnCurve), "tcId \(test.tcId)") {
                try ECPublicKey(x963Representation: hex(test.public), curve: .p256)
            }
        }
        // A valid point with one coordinate bit flipped is off the curve.
        let key = try ECPrivateKey.generate(curve: .p384)
        var y = key.publicKey.y
        y[y.count - 1] ^= 1
        #expect(throws: CryptoError.invalidKey(.notOnCurve)) { try ECPublicKey(x: key.publicKey.x, y: y, curve: .p384) }
    }

    @Test("Both sides derive the same secret on every curve; a curve mismatch is an error")
    func agreement() async throws {
        for curve in ECCurve.allCases {
            let a = try ECPrivateKey.generate(curve: curve)
            let b = try ECPrivateKey.generate(curve: curve)
            let ab = try a.sharedSecret(with: b.publicKey)
            let agreement: any KeyAgreement = SoftwareKeyAgreement(b)
            let ba = try await agreement.sharedSecret(with: a.publicKey)
            #expect(ab == ba)
            #expect(ab.byteCount == curve.coordinateByteCount)
        }
        let p256 = try ECPrivateKey.generate(curve: .p256)
        let p384 = try ECPrivateKey.generate(curve: .p384)
        #expect(throws: CryptoError.invalidKey(.curveMismatch(expected: .p256, actual: .p384))) {
            try p256.sharedSecret(with: p384.publicKey)
        }
    }
}
