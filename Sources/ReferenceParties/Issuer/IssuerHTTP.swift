import Foundation
import WalletEncoding
import WalletRuntime

/// An endpoint's refusal: the OAuth/OpenID4VCI error it answers with. Thrown inside the
/// issuer's endpoint code and turned into the HTTP answer (and an inspection record) at
/// the top.
struct EndpointRefusal: Error, Sendable {
    /// How the refusal is written.
    enum Form: Sendable {
        /// A JSON body `{"error": ..., "error_description": ...}` (RFC 6749 §5.2,
        /// OpenID4VCI 1.0 §8.3.1.2).
        case json
        /// No body, a `WWW-Authenticate` challenge with the error (RFC 6750 §3,
        /// RFC 9449 §7.1); `scheme` is `Bearer` or `DPoP`, `algs` the DPoP algorithms.
        case challenge(scheme: String, algs: [String] = [])
    }

    var status: Int
    var error: String
    var description: String?
    var form: Form = .json
    var headers = HTTPHeaders()
    /// Extra members of the JSON body (`interval` of the legacy `issuance_pending`).
    var extraMembers: JSONObject = [:]
    /// Whether the challenge names no error (a request without any credentials, RFC 6750 §3.1).
    var bareChallenge = false

    static func badRequest(_ error: String, _ description: String? = nil) -> EndpointRefusal {
        EndpointRefusal(status: 400, error: error, description: description)
    }

    static func invalidRequest(_ description: String) -> EndpointRefusal { .badRequest("invalid_request", description) }

    var response: HTTPResponse {
        var fields = headers
        switch form {
        case .json:
            var members: JSONObject = ["error": .string(error)]
            if let description { members["error_description"] = .string(Self.sanitized(description)) }
            for (name, value) in extraMembers { members[name] = value }
            return IssuerHTTP.json(.object(members), status: status, headers: fields)
        case .challenge(let scheme, let algs):
            var parameters: [String] = []
            if !bareChallenge {
                parameters.append("error=\"\(error)\"")
                if let description { parameters.append("error_description=\"\(Self.sanitized(description))\"") }
            }
            if !algs.isEmpty { parameters.append("algs=\"\(algs.joined(separator: " "))\"") }
            let challenge = parameters.isEmpty ? scheme : scheme + " " + parameters.joined(separator: ", ")
            fields.add(name: "WWW-Authenticate", value: challenge)
            fields["Cache-Control"] = "no-store"
            return HTTPResponse(status: status, headers: fields)
        }
    }

    /// `error_description` may only hold %x20-21 / %x23-5B / %x5D-7E (RFC 6749 §5.2).
    static func sanitized(_ text: String) -> String {
        String(String.UnicodeScalarView(text.unicodeScalars.map { scalar in
            let value = scalar.value
            return (0x20...0x7E).contains(value) && value != 0x22 && value != 0x5C ? scalar : "?"
        }))
    }
}

/// Building answers and reading requests.
enum IssuerHTTP {
    /// A JSON answer that must not be cached.
    static func json(_ value: JSONValue, status: Int = 200, headers: HTTPHeaders = HTTPHeaders()) -> HTTPResponse {
        var fields = HTTPHeaders([(name: "Content-Type", value: "application/json"), (name: "Cache-Control", value: "no-store")])
        for field in headers { fields[field.name] = field.value }
        return HTTPResponse(status: status, headers: fields, body: value.serializedBytes)
    }

    /// A compact JWT/JWE answer.
    static func jwt(_ compact: String, status: Int = 200, headers: HTTPHeaders = HTTPHeaders()) -> HTTPResponse {
        var fields = HTTPHeaders([(name: "Content-Type", value: "application/jwt"), (name: "Cache-Control", value: "no-store")])
        for field in headers { fields[field.name] = field.value }
        return HTTPResponse(status: status, headers: fields, body: Array(compact.utf8))
    }

    /// A 302 to `location`.
    static func redirect(_ location: String) -> HTTPResponse {
        HTTPResponse(status: 302, headers: HTTPHeaders([(name: "Location", value: location), (name: "Cache-Control", value: "no-store")]))
    }

    /// The media type of `Content-Type`, lower-cased, without parameters.
    static func mediaType(of request: HTTPRequest) -> String? {
        guard let value = request.headers["Content-Type"] else { return nil }
        let type = value.split(separator: ";", maxSplits: 1, omittingEmptySubsequences: false).first ?? ""
        let trimmed = type.trimmingCharacters(in: .whitespaces).lowercased()
        return trimmed.isEmpty ? nil : trimmed
    }

    /// The form body (`application/x-www-form-urlencoded`, strict decoding) as OAuth
    /// parameters.
    static func formParameters(of request: HTTPRequest) throws(EndpointRefusal) -> OAuthParameters {
        guard mediaType(of: request) == "application/x-www-form-urlencoded" else {
            throw .invalidRequest("expected Content-Type application/x-www-form-urlencoded")
        }
        guard let text = UTF8Validation.string(request.body ?? []) else { throw .invalidRequest("the form body is not UTF-8") }
        do {
            return OAuthParameters(try FormURLEncoding.decode(text))
        } catch {
            throw .invalidRequest("malformed form body")
        }
    }

    /// The query parameters.
    static func queryParameters(of request: HTTPRequest) throws(EndpointRefusal) -> OAuthParameters {
        guard let query = URLComponents(url: request.url, resolvingAgainstBaseURL: false)?.percentEncodedQuery else {
            return OAuthParameters([])
        }
        do {
            return OAuthParameters(try FormURLEncoding.decode(query))
        } catch {
            throw .invalidRequest("malformed query")
        }
    }

    /// The path of the request URL (percent-decoded; `/` for none).
    static func path(of request: HTTPRequest) -> String {
        let path = URLComponents(url: request.url, resolvingAgainstBaseURL: false)?.path ?? ""
        return path.isEmpty ? "/" : path
    }
}

/// Request parameters read by OAuth's rules (RFC 6749 §3.1): empty means absent, and
/// no parameter may be repeated.
struct OAuthParameters: Sendable {
    let pairs: [(String, String)]

    init(_ pairs: [(String, String)]) { self.pairs = pairs }

    func optional(_ name: String) throws(EndpointRefusal) -> String? {
        let values = pairs.filter { $0.0 == name }.map(\.1)
        guard values.count <= 1 else { throw .invalidRequest("parameter \(name) is repeated") }
        guard let value = values.first, !value.isEmpty else { return nil }
        return value
    }

    func required(_ name: String) throws(EndpointRefusal) -> String {
        guard let value = try optional(name) else { throw .invalidRequest("missing parameter \(name)") }
        return value
    }

    var names: [String] { pairs.map(\.0) }
}
