import Foundation
import JOSE
import Testing
import WalletCrypto
import WalletRuntime
import WalletEncoding

@Suite("JWK")
struct JWKTests {
    @Test("EC keys on every curve round-trip through JWK with public and private forms")
    func ecRoundTrip() throws {
        for curve in ECCurve.allCases {
            let key = try ECPrivateKey.generate(curve: curve)
            let privateJWK = try JWK(privateKey: key).adding(["kid": "k1", "use": "sig", "alg": "ES256"])
            let reparsed = try JWK(json: privateJWK.jsonString)
            #expect(reparsed == privateJWK)
            #expect(reparsed.isPrivate)
            #expect(reparsed.keyID == "k1")
            #expect(reparsed.use == "sig")
            #expect(try reparsed.ecPrivateKey().publicKey == key.publicKey)
            let publicJWK = try reparsed.publicJWK
            #expect(!publicJWK.isPrivate)
            #expect(publicJWK.members["d"] == nil)
            #expect(publicJWK.keyID == "k1")
            #expect(try publicJWK.publicKey() == .ec(key.publicKey))
            #expect(publicJWK.thumbprint == privateJWK.thumbprint)
            #expect(throws: JOSEError.missingPrivateKey) { try publicJWK.ecPrivateKey() }
        }
    }

    @Test("Ed25519 keys round-trip through an OKP JWK")
    func okpRoundTrip() throws {
        let key = try Ed25519PrivateKey.generate()
        let jwk = try JWK(privateKey: key)
        #expect(jwk.keyType == .okp)
        #expect(try JWK(json: jwk.jsonString).ed25519PrivateKey().publicKey == key.publicKey)
        #expect(try jwk.publicJWK.publicKey() == .ed25519(key.publicKey))
    }

    @Test("the serialization is stable: members sorted, no whitespace")
    func stableSerialization() throws {
        let jwk = try JWK(json: #"{ "y":"x_FEzRu9m36HLN_tue659LNpXW6pCyStikYjKIWI5a0", "kid":"a", "x":"f83OJ3D2xF1Bg8vub9tLe1gHMzV76e8Tus9uPHvRVEU","crv":"P-256","kty":"EC"}"#)
        #expect(jwk.jsonString == #"{"crv":"P-256","kid":"a","kty":"EC","x":"f83OJ3D2xF1Bg8vub9tLe1gHMzV76e8Tus9uPHvRVEU","y":"x_FEzRu9m36HLN_tue659LNpXW6pCyStikYjKIWI5a0"}"#)
    }

    @Test("a point off the curve is an invalid key")
    func offCurve() throws {
        // RFC 7515 A.3 key with the last bit of y flipped.
        var y = Base64URL.decode("x_FEzRu9m36HLN_tue659LNpXW6pCyStikYjKIWI5a0") ?? []
        y[31] ^= 1
        let json = #"{"kty":"EC","crv":"P-256","x":"f83OJ3D2xF1Bg8vub9tLe1gHMzV76e8Tus9uPHvRVEU","y":"\#(Base64URL.encode(y))"}"#
        #expect(throws: JOSEError.invalidKey(.invalidPublicKey)) { try JWK(json: json) }
        // A non-canonical spelling (non-zero unused bits) of the right y is refused too.
        #expect(throws: JOSEError.invalidKey(.invalidMember("y"))) {
            try JWK(json: #"{"kty":"EC","crv":"P-256","x":"f83OJ3D2xF1Bg8vub9tLe1gHMzV76e8Tus9uPHvRVEU","y":"x_FEzRu9m36HLN_tue659LNpXW6pCyStikYjKIWI5a1"}"#)
        }
        do { _ = try JWK(json: json); Issue.record("accepted") } catch {
            guard case .invalidKey = error else { Issue.record("unexpected \(error)"); return }
        }
    }

    @Test("coordinates of the wrong length, unknown curves and missing members are rejected")
    func strictMembers() {
        let x = "f83OJ3D2xF1Bg8vub9tLe1gHMzV76e8Tus9uPHvRVEU", y = "x_FEzRu9m36HLN_tue659LNpXW6pCyStikYjKIWI5a0"
        #expect(throws: JOSEError.invalidKey(.memberLength("x", expected: 48, actual: 32))) {
            try JWK(json: #"{"kty":"EC","crv":"P-384","x":"\#(x)","y":"\#(y)"}"#)
        }
        #expect(throws: JOSEError.unsupportedAlgorithm(.crv, value: "secp256k1")) {
            try JWK(json: #"{"kty":"EC","crv":"secp256k1","x":"\#(x)","y":"\#(y)"}"#)
        }
        #expect(throws: JOSEError.invalidKey(.missingMember("y"))) {
            try JWK(json: #"{"kty":"EC","crv":"P-256","x":"\#(x)"}"#)
        }
        #expect(throws: JOSEError.unsupportedAlgorithm(.kty, value: "XYZ")) { try JWK(json: #"{"kty":"XYZ"}"#) }
        #expect(throws: JOSEError.self) { try JWK(json: #"{"kty":"EC","kty":"EC"}"#) }
        #expect(throws: JOSEError.invalidKey(.invalidMember("x"))) {
            try JWK(json: #"{"kty":"OKP","crv":"Ed25519","x":"a+b/"}"#)
        }
    }

    @Test("a private d that does not match x and y is rejected")
    func mismatchedPrivateKey() throws {
        let one = try JWK(privateKey: try ECPrivateKey.generate(curve: .p256))
        let other = try JWK(privateKey: try ECPrivateKey.generate(curve: .p256))
        var members = one.members
        members["d"] = other.members["d"]
        #expect(throws: JOSEError.invalidKey(.privateKeyMismatch)) { try JWK(members: members) }
    }

    @Test("a JWK Set keeps known keys and skips unknown curves")
    func jwkSet() throws {
        let file = try Fixtures.sharedVector("openid4vp/encrypted_response_jwe.json")
        let keys = try #require(file["inputs"]?["request"]?["json"]?["client_metadata"]?["jwks"])
        let set = try JWKSet(value: keys)
        #expect(set.keys.map(\.keyID) == ["ac", "jc", "lc"])    // X448 is skipped
        #expect(set.key(withID: "lc")?.curveName == "P-384")
        #expect(throws: JOSEError.unsupportedAlgorithm(.crv, value: "X25519")) { try set.key(withID: "jc")?.publicKey() }
        #expect(try JWKSet(json: set.jsonString) == set)
    }

    @Test("symmetric keys have no public form")
    func symmetric() throws {
        let jwk = try JWK(symmetricKey: SymmetricKey(bytes: [1, 2, 3]))
        #expect(try jwk.symmetricKey() == SymmetricKey(bytes: [1, 2, 3]))
        #expect(jwk.thumbprintInput == #"{"k":"AQID","kty":"oct"}"#)
        #expect(throws: JOSEError.self) { try jwk.publicJWK }
    }
}
