import Foundation
import JOSE
import WalletEncoding

/// A remote presentation request the verifier created: what to hand the wallet, and the
/// values the response will be checked against.
public struct VerifierTransaction: Sendable, Equatable {
    /// The transaction id (in the request and response URIs).
    public let id: String
    /// The client identifier, prefix included (`x509_san_dns:localhost`).
    public let clientId: String
    /// The request's `nonce`.
    public let nonce: String
    /// The request's `state`, if sent.
    public let state: String?
    /// Where the wallet posts its response.
    public let responseURI: URL
    /// The request URI the wallet fetches (nil when the request goes by value).
    public let requestURI: URL?
    /// The link to open in a wallet: `openid4vp://?client_id=...&request_uri=...` (or by value).
    public let authorizationRequestURI: String
    /// The response mode.
    public let responseMode: VerifierResponseMode
    /// The response encryption key as sent in `client_metadata.jwks` (public), for `direct_post.jwt`.
    public let encryptionKey: JWK?
    /// The `transaction_data` strings as sent.
    public let transactionData: [String]

    /// The link as a URL.
    public var authorizationRequestURL: URL? { URL(string: authorizationRequestURI) }

    /// The transaction as JSON (the answer of `POST transactions`).
    public var jsonValue: JSONValue {
        var object: JSONObject = [
            "id": .string(id), "client_id": .string(clientId), "nonce": .string(nonce),
            "response_uri": .string(responseURI.absoluteString), "response_mode": .string(responseMode.rawValue),
            "authorization_request": .string(authorizationRequestURI),
        ]
        if let state { object["state"] = .string(state) }
        if let requestURI { object["request_uri"] = .string(requestURI.absoluteString) }
        if let encryptionKey { object["encryption_key"] = encryptionKey.jsonValue }
        if !transactionData.isEmpty { object["transaction_data"] = .array(transactionData.map(JSONValue.string)) }
        return .object(object)
    }
}

/// A DC API request the verifier created (OpenID4VP 1.0 App. A): the object a page passes
/// to `navigator.credentials.get`, and what its response is checked against.
public struct DcApiTransaction: Sendable, Equatable {
    /// The transaction id (for ``ReferenceVerifier/verifyDcApiResponse(_:transactionId:origin:)``).
    public let id: String
    /// `openid4vp-v1-unsigned` or `openid4vp-v1-signed`.
    public let protocolIdentifier: String
    /// The request `data`: the parameters (unsigned) or `{"request": <JWS>}` (signed).
    public let data: JSONObject
    /// The request's `nonce`.
    public let nonce: String
    /// The client identifier of a signed request.
    public let clientId: String?
    /// The response encryption key (public) for `dc_api.jwt`.
    public let encryptionKey: JWK?
    /// The `transaction_data` strings as sent.
    public let transactionData: [String]

    /// `{"protocol": ..., "data": ...}`, the request as the platform hands it to a wallet.
    public var requestJSON: JSONValue { .object(["protocol": .string(protocolIdentifier), "data": .object(data)]) }

    /// The protocol identifier of unsigned requests.
    public static let unsignedProtocol = "openid4vp-v1-unsigned"
    /// The protocol identifier of signed (compact JWS) requests.
    public static let signedProtocol = "openid4vp-v1-signed"
}
