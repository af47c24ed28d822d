import Testing
@testable import WalletCrypto

@Suite("EC key import and export")
struct ECKeyTests {
    @Test("Curve metadata: coordinate sizes and natural hashes")
    func curves() {
        #expect(ECCurve.allCases.map(\.coordinateByteCount) == [32, 48, 66])
        #expect(ECCurve.allCases.map(\.signatureHashAlgorithm) == [.sha256, .sha384, .sha512])
        #expect(ECCurve(rawValue: "P-521") == .p521)
    }

    @Test("Compressed points are decompressed to the same key as the uncompressed form")
    func compressed() throws {
        for curve in ECCurve.allCases {
            let key = try ECPrivateKey.generate(curve: curve).publicKey
            let prefix: UInt8 = (key.y.last ?? 0) & 1 == 0 ? 0x02 : 0x03
            let decompressed = try ECPublicKey(x963Representation: [prefix] + key.x, curve: curve)
            #expect(decompressed == key)
            #expect(decompressed.sec1Uncompressed.count == 1 + 2 * curve.coordinateByteCount)
            // The wrong parity is a different (valid) point.
            let other = try ECPublicKey(x963Representation: [prefix ^ 1] + key.x, curve: curve)
            #expect(other != key)
        }
    }

    @Test("Wrong lengths and encodings are typed errors")
    func badInputs() throws {
        let key = try ECPrivateKey.generate(curve: .p256).publicKey
        #expect(throws: CryptoError.invalidLength(.ecCoordinate(.p256), actual: 31)) {
            try ECPublicKey(x: Array(key.x.dropFirst()), y: key.y, curve: .p256)
        }
        #expect(throws: CryptoError.invalidKey(.malformed)) { try ECPublicKey(x963Representation: [], curve: .p256) }
        #expect(throws: CryptoError.invalidKey(.malformed)) {
            try ECPublicKey(x963Representation: key.sec1Uncompressed, curve: .p384)
        }
        #expect(throws: CryptoError.invalidKey(.malformed)) {
            try ECPublicKey(x963Representation: [0x05] + key.x + key.y, curve: .p256)
        }
        #expect(throws: CryptoError.invalidKey(.malformed)) { try ECPublicKey(x963Representation: [0x04] + key.x, curve: .p256) }
        #expect(throws: CryptoError.malformedEncoding(.subjectPublicKeyInfo)) { try ECPublicKey(spkiDER: [0x30, 0x00]) }
        #expect(throws: CryptoError.malformedEncoding(.subjectPublicKeyInfo)) { try ECPublicKey(spkiDER: key.spkiDER + [0]) }
        #expect(throws: CryptoError.malformedEncoding(.pem)) { try ECPublicKey(pem: "not a pem") }
        #expect(throws: CryptoError.invalidLength(.ecPrivateScalar(.p256), actual: 33)) {
            try ECPrivateKey(rawRepresentation: [UInt8](repeating: 1, count: 33), curve: .p256)
        }
        #expect(throws: CryptoError.self) { try ECPrivateKey(rawRepresentation: [UInt8](repeating: 0, count: 32), curve: .p256) }
        // The group order n itself is out of range.
        let order = try hex("ffffffff00000000ffffffffffffffffbce6faada7179e84f3b9cac2fc632551")
        #expect(throws: CryptoError.self) { try ECPrivateKey(rawRepresentation: order, curve: .p256) }
        #expect(throws: CryptoError.self) { try ECPrivateKey(pkcs8DER: [0x30, 0x03, 0x02, 0x01, 0x00]) }
        #expect(throws: CryptoError.self) { try ECPrivateKey(pem: "") }
    }

    @Test("The fixed SPKI forms read without OpenSSL's decoder are exactly OpenSSL's encodings, and refuse what it refuses")
    func knownSubjectPublicKeyInfoForms() throws {
        for curve in ECCurve.allCases {
            let key = try ECPrivateKey.generate(curve: curve).publicKey
            let spki = try key.spkiDER
            let prefix = try #require(SubjectPublicKeyInfoPrefix.ec.first { $0.curve == curve }?.prefix)
            #expect(spki == prefix + key.sec1Uncompressed, "\(curve)")
            // The export from the fixed prefix is OpenSSL's own encoding (i2d_PUBKEY), byte for byte.
            #expect(try key.key.subjectPublicKeyInfoDER() == spki, "\(curve)")
            #expect(SubjectPublicKeyInfoPrefix.importKnown(spki) == .ec(key))
            // The same form with a point off the curve: left to the generic decoder, which refuses it.
            var offCurve = spki
            offCurve[offCurve.count - 1] ^= 0x01
            #expect(SubjectPublicKeyInfoPrefix.importKnown(offCurve) == nil)
            #expect(throws: CryptoError.self) { try ECPublicKey(spkiDER: offCurve) }
            #expect(throws: CryptoError.self) { try PublicKey(spkiDER: offCurve) }
            // A compressed point has another length: decoded by OpenSSL, same key.
            let compressed = [(key.y.last ?? 0) & 1 == 0 ? 0x02 : 0x03] + key.x
            #expect(SubjectPublicKeyInfoPrefix.importKnown(spki.prefix(prefix.count) + compressed) == nil)
        }
        let edKey = try Ed25519PrivateKey.generate().publicKey
        let edSPKI = try edKey.spkiDER
        #expect(edSPKI == SubjectPublicKeyInfoPrefix.ed25519 + edKey.rawRepresentation)
        #expect(try edKey.key.subjectPublicKeyInfoDER() == edSPKI)
        #expect(SubjectPublicKeyInfoPrefix.importKnown(edSPKI) == .ed25519(edKey))
        // An EC key asked of an Ed25519 SPKI is still the type error.
        #expect(throws: CryptoError.unsupportedKey(expected: .ec)) { try ECPublicKey(spkiDER: edSPKI) }
    }

    @Test("a key pair's public point, read once as an encoded point, is the key's qx and qy on every curve")
    func publicPointOfKeyPair() throws {
        for curve in ECCurve.allCases {
            // Generated from the curve's shared parameters, each key is fresh.
            #expect(try ECPrivateKey.generate(curve: curve).rawScalar() != ECPrivateKey.generate(curve: curve).rawScalar())
            for key in [try ECPrivateKey.generate(curve: curve),
                        try ECPrivateKey(rawRepresentation: ECPrivateKey.generate(curve: curve).rawScalar(), curve: curve)] {
                let n = curve.coordinateByteCount
                #expect(try ECCurve(of: key.key) == curve)
                #expect(key.publicKey.x == (try key.key.integerParameter("qx", width: n)), "\(curve)")
                #expect(key.publicKey.y == (try key.key.integerParameter("qy", width: n)), "\(curve)")
                // The public key's own key object verifies what the pair signs.
                let message = Array("public point".utf8)
                #expect(key.publicKey.isValidSignature(try key.signature(for: message), for: message))
            }
        }
    }

    @Test("SPKI, PEM, PKCS#8 and raw-scalar exports round trip on every curve")
    func roundTrips() throws {
        for curve in ECCurve.allCases {
            let key = try ECPrivateKey.generate(curve: curve)
            let spki = try key.publicKey.spkiDER
            #expect(try ECPublicKey(spkiDER: spki) == key.publicKey)
            #expect(try PublicKey(spkiDER: spki) == .ec(key.publicKey))
            #expect(try PublicKey(spkiDER: spki).spkiDER == spki)
            let pem = try key.publicKey.pem
            #expect(pem.hasPrefix("-----BEGIN PUBLIC KEY-----"))
            #expect(try ECPublicKey(pem: pem) == key.publicKey)
            let scalar = try key.rawScalar()
            #expect(scalar.count == curve.coordinateByteCount)
            #expect(try ECPrivateKey(rawRepresentation: scalar, curve: curve).publicKey == key.publicKey)
            let pkcs8 = try key.pkcs8DER()
            let reimported = try ECPrivateKey(pkcs8DER: pkcs8)
            #expect(reimported.publicKey == key.publicKey && reimported.curve == curve)
            #expect(try reimported.rawScalar() == scalar)
        }
    }

    @Test("Private keys never show key material in descriptions or dumps")
    func redaction() throws {
        let key = try ECPrivateKey(rawRepresentation: hex("de3b4b9e5f72dd9b58406ae3091434da48a6f9fd010d88fcb0958e2cebec947c"), curve: .p256)
        for text in [key.description, String(reflecting: key), "\(key)"] {
            #expect(!text.contains("de3b4b9e"))
            #expect(text.contains("redacted"))
        }
        var dumped = ""
        dump(key, to: &dumped)
        #expect(!dumped.contains("de3b4b9e"))
        let edKey = try Ed25519PrivateKey.generate()
        #expect(edKey.description.contains("redacted"))
    }
}
