import JOSE
import WalletEncoding

/// How the verifier identifies itself (OpenID4VP 1.0 §5.9.3).
public enum VerifierClientIdPrefix: String, Sendable, Hashable, CaseIterable {
    /// `x509_san_dns:<dns name>`: a signed request whose leaf certificate names the DNS name.
    case x509SanDns = "x509_san_dns"
    /// `x509_hash:<base64url SHA-256 of the leaf DER>`: a signed request.
    case x509Hash = "x509_hash"
    /// `redirect_uri:<response_uri>`: an unsigned request, parameters in the URL.
    case redirectUri = "redirect_uri"
}

/// Where the wallet sends its answer (OpenID4VP 1.0 §8.2, §8.3.1).
public enum VerifierResponseMode: String, Sendable, Hashable, CaseIterable {
    /// `direct_post`: form fields `vp_token` and `state`.
    case directPost = "direct_post"
    /// `direct_post.jwt`: form field `response`, a JWE to the transaction's ephemeral key.
    case directPostJwt = "direct_post.jwt"

    /// Whether the response is encrypted.
    public var isEncrypted: Bool { self == .directPostJwt }
}

/// How the request reaches the wallet.
public enum RequestDelivery: Sendable, Hashable {
    /// `request_uri` pointing at the verifier, fetched with GET (`get`) or POST (`post`,
    /// with `wallet_nonce` and `wallet_metadata`); `request_uri_method` is written only
    /// when `writesMethod` is true (it defaults to get when absent).
    case byReference(method: RequestUriMethod, writesMethod: Bool = true)
    /// The request in the link itself: the signed JWT as `request`, or for `redirect_uri:`
    /// the parameters as URL query members.
    case byValue
}

/// `request_uri_method` (OpenID4VP 1.0 §5.1).
public enum RequestUriMethod: String, Sendable, Hashable, CaseIterable {
    /// GET, as JAR defines.
    case get
    /// POST with `wallet_nonce` / `wallet_metadata` (§5.10).
    case post
}

/// A deliberate defect in a request, so that a wallet's negative tests have something to
/// refuse. Each names what a conforming wallet must catch before it asks for consent.
public enum RequestFault: String, Sendable, Hashable, CaseIterable {
    /// The JOSE `typ` is `JWT` instead of `oauth-authz-req+jwt`.
    case wrongType
    /// The request object's `client_id` differs from the one in the link.
    case clientIdMismatch
    /// The request object's `exp` lies in the past.
    case expired
    /// The request object's signature does not verify (one byte changed).
    case badSignature
    /// `x509_san_dns`: signed by a trusted leaf whose subjectAltName is another DNS name.
    case sanMismatch
    /// `x509_hash`: the client identifier is the hash of another certificate.
    case x509HashMismatch
    /// Signed by a leaf under a root the wallet does not trust.
    case untrustedChain
    /// `x509_san_dns`: the `response_uri` host is not the client identifier's DNS name.
    case responseUriHostMismatch
    /// `request_uri_method=post`: the request object does not echo `wallet_nonce`.
    case missingWalletNonce
    /// `request_uri_method=post`: the request object carries another `wallet_nonce`.
    case wrongWalletNonce
    /// DC API signed request: `expected_origins` does not list the caller's origin.
    case unexpectedOrigin
}

/// Everything a verifier transaction asks for.
public struct PresentationRequestOptions: Sendable {
    /// The DCQL query.
    public var query: VerifierQuery
    /// `transaction_data` entries.
    public var transactionData: [VerifierTransactionData]
    /// `response_mode`.
    public var responseMode: VerifierResponseMode
    /// The client identifier prefix.
    public var clientIdPrefix: VerifierClientIdPrefix
    /// How the request reaches the wallet.
    public var delivery: RequestDelivery
    /// `encrypted_response_enc_values_supported` for an encrypted response mode.
    public var encryptionAlgorithms: [ContentEncryptionAlgorithm]
    /// Whether to send `state` (required whenever a presentation may come without holder binding).
    public var includesState: Bool
    /// Defects to build into the request.
    public var faults: Set<RequestFault>
    /// Extra `client_metadata` members (merged over the generated `vp_formats_supported`, `jwks` ...).
    public var additionalClientMetadata: JSONObject

