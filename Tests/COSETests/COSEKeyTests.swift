import CBOR
import COSE
import Testing
import WalletCrypto

@Suite("COSE_Key")
struct COSEKeyTests {
    typealias S = COSETestSupport

    /// Key "11" of the cose-wg key set (P-256).
    static var jwk11: [String: Any] { [
        "kty": "EC", "crv": "P-256",
        "x": "usWxHK2PmfnHKwXPS54m0kTcGJ90UiglWiGahtagnv8",
        "y": "IBOL-C3BttVivg-lSreASjpkttcsz-1rb7btKLv8EX4",
        "d": "V8kgd2ZBRuh2dgyVINBUqpPDr7BOMGcF22CQMIUHtNM",
    ] }

    @Test("an EC2 key serializes deterministically (labels 1, 2, -1, -2, -3, -4) and parses back")
    func ec2RoundTrip() throws {
        var key = try S.coseKey(fromJWK: Self.jwk11, includePrivate: true)
        key.keyID = Array("11".utf8)
        let encoded = key.encoded()
        #expect(Array(encoded.prefix(12)) == (try S.hex("a60102024231312001215820")))
        #expect(encoded.count == 1 + 2 + 4 + 2 + 3 * 35)
        let parsed = try COSEKey(encoded: encoded)
        #expect(parsed == key)
        #expect(parsed.keyType == .ec2 && parsed.curve == .p256 && parsed.hasPrivateMaterial)
        #expect(try PublicKey.ec(parsed.ecPrivateKey().publicKey) == parsed.publicOnly.publicKey())
    }

    @Test("a compressed EC2 key (y as a sign bit) yields the same public key as the full point")
    func compressedPoint() throws {
        let full = try S.coseKey(fromJWK: Self.jwk11)
        guard case .ec2(_, let x, .value(let y), _) = full.parameters else { Issue.record("not EC2"); return }
        let odd = (y.last ?? 0) & 1 == 1
        let compressed = try COSEKey(parameters: .ec2(curve: .p256, x: x, y: .signBit(odd), d: nil))
        #expect(try compressed.publicKey() == full.publicKey())
        let reparsed = try COSEKey(encoded: compressed.encoded())
        #expect(reparsed == compressed)
    }

    @Test("P-384, P-521 and Ed25519 keys convert to and from WalletCrypto keys")
    func walletCryptoConversions() throws {
        for curve in [ECCurve.p256, .p384, .p521] {
            let privateKey = try ECPrivateKey.generate(curve: curve)
            let coseKey = try COSEKey(privateKey: privateKey, keyID: [1, 2])
            let parsed = try COSEKey(encoded: coseKey.encoded())
            #expect(try parsed.ecPrivateKey().publicKey == privateKey.publicKey)
            #expect(try parsed.publicKey() == .ec(privateKey.publicKey))
            #expect(COSEKey(publicKey: .ec(privateKey.publicKey), keyID: [1, 2]) == coseKey.publicOnly)
        }
        let edKey = try Ed25519PrivateKey.generate()
        let coseKey = try COSEKey(privateKey: edKey)
        let parsed = try COSEKey(encoded: coseKey.encoded())
        #expect(parsed.keyType == .okp && parsed.curve == .ed25519)
        #expect(try parsed.ed25519PrivateKey().publicKey == edKey.publicKey)
        #expect(try parsed.publicKey() == .ed25519(edKey.publicKey))
    }

    @Test("a symmetric key keeps k, kid, alg and key_ops")
    func symmetricKey() throws {
        var key = try COSEKey(symmetricKey: SymmetricKey(bytes: Array(repeating: 7, count: 32)), keyID: Array("our-secret".utf8), algorithm: .hmac256)
        key.keyOperations = [.macCreate, .macVerify]
        let parsed = try COSEKey(encoded: key.encoded())
        #expect(parsed == key)
        #expect(parsed.symmetricKey == SymmetricKey(bytes: Array(repeating: 7, count: 32)))
        #expect(throws: COSEError.invalidKey(.wrongKeyType(expected: .ec2))) { _ = try parsed.publicKey() }
    }

