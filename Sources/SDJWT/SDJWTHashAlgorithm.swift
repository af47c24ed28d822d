import WalletCrypto
import WalletRuntime
import WalletEncoding

/// The hash of `_sd_alg` (RFC 9901 §4.1.1), named as in the IANA "Named Information
/// Hash Algorithm" registry; the same names serve `transaction_data_hashes_alg`
/// (OpenID4VP 1.0 §8.4).
public enum SDJWTHashAlgorithm: String, Sendable, CaseIterable, Hashable {
    /// SHA-256, the default when `_sd_alg` is absent.
    case sha256 = "sha-256"
    /// SHA-384.
    case sha384 = "sha-384"
    /// SHA-512.
    case sha512 = "sha-512"

    /// Reads a registry name; anything else is `unsupportedHashAlgorithm`.
    public init(name: String) throws(SDJWTError) {
        guard let algorithm = SDJWTHashAlgorithm(rawValue: name) else { throw .unsupportedHashAlgorithm(name) }
        self = algorithm
    }

    /// The `WalletCrypto` hash behind the name.
    public var hashAlgorithm: HashAlgorithm {
        switch self {
        case .sha256: .sha256
        case .sha384: .sha384
        case .sha512: .sha512
        }
    }

    /// base64url(hash(ASCII of `text`)): the digest of a disclosure, of a presented
    /// SD-JWT (`sd_hash`) or of a transaction data string, always over the exact
    /// string received.
    public func base64URLDigest(of text: String) -> String {
        Base64URL.encode(hashAlgorithm.digest(text.utf8Bytes))
    }
}
