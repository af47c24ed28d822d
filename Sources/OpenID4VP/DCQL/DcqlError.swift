import SDJWT
import WalletEncoding

/// Why a `dcql_query` is not a valid DCQL query (OpenID4VP 1.0 §6).
public enum DcqlError: Error, Hashable, Sendable {
    /// The query text is not a JSON object.
    case invalidJSON(JSONError)
    /// A member is missing or has the wrong JSON type.
    case invalidMember(JSONError)
    /// An array that must not be empty is (`credentials`, `claims`, `options` ...).
    case emptyArray(String)
    /// An array has more entries than this SDK accepts.
    case tooMany(String, limit: Int)
    /// A Credential Query or claim id that is empty or uses characters other than
    /// `A-Z a-z 0-9 _ -`.
    case invalidIdentifier(String)
    /// Two Credential Queries share an id.
    case duplicateCredentialId(String)
    /// A Credential Query has no `meta`.
    case missingMeta(queryId: String)
    /// `meta` lacks what the format requires (`vct_values`, `doctype_value`) or has a
    /// malformed member.
    case invalidMeta(queryId: String)
    /// A claim `path` is not a claims path pointer (§7).
    case invalidClaimPath(queryId: String)
    /// An mdoc claim path is not `[namespace, element identifier]` (§7.2).
    case invalidMdocClaimPath(queryId: String, path: ClaimPath)
    /// `values` is empty or holds something other than strings, integers and booleans.
    case invalidClaimValues(queryId: String)
    /// `claim_sets` is present but a claim has no id.
    case missingClaimId(queryId: String)
    /// Two claims of one query share an id.
    case duplicateClaimId(queryId: String, claimId: String)
    /// `claim_sets` without `claims`.
    case claimSetsWithoutClaims(queryId: String)
    /// `claim_sets` is not a non-empty array of non-empty arrays of strings.
    case invalidClaimSets(queryId: String)
    /// `claim_sets` names a claim id that `claims` does not have.
    case unknownClaimId(queryId: String, claimId: String)
    /// An option of `credential_sets` is not a non-empty array of strings.
    case invalidCredentialSet
    /// `credential_sets` names a Credential Query id that `credentials` does not have.
    case unknownCredentialId(String)
}

extension DcqlError {
    /// Runs typed member reads, turning a `JSONError` into `invalidMember`.
    static func reading<T>(_ body: () throws(JSONError) -> T) throws(DcqlError) -> T {
        do { return try body() } catch { throw .invalidMember(error) }
    }
}
