import Foundation
import WalletCrypto

/// Everything the reference issuer can be told to do: where it lives, which grants and
/// protections it offers, what it issues, and how long things live. Every option a
/// wallet must handle has a switch here; ``IssuerBehaviour`` holds the deliberate
/// faults on top.
///
/// The defaults describe a strict, modern OpenID4VCI 1.0 issuer that is its own
/// authorization server: PAR optional, PKCE S256, DPoP optional without nonces, a
/// nonce endpoint, batches of up to 10, immediate issuance, refresh tokens, an SD-JWT
/// VC PID and an mDL.
public struct ReferenceIssuerConfiguration: Sendable {
    /// The origin the issuer is reached at (`scheme://host[:port]`, no path). In-process
    /// tests can keep the default; a loopback server sets its own URL through
    /// ``ReferenceIssuer/setOrigin(_:)``.
    public var origin: URL
    /// A path appended to the origin to form the Credential Issuer Identifier (`""`, or
    /// `/tenant` to exercise the well-known path-insertion rule of OpenID4VCI 1.0 §12.2.2).
    public var issuerPath: String
    /// The path of a separate authorization server on the same origin (`/auth`), listed
    /// in `authorization_servers`; `nil` makes the issuer its own authorization server.
    public var authorizationServerPath: String?
    /// Where the authorization server publishes its metadata.
    public var authorizationServerMetadata: AuthorizationServerMetadataLocation
    /// The credentials the issuer can issue, in metadata order.
    public var credentialConfigurations: [IssuerCredentialConfiguration]
    /// The issuer's own `display` entries (name per locale).
    public var display: [IssuerDisplay]
    /// Pushed authorization requests (RFC 9126).
    public var par: PARPolicy
    /// DPoP (RFC 9449) at the token and resource endpoints.
    public var dpop: DPoPPolicy
    /// Whether a nonce endpoint is offered; when it is, every key proof must carry a
    /// `c_nonce` from it (OpenID4VCI 1.0 §7).
    public var nonceEndpoint: Bool
    /// `batch_credential_issuance.batch_size`; `nil` advertises no batch support and
    /// accepts exactly one key per request.
    public var batchSize: Int?
    /// Deferred issuance; `nil` issues immediately.
    public var deferral: DeferredIssuance?
    /// Whether the notification endpoint is offered (and `notification_id` returned).
    public var notificationEndpoint: Bool
    /// `credential_request_encryption`; `nil` advertises none.
    public var requestEncryption: EncryptionSupport?
    /// `credential_response_encryption`; `nil` advertises none. Advertising it requires
    /// request encryption too (§8.2), unless ``IssuerBehaviour/advertiseResponseEncryptionWithoutRequestKeys``.
    public var responseEncryption: EncryptionSupport?
    /// Signed metadata (§12.2.3).
    public var signedMetadata: SignedMetadataMode
    /// Whether token responses carry refresh tokens (rotated on every use).
    public var refreshTokens: Bool
    /// `pre-authorized_grant_anonymous_access_supported`: whether a pre-authorized token
    /// request may come without `client_id`.
    public var anonymousPreAuthorizedAccess: Bool
    /// When token responses carry `authorization_details` with `credential_identifiers`.
    public var credentialIdentifiers: CredentialIdentifierPolicy
    /// How an SD-JWT VC names its signing key.
    public var sdJwtKeyResolution: SDJWTKeyResolution
    /// The wallet-provider roots key attestations must chain to.
    public var keyAttestationTrustAnchors: [X509Certificate]
    /// Registered clients: `client_id` to its allowed redirect URIs. `nil` accepts any
    /// client and any absolute redirect URI without a fragment (public clients).
    public var clients: [String: [String]]?
    /// Whether a key proof must name the client in `iss` when the token has a client
    /// (OpenID4VCI 1.0 App. F.1 makes it optional; a strict issuer asks for it).
    public var requireProofIssuer: Bool
    /// How many wrong transaction codes a pre-authorized code survives (§13.6).
    public var maxTxCodeAttempts: Int
    /// Lifetimes and clock tolerances.
    public var lifetimes: IssuerLifetimes
    /// Whether `POST <issuer>/offers` makes new offers on request (a test aid outside
    /// OpenID4VCI, for tools that drive a running issuer; see ``ReferenceIssuer/createOffer(_:)``).
    public var offerFactory: Bool
    /// Decides each authorization request; the default approves everything.
    public var approval: AuthorizationApproval
    /// Deliberate faults for client tests.
    public var behaviour: IssuerBehaviour

