import Testing
import WalletRuntime
@testable import WalletCrypto
import WalletEncoding

/// The cose-wg examples file: keys, ToBeSigned bytes and the COSE_Sign1 in diagnostic notation.
struct COSESignExamples: Decodable {
    struct Vector: Decodable {
        struct Upstream: Decodable {
            struct Input: Decodable {
                struct Sign0: Decodable {
                    struct Key: Decodable {
                        let crv: String
                        let x: String?
                        let y: String?
                        let x_hex: String?
                        let d_hex: String?
                    }
                    let key: Key
                    let alg: String
                }
                let sign0: Sign0
            }
            struct Intermediates: Decodable { let ToBeSign_hex: String }
            struct Output: Decodable { let cbor_diag: String }
            let title: String
            let input: Input
            let intermediates: Intermediates
            let output: Output
        }
        let upstream: Upstream
    }
    let vectors: [Vector]

    /// The signature: the last `h'...'` byte string of the diagnostic notation.
    static func signature(fromDiagnostic diagnostic: String) -> [UInt8]? {
        guard let open = diagnostic.range(of: "h'", options: .backwards) else { return nil }
        let rest = diagnostic[open.upperBound...]
        guard let close = rest.firstIndex(of: "'") else { return nil }
        return Hex.decode(String(rest[..<close]))
    }
}

private struct P1363File: Decodable {
    struct Group: Decodable {
        struct Test: Decodable { let tcId: Int; let msg: String; let sig: String; let result: String }
        let publicKey: String
        let publicKeyDer: String
        let tests: [Test]
    }
    let groups: [Group]
}

