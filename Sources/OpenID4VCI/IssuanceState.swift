import Foundation
import WalletStorage

/// Where an issuance session is. Three states are terminal (`.deferred`, `.completed`,
/// `.failed`); two are pauses that wait for the app (`.authorizationRequired`,
/// `.txCodeRequired`).
public enum IssuanceState: Sendable, Equatable {
    /// Fetching metadata and preparing the authorization request.
    case preparing
    /// Open this URL in a browser, then call `completeAuthorization(_:)` with the redirect.
    case authorizationRequired(String)
    /// The issuer wants the transaction code it sent out of band; call `submitTxCode(_:)`.
    case txCodeRequired(TxCodeSpec?)
    /// Exchanging the grant for a token and requesting the credential(s).
    case processing
    /// Terminal: the issuer accepted the request but has not minted the credential yet.
    /// It is stored as deferred; call `resumeDeferred(credentialId)` after `retryAfter`
    /// (nil: whenever convenient).
    case deferred(credentialId: CredentialId, retryAfter: Date?)
    /// Terminal: the credentials are verified and stored.
    case completed(IssuanceResult)
    /// Terminal: nothing was stored, and no key the session created is left.
    case failed(IssuanceError)

    /// Whether the session has ended in this state.
    public var isTerminal: Bool {
        switch self {
        case .deferred, .completed, .failed: true
        case .preparing, .authorizationRequired, .txCodeRequired, .processing: false
        }
    }
}

/// What a completed session stored.
public struct IssuanceResult: Sendable, Equatable {
    /// The ids of the credentials stored, one per credential dataset the issuer granted.
    public let issued: [CredentialId]
    /// Credentials of the same session that the issuer deferred (stored as deferred;
    /// resume each with `resumeDeferred(_:)`). Empty in the usual single-credential case.
    public let deferred: [CredentialId]

    /// A result.
    public init(issued: [CredentialId], deferred: [CredentialId] = []) {
        self.issued = issued
        self.deferred = deferred
    }
}

/// How the transaction code should be asked for (OpenID4VCI 1.0 §4.1.1 `tx_code`).
public struct TxCodeSpec: Sendable, Equatable {
    /// The characters the code is made of.
    public enum InputMode: String, Sendable, Equatable {
        /// Digits only (the default).
        case numeric
        /// Any characters.
        case text
    }

    /// The input mode; `numeric` when the offer says nothing.
    public let inputMode: InputMode
    /// The code's length, if the issuer gives it.
    public let length: Int?
    /// Guidance for the user (at most 300 characters).
    public let description: String?

    /// A specification.
    public init(inputMode: InputMode = .numeric, length: Int? = nil, description: String? = nil) {
        self.inputMode = inputMode
        self.length = length
        self.description = description
    }
}