    @Test("bad keys are rejected with invalidKey: wrong lengths, off-curve points, unknown kty/crv, bad types")
    func rejectsBadKeys() throws {
        let good = try S.coseKey(fromJWK: Self.jwk11, includePrivate: true)
        guard case .map(let map) = good.cbor else { Issue.record("not a map"); return }
        func mutated(_ change: (inout CBORMap) -> Void) -> [UInt8] {
            var copy = map
            change(&copy)
            return CBOR.map(copy).encoded()
        }
        let cases: [[UInt8]] = [
            mutated { $0[CBOR(-2)] = .byteString(Array(repeating: 1, count: 31)) },     // short x
            mutated { $0[CBOR(-3)] = .byteString(Array(repeating: 1, count: 32)) },     // off curve
            mutated { $0[CBOR(-4)] = .byteString(Array(repeating: 1, count: 33)) },     // long d
            mutated { $0[CBOR(-3)] = .textString("y") },                                // y of the wrong type
            mutated { $0[CBOR(1)] = CBOR(3) },                                          // RSA
            mutated { $0[CBOR(1)] = nil },                                              // no kty
            mutated { $0[CBOR(-1)] = CBOR(7) },                                         // Ed448 as EC2
            mutated { $0[CBOR(-1)] = CBOR(6) },                                         // Ed25519 as EC2
            mutated { $0[CBOR(4)] = .array([CBOR(99)]) },                               // unknown key_ops
            CBOR.map([CBOR(1): CBOR(1), CBOR(-1): CBOR(7), CBOR(-2): .byteString(Array(repeating: 0, count: 57))]).encoded(),
            CBOR.map([CBOR(1): CBOR(4), CBOR(-1): .byteString([])]).encoded(),
            CBOR.array([]).encoded(),
        ]
        for bytes in cases {
            #expect(throws: COSEError.self) { _ = try COSEKey(encoded: bytes) }
            do { _ = try COSEKey(encoded: bytes) } catch {
                guard case .invalidKey = error else { Issue.record("expected invalidKey, got \(error)"); continue }
            }
        }
        #expect(throws: COSEError.cbor(.lengthTooLarge(offset: 0, length: 1))) { _ = try COSEKey(encoded: [0xa1]) }
    }

    @Test("a private scalar that does not match x and y is rejected when the private key is used")
    func mismatchedPrivateScalar() throws {
        let other = try ECPrivateKey.generate(curve: .p256)
        let good = try S.coseKey(fromJWK: Self.jwk11)
        guard case .ec2(_, let x, let y, _) = good.parameters else { Issue.record("not EC2"); return }
        let key = try COSEKey(parameters: .ec2(curve: .p256, x: x, y: y, d: try other.rawScalar()))
        #expect(throws: COSEError.invalidKey(.privateKeyMismatch)) { _ = try key.ecPrivateKey() }
    }

    @Test("a key's description never shows private material")
    func descriptionRedacts() throws {
        let key = try S.coseKey(fromJWK: Self.jwk11, includePrivate: true)
        #expect(!key.description.contains("57c920"))
        #expect(key.description.contains("private"))
    }

    @Test("the key a COSE_Key was validated as is the key publicKey() returns; equality and hashing ignore it")
    func validatedKeyIsKept() throws {
        for curve in ECCurve.allCases {
            let privateKey = try ECPrivateKey.generate(curve: curve)
            let built = COSEKey(publicKey: .ec(privateKey.publicKey), keyID: [1])
            let decoded = try COSEKey(encoded: built.encoded())
            let withPrivate = try COSEKey(privateKey: privateKey, keyID: [1])
            for key in [built, decoded, withPrivate, withPrivate.publicOnly, decoded.publicOnly] {
                #expect(try key.publicKey() == .ec(privateKey.publicKey))
            }
            #expect(decoded == built)
            #expect(decoded.hashValue == built.hashValue)
            #expect(withPrivate.publicOnly == built)
            #expect(Set([built, decoded, withPrivate.publicOnly]).count == 1)
            var renamed = decoded
            renamed.keyID = [2]
            #expect(renamed != built)
            #expect(try renamed.publicKey() == .ec(privateKey.publicKey))
        }
        // An off-curve point is still refused when the map is read.
        let valid = try ECPrivateKey.generate(curve: .p256).publicKey
        var y = valid.y
        y[31] ^= 1
        #expect(throws: COSEError.self) {
            try COSEKey(parameters: .ec2(curve: .p256, x: valid.x, y: .value(y), d: nil))
        }
    }
}

