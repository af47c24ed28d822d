import JOSE
import WalletCrypto

/// Why the reference issuer could not be set up or asked to do something. (Refusals of
/// wallet requests are not errors of the issuer: they are HTTP answers, recorded in
/// ``IssuerInspection/refusals``.)
public enum ReferenceIssuerError: Error, Equatable, Sendable {
    /// The configuration contradicts itself or the specification.
    case invalidConfiguration(ConfigurationProblem)
    /// An offer names a credential configuration the issuer does not have.
    case unknownCredentialConfiguration(String)
    /// An offer was asked for with no credential configuration or no grant.
    case emptyOffer
    /// Generating a key, a certificate or random bytes failed.
    case crypto(CryptoError)
    /// The random source failed.
    case randomSourceFailed
    /// A JOSE structure (signed metadata ...) could not be made.
    case jose(JOSEError)

    /// What is wrong with a configuration.
    public enum ConfigurationProblem: Equatable, Sendable {
        /// The origin is not an http(s) URL with a host.
        case originNotHTTP
        /// The origin has a path, query or fragment (paths go in `issuerPath`).
        case originHasPath
        /// A path does not start with `/`, ends with `/`, has a query or fragment, or the
        /// authorization server path equals the issuer path.
        case invalidPath(String)
        /// No credential configurations.
        case noCredentialConfigurations
        /// Two credential configurations share an id.
        case duplicateConfiguration(String)
        /// A configuration lists no proof signing algorithm.
        case noProofAlgorithms(String)
        /// A configuration requires key attestations but no trust anchor is configured.
        case keyAttestationWithoutAnchors(String)
        /// `batch_size` must be 2 or greater (§12.2.4).
        case batchSizeBelowTwo
        /// Response encryption needs request encryption (§8.2).
        case responseEncryptionWithoutRequestEncryption
        /// An encryption direction lists no `enc` value.
        case noContentEncryption
        /// The deferral interval must be positive.
        case deferralIntervalNotPositive
        /// At least one transaction-code attempt must be allowed.
        case maxTxCodeAttemptsBelowOne
    }
}
