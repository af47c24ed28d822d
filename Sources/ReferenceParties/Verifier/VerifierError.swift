import JOSE
import WalletCrypto
import WalletEncoding

/// Why the reference verifier could not set up what it was asked to (a transaction, a
/// DC API request, its reader PKI). What goes wrong with a wallet's response is not an
/// error of the verifier: it is a ``PresentationVerdict`` with a ``VerificationFailure``.
public enum VerifierError: Error, Equatable, Sendable {
    /// The DCQL query is not one the verifier can send.
    case invalidQuery(QueryProblem)
    /// A transaction data entry is not well-formed or names no credential query.
    case invalidTransactionData(TransactionDataProblem)
    /// The options ask for something the protocol does not allow (the reason says what).
    case unsupportedCombination(UnsupportedCombination)
    /// No transaction has this id.
    case unknownTransaction(String)
    /// Signing the request object failed.
    case signingFailed(JOSEError)
    /// Generating a key or certificate failed.
    case crypto(CryptoError)
    /// The random source failed.
    case randomSourceFailed
    /// No base URL can be made with this host.
    case invalidBaseURL(String)
}

/// What is wrong with a DCQL query the verifier was given.
public enum QueryProblem: Equatable, Sendable {
    /// `credentials` is empty.
    case noCredentials
    /// An `id` is empty or has characters other than alphanumerics, `_` and `-`.
    case invalidIdentifier(String)
    /// Two credential queries share an id.
    case duplicateCredentialId(String)
    /// Two claims queries of one credential query share an id.
    case duplicateClaimId(queryId: String, claimId: String)
    /// The format's `meta` member (`vct_values` or `doctype_value`) is missing or empty.
    case missingMeta(queryId: String)
    /// `claims` is present but empty.
    case emptyClaims(queryId: String)
    /// A claims path is empty, or an mdoc path is not `[namespace, element]`.
    case invalidPath(queryId: String)
    /// `values` is empty or holds something other than strings, integers and booleans.
    case invalidValues(queryId: String)
    /// `claim_sets` is empty or has an empty option.
    case emptyClaimSet(queryId: String)
    /// `claim_sets` names a claim id that `claims` does not have.
    case unknownClaimId(queryId: String, claimId: String)
    /// `claim_sets` without `claims`.
    case claimSetsWithoutClaims(queryId: String)
    /// `credential_sets` (or one of its options) is empty.
    case emptyCredentialSet
    /// A credential set option names a credential query that does not exist.
    case unknownCredentialId(String)
    /// A format this verifier does not verify.
    case unsupportedFormat(String)
    /// A member that must be an object is not.
    case notAnObject(String)
    /// A member is missing or has the wrong JSON type.
    case json(JSONError)
}

/// What is wrong with a transaction data entry the verifier was given.
public enum TransactionDataProblem: Equatable, Sendable {
    /// `type` is empty.
    case emptyType
    /// `credential_ids` is empty.
    case noCredentialIds
    /// `credential_ids` names a query the DCQL query does not have.
    case unknownCredentialId(String)
    /// A hash algorithm this verifier cannot check.
    case unsupportedHashAlgorithm(String)
    /// `credential_ids` names a query whose credentials are requested without holder binding.
    case unboundCredential(String)
}

/// A combination of options the verifier refuses to produce.
public enum UnsupportedCombination: Equatable, Sendable {
    /// `redirect_uri:` requests cannot be signed, so they go by value as URL parameters.
    case unsignedRequestByReference
    /// A request fault that has no meaning for these options (e.g. a wallet_nonce fault
    /// without `request_uri_method=post`, an x509_hash fault on an x509_san_dns request).
    case faultNotApplicable(RequestFault)
    /// An encrypted response mode with no content encryption algorithm offered.
    case noEncryptionAlgorithm
    /// A signed DC API request without expected origins.
    case noExpectedOrigins
}
