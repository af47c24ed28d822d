import Foundation
import JOSE
import Testing
import WalletCrypto
import WalletRuntime
import WalletEncoding

@Suite("JWT")
struct JWTTests {
    static let now = Date(timeIntervalSince1970: 1_700_000_000)

    static func makeJWT(_ claims: JSONObject, type: String? = "JWT") async throws -> (JWT, SoftwareSigner) {
        let signer = try Fixtures.curveKey(.es256)
        let jwt = try await JWT.sign(claims: try JWTClaims(claims), signer: signer, type: type)
        return (try JWT(compact: jwt.compactSerialization), signer)
    }

    @Test("typed claims are read, aud as string or array, and decode into the caller's type")
    func typedClaims() async throws {
        let cnf: JSONValue = ["jwk": JWK(publicKey: try Fixtures.curveKey(.es256).publicKey).jsonValue]
        let (jwt, signer) = try await Self.makeJWT([
            "iss": "https://issuer.example", "sub": "alice", "aud": ["a", "b"], "exp": 1_700_000_600,
            "nbf": 1_699_999_000, "iat": 1_699_999_990, "jti": "id-1", "nonce": "n", "cnf": cnf, "extra": 1.5,
        ])
        try jwt.verify(with: signer.publicKey, options: JWTValidationOptions(
            now: Self.now, expectedAudience: "b", expectedIssuer: "https://issuer.example", expectedType: "jwt",
            requiredClaims: ["exp", "iat", "nonce"]))
        #expect(jwt.claims.issuer == "https://issuer.example")
        #expect(jwt.claims.subject == "alice")
        #expect(jwt.claims.audience == ["a", "b"])
        #expect(jwt.claims.expiration == Date(timeIntervalSince1970: 1_700_000_600))
        #expect(jwt.claims.notBefore == Date(timeIntervalSince1970: 1_699_999_000))
        #expect(jwt.claims.issuedAt == Date(timeIntervalSince1970: 1_699_999_990))
        #expect(jwt.claims.jwtID == "id-1")
        #expect(jwt.claims.nonce == "n")
        #expect(try jwt.claims.confirmationKey()?.keyType == .ec)
        #expect(jwt.claims["extra"] == .number(1.5))
        #expect(try jwt.claims.members.string("sub") == "alice")
        #expect(try jwt.claims.members.double("extra") == 1.5)

        let (single, _) = try await Self.makeJWT(["aud": "only"])
        #expect(single.claims.audience == ["only"])
    }

