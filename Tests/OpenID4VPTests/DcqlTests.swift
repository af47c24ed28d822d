import Foundation
import JOSE
import OpenID4VP
import SDJWT
import WalletCrypto
import Testing
import WalletEncoding

/// DCQL queries from OpenID4VP 1.0 (../shared/vectors/openid4vp/dcql_queries.json, copied
/// from the 1.0-final examples) matched against hand-made credentials.
@Suite("DCQL")
struct DcqlTests {
    static let identity = "https://credentials.example.com/identity_credential"

    static func query(_ name: String) throws -> DcqlQuery {
        let file = try VPTestSupport.vector("dcql_queries.json")
        for entry in try file.object("inputs").objectArray("queries") where try entry.string("name") == name {
            return try DcqlQuery(json: try entry.object("json"))
        }
        throw VPTestSupport.Failure(description: "no query \(name)")
    }

    static func sdJwt(_ id: String, vct: String = identity, bound: Bool = true, aki: [[UInt8]] = [],
                      _ claims: JSONObject) -> DcqlCredential {
        var members = claims
        members["vct"] = .string(vct)
        return DcqlCredential(id: id, format: "dc+sd-jwt", type: vct, claims: .json(members), isHolderBound: bound,
                              authorityKeyIdentifiers: aki)
    }

    static func mdoc(_ id: String, docType: String, _ nameSpaces: [String: [String: JSONValue]]) -> DcqlCredential {
        DcqlCredential(id: id, format: "mso_mdoc", type: docType, claims: .mdoc(nameSpaces), isHolderBound: true)
    }

    static let person: JSONObject = [
        "last_name": "Doe", "first_name": "John", "given_name": "John", "family_name": "Doe",
        "address": ["street_address": "42 Market Street", "postal_code": "90210", "locality": "Milliways"],
    ]

    @Test("every DCQL example of OpenID4VP 1.0 parses and writes back the same JSON")
    func everyExampleParses() throws {
        let file = try VPTestSupport.vector("dcql_queries.json")
        let entries = try file.object("inputs").objectArray("queries")
        #expect(entries.count == 11)
        for entry in entries {
            let json = try entry.object("json")
            let query = try DcqlQuery(json: json)
            let name = try entry.string("name")
            #expect(query.jsonValue == .object(json), "round trip of \(name)")
            if let text = try entry.optionalString("text") {
                #expect(try DcqlQuery(json: text) == query)
            }
        }
    }

    @Test("simple SD-JWT VC query: the credential with all three claims is the candidate, with their paths")
    func simpleSdJwt() throws {
        let query = try Self.query("simple_sd_jwt_vc")
        let lacking = Self.sdJwt("lacking", ["last_name": "Doe", "first_name": "John"])
        let otherType = Self.sdJwt("other", vct: "https://other.example/vct", Self.person)
        let match = DcqlMatcher.match(query, against: [lacking, Self.sdJwt("pid", Self.person), otherType])
        let candidates = try #require(match.candidates["my_credential"])
        #expect(candidates.map(\.credentialId) == ["pid"])
        #expect(candidates[0].disclosedPaths == [["last_name"], ["first_name"], ["address", "street_address"]])
        #expect(match.satisfiable)
        #expect(match.isRequired("my_credential"))
        #expect(match.automaticSelection == ["my_credential": ["pid"]])
    }

