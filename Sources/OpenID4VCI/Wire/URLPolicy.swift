import Foundation
import WalletEncoding
import WalletRuntime

/// Which URLs the client may call: `https` always; `http` only when the app allows it,
/// and then only to a loopback host (a local reference issuer, tests).
struct URLPolicy: Sendable, Equatable {
    /// Whether `http` to loopback hosts is allowed.
    let allowsLoopbackHTTP: Bool

    /// The URL `text` names, if it is absolute, has a host, no fragment, and an allowed scheme.
    func url(_ text: String) -> URL? {
        guard let components = URLComponents(string: text), let scheme = components.scheme?.lowercased(),
              let host = components.host, !host.isEmpty, components.fragment == nil,
              let url = components.url else { return nil }
        switch scheme {
        case "https": return url
        case "http": return allowsLoopbackHTTP && Self.isLoopback(host: host) ? url : nil
        default: return nil
        }
    }

    /// Whether `url` may be called.
    func allows(_ url: URL) -> Bool { self.url(url.absoluteString) != nil }

    /// Whether `host` names this machine's loopback (WalletRuntime's one definition).
    static func isLoopback(host: String) -> Bool { LoopbackHost.isLoopback(host: host) }

    /// The well-known URL for `identifier` with the suffix inserted between the host and
    /// the path (RFC 8414 §3.1, OpenID4VCI 1.0 §12.2.2): `https://h/p` becomes
    /// `https://h/.well-known/<suffix>/p`.
    static func wellKnown(_ suffix: String, insertedInto identifier: String) -> URL? {
        guard var components = URLComponents(string: identifier), components.query == nil, components.fragment == nil else {
            return nil
        }
        var path = components.percentEncodedPath
        while path.hasSuffix("/") { path.removeLast() }
        components.percentEncodedPath = "/.well-known/" + suffix + path
        return components.url
    }

    /// `identifier` with `/.well-known/<suffix>` appended to its path (OpenID Connect
    /// Discovery 1.0 §4).
    static func wellKnown(_ suffix: String, appendedTo identifier: String) -> URL? {
        guard var components = URLComponents(string: identifier), components.query == nil, components.fragment == nil else {
            return nil
        }
        var path = components.percentEncodedPath
        while path.hasSuffix("/") { path.removeLast() }
        components.percentEncodedPath = path + "/.well-known/" + suffix
        return components.url
    }
}

extension HTTPResponse {
    /// The media type of `Content-Type`, lowercased, without parameters.
    var mediaType: String? {
        guard let value = headers["Content-Type"] else { return nil }
        return value.split(separator: ";").first.map { $0.trimmingCharacters(in: .whitespaces).lowercased() }
    }

    /// The body as a JSON object.
    func jsonObject() throws(JSONError) -> JSONObject { try JSONValue.parseObject(body) }

    /// The OAuth error response members (RFC 6749 §5.2), when the body is one.
    var oauthError: (code: String, description: String?)? {
        guard let object = try? jsonObject(), let code = object["error"]?.stringValue else { return nil }
        return (code, object["error_description"]?.stringValue)
    }

    /// The `error` of a `WWW-Authenticate: DPoP error="…"` challenge (RFC 9449 §7.1,
    /// RFC 6750 §3), if any.
    var authenticateError: String? {
        for value in headers.values(for: "WWW-Authenticate") {
            guard let range = value.range(of: "error=\"") else { continue }
            let rest = value[range.upperBound...]
            guard let end = rest.firstIndex(of: "\"") else { continue }
            return String(rest[..<end])
        }
        return nil
    }

    /// The `DPoP-Nonce` header.
    var dpopNonce: String? { headers["DPoP-Nonce"] }
}