    @Test("an expired JWT is rejected, within the skew it is accepted")
    func expired() async throws {
        let (jwt, _) = try await Self.makeJWT(["exp": 1_699_999_950])
        try jwt.validate(JWTValidationOptions(now: Self.now))    // 50 s late, 60 s skew
        #expect(throws: JOSEError.invalidTime(.expired(exp: Date(timeIntervalSince1970: 1_699_999_950), now: Self.now))) {
            try jwt.validate(JWTValidationOptions(now: Self.now, clockSkew: 10))
        }
    }

    @Test("a JWT not yet valid or issued in the future is rejected")
    func notYetValid() async throws {
        let (early, _) = try await Self.makeJWT(["nbf": 1_700_000_100])
        #expect(throws: JOSEError.invalidTime(.notYetValid(nbf: Date(timeIntervalSince1970: 1_700_000_100), now: Self.now))) {
            try early.validate(JWTValidationOptions(now: Self.now))
        }
        let (future, _) = try await Self.makeJWT(["iat": 1_700_000_100])
        #expect(throws: JOSEError.invalidTime(.issuedInFuture(iat: Date(timeIntervalSince1970: 1_700_000_100), now: Self.now))) {
            try future.validate(JWTValidationOptions(now: Self.now))
        }
    }

    @Test("proof-of-possession rules: iat required, a clock ahead within the skew, no leeway for age or exp")
    func proofOfPossessionRules() throws {
        let rules = JWTTimeRules.proofOfPossession(maximumAge: 300, clockSkew: 60)
        let now = Self.now.timeIntervalSince1970
        func at(_ members: JSONObject) throws(JWTTimeFailure) { try rules.check(members, at: Self.now) }
        try at(["iat": .number(now - 300)])
        try at(["iat": .number(now + 60)])
        #expect(throws: JWTTimeFailure.missing(.issuedAt)) { try at([:]) }
        #expect(throws: JWTTimeFailure.notANumber(.issuedAt)) { try at(["iat": "now"]) }
        #expect(throws: JWTTimeFailure.issuedTooLongAgo(iat: Date(timeIntervalSince1970: now - 301), now: Self.now, maximumAge: 300)) {
            try at(["iat": .number(now - 301)])
        }
        #expect(throws: JWTTimeFailure.issuedInFuture(iat: Date(timeIntervalSince1970: now + 61), now: Self.now)) {
            try at(["iat": .number(now + 61)])
        }
        #expect(throws: JWTTimeFailure.expired(exp: Self.now, now: Self.now)) { try at(["iat": .number(now), "exp": .number(now)]) }
        #expect(throws: JWTTimeFailure.notYetValid(nbf: Date(timeIntervalSince1970: now + 61), now: Self.now)) {
            try at(["iat": .number(now), "nbf": .number(now + 61)])
        }
        // The general rules give the same leeway both ways.
        try JWTTimeRules(clockSkew: 60, required: [.issuedAt], maximumAge: 300).check(["iat": .number(now - 301)], at: Self.now)
    }

    @Test("a wrong audience, issuer or type is rejected")
    func expectations() async throws {
        let (jwt, _) = try await Self.makeJWT(["iss": "me", "aud": "you"], type: "application/dpop+jwt")
        #expect(throws: JOSEError.audienceMismatch(expected: "them", actual: ["you"])) {
            try jwt.validate(JWTValidationOptions(now: Self.now, expectedAudience: "them"))
        }
        #expect(throws: JOSEError.issuerMismatch(expected: "someone", actual: "me")) {
            try jwt.validate(JWTValidationOptions(now: Self.now, expectedIssuer: "someone"))
        }
        #expect(throws: JOSEError.typeMismatch(expected: "jwt", actual: "application/dpop+jwt")) {
            try jwt.validate(JWTValidationOptions(now: Self.now, expectedType: "jwt"))
        }
        try jwt.validate(JWTValidationOptions(now: Self.now, expectedType: "DPoP+JWT"))
        #expect(throws: JOSEError.missingClaim("nonce")) {
            try jwt.validate(JWTValidationOptions(now: Self.now, requiredClaims: ["nonce"]))
        }
    }

    @Test("typ matches case-insensitively in ASCII only, with application/ optional")
    func typeMatching() throws {
        func header(_ type: String) throws -> JOSEHeader { try JOSEHeader(members: ["alg": "ES256", "typ": .string(type)]) }
        #expect(try header("kb+jwt").typeMatches("kb+jwt"))
        #expect(try header("APPLICATION/KB+JWT").typeMatches("kb+jwt"))
        #expect(try header("Kb+Jwt").typeMatches("application/kb+jwt"))
        #expect(try !header("text/kb+jwt").typeMatches("kb+jwt"))
        #expect(try !header("kb+jwt ").typeMatches("kb+jwt"))
        // U+212A KELVIN SIGN lowercases to "k" in Unicode; a media type is ASCII.
        #expect(try !header("\u{212A}b+jwt").typeMatches("kb+jwt"))
        #expect(try !header("dc+sd-jwt").typeMatches("vc+sd-jwt"))
        #expect(try JOSEHeader(members: ["alg": "ES256"]).typeMatches("jwt") == false)
    }

    @Test("registered claims of the wrong type are invalid")
    func claimTypes() {
        #expect(throws: JOSEError.invalidClaim("exp")) { try JWTClaims(json: Array(#"{"exp":"soon"}"#.utf8)) }
        #expect(throws: JOSEError.invalidClaim("aud")) {
            try JWTClaims(json: Array(#"{"aud":[1]}"#.utf8))
        }
        #expect(throws: JOSEError.self) { try JWTClaims(json: Array("[]".utf8)) }
    }
}
