import Foundation
import JOSE
import SDJWT
import Testing
import WalletCrypto
import WalletEncoding

/// Presentations for claim paths disclose exactly the selected claims and the parents
/// they need (acceptance 3), over nested objects, arrays and recursive disclosures.
@Suite("Selective disclosure by claim path")
struct SelectiveDisclosureTests {
    static let claims: JSONObject = [
        "vct": "urn:eudi:pid:1", "iss": "https://issuer.example", "iat": 1_700_000_000, "exp": 1_900_000_000,
        "given_name": "Erika", "family_name": "Mustermann",
        "address": ["street_address": "Heidestraße 17", "locality": "Köln", "country": "DE"],
        "nationalities": ["DE", "FR", "IT"],
        "place_of_birth": ["locality": "Berlin", "country": "DE"],
        "age_equal_or_over": ["18": true, "21": true],
    ]

    /// address: structured (street and locality disclosable, country visible);
    /// nationalities: every element disclosable; place_of_birth: recursive (the object and
    /// both members); age_equal_or_over: flat members; decoys on the top level.
    static let plan = DisclosurePlan.object([
        "given_name": .disclosable, "family_name": .disclosable,
        "address": .object(["street_address": .disclosable, "locality": .disclosable], decoys: 2).disclosable,
        "nationalities": .array([:], every: .disclosable, decoys: 1),
        "place_of_birth": .object(["locality": .disclosable, "country": .disclosable]).disclosable,
        "age_equal_or_over": .object(["18": .disclosable, "21": .disclosable]),
    ], decoys: 3)

    static func issued() async throws -> SDJWT { try await TestSupport.mint(claims, plan: plan) }

    /// Presents `paths`, verifies, and returns the disclosed names (element values for array elements) and claims.
    static func present(_ paths: [ClaimPath]) async throws -> (disclosed: Set<String>, claims: JSONObject) {
        let sdJWT = try await issued()
        let presentation = try await sdJWT.presentation(
            disclosing: paths, keyBinding: KeyBindingParameters(audience: TestSupport.audience, nonce: TestSupport.nonce,
                                                                issuedAt: TestSupport.now),
            signer: TestSupport.holderSigner)
        let verified = try SDJWTVerifier(options: TestSupport.options(
            keyBinding: KeyBindingExpectation(audience: TestSupport.audience, nonce: TestSupport.nonce)))
            .verify(presentation.serialization)
        let names = presentation.disclosures.map { $0.claimName ?? "[\($0.value.stringValue ?? "?")]" }
        #expect(names.count == Set(names).count)
        var claims = verified.claims
        for name in ["vct", "iss", "iat", "exp", "cnf"] { claims.removeValue(forKey: name) }
        return (Set(names), claims)
    }

