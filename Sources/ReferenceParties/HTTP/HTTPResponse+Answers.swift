import WalletEncoding
import Foundation
import JOSE
import WalletRuntime

/// Ready-made answers for handlers. Each sets `Content-Type` (or `Location` for a
/// redirect); the fields of `headers` are added after it, replacing a field of the
/// same name.
extension HTTPResponse {
    /// A JSON document (`application/json`), written compactly with members sorted.
    public static func json(_ value: JSONValue, status: Int = 200, headers: HTTPHeaders = HTTPHeaders()) -> HTTPResponse {
        answer(status: status, contentType: "application/json", body: value.serializedBytes, headers: headers)
    }

    /// A compact JWS or JWE. `contentType` names the JWT's media type when it has its
    /// own (`application/oauth-authz-req+jwt` for a request object, `application/jwt`
    /// otherwise).
    public static func jwt(_ compact: String, status: Int = 200, contentType: String = "application/jwt",
                           headers: HTTPHeaders = HTTPHeaders()) -> HTTPResponse {
        answer(status: status, contentType: contentType, body: Array(compact.utf8), headers: headers)
    }

    /// A form-encoded body (`application/x-www-form-urlencoded`).
    public static func form(_ parameters: FormParameters, status: Int = 200, headers: HTTPHeaders = HTTPHeaders()) -> HTTPResponse {
        answer(status: status, contentType: "application/x-www-form-urlencoded",
               body: Array(parameters.encoded.utf8), headers: headers)
    }

    /// Plain text (`text/plain; charset=utf-8`).
    public static func text(_ text: String, status: Int = 200, headers: HTTPHeaders = HTTPHeaders()) -> HTTPResponse {
        answer(status: status, contentType: "text/plain; charset=utf-8", body: Array(text.utf8), headers: headers)
    }

    /// A redirect to `location` (302 Found unless told otherwise; 303 after a POST
    /// that must become a GET), with no body.
    public static func redirect(to location: URL, status: Int = 302, headers: HTTPHeaders = HTTPHeaders()) -> HTTPResponse {
        HTTPResponse(status: status, headers: merge(["Location": location.absoluteString], headers))
    }

    /// An OAuth 2.0 error (RFC 6749 §5.2): `{"error": code, "error_description": ...}`,
    /// not to be cached. 400 unless told otherwise; a resource endpoint answering 401
    /// adds its `WWW-Authenticate` field through `headers`.
    public static func oauthError(_ code: String, description: String? = nil, status: Int = 400,
                                  headers: HTTPHeaders = HTTPHeaders()) -> HTTPResponse {
        var members: [String: JSONValue] = ["error": .string(code)]
        if let description { members["error_description"] = .string(description) }
        return .json(.object(members), status: status, headers: merge(["Cache-Control": "no-store"], headers))
    }

    /// 404, for a path nothing answers.
    public static func notFound() -> HTTPResponse {
        .text("not found", status: 404)
    }

    /// 405, for a path that exists but not with this method, listing those it has.
    public static func methodNotAllowed(allowed: [HTTPMethod]) -> HTTPResponse {
        .text("method not allowed", status: 405, headers: ["Allow": allowed.map(\.rawValue).joined(separator: ", ")])
    }

    /// 413, for a request body over the transport's limit.
    public static func contentTooLarge(limit: Int) -> HTTPResponse {
        .text("request body larger than \(limit) bytes", status: 413)
    }

    private static func answer(status: Int, contentType: String, body: [UInt8], headers: HTTPHeaders) -> HTTPResponse {
        HTTPResponse(status: status, headers: merge(["Content-Type": contentType], headers), body: body)
    }

    /// `base` without the names `extra` has, then every field of `extra` (repeated
    /// names such as two `WWW-Authenticate` fields stay).
    private static func merge(_ base: HTTPHeaders, _ extra: HTTPHeaders) -> HTTPHeaders {
        var merged = base
        for field in extra { merged[field.name] = nil }
        for field in extra { merged.add(name: field.name, value: field.value) }
        return merged
    }
}
