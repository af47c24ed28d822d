import Foundation
import JOSE
import Testing
import WalletCrypto
import WalletRuntime
import WalletEncoding

@Suite("JWS")
struct JWSTests {
    static let signatureAlgorithms: [JWSAlgorithm] = [.es256, .es384, .es512, .edDSA]

    @Test("a JWS signed through a Signer verifies on every curve", arguments: signatureAlgorithms)
    func roundTrip(algorithm: JWSAlgorithm) async throws {
        let signer = try Fixtures.curveKey(algorithm)
        let jwk = JWK(publicKey: signer.publicKey)
        let jws = try await JWS.sign(
            payload: Array("hello".utf8), signer: signer, type: "example+jwt", keyID: "key-1", jwk: jwk,
            additionalHeaders: ["nonce": "n-1"])
        let parsed = try JWS(compact: jws.compactSerialization)
        #expect(parsed.algorithm == algorithm)
        #expect(parsed.signature.count == algorithm.signatureByteCount)
        #expect(parsed.header.type == "example+jwt")
        #expect(parsed.header.keyID == "key-1")
        #expect(parsed.header["nonce"] == "n-1")
        try parsed.verify(with: signer.publicKey)
        try parsed.verify(with: jwk)
        #expect(try parsed.verifyWithEmbeddedJWK() == jwk)
        #expect(try parsed.verify(resolvingKeyWith: { header in header.keyID == "key-1" ? jwk : nil }) == jwk)
        #expect(throws: JOSEError.unknownKey(keyID: "key-1")) {
            try parsed.verify(resolvingKeyWith: { _ in nil })
        }
    }

    @Test("HS256 signs and verifies with an HMAC key, and a wrong key fails")
    func hs256() throws {
        let key = SymmetricKey(bytes: Array(repeating: UInt8(7), count: 32))
        let jws = try JWS.sign(payload: [1, 2, 3], hmacKey: key)
        let parsed = try JWS(compact: jws.compactSerialization)
        try parsed.verify(hmacKey: key)
        try parsed.verify(with: try JWK(symmetricKey: key))
        #expect(throws: JOSEError.invalidSignature) {
            try parsed.verify(hmacKey: SymmetricKey(bytes: Array(repeating: 8, count: 32)))
        }
        #expect(throws: JOSEError.algorithmKeyMismatch(algorithm: "HS256", keyType: "public key")) {
            try parsed.verify(with: .ed25519(try Ed25519PrivateKey.generate().publicKey))
        }
    }

    @Test("a detached payload verifies only with the same bytes")
    func detached() async throws {
        let signer = try Fixtures.curveKey(.es256)
        let jws = try await JWS.sign(payload: Array("doc".utf8), signer: signer)
        let parts = jws.compactSerialization.split(separator: ".")
        let detached = "\(parts[0])..\(parts[2])"
        try JWS(compact: detached, detachedPayload: Array("doc".utf8)).verify(with: signer.publicKey)
        #expect(throws: JOSEError.invalidSignature) {
            try JWS(compact: detached, detachedPayload: Array("dog".utf8)).verify(with: signer.publicKey)
        }
    }

    @Test("an Ed25519 JWK of small order is refused, so the signature that verifies under it for any message never does")
    func smallOrderEd25519() throws {
        // The identity point as the key; R = identity, S = 0 satisfies RFC 8032's check for
        // any message (a probe of a read-only review accepted it before the key check).
        var identity = [UInt8](repeating: 0, count: 32)
        identity[0] = 1
        let members: JSONObject = ["kty": "OKP", "crv": "Ed25519", "x": .string(Base64URL.encode(identity))]
        #expect(throws: (any Error).self) { _ = try JWK(members: members).publicKey() }
        let header = Base64URL.encode(Array(#"{"alg":"EdDSA","typ":"kb+jwt"}"#.utf8))
        let payload = Base64URL.encode(Array(#"{"nonce":"any"}"#.utf8))
        let jws = try JWS(compact: header + "." + payload + "." + Base64URL.encode(identity + [UInt8](repeating: 0, count: 32)))
        if let jwk = try? JWK(members: members) {
            #expect(throws: (any Error).self) { try jws.verify(with: jwk) }
        }
    }

    @Test("alg none is refused, whatever its casing")
    func algNone() {
        for alg in ["none", "None", "NONE"] {
            let compact = Base64URL.encode(Array(#"{"alg":"\#(alg)"}"#.utf8)) + "." + Base64URL.encode([1]) + "."
            #expect(throws: JOSEError.algorithmNotAllowed(alg)) { try JWS(compact: compact) }
            #expect(throws: JOSEError.algorithmNotAllowed(alg)) { try JWT(compact: compact) }
        }
    }

    @Test("an algorithm that does not fit the key type is an algorithm/key mismatch")
    func algorithmKeyMismatch() async throws {
        let signer = try Fixtures.curveKey(.es256)
        let jws = try await JWS.sign(payload: [1], signer: signer)
        let edKey = PublicKey.ed25519(try Ed25519PrivateKey.generate().publicKey)
        #expect(throws: JOSEError.algorithmKeyMismatch(algorithm: "ES256", keyType: "OKP Ed25519")) {
            try jws.verify(with: edKey)
        }
        let edSigner = try Fixtures.curveKey(.edDSA)
        let edJWS = try await JWS.sign(payload: [1], signer: edSigner)
        #expect(throws: JOSEError.algorithmKeyMismatch(algorithm: "EdDSA", keyType: "EC P-256")) {
            try edJWS.verify(with: signer.publicKey)
        }
        #expect(throws: JOSEError.algorithmKeyMismatch(algorithm: "ES256", keyType: "oct")) {
            try jws.verify(hmacKey: SymmetricKey(bytes: [1, 2, 3]))
        }
        // A JWK that declares another alg is not used for this one.
        let declared = try JWK(publicKey: signer.publicKey).adding(["alg": "ES384"])
        #expect(throws: JOSEError.algorithmKeyMismatch(algorithm: "ES256", keyType: "JWK for ES384")) {
            try jws.verify(with: declared)
        }
    }

    @Test("an ES256 JWS checked with a P-384 key is a wrong-curve error")
    func wrongCurve() async throws {
        let signer = try Fixtures.curveKey(.es256)
        let jws = try await JWS.sign(payload: [1], signer: signer)
        let p384 = try ECPrivateKey.generate(curve: .p384).publicKey
        #expect(throws: JOSEError.wrongCurve(expected: "P-256", actual: "P-384")) { try jws.verify(with: .ec(p384)) }
    }

    @Test("an unknown crit parameter is rejected unless the caller understands it")
    func unknownCrit() async throws {
        let signer = try Fixtures.curveKey(.es256)
        let jws = try await JWS.sign(
            payload: [1], signer: signer, critical: ["exp-ext"], additionalHeaders: ["exp-ext": 5])
        let parsed = try JWS(compact: jws.compactSerialization)
        #expect(throws: JOSEError.unknownCriticalHeader(["exp-ext"])) { try parsed.verify(with: signer.publicKey) }
        try parsed.verify(with: signer.publicKey, understoodCriticalHeaders: ["exp-ext"])
    }

    @Test("a crit that is empty, lists a registered name or an absent member is malformed")
    func malformedCrit() {
        let tail = "." + Base64URL.encode([1]) + "." + Base64URL.encode(Array(repeating: 0, count: 64))
        let cases = [
            (#"{"alg":"ES256","crit":[]}"#, CriticalHeaderFailure.empty),
            (#"{"alg":"ES256","crit":["alg"]}"#, .registeredParameter("alg")),
            (#"{"alg":"ES256","crit":["x"]}"#, .absentParameter("x")),
            (#"{"alg":"ES256","crit":"x","x":1}"#, .notStringArray),
        ]
        for (header, reason) in cases {
            #expect(throws: JOSEError.invalidCriticalHeader(reason)) {
                try JWS(compact: Base64URL.encode(Array(header.utf8)) + tail)
            }
        }
    }

    @Test("a tampered payload fails verification")
    func tamperedPayload() async throws {
        let signer = try Fixtures.curveKey(.es256)
        let jws = try await JWS.sign(payload: Array(#"{"sub":"alice"}"#.utf8), signer: signer)
        let tampered = Fixtures.replacingPart(1, of: jws.compactSerialization) { _ in Array(#"{"sub":"mallory"}"#.utf8) }
        #expect(throws: JOSEError.invalidSignature) { try JWS(compact: tampered).verify(with: signer.publicKey) }
    }

    @Test("a tampered protected header fails verification, even with the same members")
    func tamperedHeader() async throws {
        let signer = try Fixtures.curveKey(.es256)
        let jws = try await JWS.sign(payload: [1], signer: signer, type: "jwt")
        let changed = Fixtures.replacingHeader(of: jws.compactSerialization, with: #"{"alg":"ES256","typ":"dpop+jwt"}"#)
        #expect(throws: JOSEError.invalidSignature) { try JWS(compact: changed).verify(with: signer.publicKey) }
        // Same JSON members, different bytes: a re-serialization is not what was signed.
        let reordered = Fixtures.replacingHeader(of: jws.compactSerialization, with: #"{"typ":"jwt", "alg":"ES256"}"#)
        #expect(throws: JOSEError.invalidSignature) { try JWS(compact: reordered).verify(with: signer.publicKey) }
    }

    @Test("a truncated or padded signature is a typed length error", arguments: signatureAlgorithms)
    func truncatedSignature(algorithm: JWSAlgorithm) async throws {
        let signer = try Fixtures.curveKey(algorithm)
        let jws = try await JWS.sign(payload: [1], signer: signer)
        let expected = algorithm.signatureByteCount
        let truncated = Fixtures.replacingPart(2, of: jws.compactSerialization) { Array($0.dropLast()) }
        #expect(throws: JOSEError.malformedSignature(expectedLength: expected, actualLength: expected - 1)) {
            try JWS(compact: truncated).verify(with: signer.publicKey)
        }
        let padded = Fixtures.replacingPart(2, of: jws.compactSerialization) { $0 + [0] }
        #expect(throws: JOSEError.malformedSignature(expectedLength: expected, actualLength: expected + 1)) {
            try JWS(compact: padded).verify(with: signer.publicKey)
        }
    }

    @Test("a signer returning a DER signature is refused")
    func derFromSigner() async throws {
        let key = try ECPrivateKey.generate(curve: .p256)
        let der = try key.signature(for: [1]).derRepresentation
        let signer = FixedOutputSigner(algorithm: .es256, publicKey: .ec(key.publicKey), output: der)
        await #expect(throws: JOSEError.malformedSignature(expectedLength: 64, actualLength: der.count)) {
            try await JWS.sign(payload: [1], signer: signer)
        }
    }

    @Test("malformed compact serializations are typed errors")
    func malformedCompact() {
        let header = Base64URL.encode(Array(#"{"alg":"ES256"}"#.utf8))
        let inputs = [
            "", "a", "a.b", "a.b.c.d", "\(header).e30", "\(header).e30.AA.AA",
            "\(header).e3*.AA", "\(header).e30.A", "!!!.e30.AA",
            Base64URL.encode(Array("not json".utf8)) + ".e30.AA",
            Base64URL.encode(Array("[1]".utf8)) + ".e30.AA",
            Base64URL.encode(Array(#"{"typ":"JWT"}"#.utf8)) + ".e30.AA",
            Base64URL.encode(Array(#"{"alg":"ES256","alg":"HS256"}"#.utf8)) + ".e30.AA",
            Base64URL.encode(Array(#"{"alg":"ES256"} x"#.utf8)) + ".e30.AA",
            "\(header)=.e30.AA",
        ]
        for input in inputs {
            do {
                _ = try JWS(compact: input)
                Issue.record("accepted \(input)")
            } catch {
                switch error {
                case .malformed, .invalidJSON: continue
                default: Issue.record("\(input): \(error)")
                }
            }
        }
        #expect(throws: JOSEError.unsupportedAlgorithm(.alg, value: "RS256")) {
            try JWS(compact: Base64URL.encode(Array(#"{"alg":"RS256"}"#.utf8)) + ".e30.AA")
        }
    }

    @Test("an x5c chain is validated against the anchors before its leaf key is used")
    func x5c() async throws {
        let signingKey = try ECPrivateKey.generate(curve: .p256)
        let signer = SoftwareSigner(signingKey)
        guard let (leaf, anchor) = try? X5CFixture.make(leafKey: signingKey) else {
            Issue.record("could not build certificates")
            return
        }
        let jws = try await JWS.sign(payload: [1], signer: signer, x5c: [leaf])
        let parsed = try JWS(compact: jws.compactSerialization)
        let chain = try parsed.verifyWithCertificateChain(trustAnchors: [anchor], at: Date(), policy: .signingCertificate)
        #expect(chain.leaf == leaf)
        #expect(chain.anchor == anchor)
        let stranger = try X5CFixture.make(leafKey: try ECPrivateKey.generate(curve: .p256)).anchor
        #expect(throws: JOSEError.untrusted(.unknownAnchor)) {
            try parsed.verifyWithCertificateChain(trustAnchors: [stranger], at: Date(), policy: .signingCertificate)
        }
        #expect(throws: JOSEError.untrusted(.expired(depth: 1))) {  // root and leaf expire together; OpenSSL reports the root
            try parsed.verifyWithCertificateChain(trustAnchors: [anchor], at: Date().addingTimeInterval(2 * 365 * 86_400),
                                                  policy: .signingCertificate)
        }
        let unsigned = try JWS(compact: try await JWS.sign(payload: [1], signer: signer).compactSerialization)
        #expect(throws: JOSEError.untrusted(.missingCertificate)) {
            try unsigned.verifyWithCertificateChain(trustAnchors: [anchor], at: Date(), policy: .signingCertificate)
        }
    }
}

/// A root CA and a leaf certificate for a given key, valid for a year from now.
enum X5CFixture {
    static func make(leafKey: ECPrivateKey) throws -> (leaf: X509Certificate, anchor: X509Certificate) {
        let now = Date()
        let later = now.addingTimeInterval(365 * 86_400)
        let rootKey = try ECPrivateKey.generate(curve: .p256)
        let root = try CertificateBuilder.certificateAuthority(
            subject: try DistinguishedName([(.commonName, "JOSE test root")]), notBefore: now.addingTimeInterval(-60),
            notAfter: later
        ).selfSigned(with: .ec(rootKey))
        let leaf = try CertificateBuilder.endEntity(
            subject: try DistinguishedName([(.commonName, "JOSE test leaf")]),
            subjectPublicKeyInfoDER: leafKey.publicKey.spkiDER, notBefore: now.addingTimeInterval(-60), notAfter: later
        ).signed(by: root, key: .ec(rootKey))
        return (leaf, root)
    }
}
