import Foundation
import JOSE
import SDJWT
import Testing
import WalletCrypto
import WalletRuntime
import WalletEncoding

/// Every check of the verifier fails with its own typed error (acceptance 4).
@Suite("Verification failures")
struct VerificationFailureTests {
    static let claims: JSONObject = [
        "vct": "urn:example:1", "iss": "https://issuer.example", "iat": 1_700_000_000, "exp": 1_900_000_000,
        "given_name": "Erika", "family_name": "Mustermann",
    ]
    static let plan = DisclosurePlan.object(["given_name": .disclosable, "family_name": .disclosable])
    static let expectation = KeyBindingExpectation(audience: TestSupport.audience, nonce: TestSupport.nonce)
    static let parameters = KeyBindingParameters(audience: TestSupport.audience, nonce: TestSupport.nonce, issuedAt: TestSupport.now)

    static func verify(_ text: String, keyBinding: KeyBindingExpectation? = expectation, at time: Date = TestSupport.now)
        throws(SDJWTError) -> VerifiedSDJWT {
        try SDJWTVerifier(options: TestSupport.options(keyBinding: keyBinding, at: time)).verify(text)
    }

    static func presentation(_ parameters: KeyBindingParameters = parameters) async throws -> SDJWT {
        try await TestSupport.mint(claims, plan: plan).presentation(
            disclosing: [["given_name"]], keyBinding: parameters, signer: TestSupport.holderSigner)
    }

    /// An issuer-signed JWT over hand-made claims, for malformed payloads.
    static func signed(_ payload: JSONObject, type: String? = "dc+sd-jwt") async throws -> String {
        try await JWT.sign(claims: try JWTClaims(payload), signer: TestSupport.issuerSigner, type: type).compactSerialization
    }

    /// A KB-JWT over the given claims, signed by `signer`.
    static func keyBinding(_ claims: JSONObject, type: String = "kb+jwt",
                           signer: any Signer = TestSupport.holderSigner) async throws -> String {
        try await JWT.sign(claims: try JWTClaims(claims), signer: signer, type: type).compactSerialization
    }

    @Test("a valid presentation passes, so the failures below come from the one change each makes")
    func baseline() async throws {
        let verified = try Self.verify(try await Self.presentation().serialization)
        #expect(verified.claims["given_name"] == "Erika" && verified.claims["family_name"] == nil)
        #expect(verified.type == "urn:example:1" && verified.issuer == "https://issuer.example")
        #expect(verified.keyBinding?.nonce == TestSupport.nonce)
    }

    @Test("a tampered issuer signature, or the wrong issuer key, is invalidIssuerSignature")
    func badIssuerSignature() async throws {
        let text = try await Self.presentation().serialization
        let jwt = String(text.prefix { $0 != "~" })
        let parts = jwt.split(separator: ".")
        var signature = Base64URL.decode(parts[2])!
        signature[5] ^= 1
        let tampered = text.replacingOccurrences(of: jwt, with: "\(parts[0]).\(parts[1]).\(Base64URL.encode(signature))")
        #expect(throws: SDJWTError.invalidIssuerSignature(.invalidSignature)) { try Self.verify(tampered) }
        let options = SDJWTVerificationOptions(issuerKey: .jwk(TestSupport.holderPublicJWK), now: TestSupport.now)
        #expect(throws: SDJWTError.invalidIssuerSignature(.invalidSignature)) { try SDJWTVerifier(options: options).verify(text) }
    }

