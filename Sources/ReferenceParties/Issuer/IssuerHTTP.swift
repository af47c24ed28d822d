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

/// Building answers and reading requests, on the shared helpers of `HTTPRequest` and
/// `HTTPResponse`: their refusals (HTTPHandlerError answers) become `EndpointRefusal`s so
/// that they are recorded like every other refusal.
enum IssuerHTTP {
    /// A JSON answer that must not be cached.
    static func json(_ value: JSONValue, status: Int = 200, headers: HTTPHeaders = HTTPHeaders()) -> HTTPResponse {
        .json(value, status: status, headers: noStore(headers))
    }

    /// A compact JWT/JWE answer (`application/jwt`) that must not be cached.
    static func jwt(_ compact: String, status: Int = 200, headers: HTTPHeaders = HTTPHeaders()) -> HTTPResponse {
        .jwt(compact, status: status, headers: noStore(headers))
    }

    /// A 302 to `location`, or a 400 when the location is not a URL.
    static func redirect(_ location: String) throws(EndpointRefusal) -> HTTPResponse {
        guard let url = URL(string: location) else { throw .invalidRequest("redirect_uri does not make a URL") }
        return .redirect(to: url, headers: ["Cache-Control": "no-store"])
    }

    private static func noStore(_ headers: HTTPHeaders) -> HTTPHeaders {
        var fields = HTTPHeaders([(name: "Cache-Control", value: "no-store")])
        for field in headers { fields[field.name] = field.value }
        return fields
    }

    /// The form body (`application/x-www-form-urlencoded`, strict decoding).
    static func formParameters(of request: HTTPRequest) throws(EndpointRefusal) -> FormParameters {
        do { return try request.formParameters() } catch { throw EndpointRefusal(error) }
    }

    /// The query parameters.
    static func queryParameters(of request: HTTPRequest) throws(EndpointRefusal) -> FormParameters {
        do { return try request.queryParameters() } catch { throw EndpointRefusal(error) }
    }
}

extension EndpointRefusal {
    /// The refusal a shared request helper answered with (its JSON `error` and
    /// `error_description` when it has them).
    init(_ error: HTTPHandlerError) {
        switch error {
        case .response(let response):
            let body = try? JSONValue.parseObject(response.body)
            self.init(status: response.status, error: body?["error"]?.stringValue ?? "invalid_request",
                      description: body?["error_description"]?.stringValue)
        case .dropConnection:
            self.init(status: 400, error: "invalid_request", description: nil)
        }
    }
}

/// OAuth's parameter rules (RFC 6749 §3.1) from the shared `FormParameters` helpers,
/// with the issuer's refusal type.
extension FormParameters {
    func optional(_ name: String) throws(EndpointRefusal) -> String? {
        do { return try optionalValue(name) } catch { throw EndpointRefusal(error) }
    }

    func required(_ name: String) throws(EndpointRefusal) -> String {
        do { return try requiredValue(name) } catch { throw EndpointRefusal(error) }
    }
}
