import Foundation
import WalletCrypto

/// How a ``ReferenceVerifier`` is set up: where it is reachable, whom it trusts as
/// credential issuers, and how it answers.
public struct VerifierConfiguration: Sendable {
    /// The public base URL of the verifier's endpoints (`http://localhost:8080`, or
    /// `https://verifier.example`); its host is the reader certificate's DNS name and
    /// the `x509_san_dns` client identifier. Endpoints: `request/<id>`, `response/<id>`,
    /// `transactions/<id>`, `done`.
    public var baseURL: URL
    /// The common name of the reader certificate.
    public var readerCommonName: String
    /// Trusted SD-JWT VC issuers.
    public var sdJwtIssuerTrust: SDJWTIssuerTrust
    /// Trusted mdoc issuers (IACA roots).
    public var mdocIssuerAnchors: [X509Certificate]
    /// Whether the response endpoint answers with a `redirect_uri` (carrying a fresh
    /// `response_code`), after both accepted responses and declines.
    public var answersWithRedirect: Bool
    /// Leeway for time checks, in seconds.
    public var clockSkew: TimeInterval
    /// How old a KB-JWT may be, in seconds.
    public var keyBindingMaximumAge: TimeInterval
    /// How long a request object is valid (`exp - iat`), in seconds.
    public var requestLifetime: TimeInterval
    /// The device-signed element expected for mdoc-bound transaction data.
    public var mdocTransactionDataBinding: MdocTransactionDataBinding
    /// The HTTP status the response endpoint answers a rejected response with.
    public var rejectionStatus: Int

    /// A configuration for a verifier at `baseURL` trusting the given issuers.
    public init(baseURL: URL, readerCommonName: String = "Reference Verifier",
                sdJwtIssuerTrust: SDJWTIssuerTrust = .keys([]), mdocIssuerAnchors: [X509Certificate] = [],
                answersWithRedirect: Bool = true, clockSkew: TimeInterval = 60, keyBindingMaximumAge: TimeInterval = 300,
                requestLifetime: TimeInterval = 600, mdocTransactionDataBinding: MdocTransactionDataBinding = .digest(),
                rejectionStatus: Int = 400) {
        self.baseURL = baseURL
        self.readerCommonName = readerCommonName
        self.sdJwtIssuerTrust = sdJwtIssuerTrust
        self.mdocIssuerAnchors = mdocIssuerAnchors
        self.answersWithRedirect = answersWithRedirect
        self.clockSkew = clockSkew
        self.keyBindingMaximumAge = keyBindingMaximumAge
        self.requestLifetime = requestLifetime
        self.mdocTransactionDataBinding = mdocTransactionDataBinding
        self.rejectionStatus = rejectionStatus
    }
}