    @Test("a disclosure no digest refers to is unreferencedDisclosure")
    func unreferenced() async throws {
        let sdJWT = try await TestSupport.mint(Self.claims, plan: Self.plan)
        let stray = try Disclosure(salt: "c2FsdHNhbHRzYWx0", claimName: "nickname", value: "Eri")
        let forged = try SDJWT(issuerSignedJWT: sdJWT.issuerSignedJWTString, disclosures: sdJWT.disclosures + [stray])
        #expect(throws: SDJWTError.disclosure(.unreferenced(digest: stray.digest()))) {
            try Self.verify(forged.serialization, keyBinding: nil)
        }
    }

    @Test("the same disclosure twice is duplicateDisclosure")
    func duplicateDisclosure() async throws {
        let sdJWT = try await TestSupport.mint(Self.claims, plan: Self.plan)
        let first = sdJWT.disclosures[0]
        let forged = try SDJWT(issuerSignedJWT: sdJWT.issuerSignedJWTString, disclosures: sdJWT.disclosures + [first])
        #expect(throws: SDJWTError.disclosure(.duplicate(digest: first.digest()))) {
            try Self.verify(forged.serialization, keyBinding: nil)
        }
    }

    @Test("a digest listed twice is duplicateDigest, in _sd and among array elements")
    func duplicateDigest() async throws {
        let disclosure = try Disclosure(salt: "c2FsdA", claimName: "given_name", value: "Erika")
        let digest = JSONValue.string(disclosure.digest())
        var payload = Self.claims
        payload.removeValue(forKey: "given_name")
        payload["_sd"] = [digest, digest]
        let jwt = try await Self.signed(payload)
        #expect(throws: SDJWTError.disclosure(.duplicateDigest(disclosure.digest()))) {
            try Self.verify(jwt + "~" + disclosure.encoded + "~", keyBinding: nil)
        }
        // A decoy repeated among array elements is caught too, with no disclosure involved.
        let decoy = SDJWTHashAlgorithm.sha256.base64URLDigest(of: "decoy")
        payload["_sd"] = nil
        payload["list"] = [["...": .string(decoy)], "visible", ["...": .string(decoy)]]
        let nested = try await Self.signed(payload)
        #expect(throws: SDJWTError.disclosure(.duplicateDigest(decoy))) { try Self.verify(nested + "~", keyBinding: nil) }
    }

    @Test("_sd or ... as a disclosed claim name is reservedClaimName")
    func reservedNames() async throws {
        let jwt = try await Self.signed(Self.claims)
        for name in ["_sd", "..."] {
            let text = "[\"c2FsdA\", \"\(name)\", 1]"
            #expect(throws: SDJWTError.disclosure(.reservedClaimName(name))) { try Disclosure(jsonText: text) }
            let encoded = Base64URL.encode(Array(text.utf8))
            #expect(throws: SDJWTError.disclosure(.reservedClaimName(name))) { try Self.verify(jwt + "~" + encoded + "~", keyBinding: nil) }
        }
    }

    @Test("an unsupported _sd_alg is unsupportedHashAlgorithm; sha-384 and sha-512 work")
    func hashAlgorithms() async throws {
        var payload = Self.claims
        payload["_sd_alg"] = "md5"
        let jwt = try await Self.signed(payload)
        #expect(throws: SDJWTError.unsupportedHashAlgorithm("md5")) { try SDJWT(compact: jwt + "~") }
        for algorithm in [SDJWTHashAlgorithm.sha384, .sha512] {
            let issuer = SDJWTIssuer(signer: TestSupport.issuerSigner, hashAlgorithm: algorithm)
            let sdJWT = try await issuer.issue(claims: Self.claims, plan: Self.plan, holderKey: TestSupport.holderPublicJWK)
            #expect(sdJWT.payload["_sd"]?.arrayValue?.first?.stringValue?.count == (algorithm.hashAlgorithm.digestByteCount * 4 + 2) / 3)
            let presented = try await sdJWT.presentation(disclosing: [["family_name"]], keyBinding: Self.parameters,
                                                         signer: TestSupport.holderSigner)
            #expect(try Self.verify(presented.serialization).claims["family_name"] == "Mustermann")
        }
    }

    @Test("a disclosed claim that exists already is claimOverwritten; a disclosure of the wrong kind is disclosureKindMismatch")
    func overwriteAndKind() async throws {
        let disclosure = try Disclosure(salt: "c2FsdA", claimName: "iss", value: "https://evil.example")
        var payload = Self.claims
        payload["_sd"] = [.string(disclosure.digest())]
        let jwt = try await Self.signed(payload)
        #expect(throws: SDJWTError.disclosure(.claimOverwritten("iss"))) { try Self.verify(jwt + "~" + disclosure.encoded + "~", keyBinding: nil) }

        let element = try Disclosure(salt: "c2FsdA", claimName: nil, value: "DE")
        payload["_sd"] = [.string(element.digest())]
        let kind = try await Self.signed(payload)
        #expect(throws: SDJWTError.disclosure(.kindMismatch(digest: element.digest()))) {
            try Self.verify(kind + "~" + element.encoded + "~", keyBinding: nil)
        }
    }

    @Test("a KB-JWT whose typ is not kb+jwt is invalidKeyBindingType")
    func keyBindingType() async throws {
        let sdJWT = try await TestSupport.mint(Self.claims, plan: Self.plan).presentation(disclosing: [["given_name"]])
        let kb = try await Self.keyBinding(["iat": 1_750_000_000, "aud": .string(TestSupport.audience),
                                            "nonce": .string(TestSupport.nonce), "sd_hash": .string(sdJWT.sdHash)], type: "JWT")
        #expect(throws: SDJWTError.keyBinding(.invalidType("JWT"))) { try Self.verify(sdJWT.serialization + kb) }
    }

    @Test("a KB-JWT for another audience or nonce is audienceMismatch or nonceMismatch")
    func audienceAndNonce() async throws {
        var other = Self.parameters
        other.audience = "https://other.example"
        let wrongAudience = try await Self.presentation(other).serialization
        #expect(throws: SDJWTError.keyBinding(.audienceMismatch(expected: TestSupport.audience, actual: ["https://other.example"]))) {
            try Self.verify(wrongAudience)
        }
        other = Self.parameters
        other.nonce = "replayed"
        let wrongNonce = try await Self.presentation(other).serialization
        #expect(throws: SDJWTError.keyBinding(.nonceMismatch(expected: TestSupport.nonce, actual: "replayed"))) { try Self.verify(wrongNonce) }
    }

    @Test("a KB-JWT moved to another disclosure set is sdHashMismatch")
    func sdHash() async throws {
        let sdJWT = try await TestSupport.mint(Self.claims, plan: Self.plan)
        let bound = try await sdJWT.presentation(disclosing: [["given_name"]], keyBinding: Self.parameters,
                                                 signer: TestSupport.holderSigner)
        let moved = try SDJWT(issuerSignedJWT: sdJWT.issuerSignedJWTString, disclosures: sdJWT.disclosures,
                              keyBindingJWT: bound.keyBindingJWTString)
        #expect(throws: SDJWTError.keyBinding(.sdHashMismatch(expected: moved.sdHash, actual: bound.sdHash))) { try Self.verify(moved.serialization) }
    }

    @Test("a KB-JWT issued too long ago, in the future, or without iat is keyBindingTime")
    func issuedAtWindow() async throws {
        let text = try await Self.presentation().serialization
        let iat = TestSupport.now
        let later = iat.addingTimeInterval(301 + 60)
        #expect(throws: SDJWTError.keyBinding(.invalidTime(.issuedTooLongAgo(iat: iat, now: later, maximumAge: 300)))) {
            try Self.verify(text, at: later)
        }
        let earlier = iat.addingTimeInterval(-61)
        #expect(throws: SDJWTError.keyBinding(.invalidTime(.issuedInFuture(iat: iat, now: earlier)))) { try Self.verify(text, at: earlier) }
        #expect(try Self.verify(text, at: iat.addingTimeInterval(300)).claims["given_name"] == "Erika")
        let sdJWT = try await TestSupport.mint(Self.claims, plan: Self.plan).presentation(disclosing: [["given_name"]])
        let noIssuedAt = try await Self.keyBinding(["aud": .string(TestSupport.audience), "nonce": .string(TestSupport.nonce),
                                                    "sd_hash": .string(sdJWT.sdHash)])
        #expect(throws: SDJWTError.keyBinding(.invalidTime(.missing(.issuedAt)))) { try Self.verify(sdJWT.serialization + noIssuedAt) }
        let expiredKB = try await Self.keyBinding(["iat": 1_750_000_000, "exp": 1_749_999_000, "aud": .string(TestSupport.audience),
                                                   "nonce": .string(TestSupport.nonce), "sd_hash": .string(sdJWT.sdHash)])
        #expect(throws: SDJWTError.keyBinding(.invalidTime(.expired(exp: Date(timeIntervalSince1970: 1_749_999_000), now: TestSupport.now)))) {
            try Self.verify(sdJWT.serialization + expiredKB)
        }
    }

    @Test("a KB-JWT aud must be the single expected string: an array, even one naming the verifier, is audienceMismatch")
    func audienceMustBeSingle() async throws {
        let sdJWT = try await TestSupport.mint(Self.claims, plan: Self.plan).presentation(disclosing: [["given_name"]])
        func kb(_ aud: JSONValue) async throws -> String {
            try await Self.keyBinding(["iat": 1_750_000_000, "aud": aud, "nonce": .string(TestSupport.nonce),
                                       "sd_hash": .string(sdJWT.sdHash)])
        }
        let audience = TestSupport.audience
        let single = try await kb(.string(audience))
        #expect(try Self.verify(sdJWT.serialization + single).keyBinding?.audience == [audience])
        let several = try await kb([.string(audience), "https://other.example"])
        #expect(throws: SDJWTError.keyBinding(.audienceMismatch(expected: audience, actual: [audience, "https://other.example"]))) {
            try Self.verify(sdJWT.serialization + several)
        }
        let oneElementArray = try await kb([.string(audience)])
        #expect(throws: SDJWTError.keyBinding(.audienceMismatch(expected: audience, actual: [audience]))) {
            try Self.verify(sdJWT.serialization + oneElementArray)
        }
        let other = try await kb("https://other.example")
        #expect(throws: SDJWTError.keyBinding(.audienceMismatch(expected: audience, actual: ["https://other.example"]))) {
            try Self.verify(sdJWT.serialization + other)
        }
    }

    @Test("a cnf key that is symmetric, private, RSA or X25519 is unsupportedHolderKey, whether or not a KB-JWT is presented")
    func holderKeyMustBePublicAsymmetric() async throws {
        let secret = Base64URL.encode([UInt8](repeating: 7, count: 32))
        let rejected: [(JSONValue, HolderKeyRejection)] = [
            (["kty": "oct", "k": .string(secret)], .symmetricKey),
            (.object(TestSupport.holderJWK.members), .privateKeyMaterial),
            (["kty": "OKP", "crv": "X25519", "x": .string(Base64URL.encode([UInt8](repeating: 9, count: 32)))],
             .unsupportedKeyType("OKP/X25519")),
            (["kty": "RSA", "n": .string(Base64URL.encode([0xC1] + [UInt8](repeating: 0x5A, count: 255))), "e": "AQAB"],
             .unsupportedKeyType("RSA")),
        ]
        for (jwk, reason) in rejected {
            var claims = Self.claims
            claims["cnf"] = ["jwk": jwk]
            let jwt = try await Self.signed(claims)
            #expect(throws: SDJWTError.keyBinding(.unsupportedHolderKey(reason))) { try Self.verify(jwt + "~", keyBinding: nil) }
            // With a KB-JWT an attacker could compute (HS256 over the oct key, say).
            let sdJWT = try SDJWT(compact: jwt + "~")
            let forged = try JWS.sign(payload: try JWTClaims(["iat": 1_750_000_000, "aud": .string(TestSupport.audience),
                                                              "nonce": .string(TestSupport.nonce),
                                                              "sd_hash": .string(sdJWT.sdHash)]).rawBytes,
                                      hmacKey: SymmetricKey(bytes: [UInt8](repeating: 7, count: 32)), type: "kb+jwt")
            #expect(throws: SDJWTError.keyBinding(.unsupportedHolderKey(reason))) { try Self.verify(jwt + "~" + forged.compactSerialization) }
        }
    }

    @Test("with the plain SD-JWT profile, an exp hidden in a disclosure is still checked")
    func disclosedExpiration() async throws {
        var claims = Self.claims
        claims["exp"] = 1_749_000_000
        let plan = DisclosurePlan.object(["given_name": .disclosable, "exp": .disclosable])
        let hidden = try await TestSupport.mint(claims, plan: plan, type: "example+sd-jwt")
        // The VC profile refuses the disclosure of exp outright (SD-JWT VC §3.2.2). Our issuer
        // will not mint that as dc+sd-jwt, so the same payload (vct visible, exp only behind
        // a digest) is signed again as a proper SD-JWT VC: its typ and vct pass, and only
        // the never-disclosed rule can refuse it.
        let payload = hidden.issuerSignedJWT.claims.members
        #expect(payload["exp"] == nil && payload["vct"] == "urn:example:1")
        let vc = try await Self.signed(payload, type: "dc+sd-jwt") + "~"
            + hidden.disclosures.map(\.encoded).joined(separator: "~") + "~"
        #expect(throws: SDJWTError.invalidClaim(.selectivelyDisclosed("exp"))) {
            try SDJWTVerifier(options: TestSupport.options(at: TestSupport.now)).verify(vc)
        }
        // Control: withheld, the same SD-JWT VC passes the VC profile (nothing hidden is disclosed).
        let withheldVC = try await Self.signed(payload, type: "dc+sd-jwt") + "~"
            + hidden.disclosures.filter { $0.claimName == "given_name" }.map(\.encoded).joined(separator: "~") + "~"
        #expect(try SDJWTVerifier(options: TestSupport.options(at: TestSupport.now)).verify(withheldVC).claims["exp"] == nil)
        #expect(throws: SDJWTError.invalidTime(.expired(exp: Date(timeIntervalSince1970: 1_749_000_000), now: TestSupport.now))) {
            try SDJWTVerifier(options: TestSupport.options(profile: .sdJWT)).verify(hidden.serialization)
        }
        // Withheld, the expiry is unknown to the verifier (the holder chose not to disclose it).
        let withheld = try hidden.presentation(disclosing: [["given_name"]])
        #expect(try SDJWTVerifier(options: TestSupport.options(profile: .sdJWT)).verify(withheld.serialization).claims["exp"] == nil)
    }

    @Test("the caller's profile decides: a JWT, statuslist+jwt or absent typ is refused under the default SD-JWT VC profile")
    func profileIsTheCallers() async throws {
        for type in ["JWT", "statuslist+jwt", "example+sd-jwt"] as [String?] + [nil] {
            let text = try await Self.signed(Self.claims, type: type) + "~"
            #expect(throws: SDJWTError.invalidCredentialType(type)) {
                try SDJWTVerifier(options: SDJWTVerificationOptions(issuerKey: .jwk(TestSupport.issuerPublicJWK), now: TestSupport.now))
                    .verify(text)
            }
            #expect(try SDJWTVerifier(options: TestSupport.options(profile: .sdJWT)).verify(text).type == "urn:example:1")
        }
    }

    @Test("a KB-JWT signed by a key other than cnf is invalidKeyBindingSignature, and the holder refuses to sign with it")
    func keyBindingByOtherKey() async throws {
        let sdJWT = try await TestSupport.mint(Self.claims, plan: Self.plan).presentation(disclosing: [["given_name"]])
        let stranger = SoftwareSigner(try ECPrivateKey.generate(curve: .p256))
        let kb = try await Self.keyBinding(["iat": 1_750_000_000, "aud": .string(TestSupport.audience),
                                            "nonce": .string(TestSupport.nonce), "sd_hash": .string(sdJWT.sdHash)],
                                           signer: stranger)
        #expect(throws: SDJWTError.keyBinding(.invalidSignature(.invalidSignature))) { try Self.verify(sdJWT.serialization + kb) }
        await #expect(throws: SDJWTError.keyBinding(.holderKeyMismatch)) {
            try await sdJWT.bound(with: Self.parameters, signer: stranger)
        }
    }

    @Test("the holder's own cnf.jwk is read strictly whichever path reads it: extra members kept, bad ones refused")
    func holderReadsItsOwnKeyStrictly() async throws {
        func credential(_ jwk: JSONObject) async throws -> SDJWT {
            var claims = Self.claims
            claims["cnf"] = .object(["jwk": .object(jwk)])
            return try SDJWT(compact: try await Self.signed(claims) + "~")
        }
        let spelled = TestSupport.holderPublicJWK.members
        // The signer's key with a kid: bound, and the verifier accepts the KB-JWT.
        var withKeyID = spelled
        withKeyID["kid"] = "holder-1"
        let bound = try await credential(withKeyID).bound(with: Self.parameters, signer: TestSupport.holderSigner)
        #expect(try Self.verify(bound.serialization).keyBinding?.nonce == TestSupport.nonce)
        // The signer's key spelled exactly, but a kid that is not a string: refused as before.
        var badKeyID = spelled
        badKeyID["kid"] = 5
        await #expect(throws: SDJWTError.keyBinding(.invalidHolderKey(.invalidKey(.invalidMember("kid"))))) {
            try await credential(badKeyID).bound(with: Self.parameters, signer: TestSupport.holderSigner)
        }
        // The signer's point with a private scalar that is not its own: validated in full, refused.
        var withForeignScalar = spelled
        withForeignScalar["d"] = .string(Base64URL.encode(try ECPrivateKey.generate(curve: .p256).rawScalar()))
        await #expect(throws: SDJWTError.keyBinding(.invalidHolderKey(.invalidKey(.privateKeyMismatch)))) {
            try await credential(withForeignScalar).bound(with: Self.parameters, signer: TestSupport.holderSigner)
        }
        // Another valid key: the mismatch, not a parse failure.
        let other = JWK(publicKey: try ECPrivateKey.generate(curve: .p256).publicKey).members
        await #expect(throws: SDJWTError.keyBinding(.holderKeyMismatch)) {
            try await credential(other).bound(with: Self.parameters, signer: TestSupport.holderSigner)
        }
    }

    @Test("missing key binding is missingKeyBinding; an unbound credential cannot satisfy it")
    func missingKeyBinding() async throws {
        let unbound = try await TestSupport.mint(Self.claims, plan: Self.plan).presentation(disclosing: [["given_name"]])
        #expect(throws: SDJWTError.keyBinding(.missing)) { try Self.verify(unbound.serialization) }
        let noHolder = try await TestSupport.mint(Self.claims, plan: Self.plan, holder: nil)
        #expect(throws: SDJWTError.keyBinding(.missingHolderKey)) { try Self.verify(noHolder.serialization) }
        #expect(try Self.verify(noHolder.serialization, keyBinding: nil).holderKey == nil)
    }

    @Test("an expired, not yet valid or future-issued credential is invalidTime(expired / notYetValid / issuedInFuture)")
    func credentialWindow() async throws {
        var claims = Self.claims
        claims["exp"] = 1_749_000_000
        let expired = try await TestSupport.mint(claims, plan: Self.plan).serialization
        #expect(throws: SDJWTError.invalidTime(.expired(exp: Date(timeIntervalSince1970: 1_749_000_000), now: TestSupport.now))) {
            try Self.verify(expired, keyBinding: nil)
        }
        claims = Self.claims
        claims["nbf"] = 1_760_000_000
        let early = try await TestSupport.mint(claims, plan: Self.plan).serialization
        #expect(throws: SDJWTError.invalidTime(.notYetValid(nbf: Date(timeIntervalSince1970: 1_760_000_000), now: TestSupport.now))) {
            try Self.verify(early, keyBinding: nil)
        }
        claims = Self.claims
        claims["iat"] = 1_760_000_000
        let future = try await TestSupport.mint(claims, plan: Self.plan).serialization
        #expect(throws: SDJWTError.invalidTime(.issuedInFuture(iat: Date(timeIntervalSince1970: 1_760_000_000), now: TestSupport.now))) {
            try Self.verify(future, keyBinding: nil)
        }
    }

    @Test("an x5c chain to an untrusted root is untrustedIssuer(unknownAnchor); to the configured anchor it verifies")
    func certificateChain() async throws {
        let issuerKey = try ECPrivateKey.generate(curve: .p256)
        let (leaf, root) = try Self.chain(for: issuerKey)
        let (_, strangerRoot) = try Self.chain(for: try ECPrivateKey.generate(curve: .p256))
        let text = try await Self.issued(by: issuerKey, chain: [leaf])
        let now = Date()
        let trusted = try SDJWTVerifier(options: SDJWTVerificationOptions(
            issuerKey: .certificateChain(trustAnchors: [root]), now: now)).verify(text)
        #expect(trusted.certificateChain?.path == [leaf, root])
        #expect(throws: SDJWTError.untrustedIssuer(.unknownAnchor)) {
            try SDJWTVerifier(options: SDJWTVerificationOptions(issuerKey: .certificateChain(trustAnchors: [strangerRoot]), now: now))
                .verify(text)
        }
    }

    @Test("with x5c, an SD-JWT VC whose iss no subjectAltName of the leaf names is untrustedIssuer(subjectAlternativeNameMismatch)")
    func issuerNameBinding() async throws {
        let issuerKey = try ECPrivateKey.generate(curve: .p256)
        let now = Date()
        // The host of an https iss matches a dNSName; an exact URI matches a uniformResourceIdentifier.
        for names in [[GeneralName.dnsName("issuer.example")], [.uri("https://issuer.example")], [.dnsName("ISSUER.example")]] {
            let (leaf, root) = try Self.chain(for: issuerKey, names: names)
            let text = try await Self.issued(by: issuerKey, chain: [leaf])
            let verified = try SDJWTVerifier(options: SDJWTVerificationOptions(issuerKey: .certificateChain(trustAnchors: [root]),
                                                                               now: now)).verify(text)
            #expect(verified.issuer == "https://issuer.example")
        }
        for names in [[GeneralName.dnsName("attacker.example")], [.uri("https://issuer.example/other")],
                      [.dnsName("sub.issuer.example")], [.email("issuer.example")], []] {
            let (leaf, root) = try Self.chain(for: issuerKey, names: names)
            let text = try await Self.issued(by: issuerKey, chain: [leaf])
            #expect(throws: SDJWTError.untrustedIssuer(.subjectAlternativeNameMismatch(expected: "https://issuer.example"))) {
                try SDJWTVerifier(options: SDJWTVerificationOptions(issuerKey: .certificateChain(trustAnchors: [root]), now: now))
                    .verify(text)
            }
        }
        // A plain SD-JWT has no such binding (RFC 9901 leaves key resolution to the application).
        let (leaf, root) = try Self.chain(for: issuerKey, names: [.dnsName("attacker.example")])
        let text = try await Self.issued(by: issuerKey, chain: [leaf])
        #expect(try SDJWTVerifier(options: SDJWTVerificationOptions(issuerKey: .certificateChain(trustAnchors: [root]), now: now,
                                                                    profile: .sdJWT)).verify(text).issuer == "https://issuer.example")
        // No iss at all cannot be bound to the certificate.
        var claims = Self.claims
        claims.removeValue(forKey: "iss")
        let anonymous = try await SDJWTIssuer(signer: SoftwareSigner(issuerKey), certificateChain: [leaf])
            .issue(claims: claims, plan: Self.plan, holderKey: TestSupport.holderPublicJWK).serialization
        #expect(throws: SDJWTError.missingClaim("iss")) {
            try SDJWTVerifier(options: SDJWTVerificationOptions(issuerKey: .certificateChain(trustAnchors: [root]), now: now))
                .verify(anonymous)
        }
    }

    @Test("with x5c, a leaf without the digitalSignature key usage, or a CA leaf, does not sign credentials")
    func issuerKeyUsage() async throws {
        let issuerKey = try ECPrivateKey.generate(curve: .p256)
        let now = Date()
        let (noSigning, root) = try Self.chain(for: issuerKey, keyUsage: .keyAgreement)
        let text = try await Self.issued(by: issuerKey, chain: [noSigning])
        #expect(throws: SDJWTError.untrustedIssuer(.missingKeyUsage(required: .digitalSignature, depth: 0))) {
            try SDJWTVerifier(options: SDJWTVerificationOptions(issuerKey: .certificateChain(trustAnchors: [root]), now: now))
                .verify(text)
        }
        // The root CA's own key signing the credential: trusted as an anchor, but not an end entity.
        let rootKey = try ECPrivateKey.generate(curve: .p256)
        let ca = try CertificateBuilder(subject: try DistinguishedName([(.commonName, "issuer CA")]), notBefore: now.addingTimeInterval(-60),
                                        notAfter: now.addingTimeInterval(86_400), basicConstraints: BasicConstraints(isCA: true),
                                        keyUsage: [.keyCertSign, .digitalSignature],
                                        subjectAlternativeNames: [.dnsName("issuer.example")]).selfSigned(with: .ec(rootKey))
        let bySigningCA = try await Self.issued(by: rootKey, chain: [ca])
        #expect(throws: SDJWTError.untrustedIssuer(.leafIsCA)) {
            try SDJWTVerifier(options: SDJWTVerificationOptions(issuerKey: .certificateChain(trustAnchors: [ca]), now: now))
                .verify(bySigningCA)
        }
    }

    /// A credential signed by `key` with `chain` as x5c.
    static func issued(by key: ECPrivateKey, chain: [X509Certificate]) async throws -> String {
        try await SDJWTIssuer(signer: SoftwareSigner(key), certificateChain: chain)
            .issue(claims: Self.claims, plan: Self.plan, holderKey: TestSupport.holderPublicJWK).serialization
    }

    static func chain(for key: ECPrivateKey, names: [GeneralName] = [.dnsName("issuer.example")],
                      keyUsage: KeyUsage = .digitalSignature) throws -> (X509Certificate, X509Certificate) {
        let now = Date(), later = Date().addingTimeInterval(86_400)
        let rootKey = try ECPrivateKey.generate(curve: .p256)
        let root = try CertificateBuilder.certificateAuthority(
            subject: try DistinguishedName([(.commonName, "SD-JWT test root")]), notBefore: now.addingTimeInterval(-60),
            notAfter: later).selfSigned(with: .ec(rootKey))
        let leaf = try CertificateBuilder.endEntity(
            subject: try DistinguishedName([(.commonName, "SD-JWT test issuer")]), subjectPublicKeyInfoDER: key.publicKey.spkiDER,
            notBefore: now.addingTimeInterval(-60), notAfter: later, keyUsage: keyUsage,
            subjectAlternativeNames: names).signed(by: root, key: .ec(rootKey))
        return (leaf, root)
    }

    @Test("the app's key resolver is asked with header and payload; having no key is issuerKeyUnavailable with the kid")
    func resolver() async throws {
        let text = try await Self.presentation().serialization
        let resolving = SDJWTVerificationOptions(issuerKey: .resolver { header, claims in
            guard claims.issuer == "https://issuer.example", header.algorithm == "ES256" else { return nil }
            return TestSupport.issuerPublicJWK
        }, now: TestSupport.now, keyBinding: Self.expectation)
        #expect(try SDJWTVerifier(options: resolving).verify(text).issuerKey == TestSupport.issuerPublicJWK)
        let failing = SDJWTVerificationOptions(issuerKey: .resolver { _, _ in nil }, now: TestSupport.now)
        let keyID = try SDJWT(compact: text).issuerSignedJWT.header.keyID
        #expect(throws: SDJWTError.issuerKeyUnavailable(keyID: keyID)) { try SDJWTVerifier(options: failing).verify(text) }
    }

    @Test("typ must be dc+sd-jwt; vc+sd-jwt only with the legacy flag; vct is required")
    func credentialType() async throws {
        let legacy = try await TestSupport.mint(Self.claims, plan: Self.plan, type: "vc+sd-jwt").serialization
        #expect(throws: SDJWTError.invalidCredentialType("vc+sd-jwt")) { try Self.verify(legacy, keyBinding: nil) }
        var options = TestSupport.options()
        options.acceptsLegacyVCType = true
        #expect(try SDJWTVerifier(options: options).verify(legacy).type == "urn:example:1")
        var claims = Self.claims
        claims.removeValue(forKey: "vct")
        let noVCT = try await Self.signed(claims)
        #expect(throws: SDJWTError.missingClaim("vct")) { try Self.verify(noVCT + "~", keyBinding: nil) }
        let wrongType = try await Self.signed(Self.claims, type: "JWT")
        #expect(throws: SDJWTError.invalidCredentialType("JWT")) { try Self.verify(wrongType + "~", keyBinding: nil) }
    }

    @Test("transaction data hashes must cover exactly the request's transaction_data (OpenID4VP 1.0 §8.4)")
    func transactionData() async throws {
        let data = [Base64URL.encode(Array(#"{"type":"payment","credential_ids":["pid"],"amount":"42.00"}"#.utf8))]
        var parameters = Self.parameters
        parameters.transactionData = data
        let text = try await Self.presentation(parameters).serialization
        let kb = try #require(try SDJWT(compact: text).keyBindingJWT).claims
        #expect(kb["transaction_data_hashes"] == [.string(SDJWTHashAlgorithm.sha256.base64URLDigest(of: data[0]))])
        #expect(kb["transaction_data_hashes_alg"] == "sha-256")
        var expectation = Self.expectation
        expectation.transactionData = data
        #expect(try Self.verify(text, keyBinding: expectation).claims["given_name"] == "Erika")
        expectation.transactionData = [Base64URL.encode(Array("other".utf8))]
        #expect(throws: SDJWTError.keyBinding(.transactionDataMismatch(.hashesDiffer))) {
            try Self.verify(text, keyBinding: expectation)
        }
        #expect(throws: SDJWTError.keyBinding(.transactionDataMismatch(.unexpectedHashes))) {
            try Self.verify(text)
        }
        // Counted as a multiset: hashes of [a, b, b] do not answer [a, a, b].
        let (a, b) = (Base64URL.encode(Array("a".utf8)), Base64URL.encode(Array("b".utf8)))
        parameters.transactionData = [a, b, b]
        let skewed = try await Self.presentation(parameters).serialization
        expectation.transactionData = [a, a, b]
        #expect(throws: SDJWTError.keyBinding(.transactionDataMismatch(.hashesDiffer))) {
            try Self.verify(skewed, keyBinding: expectation)
        }
        expectation.transactionData = [b, a, b]
        #expect(try Self.verify(skewed, keyBinding: expectation).claims["given_name"] == "Erika")
        let plain = try await Self.presentation().serialization
        expectation.transactionData = data
        #expect(throws: SDJWTError.keyBinding(.transactionDataMismatch(.missingHashes))) {
            try Self.verify(plain, keyBinding: expectation)
        }
    }

    @Test("malformed compact forms are rejected with typed errors, never a crash")
    func malformed() throws {
        #expect(throws: SDJWTError.malformed(.missingSeparator)) { try SDJWT(compact: "a.b.c") }
        #expect(throws: SDJWTError.self) { try SDJWT(compact: "~") }
        #expect(throws: SDJWTError.disclosure(.malformed(.notBase64URL))) { try Disclosure(encoded: "a=") }
        #expect(throws: SDJWTError.disclosure(.malformed(.wrongElementCount(4)))) {
            try Disclosure(jsonText: #"["s","n",1,2]"#)
        }
        #expect(throws: SDJWTError.disclosure(.malformed(.saltNotString))) { try Disclosure(jsonText: "[1,2]") }
    }
}
