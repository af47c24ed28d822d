import WalletEncoding
import Foundation
import JOSE
import WalletRuntime

/// Reading a request the way the reference parties' endpoints need it. Every helper
/// that can fail throws ``HTTPHandlerError/response(_:)`` with a 400
/// `invalid_request` OAuth error, so a handler can write `try request.formParameters()`
/// and let a malformed request end the exchange.
extension HTTPRequest {
    /// The path as sent, still percent-encoded (`/` when the URL has none).
    public var path: String {
        let encoded = URLComponents(url: url, resolvingAgainstBaseURL: false)?.percentEncodedPath ?? ""
        return encoded.isEmpty ? "/" : encoded
    }

    /// The media type of `Content-Type`, lower-cased, without its parameters
    /// (`application/json` for `application/json; charset=UTF-8`).
    public var mediaType: String? {
        guard let value = headers["Content-Type"] else { return nil }
        let type = value.split(separator: ";", maxSplits: 1, omittingEmptySubsequences: false).first ?? ""
        let trimmed = type.trimmingCharacters(in: .whitespaces).lowercased()
        return trimmed.isEmpty ? nil : trimmed
    }

    /// The query parameters, decoded strictly (``FormURLEncoding``); empty without a query.
    public func queryParameters() throws(HTTPHandlerError) -> FormParameters {
        guard let query = URLComponents(url: url, resolvingAgainstBaseURL: false)?.percentEncodedQuery else {
            return FormParameters()
        }
        do {
            return try FormURLEncoding.decode(query)
        } catch {
            throw .response(.oauthError("invalid_request", description: "malformed query: \(Self.describe(error))"))
        }
    }

    /// The body as form parameters. The request must say
    /// `Content-Type: application/x-www-form-urlencoded` (a `charset` parameter, if any,
    /// must be UTF-8), and the body must decode strictly.
    public func formParameters() throws(HTTPHandlerError) -> FormParameters {
        try requireMediaType("application/x-www-form-urlencoded")
        do {
            return try FormURLEncoding.decode(body ?? [])
        } catch {
            throw .response(.oauthError("invalid_request", description: "malformed form body: \(Self.describe(error))"))
        }
    }

    /// The body as a JSON document. The request must say `Content-Type: application/json`
    /// (UTF-8), and the body must parse strictly (JOSE's parser: no duplicate members,
    /// no trailing data, bounded depth).
    public func jsonBody() throws(HTTPHandlerError) -> JSONValue {
        try requireMediaType("application/json")
        do {
            return try JSONValue.parse(body ?? [])
        } catch {
            throw .response(.oauthError("invalid_request", description: "the body is not a JSON document"))
        }
    }

    private func requireMediaType(_ expected: String) throws(HTTPHandlerError) {
        guard mediaType == expected else {
            throw .response(.oauthError("invalid_request", description: "expected Content-Type \(expected)"))
        }
        guard let value = headers["Content-Type"] else { return }
        for parameter in value.split(separator: ";").dropFirst() {
            let pair = parameter.split(separator: "=", maxSplits: 1).map {
                $0.trimmingCharacters(in: .whitespaces).lowercased()
            }
            if pair.first == "charset", pair.last?.trimmingCharacters(in: CharacterSet(charactersIn: "\"")) != "utf-8" {
                throw .response(.oauthError("invalid_request", description: "only UTF-8 bodies are accepted"))
            }
        }
    }

    static func describe(_ error: FormURLEncodingError) -> String {
        switch error {
        case .invalidCharacter(let offset): return "character not allowed at offset \(offset)"
        case .invalidPercentEscape(let offset): return "malformed percent escape at offset \(offset)"
        case .invalidUTF8(let offset): return "not UTF-8 after decoding, at offset \(offset)"
        case .emptyField(let offset): return "empty field at offset \(offset)"
        case .missingSeparator(let offset): return "field without '=' at offset \(offset)"
        case .emptyName(let offset): return "field without a name at offset \(offset)"
        case .tooManyFields(let limit): return "more than \(limit) fields"
        }
    }
}

/// OAuth's rules for request parameters (RFC 6749 §3.1): a parameter sent without a
/// value counts as absent, and none may be repeated.
extension FormParameters {
    /// The one non-empty value of `name`; a 400 `invalid_request` when it is absent,
    /// empty or repeated.
    public func requiredValue(_ name: String) throws(HTTPHandlerError) -> String {
        guard let value = try optionalValue(name) else {
            throw .response(.oauthError("invalid_request", description: "missing parameter \(name)"))
        }
        return value
    }

    /// The value of `name`, `nil` when it is absent or empty; a 400 `invalid_request`
    /// when it is repeated.
    public func optionalValue(_ name: String) throws(HTTPHandlerError) -> String? {
        let found = values(for: name)
        guard found.count <= 1 else {
            throw .response(.oauthError("invalid_request", description: "parameter \(name) is repeated"))
        }
        guard let value = found.first, !value.isEmpty else { return nil }
        return value
    }
}
