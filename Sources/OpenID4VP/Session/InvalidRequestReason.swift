import Foundation
import JOSE
import WalletEncoding

/// Why a request is invalid: which OpenID4VP rule it breaks.
public enum InvalidRequestReason: Error, Equatable, Sendable {
    // MARK: The invocation

    /// The URI is neither an `openid4vp:` / `https:` authorization request nor a request URI.
    case unsupportedURI
    /// The query string of the URI does not decode.
    case malformedQuery
    /// An `http` URL where only `https` is allowed (http is allowed for loopback hosts
    /// only, and only when the configuration says so); the parameter names it.
    case insecureURL(parameter: String)
    /// `request_uri_method` is neither `get` nor `post` (§5.1).
    case invalidRequestUriMethod(String)
    /// `request_uri_method` without `request_uri`.
    case requestUriMethodWithoutRequestUri
    /// The request URI answered with this HTTP status (§5.10.2).
    case requestUriStatus(Int)
    /// The request URI answered with something that is not a request object.
    case requestObjectMissing
    /// The request object is encrypted; this wallet sends no encryption keys for it.
    case encryptedRequestObject

    // MARK: The request object (JAR, RFC 9101; §5)

    /// The request object is not a well-formed JWT.
    case malformedRequestObject(JOSEError)
    /// The request object's JOSE `typ` is not `oauth-authz-req+jwt`.
    case requestObjectType(String?)
    /// The request object's `client_id` differs from the one of the authorization
    /// request (prefix included).
    case clientIdMismatch(expected: String, actual: String?)
    /// The request object's `aud` names neither `https://self-issued.me/v2` nor this wallet.
    case audienceMismatch([String])
    /// The request object expired (`exp` before now).
    case requestExpired(exp: Date, now: Date)
    /// The request object is not valid yet (`nbf` or `iat` after now).
    case requestNotYetValid(Date, now: Date)
    /// `wallet_nonce` is missing from, or differs in, the request object the POST returned (§5.10.1).
    case walletNonceMismatch(expected: String, actual: String?)
    /// Without reader anchors, the request object's signature does not verify with its
    /// `x5c` leaf.
    case invalidSignature(JOSEError)
    /// Without reader anchors, the client identifier is not bound to the `x5c` leaf
    /// (no matching dNSName, or another certificate hash).
    case clientIdNotBoundToCertificate
    /// A signed request for a prefix that needs `x5c` has none.
    case missingCertificateChain
    /// The request object is signed with an algorithm this wallet does not verify.
    case unsupportedSignatureAlgorithm(String)

    // MARK: The client identifier (§5.9)

    /// `client_id` is missing.
    case missingClientId
    /// The prefix is not one this wallet supports (it supports `x509_san_dns`,
    /// `x509_hash`, `redirect_uri`, and `origin` through the DC API only).
    case unsupportedClientIdPrefix(String)
    /// The prefix requires a signed request and the request is not signed.
    case unsignedRequestNotAllowed
    /// The `redirect_uri` prefix cannot be used with a signed request.
    case signedRequestNotAllowed
    /// The client identifier after its prefix is not what the prefix requires.
    case malformedClientId

    // MARK: Parameters

    /// A required parameter is missing.
    case missingParameter(String)
    /// A parameter has the wrong type or form.
    case invalidParameter(String)
    /// A parameter that carries JSON does not parse.
    case invalidJSON(parameter: String, JSONError)
    /// `response_type` is not `vp_token`.
    case unsupportedResponseType(String)
    /// `response_mode` is not one this wallet can answer in this context.
    case unsupportedResponseMode(String)
    /// `nonce` is missing or uses characters outside the URL-safe set (§5.2).
    case invalidNonce
    /// `state` uses characters outside the URL-safe set (§5.2).
    case invalidState
    /// `scope` requests (§5.5) are not supported: the request must carry `dcql_query`.
    case scopeNotSupported
    /// Both `dcql_query` and `scope`.
    case dcqlQueryAndScope
    /// The DCQL query is invalid.
    case invalidDcqlQuery(DcqlError)
    /// `response_uri` with `direct_post` is missing.
    case missingResponseUri
    /// `redirect_uri` is present with `direct_post` (§8.2).
    case redirectUriWithDirectPost
    /// The `response_uri` host is not the DNS name of an `x509_san_dns` client identifier (§5.9.3).
    case responseUriHostMismatch(expected: String, actual: String?)
    /// Over the Digital Credentials API, the caller's origin is not on the DNS name of an
    /// `x509_san_dns` client identifier that no reader anchor vouches for: the response
    /// goes to the origin, so the name would be one the response never reaches.
    case originHostMismatch(expected: String, actual: String?)
    /// With the `redirect_uri` prefix, the `response_uri` is not the client identifier (§5.9.3).
    case responseUriNotClientId
    /// `client_metadata` is malformed.
    case invalidClientMetadata
    /// An encrypted response is requested but `client_metadata` offers no key and content
    /// encryption this wallet can use (ECDH-ES on P-256/384/521 with AES-GCM).
    case noUsableEncryptionKey
    /// A transaction data entry cannot be honoured (§5.1, §8.4).
    case invalidTransactionData(InvalidTransactionDataReason)

    // MARK: Digital Credentials API (App. A)

    /// The DC API request is not `{"protocol", "data"}` with a data object.
    case malformedDcApiRequest
    /// A DC API protocol other than `openid4vp-v1-unsigned` and `openid4vp-v1-signed`.
    case unsupportedDcApiProtocol(String)
    /// A signed DC API request without `expected_origins`.
    case missingExpectedOrigins
    /// The caller's origin is not in `expected_origins` (App. A.2).
    case originNotExpected(String)
    /// An origin that is not a web origin (`https://host[:port]`, or http for loopback when allowed).
    case invalidOrigin(String)

    /// The OpenID4VP error code for this reason.
    public var vpErrorCode: VpErrorCode {
        switch self {
        case .invalidRequestUriMethod: .invalidRequestUriMethod
        case .invalidTransactionData: .invalidTransactionData
        case .scopeNotSupported: .invalidScope
        default: .invalidRequest
        }
    }
}

/// Why a `transaction_data` entry cannot be honoured (OpenID4VP 1.0 §5.1, §8.4, App. B).
public enum InvalidTransactionDataReason: Error, Hashable, Sendable {
    /// Entry `index` is not base64url-encoded JSON.
    case notBase64URLJSON(index: Int)
    /// Entry `index` lacks `type` or `credential_ids`, or has them in the wrong form.
    case malformed(index: Int)
    /// An entry refers to a Credential Query the DCQL query does not have.
    case unknownCredentialId(String)
    /// The type is not one this wallet can bind: an mdoc-bound entry without an
    /// `mdocTransactionDataBinder`, or one the binder does not handle.
    case unsupportedType(String)
    /// An SD-JWT query with transaction data does not require holder binding (App. B.3.3).
    case holderBindingNotRequired(queryId: String)
    /// None of the entry's `transaction_data_hashes_alg` values is supported.
    case unsupportedHashAlgorithm([String])
    /// The element an mdoc transaction binds to is outside the MSO's keyAuthorizations (App. B.2.1).
    case notAuthorizedByKeyAuthorizations(nameSpace: String, elementIdentifier: String)
}