@Suite("ECDSA signatures")
struct ECDSATests {
    @Test("The cose-wg ES256/ES384/ES512 examples verify as raw r||s over their ToBeSigned bytes")
    func coseExamples() throws {
        let file = try TestVectors.shared("cose/cose_sign1_ecdsa_eddsa.json", as: COSESignExamples.self)
        var checked = 0
        for vector in file.vectors.map(\.upstream) {
            let key = vector.input.sign0.key
            guard let curve = ECCurve(rawValue: key.crv), let x = key.x, let y = key.y else { continue }
            let publicKey = try ECPublicKey(
                x: try #require(Base64URL.decode(x)), y: try #require(Base64URL.decode(y)), curve: curve)
            let toBeSigned = try hex(vector.intermediates.ToBeSign_hex)
            let raw = try #require(COSESignExamples.signature(fromDiagnostic: vector.output.cbor_diag))
            let algorithm = try #require(SignatureAlgorithm(rawValue: vector.input.sign0.alg))
            let hash = try #require(algorithm.hashAlgorithm)
            let signature = try ECDSASignature(rawRepresentation: raw, curve: curve)
            #expect(publicKey.isValidSignature(signature, for: toBeSigned, hash: hash), "\(vector.title)")
            // Through PublicKey.verify the algorithm must also match the curve
            // (ecdsa-sig-04 uses ES512 on a P-256 key, which the JOSE mapping refuses).
            let matches = algorithm.curve == curve
            #expect(PublicKey.ec(publicKey).verify(signature: raw, for: toBeSigned, algorithm: algorithm) == matches)
            var flipped = toBeSigned
            flipped[flipped.count - 1] ^= 0x01
            #expect(!publicKey.isValidSignature(signature, for: flipped, hash: hash), "\(vector.title)")
            checked += 1
        }
        #expect(checked == 4)
    }

    @Test("Wycheproof ECDSA P-256/SHA-256 P1363 subset: valid signatures verify, all invalid ones are rejected")
    func wycheproof() throws {
        let file = try TestVectors.local("wycheproof_ecdsa_secp256r1_sha256_p1363_subset.json", as: P1363File.self)
        var count = 0
        for group in file.groups {
            let key = try ECPublicKey(x963Representation: hex(group.publicKey), curve: .p256)
            #expect(try ECPublicKey(spkiDER: hex(group.publicKeyDer)) == key)
            #expect(try key.spkiDER == hex(group.publicKeyDer))
            for test in group.tests {
                let publicKey = PublicKey.ec(key)
                let accepted = publicKey.verify(signature: try hex(test.sig), for: try hex(test.msg), algorithm: .es256)
                #expect(accepted == (test.result == "valid"), "tcId \(test.tcId)")
                count += 1
            }
        }
        #expect(count >= 25)
    }

    @Test("Sign and verify round trips on every curve, with the natural and an explicit hash")
    func roundTrips() throws {
        let message = Array("round trip".utf8)
        for curve in ECCurve.allCases {
            let key = try ECPrivateKey.generate(curve: curve)
            let signature = try key.signature(for: message)
            #expect(key.publicKey.isValidSignature(signature, for: message))
            try key.publicKey.verifySignature(signature, for: message)
            #expect(!key.publicKey.isValidSignature(signature, for: message + [0]))
            #expect(throws: CryptoError.invalidSignature) { try key.publicKey.verifySignature(signature, for: [1]) }
            let raw = try signature.rawRepresentation(curve: curve)
            #expect(raw.count == 2 * curve.coordinateByteCount)
            let explicit = try key.signature(for: message, hash: .sha256)
            #expect(key.publicKey.isValidSignature(explicit, for: message, hash: .sha256))
            // A key on another curve must not accept the signature.
            let other = try ECPrivateKey.generate(curve: curve == .p256 ? .p384 : .p256)
            #expect(!other.publicKey.isValidSignature(signature, for: message))
            #expect(!PublicKey.ec(other.publicKey).verify(signature: raw, for: message, algorithm: key.signatureAlgorithm))
        }
    }

    @Test("DER and raw forms convert both ways and a flipped signature bit fails")
    func conversions() throws {
        let key = try ECPrivateKey.generate(curve: .p256)
        let message: [UInt8] = [1, 2, 3]
        let signature = try key.signature(for: message)
        let raw = try signature.rawRepresentation(curve: .p256)
        let fromRaw = try ECDSASignature(rawRepresentation: raw, curve: .p256)
        #expect(fromRaw == signature)
        #expect(fromRaw.derRepresentation == signature.derRepresentation)
        #expect(try ECDSASignature(derRepresentation: signature.derRepresentation) == signature)
        #expect(try fromRaw.rawRepresentation(curve: .p521).count == 132)
        for bit in [0, 100, 511] {
            var flipped = raw
            flipped[bit / 8] ^= UInt8(1 << (bit % 8))
            #expect(!PublicKey.ec(key.publicKey).verify(signature: flipped, for: message, algorithm: .es256))
        }
        // Known encoding: r = 1, s = 2.
        var small = [UInt8](repeating: 0, count: 64)
        small[31] = 1
        small[63] = 2
        #expect(try ECDSASignature(rawRepresentation: small, curve: .p256).derRepresentation == [0x30, 0x06, 0x02, 0x01, 0x01, 0x02, 0x01, 0x02])
    }

    @Test("Malformed DER and wrong raw lengths are typed errors")
    func malformed() throws {
        #expect(throws: CryptoError.invalidLength(.ecdsaSignature(.p256), actual: 63)) {
            try ECDSASignature(rawRepresentation: [UInt8](repeating: 1, count: 63), curve: .p256)
        }
        let bad: [[UInt8]] = [
            [],
            [0x30],
            [0x30, 0x06, 0x02, 0x01, 0x01, 0x02, 0x01],                    // truncated
            [0x30, 0x06, 0x02, 0x01, 0x01, 0x02, 0x01, 0x02, 0x00],        // trailing byte
            [0x30, 0x07, 0x02, 0x02, 0x00, 0x01, 0x02, 0x01, 0x02],        // non-minimal INTEGER
            [0x30, 0x81, 0x06, 0x02, 0x01, 0x01, 0x02, 0x01, 0x02],        // non-minimal length
            [0x30, 0x06, 0x02, 0x01, 0xff, 0x02, 0x01, 0x02],              // negative r
            [0x31, 0x06, 0x02, 0x01, 0x01, 0x02, 0x01, 0x02],              // SET, not SEQUENCE
        ]
        for der in bad {
            #expect(throws: CryptoError.malformedEncoding(.ecdsaSignature), "\(der)") { try ECDSASignature(derRepresentation: der) }
        }
        #expect(throws: CryptoError.malformedEncoding(.ecdsaSignature)) {
            try ECDSASignature(derRepresentation: [0x30, 0x03, 0x02, 0x01])
        }
        // A P-521-sized signature does not fit P-256.
        let big = try ECDSASignature(rawRepresentation: [UInt8](repeating: 0xff, count: 132), curve: .p521)
        #expect(throws: CryptoError.invalidSignature) { try big.rawRepresentation(curve: .p256) }
    }
}