    @Test("a KB-JWT issued at a date out of the NumericDate range has iat clamped (0 for NaN), never a trap")
    func keyBindingDateOutOfRange() async throws {
        let sdJWT = try await Self.issued()
        for (seconds, iat) in [(Double.nan, Int64(0)), (1e300, .max), (-.infinity, .min)] {
            let presentation = try await sdJWT.presentation(
                disclosing: [], keyBinding: KeyBindingParameters(audience: TestSupport.audience, nonce: TestSupport.nonce,
                                                                 issuedAt: Date(timeIntervalSince1970: seconds)),
                signer: TestSupport.holderSigner)
            let kbJWT = try #require(presentation.serialization.split(separator: "~", omittingEmptySubsequences: false).last)
            let payload = try JSONValue.parseObject(try #require(Base64URL.decode(String(kbJWT.split(separator: ".")[1]))))
            #expect(payload["iat"] == JSONValue.integer(iat))
        }
    }

    @Test("issuance carries one disclosure per planned claim and processes back to the input")
    func issuance() async throws {
        let sdJWT = try await Self.issued()
        // names 2, address 1 + 2, nationalities 3, place_of_birth 1 + 2, age 2
        #expect(sdJWT.disclosures.count == 13)
        var claims = try sdJWT.processed().claims
        claims.removeValue(forKey: "cnf")
        #expect(claims == Self.claims)
        let payload = sdJWT.payload
        #expect(payload["_sd"]?.arrayValue?.count == 7)   // given, family, address, place_of_birth + 3 decoys
        #expect(payload["nationalities"]?.arrayValue?.count == 4)  // three elements and one decoy
        #expect(payload["address"] == nil && payload["vct"] == "urn:eudi:pid:1")
    }

    @Test("a value keeps its processed payload: asking again, a copy and a fresh parse give the same; equality ignores it; a failure is not kept")
    func processedIsKept() async throws {
        let sdJWT = try await Self.issued()
        let first = try sdJWT.processed()
        let copy = sdJWT
        #expect(try copy.processed() == first)
        #expect(try sdJWT.processed() == first)
        let reparsed = try SDJWT(compact: sdJWT.serialization)
        #expect(reparsed == sdJWT)
        #expect(try reparsed.processed() == first)
        // A presentation is another value, processed on its own.
        let presented = try sdJWT.presentation(disclosing: [[.key("given_name")]])
        #expect(presented != sdJWT)
        #expect(try presented.processed().claims["given_name"] != nil)
        #expect(try presented.processed().claims["family_name"] == nil)
        // The same disclosure twice fails processing, each time it is asked.
        let twice = try SDJWT(issuerSignedJWT: sdJWT.issuerSignedJWTString,
                              disclosures: [sdJWT.disclosures[0], sdJWT.disclosures[0]])
        for _ in 0..<2 { #expect(throws: SDJWTError.self) { try twice.processed() } }
    }

    @Test("processing: a scalar at maximumDepth is kept, one level deeper is limitExceeded, in objects and arrays")
    func processingDepthBoundary() throws {
        let limit = ProcessedPayload.maximumDepth
        // The payload is depth 0; `levels` objects in all put the scalar at depth `levels`.
        func objects(_ levels: Int) -> JSONObject {
            var value: JSONValue = 1
            for _ in 0..<levels { value = .object(["a": value]) }
            return value.objectValue ?? [:]
        }
        // One object holding `levels - 1` nested arrays puts the scalar at depth `levels`.
        func arrays(_ levels: Int) -> JSONObject {
            var value: JSONValue = 1
            for _ in 0..<(levels - 1) { value = .array([value]) }
            return ["a": value]
        }
        for payload in [objects, arrays] {
            let kept = try ProcessedPayload(payload: payload(limit), disclosures: [], hashAlgorithm: .sha256)
            #expect(kept.claims["a"] != nil)
            #expect(throws: SDJWTError.limitExceeded(.nestingDepth(maximum: limit))) {
                try ProcessedPayload(payload: payload(limit + 1), disclosures: [], hashAlgorithm: .sha256)
            }
        }
    }

    @Test("a nested member discloses itself and its parent object, not its siblings")
    func nestedMember() async throws {
        let result = try await Self.present([["address", "street_address"]])
        #expect(result.disclosed == ["address", "street_address"])
        let expected: JSONObject = [
            "address": ["street_address": "Heidestraße 17", "country": "DE"], "nationalities": [], "age_equal_or_over": [:],
        ]
        #expect(result.claims == expected)
    }

    @Test("an array index discloses that element only")
    func arrayIndex() async throws {
        let result = try await Self.present([["nationalities", 1]])
        #expect(result.disclosed == ["[FR]"])
        #expect(result.claims["nationalities"] == ["FR"])
    }

    @Test("null in a path discloses every element of the array")
    func everyElement() async throws {
        let result = try await Self.present([["nationalities", nil]])
        #expect(result.disclosed == ["[DE]", "[FR]", "[IT]"])
        #expect(result.claims["nationalities"] == ["DE", "FR", "IT"])
    }

    @Test("a recursively disclosable object discloses itself and everything inside it")
    func recursiveObject() async throws {
        let result = try await Self.present([["place_of_birth"]])
        #expect(result.disclosed == ["place_of_birth", "locality", "country"])
        #expect(result.claims["place_of_birth"] == ["locality": "Berlin", "country": "DE"])
    }

    @Test("a member inside a recursive disclosure needs the outer disclosure and not its sibling")
    func recursiveMember() async throws {
        let result = try await Self.present([["place_of_birth", "country"], ["age_equal_or_over", "18"], ["given_name"]])
        #expect(result.disclosed == ["place_of_birth", "country", "18", "given_name"])
        let expected: JSONObject = [
            "place_of_birth": ["country": "DE"], "age_equal_or_over": ["18": true], "given_name": "Erika", "nationalities": [],
        ]
        #expect(result.claims == expected)
    }

    @Test("an always-visible claim needs no disclosure, and an empty selection presents none")
    func visibleClaim() async throws {
        let sdJWT = try await Self.issued()
        #expect(try sdJWT.disclosures(for: [["vct"]]).isEmpty)
        #expect(try sdJWT.disclosures(for: []).isEmpty)
        let unbound = try sdJWT.presentation(disclosing: [])
        #expect(unbound.keyBindingJWT == nil && unbound.serialization.hasSuffix("~"))
        let verified = try SDJWTVerifier(options: TestSupport.options()).verify(unbound.serialization)
        #expect(verified.claims["given_name"] == nil && verified.claims["vct"] == "urn:eudi:pid:1")
    }

    @Test("a path that selects nothing, or walks into a value of the wrong kind, is claimPathNotFound")
    func missingPath() async throws {
        let sdJWT = try await Self.issued()
        #expect(throws: SDJWTError.claimPathNotFound(["birthdate"])) { try sdJWT.disclosures(for: [["birthdate"]]) }
        #expect(throws: SDJWTError.claimPathNotFound(["nationalities", 7])) { try sdJWT.disclosures(for: [["nationalities", 7]]) }
        #expect(throws: SDJWTError.claimPathNotFound(["given_name", 0])) { try sdJWT.disclosures(for: [["given_name", 0]]) }
        #expect(throws: SDJWTError.invalidClaimPath(.empty)) { try ClaimPath(json: []) }
        #expect(throws: SDJWTError.self) { try ClaimPath(json: ["a", -1]) }
        #expect(try ClaimPath(json: ["a", 0, .null]) == ["a", 0, nil])
    }
}
