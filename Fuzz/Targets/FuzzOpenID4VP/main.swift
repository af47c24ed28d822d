import Foundation
@_spi(Fuzzing) import OpenID4VP
import WalletEncoding

// libFuzzer entry for what a verifier sends a wallet before consent (OpenID4VP 1.0): the
// request object's claims becoming the request model, a request object as fetched, a
// DCQL query, a Digital Credentials API request object, an authorization request URI and
// a transaction_data entry. Each runs through the sans-IO presentation core with an empty
// store (RequestProbe); any input ends in a state or a typed error, nothing traps. The
// first byte picks the form, the rest is the input.

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
                print("FuzzOpenID4VP: a DCQL query does not survive writing it back")
                abort()
            }
            for credential in query.credentials { _ = query.credential(id: credential.id) }
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
