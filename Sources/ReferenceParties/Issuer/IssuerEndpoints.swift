import Foundation

/// The issuer's identifiers and endpoint paths, derived from its origin and paths.
///
/// Well-known locations follow the insertion rule of OpenID4VCI 1.0 §12.2.2 and
/// RFC 8414 §3.1: the well-known segment goes between the host and the identifier's
/// path (`https://host/tenant` → `https://host/.well-known/openid-credential-issuer/tenant`).
/// OpenID Connect Discovery appends instead (`<issuer>/.well-known/openid-configuration`).
struct IssuerEndpoints: Sendable, Hashable {
    /// `scheme://host[:port]`, no trailing slash.
    let origin: String
    let issuerPath: String
    let authorizationServerPath: String

    init(origin: URL, issuerPath: String, authorizationServerPath: String?) {
        var text = origin.absoluteString
        while text.hasSuffix("/") { text.removeLast() }
        self.origin = text
        self.issuerPath = issuerPath
        self.authorizationServerPath = authorizationServerPath ?? issuerPath
    }

    /// The Credential Issuer Identifier.
    var credentialIssuer: String { origin + issuerPath }
    /// The authorization server's issuer identifier.
    var authorizationServer: String { origin + authorizationServerPath }
    /// Whether the authorization server is a separate entity.
    var hasSeparateAuthorizationServer: Bool { authorizationServerPath != issuerPath }

    // Paths (absolute paths on the origin).
    var issuerMetadataPath: String { "/.well-known/openid-credential-issuer" + issuerPath }
    var oauthMetadataPath: String { "/.well-known/oauth-authorization-server" + authorizationServerPath }
    var openIDConfigurationPath: String { authorizationServerPath + "/.well-known/openid-configuration" }
    var jwtVCIssuerMetadataPath: String { "/.well-known/jwt-vc-issuer" + issuerPath }
    var credentialPath: String { issuerPath + "/credential" }
    var noncePath: String { issuerPath + "/nonce" }
    var deferredPath: String { issuerPath + "/deferred_credential" }
    var notificationPath: String { issuerPath + "/notification" }
    var offerPathPrefix: String { issuerPath + "/credential-offer/" }
    var offerFactoryPath: String { issuerPath + "/offers" }
    var parPath: String { authorizationServerPath + "/par" }
    var authorizePath: String { authorizationServerPath + "/authorize" }
    var tokenPath: String { authorizationServerPath + "/token" }

    func url(_ path: String) -> String { origin + path }
}

/// RFC 9449 §4.3 item 9: `htu` is compared without query and fragment; scheme and host
/// are case-insensitive and a default port is the same as none (RFC 3986 §6.2.3).
enum HTTPTargetURI {
    static func normalized(_ text: String) -> String? {
        guard var components = URLComponents(string: text), let scheme = components.scheme?.lowercased(),
              let host = components.host?.lowercased(), !host.isEmpty else { return nil }
        components.query = nil
        components.fragment = nil
        let port = components.port.flatMap { (scheme == "https" && $0 == 443) || (scheme == "http" && $0 == 80) ? nil : $0 }
        let path = components.percentEncodedPath.isEmpty ? "/" : components.percentEncodedPath
        return scheme + "://" + host + (port.map { ":\($0)" } ?? "") + path
    }
}
