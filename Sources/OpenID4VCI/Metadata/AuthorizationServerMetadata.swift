import Foundation
import WalletEncoding

/// Authorization Server Metadata (RFC 8414 §2; OpenID Connect Discovery uses the same
/// member names): the endpoints and features the flows use.
struct AuthorizationServerMetadata: Sendable, Equatable {
    /// `issuer`.
    let issuer: String
    /// `authorization_endpoint`.
    let authorizationEndpoint: URL?
    /// `token_endpoint`.
    let tokenEndpoint: URL
    /// `pushed_authorization_request_endpoint` (RFC 9126).
    let pushedAuthorizationRequestEndpoint: URL?
    /// `require_pushed_authorization_requests`.
    let requiresPushedAuthorizationRequests: Bool
    /// `dpop_signing_alg_values_supported` (RFC 9449 §5.1): DPoP is used when non-empty.
    let dpopSigningAlgorithms: [String]
    /// `authorization_response_iss_parameter_supported` (RFC 9207).
    let issuesResponseIssuer: Bool
    /// `code_challenge_methods_supported` (nil: not advertised).
    let codeChallengeMethods: [String]?
    /// `authorization_details_types_supported` (nil: not advertised).
    let authorizationDetailsTypes: [String]?

    /// The URLs to try, in order: RFC 8414 with the path inserted, then OpenID Connect
    /// Discovery with it appended (OpenID4VCI 1.0 §12.3).
    static func candidateURLs(for issuer: String) -> [URL] {
        [UrlCandidates.insert(issuer), UrlCandidates.append(issuer)].compactMap { $0 }
    }

    private enum UrlCandidates {
        static func insert(_ issuer: String) -> URL? { URLPolicy.wellKnown("oauth-authorization-server", insertedInto: issuer) }
        static func append(_ issuer: String) -> URL? { URLPolicy.wellKnown("openid-configuration", appendedTo: issuer) }
    }

    init(json object: JSONObject, expectedIssuer: String, policy: URLPolicy) throws(MetadataProblem) {
        let issuer = object["issuer"]?.stringValue
        // RFC 8414 §3.3: the issuer in the document must be the one it was fetched for.
        guard issuer == expectedIssuer else { throw .identifierMismatch(expected: expectedIssuer, actual: issuer) }
        self.issuer = expectedIssuer
        let reader = MemberReader(object: object, policy: policy)
        authorizationEndpoint = try reader.optionalURL("authorization_endpoint")
        guard let token = try reader.optionalURL("token_endpoint") else { throw .missingEndpoint("token_endpoint") }
        tokenEndpoint = token
        pushedAuthorizationRequestEndpoint = try reader.optionalURL("pushed_authorization_request_endpoint")
        requiresPushedAuthorizationRequests = try reader.optionalBool("require_pushed_authorization_requests") ?? false
        dpopSigningAlgorithms = try reader.optionalStrings("dpop_signing_alg_values_supported") ?? []
        issuesResponseIssuer = try reader.optionalBool("authorization_response_iss_parameter_supported") ?? false
        codeChallengeMethods = try reader.optionalStrings("code_challenge_methods_supported")
        authorizationDetailsTypes = try reader.optionalStrings("authorization_details_types_supported")
    }
}