    @Test("a candidate's revealed paths are what the verifier reads: a whole-object disclosure's members and the claims always sent")
    func revealedPaths() async throws {
        let claims: JSONObject = [
            "iss": "https://issuer.example", "vct": .string(Self.identity), "iat": 1_800_000_000,
            "given_name": "Erika", "family_name": "Mustermann", "birthdate": "1964-08-12",
            "address": ["street_address": "Heidestrasse 17", "locality": "Koeln"],
        ]
        // `address` is one disclosure with plain members; `birthdate` is not selectively disclosable.
        let plan = DisclosurePlan(members: ["given_name": .disclosable, "family_name": .disclosable, "address": .disclosable])
        let issued = try await SDJWTIssuer(signer: SoftwareSigner(try ECPrivateKey.generate(curve: .p256)))
            .issue(claims: claims, plan: plan, holderKey: JWK(publicKey: try ECPrivateKey.generate(curve: .p256).publicKey))
        let credential = try DcqlCredential(sdJwt: Array(issued.serialization.utf8), id: "pid")
        let query = try DcqlQuery(json: """
            {"credentials": [{"id": "q", "format": "dc+sd-jwt", "meta": {"vct_values": ["\(Self.identity)"]},
              "claims": [{"path": ["address", "locality"]}, {"path": ["given_name"]}]}]}
            """)
        let candidate = try #require(DcqlMatcher.match(query, against: [credential]).candidates["q"]?.first)
        #expect(candidate.disclosedPaths == [["address", "locality"], ["given_name"]])
        #expect(candidate.revealedPaths == [["address", "locality"], ["address", "street_address"], ["birthdate"], ["given_name"]])
        // Exactly what a presentation of the disclosed paths carries.
        let presented = try issued.presentation(disclosing: candidate.disclosedPaths).processed().claims
        #expect(presented["family_name"] == nil && presented["address"]?["street_address"] == "Heidestrasse 17")
        // Without its SD-JWT (a credential built by hand) the candidate cannot know more than it asked.
        let bare = Self.sdJwt("bare", claims)
        let plain = try #require(DcqlMatcher.match(query, against: [bare]).candidates["q"]?.first)
        #expect(plain.revealedPaths == plain.disclosedPaths)
        // A query naming no claims reveals what is always sent.
        let noClaims = try DcqlQuery(json: """
            {"credentials": [{"id": "q", "format": "dc+sd-jwt", "meta": {"vct_values": ["\(Self.identity)"]}}]}
            """)
        #expect(DcqlMatcher.match(noClaims, against: [credential]).candidates["q"]?.first?.revealedPaths == [["birthdate"]])
    }

    @Test("simple mdoc query: [namespace, element] paths select data elements")
    func simpleMdoc() throws {
        let query = try Self.query("simple_mdoc")
        let vrc = Self.mdoc("vrc", docType: "org.iso.7367.1.mVRC", [
            "org.iso.7367.1": ["vehicle_holder": "John Doe"], "org.iso.18013.5.1": ["first_name": "John"],
        ])
        let noHolder = Self.mdoc("partial", docType: "org.iso.7367.1.mVRC", ["org.iso.18013.5.1": ["first_name": "John"]])
        let mdl = Self.mdoc("mdl", docType: "org.iso.18013.5.1.mDL", [
            "org.iso.7367.1": ["vehicle_holder": "John Doe"], "org.iso.18013.5.1": ["first_name": "John"],
        ])
        let match = DcqlMatcher.match(query, against: [noHolder, vrc, mdl])
        let candidates = try #require(match.candidates["my_credential"])
        #expect(candidates.map(\.credentialId) == ["vrc"])
        #expect(candidates[0].disclosedPaths == [["org.iso.7367.1", "vehicle_holder"], ["org.iso.18013.5.1", "first_name"]])
    }

    @Test("multiple credentials without credential_sets: all are required, one missing leaves the request unsatisfiable")
    func multiCredentials() throws {
        let query = try Self.query("multi_credentials")
        let pid = Self.sdJwt("pid-1", Self.person)
        let vrc = Self.mdoc("vrc", docType: "org.iso.7367.1.mVRC", [
            "org.iso.7367.1": ["vehicle_holder": "John Doe"], "org.iso.18013.5.1": ["first_name": "John"],
        ])
        let both = DcqlMatcher.match(query, against: [pid, vrc])
        #expect(both.satisfiable)
        #expect(both.isRequired("pid") && both.isRequired("mdl"))
        #expect(both.automaticSelection == ["pid": ["pid-1"], "mdl": ["vrc"]])
        let onlyPid = DcqlMatcher.match(query, against: [pid])
        #expect(!onlyPid.satisfiable)
        #expect(onlyPid.unsatisfiedQueryIds == ["mdl"])
        #expect(throws: DcqlSelectionError.notSatisfiable(queryIds: ["mdl"])) { try onlyPid.check(["pid": ["pid-1"]]) }
        #expect(throws: DcqlSelectionError.incomplete(missing: ["mdl"])) { try both.check(["pid": ["pid-1"]]) }
        #expect(try both.check(["pid": ["pid-1"], "mdl": ["vrc"]]) == ["pid", "mdl"])
    }

