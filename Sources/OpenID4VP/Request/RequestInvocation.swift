import Foundation
import WalletEncoding

/// How the wallet is told to fetch a request object (OpenID4VP 1.0 §5.1 `request_uri_method`).
package enum RequestObjectFetchMethod: String, Sendable, Hashable {
    /// RFC 9101: a GET.
    case get
    /// §5.10: a form POST with `wallet_metadata` and a fresh `wallet_nonce`.
    case post
}

/// An authorization request as it reached the wallet: parameters by value, a request
/// object by value, or a reference to fetch one from (OpenID4VP 1.0 §5.4).
package enum RequestInvocation: Sendable, Equatable {
    /// URL-encoded parameters (JSON-carrying ones parsed); only unsigned prefixes may use this.
    case byValue(clientId: String, parameters: JSONObject)
    /// A request object passed as `request`.
    case requestObject(clientId: String, compact: String)
    /// A request object to fetch from `url`. `clientId` is nil for a bare request URI
    /// (a URL captured from a QR code that carries no authorization request).
    case requestUri(clientId: String?, url: URL, method: RequestObjectFetchMethod)

    /// The parameters whose value is JSON when they travel URL-encoded (§5.1: objects are
    /// JSON-serialized strings).
    static let jsonParameters: Set<String> = ["dcql_query", "client_metadata", "transaction_data", "verifier_info"]

    /// The custom schemes accepted besides `https` (§13.1.2).
    static let customSchemes: Set<String> = ["openid4vp"]

    /// Reads an `openid4vp://` or `https://` authorization request, or a bare `https`
    /// request URI. With `allowHTTP`, `http` is accepted for loopback hosts.
    package static func parse(_ text: String, allowHTTP: Bool) throws(InvalidRequestReason) -> RequestInvocation {
        let uri = text.trimmingWhitespace()
        guard let colon = uri.firstIndex(of: ":") else { throw .unsupportedURI }
        let scheme = uri[..<colon].lowercased()
        let isWeb = scheme == "https" || scheme == "http"
        guard isWeb || customSchemes.contains(scheme) else { throw .unsupportedURI }
        if scheme == "http" {
            guard allowHTTP, let url = URL(string: uri), ResolvedRequest.isLoopback(url) else {
                throw .insecureURL(parameter: "request URI")
            }
        }
        let query = FormURLEncoding.query(of: uri) ?? ""
        let parameters: FormParameters
        do { parameters = try FormURLEncoding.decode(query.utf8Bytes) } catch { throw .malformedQuery }
        // RFC 6749 §3.1: a parameter appears at most once.
        if let repeated = parameters.duplicatedNames.first { throw .invalidParameter(repeated) }
        let clientId = parameters["client_id"]
        if parameters["request_uri_method"] != nil, parameters["request_uri"] == nil {
            throw .requestUriMethodWithoutRequestUri
        }
        if let reference = parameters["request_uri"] {
            let method: RequestObjectFetchMethod
            switch parameters["request_uri_method"] {
            case nil: method = .get
            case let name?:
                guard let known = RequestObjectFetchMethod(rawValue: name) else { throw .invalidRequestUriMethod(name) }
                method = known
            }
            guard let clientId else { throw .missingClientId }
            return .requestUri(clientId: clientId, url: try webURL(reference, parameter: "request_uri", allowHTTP: allowHTTP),
                               method: method)
        }
        if let compact = parameters["request"] {
            guard let clientId else { throw .missingClientId }
            return .requestObject(clientId: clientId, compact: compact)
        }
        if parameters["response_type"] != nil || parameters["dcql_query"] != nil || clientId != nil {
            guard let clientId else { throw .missingClientId }
            var members = JSONObject()
            for (name, value) in parameters {
                if jsonParameters.contains(name) {
                    do { members[name] = try JSONValue.parse(value) } catch { throw .invalidJSON(parameter: name, error) }
                } else {
                    members[name] = .string(value)
                }
            }
            return .byValue(clientId: clientId, parameters: members)
        }
        // No authorization request parameters: the URL is itself the request URI.
        guard isWeb else { throw .missingClientId }
        return .requestUri(clientId: nil, url: try webURL(uri, parameter: "request URI", allowHTTP: allowHTTP), method: .get)
    }

    /// An `https` URL with a host (or `http` on loopback when allowed).
    static func webURL(_ text: String, parameter: String, allowHTTP: Bool) throws(InvalidRequestReason) -> URL {
        guard let url = URL(string: text), url.host != nil else { throw .invalidParameter(parameter) }
        switch url.scheme?.lowercased() {
        case "https": return url
        case "http" where allowHTTP && ResolvedRequest.isLoopback(url): return url
        case "http": throw .insecureURL(parameter: parameter)
        default: throw .invalidParameter(parameter)
        }
    }
}