    /// Options for `query`; by default a signed `x509_san_dns` request by reference
    /// (GET) with `direct_post`.
    public init(query: VerifierQuery, transactionData: [VerifierTransactionData] = [],
                responseMode: VerifierResponseMode = .directPost, clientIdPrefix: VerifierClientIdPrefix = .x509SanDns,
                delivery: RequestDelivery = .byReference(method: .get),
                encryptionAlgorithms: [ContentEncryptionAlgorithm] = [.a128gcm, .a256gcm], includesState: Bool = true,
                faults: Set<RequestFault> = [], additionalClientMetadata: JSONObject = [:]) {
        self.query = query
        self.transactionData = transactionData
        self.responseMode = responseMode
        self.clientIdPrefix = clientIdPrefix
        self.delivery = delivery
        self.encryptionAlgorithms = encryptionAlgorithms
        self.includesState = includesState
        self.faults = faults
        self.additionalClientMetadata = additionalClientMetadata
    }
}

/// Everything a DC API request asks for (OpenID4VP 1.0 App. A).
public struct DcApiRequestOptions: Sendable {
    /// The DCQL query.
    public var query: VerifierQuery
    /// `transaction_data` entries.
    public var transactionData: [VerifierTransactionData]
    /// Whether the request is signed (`openid4vp-v1-signed`) or not (`openid4vp-v1-unsigned`).
    public var signed: Bool
    /// The client identifier prefix of a signed request (`x509_san_dns` or `x509_hash`).
    public var clientIdPrefix: VerifierClientIdPrefix
    /// `expected_origins` of a signed request.
    public var expectedOrigins: [String]
    /// Whether the response is encrypted (`dc_api.jwt`) or not (`dc_api`).
    public var encrypted: Bool
    /// `encrypted_response_enc_values_supported` when encrypted.
    public var encryptionAlgorithms: [ContentEncryptionAlgorithm]
    /// Defects to build into a signed request.
    public var faults: Set<RequestFault>

    /// Options for `query`: unsigned and unencrypted unless told otherwise.
    public init(query: VerifierQuery, transactionData: [VerifierTransactionData] = [], signed: Bool = false,
                clientIdPrefix: VerifierClientIdPrefix = .x509SanDns, expectedOrigins: [String] = [],
                encrypted: Bool = false, encryptionAlgorithms: [ContentEncryptionAlgorithm] = [.a128gcm, .a256gcm],
                faults: Set<RequestFault> = []) {
        self.query = query
        self.transactionData = transactionData
        self.signed = signed
        self.clientIdPrefix = clientIdPrefix
        self.expectedOrigins = expectedOrigins
        self.encrypted = encrypted
        self.encryptionAlgorithms = encryptionAlgorithms
        self.faults = faults
    }
}

extension PresentationRequestOptions {
    /// Reads the body of `POST transactions`:
    /// `{"dcql_query": {...}, "transaction_data": [{...}], "response_mode": "direct_post.jwt",
    /// "client_id_prefix": "x509_hash", "request_uri_method": "get" | "post" | "value",
    /// "state": true, "faults": ["wrongType"]}`; only `dcql_query` is required.
    public init(json: JSONObject) throws(VerifierError) {
        guard let queryJSON = json["dcql_query"] else { throw .invalidQuery(.notAnObject("dcql_query")) }
        self.init(query: try VerifierQuery(json: queryJSON))
        if let entries = json["transaction_data"] {
            guard let list = entries.arrayValue else { throw .invalidTransactionData(.noCredentialIds) }
            transactionData = try list.map { entry throws(VerifierError) in try VerifierTransactionData(json: entry) }
        }
        if let mode = json["response_mode"] {
            guard let value = mode.stringValue.flatMap(VerifierResponseMode.init(rawValue:)) else {
                throw .invalidQuery(.json(JSONError(.invalidValue(member: "response_mode"))))
            }
            responseMode = value
        }
        if let prefix = json["client_id_prefix"] {
            guard let value = prefix.stringValue.flatMap(VerifierClientIdPrefix.init(rawValue:)) else {
                throw .invalidQuery(.json(JSONError(.invalidValue(member: "client_id_prefix"))))
            }
            clientIdPrefix = value
            if value == .redirectUri { delivery = .byValue }
        }
        switch json["request_uri_method"]?.stringValue {
        case nil where json["request_uri_method"] == nil: break
        case "get": delivery = .byReference(method: .get)
        case "post": delivery = .byReference(method: .post)
        case "value": delivery = .byValue
        default: throw .invalidQuery(.json(JSONError(.invalidValue(member: "request_uri_method"))))
        }
        if let state = json["state"] {
            guard let value = state.boolValue else { throw .invalidQuery(.json(JSONError(.invalidValue(member: "state")))) }
            includesState = value
        }
        if let faults = json["faults"] {
            guard let names = faults.stringArrayValue else {
                throw .invalidQuery(.json(JSONError(.invalidValue(member: "faults"))))
            }
            for name in names {
                guard let fault = RequestFault(rawValue: name) else {
                    throw .invalidQuery(.json(JSONError(.invalidValue(member: "faults"))))
                }
                self.faults.insert(fault)
            }
        }
    }
}
