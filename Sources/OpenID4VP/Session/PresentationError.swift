import Foundation
import JOSE
import Mdoc
import SDJWT
import WalletCrypto
import WalletEncoding
import WalletRuntime
import WalletStorage

/// Why a presentation session failed (the spec's `PresentationError`).
///
/// A request that fails to resolve ends in `.failed` before `.requestResolved`: an
/// invalid or untrusted request never reaches the consent UI, and nothing is sent to
/// the verifier for it.
public enum PresentationError: Error, Equatable, Sendable {
    /// The request is malformed or fails an OpenID4VP check (bad `typ`, `client_id`
    /// mismatch, missing or wrong `wallet_nonce`, expired, `expected_origins` ...).
    case invalidRequest(InvalidRequestReason)
    /// A signed request failed reader trust (chain, signature, or client identifier
    /// prefix binding); raised only when reader anchors are configured.
    case verifierNotTrusted(TrustFailure)
    /// No stored credential answers a required query; these queries lack candidates.
    case queryNotSatisfiable(queryIds: [String])
    /// The selection passed to `respond` leaves out these queries, which a required
    /// credential set needs.
    case selectionIncomplete(missing: [String])
    /// The verifier answered the response with an error: its HTTP status and, when its
    /// body says, the OAuth `error` code.
    case responseRejected(status: Int, error: String?)
    /// Anything else, with its typed cause (transport, storage, a key operation, encoding).
    case unexpected(UnexpectedCause)

    /// The OpenID4VP error code (§8.5) this failure corresponds to, for reporting it to
    /// the verifier with `Openid4VpClient.reportError`; nil where none applies.
    public var vpErrorCode: VpErrorCode? {
        switch self {
        case .invalidRequest(let reason): reason.vpErrorCode
        case .verifierNotTrusted: .invalidClient
        case .queryNotSatisfiable: .accessDenied
        case .selectionIncomplete, .responseRejected, .unexpected: nil
        }
    }
}

/// The cause of an `.unexpected` failure: a typed error from the layer that failed.
/// A signer's `.userCancelled` arrives as `.keyOperation(.userCancelled)`, unchanged.
public enum UnexpectedCause: Error, Equatable, Sendable {
    /// The HTTP exchange failed before a response arrived.
    case transport(HTTPError)
    /// The credential store or secure area failed (including a key that needs unlocking).
    case storage(StorageError)
    /// The holder's key refused or failed to sign.
    case keyOperation(KeyOperationError)
    /// Building an SD-JWT presentation failed.
    case sdJwt(SDJWTError)
    /// Building an mdoc DeviceResponse failed.
    case mdoc(MdocError)
    /// Encrypting the response failed.
    case jose(JOSEError)
    /// A stored credential does not parse as its format.
    case unreadableCredential(CredentialId)
    /// The selection passed to `respond` names something the request does not allow.
    case invalidSelection(DcqlSelectionError)
    /// The verifier answered with a redirect where OpenID4VP 1.0 §14.5 forbids following one.
    case unexpectedRedirect(status: Int)

    /// Maps an SD-JWT failure, surfacing a key operation error unchanged.
    static func from(_ error: SDJWTError) -> UnexpectedCause {
        switch error {
        case .keyOperation(let keyError), .signingFailed(.keyOperation(let keyError)): return .keyOperation(keyError)
        default: return .sdJwt(error)
        }
    }

    /// Maps an mdoc failure, surfacing a key operation error unchanged.
    static func from(_ error: MdocError) -> UnexpectedCause {
        switch error {
        case .keyOperation(let keyError): return .keyOperation(keyError)
        case .cose(.keyOperation(let keyError)): return .keyOperation(keyError)
        default: return .mdoc(error)
        }
    }
}

/// The error codes a wallet returns to a verifier (OpenID4VP 1.0 §8.5 and RFC 6749 §4.1.2.1).
public enum VpErrorCode: String, Sendable, Hashable, CaseIterable {
    /// The request is malformed or violates a requirement of its client identifier prefix.
    case invalidRequest = "invalid_request"
    /// The client is not acceptable (metadata conflicts, untrusted).
    case invalidClient = "invalid_client"
    /// The user refused, the wallet holds no matching credential, or user authentication
    /// failed: deliberately one code for all three.
    case accessDenied = "access_denied"
    /// The wallet supports none of the requested formats.
    case vpFormatsNotSupported = "vp_formats_not_supported"
    /// `request_uri_method` is neither `get` nor `post`.
    case invalidRequestUriMethod = "invalid_request_uri_method"
    /// A `transaction_data` entry is unsupported, malformed, or refers to unknown credentials.
    case invalidTransactionData = "invalid_transaction_data"
    /// The wallet is unavailable.
    case walletUnavailable = "wallet_unavailable"
    /// The requested scope is unknown (RFC 6749).
    case invalidScope = "invalid_scope"
}
