import Foundation
@_spi(Fuzzing) import OpenID4VP
import WalletEncoding

// libFuzzer entry for what a verifier sends a wallet before consent (OpenID4VP 1.0): the
// request object's claims becoming the request model, a request object as fetched, a
// DCQL query, a Digital Credentials API request object, an authorization request URI and
// a transaction_data entry. Each runs through the sans-IO presentation core with an empty
// store (RequestProbe); any input ends in a state or a typed error, nothing traps. A DCQL
// query is also matched against a fixed SD-JWT VC and mdoc, and what the match reports
// must hold of them (see `matchAndCheck`). The first byte picks the form, the rest is the
// input.

/// `{"alg":"none","typ":"oauth-authz-req+jwt"}`: an unsigned request object's header
/// (RFC 9101 §6.1), so that the claims reach the request checks (a redirect_uri client).
private let unsignedHeader = Base64URL.encode(Array(#"{"alg":"none","typ":"oauth-authz-req+jwt"}"#.utf8))

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzz(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    guard size > 0 else { return 0 }
    let selector = data[0]
    let bytes = Array(UnsafeBufferPointer(start: data + 1, count: size - 1))
    let text = String(decoding: bytes, as: UTF8.self)
    switch selector % 6 {
    case 0:
        // Request object claims, unsigned: the parameters, client_id prefix, aud, time,
        // dcql_query, client_metadata and transaction_data checks.
        _ = RequestProbe.resolve(requestObject: unsignedHeader + "." + Base64URL.encode(bytes) + ".")
    case 1:
        // A compact request object as a request URI returns it (header, typ, alg, x5c).
        _ = RequestProbe.resolve(requestObject: text)
    case 2:
        // A DCQL query: parsed, written back, and parsed again to the same value.
        if let query = try? DcqlQuery(json: text) {
            let again = try? DcqlQuery(json: query.jsonValue.serialized)
            if again != query {
                fail("a DCQL query does not survive writing it back")
            }
            for credential in query.credentials { _ = query.credential(id: credential.id) }
            matchAndCheck(query)
        }
    case 3:
        // A Digital Credentials API request object from a web origin.
        _ = RequestProbe.resolve(dcApiRequest: text, origin: "https://verifier.example")
    case 4:
        // An authorization request URI; a request URI in it answers with nothing (404).
        _ = RequestProbe.resolve(uri: text)
    default:
        // One transaction_data entry (base64url JSON).
        _ = try? TransactionData(encoded: text)
    }
    return 0
}

/// The credentials a DCQL query is matched against: an SD-JWT VC whose claims nest objects
/// and arrays (and a null), a second of another type, and an mDL.
private let credentials: [DcqlCredential] = {
    let pid: JSONObject = [
        "vct": "https://credentials.example/identity_credential", "given_name": "Erika", "family_name": "Mustermann",
        "age_over_18": true, "nationalities": ["DE", "FR"], "birthdate": .null,
        "address": ["street_address": "Heidestraße 17", "locality": "Köln", "postal_code": 51147],
        "degrees": [["type": "Bachelor", "year": 2010], ["type": "Master", "year": 2012, "honours": ["cum laude"]]],
    ]
    let other: JSONObject = ["vct": "https://credentials.example/other", "given_name": "Max", "degrees": []]
    let mdl: [String: [String: JSONValue]] = [
        "org.iso.18013.5.1": ["family_name": "Doe", "given_name": "John", "age_over_18": true, "portrait": "AAEC",
                              "driving_privileges": [["vehicle_category_code": "B"]]],
        "org.iso.18013.5.1.aamva": ["DHS_compliance": "F"],
    ]
    return [
        DcqlCredential(id: "pid", format: DcqlFormat.sdJwtVc, type: "https://credentials.example/identity_credential",
                       claims: .json(pid), isHolderBound: true, authorityKeyIdentifiers: [[1, 2, 3]]),
        DcqlCredential(id: "other", format: DcqlFormat.sdJwtVc, type: "https://credentials.example/other",
                       claims: .json(other), isHolderBound: false),
        DcqlCredential(id: "mdl", format: DcqlFormat.msoMdoc, type: "org.iso.18013.5.1.mDL", claims: .mdoc(mdl),
                       isHolderBound: true),
    ]
}()

private func fail(_ message: String) -> Never {
    FileHandle.standardError.write(Data("FuzzOpenID4VP: \(message)\n".utf8))
    abort()
}

/// Matches `query` against `credentials` and checks what the match reports: candidates
/// only under the query's ids, each of a known credential of the query's format, each
/// disclosed path present in that credential; the automatic selection passes `check`.
private func matchAndCheck(_ query: DcqlQuery) {
    let match = DcqlMatcher.match(query, against: credentials)
    for (queryId, candidates) in match.candidates {
        guard let credentialQuery = query.credential(id: queryId) else { fail("candidates for an unknown query \(queryId)") }
        for candidate in candidates {
            guard let credential = credentials.first(where: { $0.id == candidate.credentialId }) else {
                fail("a candidate \(candidate.credentialId) that is no credential")
            }
            if credential.format != credentialQuery.format { fail("a \(credential.format) candidate for a \(credentialQuery.format) query") }
            for path in candidate.disclosedPaths {
                switch credential.claims {
                case .json(let claims):
                    if DcqlMatcher.select(path, in: claims) == nil { fail("a disclosed path that selects nothing in \(credential.id)") }
                case .mdoc(let namespaces):
                    guard path.elements.count == 2, case .key(let namespace) = path.elements[0], case .key(let element) = path.elements[1],
                          namespaces[namespace]?[element] != nil else { fail("a disclosed mdoc path that names no element") }
                }
            }
        }
    }
    for set in match.effectiveCredentialSets { _ = match.firstSatisfiableOption(of: set) }
    _ = match.unsatisfiedQueryIds
    if match.satisfiable {
        do { _ = try match.check(match.automaticSelection) } catch { fail("the automatic selection of a satisfiable match fails its check: \(error)") }
    }
}