    @Test("credential_sets alternatives: the first answerable option is chosen, the optional set is left to the user")
    func credentialAlternatives() throws {
        let query = try Self.query("credentials_alternatives")
        let other = Self.sdJwt("other", vct: "https://othercredentials.example/pid", Self.person)
        let reduced1 = Self.sdJwt("r1", vct: "https://credentials.example.com/reduced_identity_credential", Self.person)
        let reduced2 = Self.sdJwt("r2", vct: "https://cred.example/residence_credential",
                                  ["postal_code": "90210", "locality": "Milliways", "region": "Betelgeuse"])
        let rewards = Self.sdJwt("rewards", vct: "https://company.example/company_rewards", ["rewards_number": 42])
        let pid = Self.sdJwt("pid", Self.person)

        let reducedOnly = DcqlMatcher.match(query, against: [reduced1, reduced2, rewards])
        #expect(reducedOnly.satisfiable)
        #expect(reducedOnly.automaticSelection == ["pid_reduced_cred_1": ["r1"], "pid_reduced_cred_2": ["r2"]])
        #expect(!reducedOnly.isRequired("pid") && !reducedOnly.isRequired("nice_to_have"))
        // The optional set may be answered too.
        #expect(try reducedOnly.check(["pid_reduced_cred_1": ["r1"], "pid_reduced_cred_2": ["r2"], "nice_to_have": ["rewards"]])
            == ["pid_reduced_cred_1", "pid_reduced_cred_2", "nice_to_have"])
        #expect(throws: DcqlSelectionError.incomplete(missing: ["pid_reduced_cred_2"])) {
            try reducedOnly.check(["pid_reduced_cred_1": ["r1"]])
        }

        let all = DcqlMatcher.match(query, against: [other, pid, reduced1, reduced2])
        #expect(all.automaticSelection == ["pid": ["pid"]])
        #expect(try all.check(["other_pid": ["other"]]) == ["other_pid"])

        let onlyOther = DcqlMatcher.match(query, against: [other])
        #expect(onlyOther.automaticSelection == ["other_pid": ["other"]])

        let nothing = DcqlMatcher.match(query, against: [rewards])
        #expect(!nothing.satisfiable)
        #expect(nothing.unsatisfiedQueryIds == ["pid", "other_pid", "pid_reduced_cred_1", "pid_reduced_cred_2"])
    }

    @Test("complex mdoc query: ID from an mDL or a photo ID, the address optional")
    func complexMdoc() throws {
        let query = try Self.query("complex_mdoc")
        let elements: [String: JSONValue] = [
            "given_name": "John", "family_name": "Doe", "portrait": "AAEC", "resident_address": "42 Market Street",
            "resident_country": "UT",
        ]
        let photo = Self.mdoc("photo", docType: "org.iso.23220.photoid.1", ["org.iso.18013.5.1": elements])
        let mdl = Self.mdoc("mdl", docType: "org.iso.18013.5.1.mDL", ["org.iso.18013.5.1": elements])
        let match = DcqlMatcher.match(query, against: [photo, mdl])
        #expect(match.candidates["mdl-id"]?.map(\.credentialId) == ["mdl"])
        #expect(match.candidates["photo_card-id"]?.map(\.credentialId) == ["photo"])
        #expect(match.candidates["mdl-address"]?.first?.disclosedPaths
            == [["org.iso.18013.5.1", "resident_address"], ["org.iso.18013.5.1", "resident_country"]])
        #expect(match.automaticSelection == ["mdl-id": ["mdl"]])
        let photoOnly = DcqlMatcher.match(query, against: [photo])
        #expect(photoOnly.automaticSelection == ["photo_card-id": ["photo"]])
        #expect(try photoOnly.check(["photo_card-id": ["photo"], "photo_card-address": ["photo"]])
            == ["photo_card-id", "photo_card-address"])
    }

    @Test("claim_sets: the first set the credential satisfies decides what is disclosed")
    func claimAlternatives() throws {
        let query = try Self.query("claims_alternatives")
        let full = Self.sdJwt("full", ["last_name": "Doe", "postal_code": "90210", "locality": "Milliways",
                                       "region": "Betelgeuse", "date_of_birth": "1940-01-01"])
        let postalOnly = Self.sdJwt("postal", ["last_name": "Doe", "postal_code": "90210", "date_of_birth": "1940-01-01"])
        let neither = Self.sdJwt("neither", ["last_name": "Doe", "locality": "Milliways", "date_of_birth": "1940-01-01"])
        let match = DcqlMatcher.match(query, against: [full, postalOnly, neither])
        let candidates = try #require(match.candidates["pid"])
        #expect(candidates.map(\.credentialId) == ["full", "postal"])
        // The JSON lists [a, c, d, e] first: the verifier's preference.
        #expect(candidates[0].claimSetIndex == 0)
        #expect(candidates[0].disclosedPaths == [["last_name"], ["locality"], ["region"], ["date_of_birth"]])
        #expect(candidates[1].claimSetIndex == 1)
        #expect(candidates[1].disclosedPaths == [["last_name"], ["postal_code"], ["date_of_birth"]])
    }

    @Test("values: a claim matches only with the same type and value, otherwise it counts as absent")
    func valueMatching() throws {
        let query = try Self.query("value_matching_simple")
        var doe = Self.person
        doe["postal_code"] = "90211"
        var smith = doe
        smith["last_name"] = "Smith"
        var numericPostal = doe
        numericPostal["postal_code"] = 90211
        let match = DcqlMatcher.match(query, against: [
            Self.sdJwt("doe", doe), Self.sdJwt("smith", smith), Self.sdJwt("numeric", numericPostal),
        ])
        #expect(match.candidates["my_credential"]?.map(\.credentialId) == ["doe"])
    }

    @Test("mdoc values are compared after CBOR-to-JSON conversion")
    func mdocValueMatching() throws {
        let claim = ClaimsQuery(path: ["org.iso.18013.5.1", "age_over_18"], values: [true])
        let query = try DcqlQuery(credentials: [CredentialQuery(
            id: "age", format: "mso_mdoc", meta: .msoMdoc(doctypeValue: "org.iso.18013.5.1.mDL"), claims: [claim])])
        let adult = Self.mdoc("adult", docType: "org.iso.18013.5.1.mDL", ["org.iso.18013.5.1": ["age_over_18": true]])
        let minor = Self.mdoc("minor", docType: "org.iso.18013.5.1.mDL", ["org.iso.18013.5.1": ["age_over_18": false]])
        #expect(DcqlMatcher.match(query, against: [minor, adult]).candidates["age"]?.map(\.credentialId) == ["adult"])
    }

    @Test("W3C VC queries parse but no stored credential answers them")
    func w3cQueries() throws {
        for name in ["jwt_vc_json", "ldp_vc"] {
            let query = try Self.query(name)
            let match = DcqlMatcher.match(query, against: [Self.sdJwt("pid", Self.person)])
            #expect(!match.satisfiable)
        }
    }

    @Test("the request-object and encrypted-response queries match the identity credential")
    func embeddedQueries() throws {
        let pid = Self.sdJwt("pid", Self.person)
        let byValue = DcqlMatcher.match(try Self.query("in_request_object_by_value"), against: [pid])
        #expect(byValue.candidates["some_identity_credential"]?.first?.disclosedPaths == [["last_name"], ["first_name"]])
        let encrypted = DcqlMatcher.match(try Self.query("in_encrypted_response_request"), against: [pid])
        #expect(encrypted.candidates["my_credential"]?.first?.disclosedPaths
            == [["last_name"], ["first_name"], ["address", "postal_code"]])
    }

    @Test("claims path pointers select what OpenID4VP 1.0 §7.3 says")
    func claimsPathPointerExample() throws {
        let file = try VPTestSupport.vector("claims_path_pointer.json")
        let credential = try file.object("inputs").object("credential")
        let selections = try file.object("expected").objectArray("selections")
        #expect(selections.count == 5)
        for selection in selections {
            let path = try ClaimPath(json: try selection.value("path"))
            let expected = try selection.array("selected")
            #expect(DcqlMatcher.select(path, in: credential) == expected, "\(path)")
        }
        // §7.1.1 errors: a key on a string, an index on an object, nothing selected.
        #expect(DcqlMatcher.select(["name", "first"], in: credential) == nil)
        #expect(DcqlMatcher.select(["address", 0], in: credential) == nil)
        #expect(DcqlMatcher.select(["address", nil], in: credential) == nil)
        #expect(DcqlMatcher.select(["nationalities", 5], in: credential) == nil)
        #expect(DcqlMatcher.select(["missing"], in: credential) == nil)
    }

    @Test("trusted_authorities aki matches the issuer chain's AuthorityKeyIdentifier; other types are not offered")
    func trustedAuthorities() throws {
        let file = try VPTestSupport.vector("dcql_queries.json")
        let entries = try file.object("inputs").objectArray("trusted_authorities_entries")
        let aki = try #require(Base64URL.decode("s9tIpPmhxdiuNkHMEWNpYim8S8Y"))
        let trusted = Self.sdJwt("trusted", aki: [[0x01], aki], Self.person)
        let unknown = Self.sdJwt("unknown", aki: [[0x02]], Self.person)
        for entry in entries {
            let json = try entry.object("json")
            let authority = TrustedAuthoritiesQuery(type: try json.string("type"), values: try json.stringArray("values"))
            let query = try DcqlQuery(credentials: [CredentialQuery(
                id: "pid", format: "dc+sd-jwt", meta: .sdJwtVc(vctValues: [Self.identity]), trustedAuthorities: [authority])])
            let ids = DcqlMatcher.match(query, against: [unknown, trusted]).candidates["pid"]?.map(\.credentialId)
            #expect(ids == (authority.type == "aki" ? ["trusted"] : []), "\(authority.type)")
        }
    }

    @Test("require_cryptographic_holder_binding false lets an unbound SD-JWT answer; the default does not")
    func holderBinding() throws {
        let unbound = Self.sdJwt("unbound", bound: false, Self.person)
        let bound = try DcqlQuery(credentials: [CredentialQuery(
            id: "q", format: "dc+sd-jwt", meta: .sdJwtVc(vctValues: [Self.identity]), claims: [ClaimsQuery(path: ["last_name"])])])
        #expect(DcqlMatcher.match(bound, against: [unbound]).candidates["q"] == [])
        let relaxed = try DcqlQuery(credentials: [CredentialQuery(
            id: "q", format: "dc+sd-jwt", meta: .sdJwtVc(vctValues: [Self.identity]), requireCryptographicHolderBinding: false,
            claims: [ClaimsQuery(path: ["last_name"])])])
        #expect(DcqlMatcher.match(relaxed, against: [unbound]).candidates["q"]?.map(\.credentialId) == ["unbound"])
    }

    @Test("multiple: auto selects every candidate; without it one credential only")
    func multiple() throws {
        let query = try DcqlQuery(credentials: [CredentialQuery(
            id: "q", format: "dc+sd-jwt", multiple: true, meta: .sdJwtVc(vctValues: [Self.identity]))])
        let match = DcqlMatcher.match(query, against: [Self.sdJwt("a", Self.person), Self.sdJwt("b", Self.person)])
        #expect(match.automaticSelection == ["q": ["a", "b"]])
        #expect(match.candidates["q"]?.first?.disclosedPaths == [])
        let single = try DcqlQuery(credentials: [CredentialQuery(id: "q", format: "dc+sd-jwt", meta: .sdJwtVc(vctValues: [Self.identity]))])
        let singleMatch = DcqlMatcher.match(single, against: [Self.sdJwt("a", Self.person), Self.sdJwt("b", Self.person)])
        #expect(singleMatch.automaticSelection == ["q": ["a"]])
        #expect(throws: DcqlSelectionError.tooManyCredentials(queryId: "q")) { try singleMatch.check(["q": ["a", "b"]]) }
        #expect(throws: DcqlSelectionError.notACandidate(queryId: "q", credentialId: "zzz")) { try singleMatch.check(["q": ["zzz"]]) }
        #expect(throws: DcqlSelectionError.unknownQuery("nope")) { try singleMatch.check(["nope": ["a"]]) }
        #expect(throws: DcqlSelectionError.duplicateCredential(queryId: "q", credentialId: "a")) {
            try match.check(["q": ["a", "a"]])
        }
    }

    @Test("invalid DCQL is refused with a typed reason", arguments: [
        (#"{"credentials": []}"#, DcqlError.emptyArray("credentials")),
        (#"{"credentials": [{"id": "a b", "format": "mso_mdoc", "meta": {"doctype_value": "x"}}]}"#, .invalidIdentifier("a b")),
        (#"{"credentials": [{"id": "a", "format": "mso_mdoc", "meta": {"doctype_value": "x"}}, {"id": "a", "format": "mso_mdoc", "meta": {"doctype_value": "x"}}]}"#,
         .duplicateCredentialId("a")),
        (#"{"credentials": [{"id": "a", "format": "mso_mdoc"}]}"#, .missingMeta(queryId: "a")),
        (#"{"credentials": [{"id": "a", "format": "dc+sd-jwt", "meta": {}}]}"#, .invalidMeta(queryId: "a")),
        (#"{"credentials": [{"id": "a", "format": "dc+sd-jwt", "meta": {"vct_values": []}}]}"#, .invalidMeta(queryId: "a")),
        (#"{"credentials": [{"id": "a", "format": "mso_mdoc", "meta": {"doctype_value": "x"}, "claims": [{"path": ["ns", "e", "f"]}]}]}"#,
         .invalidMdocClaimPath(queryId: "a", path: ["ns", "e", "f"])),
        (#"{"credentials": [{"id": "a", "format": "dc+sd-jwt", "meta": {"vct_values": ["v"]}, "claims": [{"path": []}]}]}"#,
         .invalidClaimPath(queryId: "a")),
        (#"{"credentials": [{"id": "a", "format": "dc+sd-jwt", "meta": {"vct_values": ["v"]}, "claims": [{"path": ["x", -1]}]}]}"#,
         .invalidClaimPath(queryId: "a")),
        (#"{"credentials": [{"id": "a", "format": "dc+sd-jwt", "meta": {"vct_values": ["v"]}, "claims": [{"path": ["x"], "values": [{"a": 1}]}]}]}"#,
         .invalidClaimValues(queryId: "a")),
        (#"{"credentials": [{"id": "a", "format": "dc+sd-jwt", "meta": {"vct_values": ["v"]}, "claim_sets": [["x"]]}]}"#,
         .claimSetsWithoutClaims(queryId: "a")),
        (#"{"credentials": [{"id": "a", "format": "dc+sd-jwt", "meta": {"vct_values": ["v"]}, "claims": [{"path": ["x"]}], "claim_sets": [["x"]]}]}"#,
         .missingClaimId(queryId: "a")),
        (#"{"credentials": [{"id": "a", "format": "dc+sd-jwt", "meta": {"vct_values": ["v"]}, "claims": [{"id": "x", "path": ["x"]}], "claim_sets": [["y"]]}]}"#,
         .unknownClaimId(queryId: "a", claimId: "y")),
        (#"{"credentials": [{"id": "a", "format": "dc+sd-jwt", "meta": {"vct_values": ["v"]}, "claims": [{"id": "x", "path": ["x"]}, {"id": "x", "path": ["y"]}]}]}"#,
         .duplicateClaimId(queryId: "a", claimId: "x")),
        (#"{"credentials": [{"id": "a", "format": "mso_mdoc", "meta": {"doctype_value": "x"}}], "credential_sets": [{"options": [["b"]]}]}"#,
         .unknownCredentialId("b")),
        (#"{"credentials": [{"id": "a", "format": "mso_mdoc", "meta": {"doctype_value": "x"}}], "credential_sets": [{"options": [[]]}]}"#,
         .invalidCredentialSet),
        (#"{"credentials": [{"id": "a", "format": "mso_mdoc", "meta": {"doctype_value": "x"}, "trusted_authorities": []}]}"#,
         .emptyArray("trusted_authorities")),
    ])
    func invalidQueries(text: String, expected: DcqlError) throws {
        #expect(throws: expected) { try DcqlQuery(json: text) }
    }

    @Test("DCQL limits: over 64 credential queries, 256 claims, or 64 credential sets, claim sets or options is tooMany")
    func limits() throws {
        func credential(_ id: String, claims: Int = 1, claimSets: Int? = nil) -> String {
            let claimList = (0..<claims).map { #"{"id": "c\#($0)", "path": ["c\#($0)"]}"# }.joined(separator: ",")
            let sets = claimSets.map { count in #", "claim_sets": ["# + Array(repeating: #"["c0"]"#, count: count).joined(separator: ",") + "]" } ?? ""
            return #"{"id": "\#(id)", "format": "dc+sd-jwt", "meta": {"vct_values": ["v"]}, "claims": [\#(claimList)]\#(sets)}"#
        }
        func query(_ credentials: [String], sets: String = "") -> String {
            #"{"credentials": [\#(credentials.joined(separator: ","))]\#(sets)}"#
        }
        let atLimit = (0..<DcqlQuery.maximumCredentialQueries).map { credential("q\($0)") }
        #expect(try DcqlQuery(json: query(atLimit)).credentials.count == 64)
        #expect(throws: DcqlError.tooMany("credentials", limit: 64)) { try DcqlQuery(json: query(atLimit + [credential("q64")])) }
        #expect(try DcqlQuery(json: query([credential("a", claims: 256)])).credentials[0].claims?.count == 256)
        #expect(throws: DcqlError.tooMany("claims", limit: 256)) { try DcqlQuery(json: query([credential("a", claims: 257)])) }
        #expect(throws: DcqlError.tooMany("claim_sets", limit: 64)) { try DcqlQuery(json: query([credential("a", claimSets: 65)])) }
        let options = Array(repeating: #"["a"]"#, count: 65).joined(separator: ",")
        #expect(throws: DcqlError.tooMany("options", limit: 64)) {
            try DcqlQuery(json: query([credential("a")], sets: #", "credential_sets": [{"options": [\#(options)]}]"#))
        }
        // A claim set or an option longer than the claims or credential queries it may name
        // (it must repeat ids) is refused: matching looks each id up per stored credential.
        func ids(_ count: Int, _ id: String) -> String { "[" + Array(repeating: #""\#(id)""#, count: count).joined(separator: ",") + "]" }
        let longSet = credential("a").replacingOccurrences(of: #""claims": ["#, with: #""claim_sets": [\#(ids(257, "c0"))], "claims": ["#)
        #expect(throws: DcqlError.tooMany("claim_sets entries", limit: 256)) { try DcqlQuery(json: query([longSet])) }
        let fullSet = credential("a").replacingOccurrences(of: #""claims": ["#, with: #""claim_sets": [\#(ids(256, "c0"))], "claims": ["#)
        #expect(try DcqlQuery(json: query([fullSet])).credentials[0].claimSets?[0].count == 256)
        #expect(throws: DcqlError.tooMany("options entries", limit: 64)) {
            try DcqlQuery(json: query([credential("a")], sets: #", "credential_sets": [{"options": [\#(ids(65, "a"))]}]"#))
        }
        #expect(try DcqlQuery(json: query([credential("a")], sets: #", "credential_sets": [{"options": [\#(ids(64, "a"))]}]"#))
            .credentialSets?[0].options[0].count == 64)
        // Every list of values is at most 64 long: each value is looked up against the store.
        func strings(_ count: Int) -> String { "[" + (0..<count).map { #""v\#($0)""# }.joined(separator: ",") + "]" }
        func meta(_ members: String, extra: String = "") -> String {
            query([#"{"id": "m", "format": "dc+sd-jwt", "meta": {\#(members)}\#(extra)}"#])
        }
        #expect(try DcqlQuery(json: meta(#""vct_values": \#(strings(64))"#)).credentials[0].meta.vctValues?.count == 64)
        #expect(throws: DcqlError.tooMany("vct_values", limit: 64)) { try DcqlQuery(json: meta(#""vct_values": \#(strings(65))"#)) }
        let types = "[" + Array(repeating: strings(1), count: 65).joined(separator: ",") + "]"
        #expect(throws: DcqlError.tooMany("type_values", limit: 64)) {
            try DcqlQuery(json: meta(#""vct_values": ["v"], "type_values": \#(types)"#))
        }
        #expect(throws: DcqlError.tooMany("type_values entries", limit: 64)) {
            try DcqlQuery(json: meta(#""vct_values": ["v"], "type_values": [\#(strings(65))]"#))
        }
        let authority = #"{"type": "aki", "values": \#(strings(1))}"#
        #expect(throws: DcqlError.tooMany("trusted_authorities", limit: 64)) {
            try DcqlQuery(json: meta(#""vct_values": ["v"]"#,
                                     extra: #", "trusted_authorities": [\#(Array(repeating: authority, count: 65).joined(separator: ","))]"#))
        }
        #expect(throws: DcqlError.tooMany("trusted_authorities values", limit: 64)) {
            try DcqlQuery(json: meta(#""vct_values": ["v"]"#, extra: #", "trusted_authorities": [{"type": "aki", "values": \#(strings(65))}]"#))
        }
        #expect(try DcqlQuery(json: meta(#""vct_values": ["v"]"#, extra: #", "claims": [{"path": ["a"], "values": \#(strings(64))}]"#))
            .credentials[0].claims?[0].values?.count == 64)
        #expect(throws: DcqlError.tooMany("values", limit: 64)) {
            try DcqlQuery(json: meta(#""vct_values": ["v"]"#, extra: #", "claims": [{"path": ["a"], "values": \#(strings(65))}]"#))
        }
        let sets = Array(repeating: #"{"options": [["a"]]}"#, count: 65).joined(separator: ",")
        #expect(throws: DcqlError.tooMany("credential_sets", limit: 64)) {
            try DcqlQuery(json: query([credential("a")], sets: #", "credential_sets": [\#(sets)]"#))
        }
    }

    @Test("a member of the wrong type is refused as such")
    func wrongMemberType() throws {
        #expect(throws: DcqlError.self) { try DcqlQuery(json: #"{"credentials": [{"id": "a", "format": 1, "meta": {}}]}"#) }
        #expect(throws: DcqlError.self) { try DcqlQuery(json: #"{"credentials": "x"}"#) }
        #expect(throws: DcqlError.self) { try DcqlQuery(json: "[]") }
    }

    @Test("a query naming no credential set leaves a selection outside every set refused")
    func notRequested() throws {
        let query = try DcqlQuery(json: """
            {"credentials": [{"id": "a", "format": "dc+sd-jwt", "meta": {"vct_values": ["\(Self.identity)"]}},
                             {"id": "b", "format": "dc+sd-jwt", "meta": {"vct_values": ["\(Self.identity)"]}}],
             "credential_sets": [{"options": [["a"]]}]}
            """)
        let match = DcqlMatcher.match(query, against: [Self.sdJwt("pid", Self.person)])
        #expect(throws: DcqlSelectionError.notRequested(queryId: "b")) { try match.check(["a": ["pid"], "b": ["pid"]]) }
    }
}
