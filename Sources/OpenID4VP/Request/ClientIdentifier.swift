import Foundation
import WalletEncoding

/// The Client Identifier Prefix of a verifier's `client_id` (OpenID4VP 1.0 §5.9): how the
/// wallet authenticates the verifier.
public enum ClientIdScheme: String, Sendable, Hashable, CaseIterable {
    /// `x509_san_dns:<DNS name>`: a signed request whose `x5c` leaf has that dNSName.
    case x509SanDns = "x509_san_dns"
    /// `x509_hash:<base64url SHA-256 of the leaf DER>`: a signed request whose `x5c` leaf hashes to it.
    case x509Hash = "x509_hash"
    /// `redirect_uri:<URL>`: an unsigned request whose response goes to that URL.
    case redirectUri = "redirect_uri"
    /// The web origin of an unsigned Digital Credentials API request (`origin:<origin>`),
    /// which the platform, not the request, asserts.
    case origin
}

/// A `client_id` split at its prefix (§5.9.1: the prefix is the text before the first `:`).
package struct ClientIdentifier: Sendable, Hashable {
    /// The whole identifier, prefix included: what the presentation's audience names (§14.10).
    let full: String
    /// The prefix.
    let scheme: ClientIdScheme
    /// The identifier after the prefix.
    let value: String

    /// Parses a `client_id` from a request. `origin:` is reserved for the wallet (§5.9.3).
    init(_ clientId: String) throws(InvalidRequestReason) {
        guard let colon = clientId.firstIndex(of: ":") else {
            // No prefix: a pre-registered client (§5.9.2), which this wallet has none of.
            throw .unsupportedClientIdPrefix("pre-registered")
        }
        let prefix = String(clientId[..<colon])
        let value = String(clientId[clientId.index(after: colon)...])
        guard let scheme = ClientIdScheme(rawValue: prefix), scheme != .origin else {
            throw .unsupportedClientIdPrefix(prefix)
        }
        guard !value.isEmpty else { throw .malformedClientId }
        switch scheme {
        case .x509SanDns:
            guard Self.isDNSName(value) else { throw .malformedClientId }
        case .x509Hash:
            guard let hash = Base64URL.decodeStrict(value), hash.count == 32 else { throw .malformedClientId }
        case .redirectUri:
            guard let url = URL(string: value), url.scheme != nil, url.host != nil else { throw .malformedClientId }
        case .origin:
            break
        }
        self.full = clientId
        self.scheme = scheme
        self.value = value
    }

    /// The identifier of an unsigned DC API request: the caller's origin.
    init(origin: String) {
        self.full = "origin:" + origin
        self.scheme = .origin
        self.value = origin
    }

    /// The SHA-256 hash an `x509_hash` identifier names.
    var certificateHash: [UInt8]? {
        guard scheme == .x509Hash else { return nil }
        return Base64URL.decodeStrict(value)
    }

    /// Letters, digits, hyphens and dots in non-empty labels (RFC 1035 preferred syntax).
    static func isDNSName(_ text: String) -> Bool {
        let labels = text.split(separator: ".", omittingEmptySubsequences: false)
        guard !labels.isEmpty, text.utf8.count <= 253 else { return false }
        return labels.allSatisfy { label in
            !label.isEmpty && label.utf8.count <= 63 && label.utf8.allSatisfy { byte in
                switch byte {
                case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"),
                     UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "-"):
                    true
                default:
                    false
                }
            }
        }
    }
}
