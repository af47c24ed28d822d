import WalletCrypto
import WalletEncoding

/// Proof Key for Code Exchange with `S256` (RFC 7636 §4).
struct PKCE: Sendable, Equatable {
    /// The method the wallet uses; `plain` is never sent.
    static let method = "S256"

    /// `code_verifier`: 43 characters of base64url over 32 random bytes (§4.1). Never logged.
    let verifier: String

    /// A verifier from 32 random bytes.
    init(randomBytes: [UInt8]) { verifier = Base64URL.encode(randomBytes) }

    /// A verifier given as text (the RFC's example).
    init(verifier: String) { self.verifier = verifier }

    /// `code_challenge = BASE64URL(SHA256(ASCII(code_verifier)))` (§4.2).
    var challenge: String { Base64URL.encode(SHA256.digest(Array(verifier.utf8))) }
}