    /// A configuration; every parameter has the default described on the type.
    public init(
        origin: URL = ReferenceIssuerConfiguration.defaultOrigin,
        issuerPath: String = "",
        authorizationServerPath: String? = nil,
        authorizationServerMetadata: AuthorizationServerMetadataLocation = .oauth,
        credentialConfigurations: [IssuerCredentialConfiguration] = [.pid(), .mDL()],
        display: [IssuerDisplay] = [IssuerDisplay(name: "Reference Issuer", locale: "en-US")],
        par: PARPolicy = .optional,
        dpop: DPoPPolicy = DPoPPolicy(),
        nonceEndpoint: Bool = true,
        batchSize: Int? = 10,
        deferral: DeferredIssuance? = nil,
        notificationEndpoint: Bool = true,
        requestEncryption: EncryptionSupport? = nil,
        responseEncryption: EncryptionSupport? = nil,
        signedMetadata: SignedMetadataMode = .off,
        refreshTokens: Bool = true,
        anonymousPreAuthorizedAccess: Bool = true,
        credentialIdentifiers: CredentialIdentifierPolicy = .whenAuthorizationDetailsUsed,
        sdJwtKeyResolution: SDJWTKeyResolution = .x5c,
        keyAttestationTrustAnchors: [X509Certificate] = [],
        clients: [String: [String]]? = nil,
        requireProofIssuer: Bool = true,
        maxTxCodeAttempts: Int = 3,
        lifetimes: IssuerLifetimes = IssuerLifetimes(),
        offerFactory: Bool = false,
        approval: AuthorizationApproval = .approveAll,
        behaviour: IssuerBehaviour = IssuerBehaviour()
    ) {
        self.origin = origin
        self.issuerPath = issuerPath
        self.authorizationServerPath = authorizationServerPath
        self.authorizationServerMetadata = authorizationServerMetadata
        self.credentialConfigurations = credentialConfigurations
        self.display = display
        self.par = par
        self.dpop = dpop
        self.nonceEndpoint = nonceEndpoint
        self.batchSize = batchSize
        self.deferral = deferral
        self.notificationEndpoint = notificationEndpoint
        self.requestEncryption = requestEncryption
        self.responseEncryption = responseEncryption
        self.signedMetadata = signedMetadata
        self.refreshTokens = refreshTokens
        self.anonymousPreAuthorizedAccess = anonymousPreAuthorizedAccess
        self.credentialIdentifiers = credentialIdentifiers
        self.sdJwtKeyResolution = sdJwtKeyResolution
        self.keyAttestationTrustAnchors = keyAttestationTrustAnchors
        self.clients = clients
        self.requireProofIssuer = requireProofIssuer
        self.maxTxCodeAttempts = maxTxCodeAttempts
        self.lifetimes = lifetimes
        self.offerFactory = offerFactory
        self.approval = approval
        self.behaviour = behaviour
    }

    /// `https://issuer.example`, the origin of an issuer that is only reached in-process.
    public static let defaultOrigin: URL = URL(string: "https://issuer.example") ?? URL(fileURLWithPath: "/")

    /// The configuration with `id`.
    public func credentialConfiguration(_ id: String) -> IssuerCredentialConfiguration? {
        credentialConfigurations.first { $0.id == id }
    }

    /// Checks what cannot be expressed in types.
    func validate() throws(ReferenceIssuerError) {
        guard let scheme = origin.scheme?.lowercased(), scheme == "https" || scheme == "http", origin.host != nil else {
            throw .invalidConfiguration(.originNotHTTP)
        }
        let originPath = origin.path
        guard originPath.isEmpty || originPath == "/", origin.query == nil, origin.fragment == nil else {
            throw .invalidConfiguration(.originHasPath)
        }
        for path in [issuerPath] + (authorizationServerPath.map { [$0] } ?? []) where !path.isEmpty {
            guard path.hasPrefix("/"), !path.hasSuffix("/"), !path.contains("?"), !path.contains("#") else {
                throw .invalidConfiguration(.invalidPath(path))
            }
        }
        if let asPath = authorizationServerPath, asPath == issuerPath {
            throw .invalidConfiguration(.invalidPath(asPath))
        }
        guard !credentialConfigurations.isEmpty else { throw .invalidConfiguration(.noCredentialConfigurations) }
        var seen: Set<String> = []
        for configuration in credentialConfigurations {
            guard seen.insert(configuration.id).inserted else {
                throw .invalidConfiguration(.duplicateConfiguration(configuration.id))
            }
            guard !configuration.proofAlgorithms.isEmpty else {
                throw .invalidConfiguration(.noProofAlgorithms(configuration.id))
            }
            if configuration.keyAttestation != nil, keyAttestationTrustAnchors.isEmpty {
                throw .invalidConfiguration(.keyAttestationWithoutAnchors(configuration.id))
            }
        }
        if let batchSize, batchSize < 2 { throw .invalidConfiguration(.batchSizeBelowTwo) }
        if responseEncryption != nil, requestEncryption == nil, !behaviour.advertiseResponseEncryptionWithoutRequestKeys {
            throw .invalidConfiguration(.responseEncryptionWithoutRequestEncryption)
        }
        for support in [requestEncryption, responseEncryption].compactMap({ $0 }) where support.contentEncryption.isEmpty {
            throw .invalidConfiguration(.noContentEncryption)
        }
        if let deferral, deferral.interval < 1 { throw .invalidConfiguration(.deferralIntervalNotPositive) }
        if maxTxCodeAttempts < 1 { throw .invalidConfiguration(.maxTxCodeAttemptsBelowOne) }
    }
}

