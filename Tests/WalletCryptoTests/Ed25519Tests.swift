import Testing
@testable import WalletCrypto

private struct RFC8032File: Decodable {
    struct Test: Decodable {
        let name: String
        let secretKey: String
        let publicKey: String
        let message: String
        let signature: String
    }
    let tests: [Test]
}

@Suite("Ed25519")
struct Ed25519Tests {
    @Test("RFC 8032 §7.1 TEST 1 and TEST 2: public key derivation, deterministic signature, verification")
    func rfc8032() throws {
        let file = try TestVectors.local("rfc8032_ed25519.json", as: RFC8032File.self)
        #expect(file.tests.count == 2)
        for test in file.tests {
            let key = try Ed25519PrivateKey(rawRepresentation: hex(test.secretKey))
            #expect(hexString(key.publicKey.rawRepresentation) == test.publicKey, "\(test.name)")
            let signature = try key.signature(for: hex(test.message))
            #expect(hexString(signature) == test.signature, "\(test.name)")
            let publicKey = try Ed25519PublicKey(rawRepresentation: hex(test.publicKey))
            #expect(try publicKey.isValidSignature(signature, for: hex(test.message)))
            var flipped = signature
            flipped[10] ^= 4
            #expect(try !publicKey.isValidSignature(flipped, for: hex(test.message)))
            #expect(try !publicKey.isValidSignature(Array(signature.dropLast()), for: hex(test.message)))
        }
    }

    @Test("The cose-wg EdDSA-01 Ed25519 example verifies over its ToBeSigned bytes and re-signs identically")
    func coseExample() throws {
        let file = try TestVectors.shared("cose/cose_sign1_ecdsa_eddsa.json", as: COSESignExamples.self)
        let vector = try #require(file.vectors.map(\.upstream).first { $0.input.sign0.key.crv == "Ed25519" })
        let publicKey = try Ed25519PublicKey(rawRepresentation: hex(try #require(vector.input.sign0.key.x_hex)))
        let toBeSigned = try hex(vector.intermediates.ToBeSign_hex)
        let signature = try #require(COSESignExamples.signature(fromDiagnostic: vector.output.cbor_diag))
        #expect(PublicKey.ed25519(publicKey).verify(signature: signature, for: toBeSigned, algorithm: .edDSA))
        #expect(!PublicKey.ed25519(publicKey).verify(signature: signature, for: toBeSigned, algorithm: .es256))
        let privateKey = try Ed25519PrivateKey(rawRepresentation: hex(try #require(vector.input.sign0.key.d_hex)))
        #expect(try privateKey.signature(for: toBeSigned) == signature)
    }

    @Test("a small-order public key is refused with either x sign, in every encoding libsodium lists, raw or in an SPKI")
    func smallOrderKeys() throws {
        let encodings = [
            "0000000000000000000000000000000000000000000000000000000000000000",
            "0100000000000000000000000000000000000000000000000000000000000000",
            "26e8958fc2b227b045c3f489f2ef98f0d5dfac05d3c63339b13802886d53fc05",
            "c7176a703d4dd84fba3c0b760d10670f2a2053fa2c39ccc64ec7fd7792ac037a",
            "ecffffffffffffffffffffffffffffffffffffffffffffffffffffffffffff7f",
            "edffffffffffffffffffffffffffffffffffffffffffffffffffffffffffff7f",
            "eeffffffffffffffffffffffffffffffffffffffffffffffffffffffffffff7f",
        ]
        for encoding in encodings {
            var raw = try hex(encoding)
            #expect(throws: CryptoError.invalidKey(.smallOrder), "\(encoding)") { _ = try Ed25519PublicKey(rawRepresentation: raw) }
            raw[31] |= 0x80
            #expect(throws: CryptoError.invalidKey(.smallOrder), "\(encoding) with the sign bit") {
                _ = try Ed25519PublicKey(rawRepresentation: raw)
            }
        }
        // The same key through SPKI, as a certificate would carry it.
        let identity = try hex(encodings[1])
        #expect(throws: CryptoError.invalidKey(.smallOrder)) {
            _ = try Ed25519PublicKey(spkiDER: [0x30, 0x2a, 0x30, 0x05, 0x06, 0x03, 0x2b, 0x65, 0x70, 0x03, 0x21, 0x00] + identity)
        }
        // A key one bit away from the identity's encoding is an ordinary point or none.
        var near = identity
        near[0] = 0x02
        #expect(!Ed25519PublicKey.hasSmallOrder(near))
        let generated = try Ed25519PrivateKey.generate().publicKey
        #expect(try Ed25519PublicKey(rawRepresentation: generated.rawRepresentation) == generated)
    }

    @Test("Generated keys round trip through raw, PKCS#8 and SPKI; bad lengths are typed errors")
    func roundTrips() throws {
        let key = try Ed25519PrivateKey.generate()
        let raw = try key.rawRepresentation()
        #expect(raw.count == 32)
        #expect(try Ed25519PrivateKey(rawRepresentation: raw).publicKey == key.publicKey)
        #expect(try Ed25519PrivateKey(pkcs8DER: key.pkcs8DER()).publicKey == key.publicKey)
        let spki = try key.publicKey.spkiDER
        #expect(try Ed25519PublicKey(spkiDER: spki) == key.publicKey)
        #expect(try PublicKey(spkiDER: spki) == .ed25519(key.publicKey))
        #expect(throws: CryptoError.invalidLength(.ed25519PrivateKey, actual: 31)) {
            try Ed25519PrivateKey(rawRepresentation: [UInt8](repeating: 1, count: 31))
        }
        #expect(throws: CryptoError.invalidLength(.ed25519PublicKey, actual: 33)) {
            try Ed25519PublicKey(rawRepresentation: [UInt8](repeating: 1, count: 33))
        }
        let ecSPKI = try ECPrivateKey.generate(curve: .p256).publicKey.spkiDER
        #expect(throws: CryptoError.unsupportedKey(expected: .ed25519)) { try Ed25519PublicKey(spkiDER: ecSPKI) }
        #expect(throws: CryptoError.self) { try Ed25519PrivateKey(pkcs8DER: ECPrivateKey.generate(curve: .p256).pkcs8DER()) }
    }
}