/// One `display` entry of the issuer metadata.
public struct IssuerDisplay: Sendable, Hashable {
    /// `name`.
    public var name: String
    /// `locale` (BCP 47).
    public var locale: String?
    /// `logo.uri`, when there is a logo.
    public var logoURI: String?

    /// A display entry.
    public init(name: String, locale: String? = nil, logoURI: String? = nil) {
        self.name = name
        self.locale = locale
        self.logoURI = logoURI
    }
}

/// Where authorization server metadata is published (RFC 8414 §3, OpenID Connect
/// Discovery §4), so that a wallet's fallback from one to the other can be tested.
public enum AuthorizationServerMetadataLocation: Sendable, Hashable {
    /// `/.well-known/oauth-authorization-server` (path inserted), RFC 8414.
    case oauth
    /// `<issuer>/.well-known/openid-configuration` (path appended) only.
    case openIDConfiguration
    /// Both.
    case both
}

/// Whether pushed authorization requests are offered or required (RFC 9126).
public enum PARPolicy: Sendable, Hashable {
    /// No PAR endpoint; the authorization request goes to the authorization endpoint.
    case disabled
    /// A PAR endpoint; plain authorization requests are accepted too.
    case optional
    /// A PAR endpoint and `require_pushed_authorization_requests: true`.
    case required
}

/// How the issuer uses DPoP (RFC 9449).
public struct DPoPPolicy: Sendable, Hashable {
    /// Whether DPoP is offered, and whether tokens without it are refused.
    public enum Mode: Sendable, Hashable {
        /// DPoP is not advertised; DPoP headers are ignored and tokens are Bearer.
        case disabled
        /// Advertised; a token request with a DPoP proof gets a DPoP-bound token, one
        /// without gets a Bearer token.
        case optional
        /// Advertised and required at the token endpoint.
        case required
    }

    /// The mode.
    public var mode: Mode
    /// Whether proofs must carry a server nonce (`use_dpop_nonce`, RFC 9449 §8 and §9).
    public var requireNonce: Bool
    /// `dpop_signing_alg_values_supported`.
    public var algorithms: [String]

    /// A policy; by default DPoP is optional, without nonces, with ES256.
    public init(mode: Mode = .optional, requireNonce: Bool = false, algorithms: [String] = ["ES256"]) {
        self.mode = mode
        self.requireNonce = requireNonce
        self.algorithms = algorithms
    }

    /// DPoP required, with server nonces.
    public static let requiredWithNonce = DPoPPolicy(mode: .required, requireNonce: true)
}

/// Deferred issuance (OpenID4VCI 1.0 §9).
public struct DeferredIssuance: Sendable, Hashable {
    /// How "not ready yet" is said.
    public enum Style: Sendable, Hashable {
        /// OpenID4VCI 1.0: 202 with `transaction_id` and `interval`, from the credential
        /// and the deferred endpoints alike.
        case accepted
        /// Drafts 13-15: the credential endpoint answers 202 with `transaction_id` only,
        /// and the deferred endpoint answers 400 `issuance_pending` with `interval`.
        case legacyIssuancePending
    }

    /// The `interval` (seconds) announced.
    public var interval: Int
    /// How many deferred requests are answered "not ready" before the credentials come.
    public var pendingPolls: Int
    /// The style of the "not ready" answers.
    public var style: Style

    /// Deferral with an interval, a number of pending polls and a style.
    public init(interval: Int = 5, pendingPolls: Int = 0, style: Style = .accepted) {
        self.interval = interval
        self.pendingPolls = pendingPolls
        self.style = style
    }
}

/// What the issuer advertises for one direction of credential encryption.
public struct EncryptionSupport: Sendable, Hashable {
    /// `encryption_required`.
    public var required: Bool
    /// `enc_values_supported`, in the issuer's order of preference.
    public var contentEncryption: [String]
    /// `zip_values_supported` (`["DEF"]`), empty when compression is not supported.
    public var compression: [String]

    /// Support with the given requirement, `enc` values and `zip` values.
    public init(required: Bool = false, contentEncryption: [String] = ["A128GCM", "A256GCM"], compression: [String] = []) {
        self.required = required
        self.contentEncryption = contentEncryption
        self.compression = compression
    }
}

/// Whether and how the metadata is also served signed (OpenID4VCI 1.0 §12.2.3).
public enum SignedMetadataMode: Sendable, Hashable {
    /// Unsigned JSON only.
    case off
    /// A `signed_metadata` member in the JSON document (drafts 13-15).
    case embedded
    /// `application/jwt` when the request's `Accept` asks for it (1.0).
    case onRequest
    /// Both.
    case both
}

/// When the token response binds concrete `credential_identifiers` (§6.2).
public enum CredentialIdentifierPolicy: Sendable, Hashable {
    /// Only when the wallet used `authorization_details` (where §6.2 requires them).
    case whenAuthorizationDetailsUsed
    /// Also for scope and plain pre-authorized requests, so every credential request
    /// must use `credential_identifier`.
    case always
}

/// How an SD-JWT VC tells the wallet which key signed it.
public enum SDJWTKeyResolution: Sendable, Hashable {
    /// An `x5c` header chaining to the issuer root, leaf SAN URI = the issuer identifier.
    case x5c
    /// A `kid` naming a key in `/.well-known/jwt-vc-issuer` (SD-JWT VC issuer metadata).
    case jwtVCIssuerMetadata
}

/// Lifetimes (seconds) and tolerances.
public struct IssuerLifetimes: Sendable, Hashable {
    /// Access tokens.
    public var accessToken: TimeInterval
    /// Authorization codes.
    public var authorizationCode: TimeInterval
    /// Pre-authorized codes (from offer creation).
    public var preAuthorizedCode: TimeInterval
    /// PAR `request_uri` values.
    public var pushedRequest: TimeInterval
    /// `c_nonce` values.
    public var cNonce: TimeInterval
    /// DPoP server nonces.
    public var dpopNonce: TimeInterval
    /// How old a DPoP or key proof's `iat` may be.
    public var proofMaxAge: TimeInterval
    /// How far in the future an `iat` may lie.
    public var clockSkew: TimeInterval
    /// How long issued credentials are valid.
    public var credential: TimeInterval

    /// Lifetimes; the defaults suit tests and demos.
    public init(accessToken: TimeInterval = 600, authorizationCode: TimeInterval = 120, preAuthorizedCode: TimeInterval = 3600,
                pushedRequest: TimeInterval = 60, cNonce: TimeInterval = 300, dpopNonce: TimeInterval = 300,
                proofMaxAge: TimeInterval = 300, clockSkew: TimeInterval = 60, credential: TimeInterval = 365 * 86_400) {
        self.accessToken = accessToken
        self.authorizationCode = authorizationCode
        self.preAuthorizedCode = preAuthorizedCode
        self.pushedRequest = pushedRequest
        self.cNonce = cNonce
        self.dpopNonce = dpopNonce
        self.proofMaxAge = proofMaxAge
        self.clockSkew = clockSkew
        self.credential = credential
    }
}

/// What the authorization endpoint asks the approval hook about.
public struct AuthorizationRequestSummary: Sendable, Hashable {
    /// `client_id`.
    public var clientId: String
    /// `redirect_uri`.
    public var redirectURI: String
    /// The credential configurations asked for (through scope or authorization_details).
    public var credentialConfigurationIds: [String]
    /// `issuer_state`, when the wallet passed one on.
    public var issuerState: String?
    /// Whether the request came through PAR.
    public var pushed: Bool
}

/// The approval hook's answer.
public enum AuthorizationDecision: Sendable, Hashable {
    /// Approve: the browser is redirected with a code.
    case approve
    /// Deny with this OAuth error code (`access_denied` ...): redirected with the error.
    case deny(error: String)
}

/// Decides authorization requests in place of a login page and consent screen.
public struct AuthorizationApproval: Sendable {
    /// The decision function.
    public let decide: @Sendable (AuthorizationRequestSummary) async -> AuthorizationDecision

    /// A hook running `decide`.
    public init(_ decide: @escaping @Sendable (AuthorizationRequestSummary) async -> AuthorizationDecision) {
        self.decide = decide
    }

    /// Approves every request at once.
    public static let approveAll = AuthorizationApproval { _ in .approve }
    /// Denies every request with `access_denied`.
    public static let denyAll = AuthorizationApproval { _ in .deny(error: "access_denied") }
}
