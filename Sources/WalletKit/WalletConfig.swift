import Foundation
import MdocProximity
import OpenID4VCI
import OpenID4VP
import WalletCrypto
import WalletRuntime
import WalletStorage

/// Everything a ``Wallet`` is made of: where it keeps credentials and keys, whom it
/// trusts, how it talks to issuers, verifiers and readers, and the seams to the world.
///
/// ```swift
/// let wallet = try await Wallet(config: WalletConfig(storage: .sqlite(at: folder)))
/// ```
/// Every member has a default: an app only sets what differs.
public struct WalletConfig: Sendable {
    /// Where the wallet's databases live.
    public enum Storage: Sendable, Equatable {
        /// SQLite databases in this folder (created owner-only when missing): `keys.sqlite`
        /// (the software secure area), its wrapping key `keys.sqlite.key`, and
        /// `credentials.sqlite` (credentials and the transaction log). The `wallet`
        /// command's `--store` folder has the same layout.
        case sqlite(at: URL)
        /// Everything in memory: gone when the wallet is released (tests, previews).
        case inMemory
        /// `sqlite(at:)` in the platform's application-support folder, subfolder `wallet`
        /// (`~/Library/Application Support/wallet` on Apple platforms,
        /// `~/.local/share/wallet` on Linux).
        case applicationSupport
    }

    /// Where credentials, keys and the transaction log are kept (default: the
    /// application-support folder).
    public var storage: Storage
    /// Where holder keys are created and used. Nil (the default): the SDK's
    /// `SoftwareSecureArea` in ``storage``; an app passes its hardware-backed area.
    public var secureArea: (any SecureArea)?
    /// What encrypts refresh tokens, issuance contexts and opted-in claim values in the
    /// credential store. Nil (the default): the key file next to the databases (an
    /// ephemeral key for ``Storage/inMemory``).
    public var keyWrapping: (any KeyWrappingProvider)?
    /// Whom the wallet trusts: issuers' roots and relying parties' (reader) roots.
    public var trust: TrustConfig
    /// OpenID4VCI client settings (client id, redirect URI, key attestations, http to
    /// loopback hosts ...). Issuer anchors of ``trust`` are added to its own.
    public var issuance: IssuanceConfig
    /// When credential responses (and so requests) are encrypted.
    public var credentialEncryption: CredentialEncryption
    /// OpenID4VP client settings (`mdocTransactionDataBinder`, http to loopback hosts ...).
    /// Reader anchors of ``trust`` are added to its own.
    public var presentation: PresentationConfig
    /// Unlock data for a credential's holder key when a presentation uses it (remote or
    /// proximity); nil for unprotected keys. A hardware area may prompt instead.
    public var credentialUnlock: (@Sendable (CredentialId) async -> (any KeyUnlockData)?)?
    /// Proximity (ISO 18013-5) settings: the carrier (none unless the app gives one) and NFC.
    public var proximity: ProximityConfig
    /// What the transaction log keeps.
    public var transactionLog: TransactionLogOptions
    /// The network. Nil (the default): `URLSession`, allowing `http` to loopback hosts
    /// only when the issuance or presentation settings allow it.
    public var httpClient: (any HTTPClient)?
    /// "Now" for every validity check, proof and log entry.
    public var clock: any WalletClock
    /// Randomness for protocol values (state, PKCE, nonces, credential ids).
    public var random: any RandomSource
    /// Receives request lines and warnings, never tokens, keys or claim values.
    public var logger: any Logger

    /// A configuration; every default is the one described on its member.
    public init(storage: Storage = .applicationSupport, secureArea: (any SecureArea)? = nil,
                keyWrapping: (any KeyWrappingProvider)? = nil, trust: TrustConfig = TrustConfig(),
                issuance: IssuanceConfig = IssuanceConfig(), credentialEncryption: CredentialEncryption = .whenRequired,
                presentation: PresentationConfig = PresentationConfig(),
                credentialUnlock: (@Sendable (CredentialId) async -> (any KeyUnlockData)?)? = nil,
                proximity: ProximityConfig = ProximityConfig(),
                transactionLog: TransactionLogOptions = TransactionLogOptions(), httpClient: (any HTTPClient)? = nil,
                clock: any WalletClock = SystemClock(), random: any RandomSource = SystemRandom(),
                logger: any Logger = SilentLogger()) {
        self.storage = storage
        self.secureArea = secureArea
        self.keyWrapping = keyWrapping
        self.trust = trust
        self.issuance = issuance
        self.credentialEncryption = credentialEncryption
        self.presentation = presentation
        self.credentialUnlock = credentialUnlock
        self.proximity = proximity
        self.transactionLog = transactionLog
        self.httpClient = httpClient
        self.clock = clock
        self.random = random
        self.logger = logger
    }
}

/// The roots the wallet trusts. One place for the anchors that issuance (credential and
/// metadata signatures), remote presentation (signed request objects) and proximity
/// (reader authentication) each check against.
public struct TrustConfig: Sendable {
    /// Roots issuers' certificates must chain to: SD-JWT VC `x5c`, mdoc IACAs, signed
    /// metadata. Empty: signatures are still checked, without a chain.
    public var issuerAnchors: [X509Certificate]
    /// Roots of relying parties, DER-encoded: verifiers' request-object certificates
    /// (OpenID4VP `x509_san_dns` / `x509_hash`) and mdoc readers' authentication
    /// certificates. Empty: requests resolve as untrusted, and readers are not checked.
    public var readerAnchorsDer: [[UInt8]]

    /// Trust in the given roots (none by default).
    public init(issuerAnchors: [X509Certificate] = [], readerAnchorsDer: [[UInt8]] = []) {
        self.issuerAnchors = issuerAnchors
        self.readerAnchorsDer = readerAnchorsDer
    }
}

/// How proximity presentation reaches readers.
///
/// The carrier is the app's to give: a platform BLE connector (``BLEConnector`` over a
/// CoreBluetooth or Android ``BLERadio``) on a device. There is no default carrier: the
/// SDK's TCP and in-memory transports are test tools, not ISO 18013-5 carriers, and are
/// never chosen for the app. Without one, NFC engagement works with NFC data transfer
/// (through ``MdocEngagementManager/nfc``), and QR and reverse engagements fail with
/// ``ProximityError/transportFailed(_:)`` (`.unsupportedEndpoint`).
public struct ProximityConfig: Sendable {
    /// The carrier engagements listen and connect on, or nil for none.
    public var connector: (any MdocTransportConnector)?
    /// How NFC engagements are served. Nil: the defaults of ``NFCEngagementSettings``
    /// with a carrier; NFC data transfer only without one.
    public var nfcSettings: NFCEngagementSettings?
    /// The executor the proximity manager's tasks prefer (``ProximityExecutor/shared`` keeps
    /// a session on one thread; see docs/proximity.md). Nil: the cooperative pool.
    public var executor: (any TaskExecutor)?
    /// Whether readers must authenticate: every document request must carry reader
    /// authentication that verifies under ``TrustConfig/readerAnchorsDer``, or the session
    /// ends before the user sees the request (``Wallet/engagementConfig`` carries it;
    /// see ``EngagementConfig/requireReaderAuthentication``). False by default, as
    /// ISO/IEC 18013-5 makes reader authentication optional.
    public var requireReaderAuthentication: Bool

    /// Settings: `connector` for QR, reverse and NFC-handover engagements (none by
    /// default), `nfcSettings` for NFC, the `executor` the sessions' tasks prefer, and
    /// whether readers must authenticate.
    public init(connector: (any MdocTransportConnector)? = nil, nfcSettings: NFCEngagementSettings? = nil,
                executor: (any TaskExecutor)? = nil, requireReaderAuthentication: Bool = false) {
        self.connector = connector
        self.nfcSettings = nfcSettings
        self.executor = executor
        self.requireReaderAuthentication = requireReaderAuthentication
    }

    /// The connector and NFC settings the engagement manager is built with.
    var resolved: (connector: any MdocTransportConnector, nfcSettings: NFCEngagementSettings) {
        if let connector { return (connector, nfcSettings ?? NFCEngagementSettings()) }
        return (NoCarrier(), nfcSettings ?? NFCEngagementSettings(offersConnector: false, offersNFCDataTransfer: true))
    }
}

/// The carrier of a wallet configured without one: it reaches no endpoint and listens on
/// none, so only NFC data transfer can carry a session.
struct NoCarrier: MdocTransportConnector {
    func canConnect(to endpoint: TransportEndpoint) -> Bool { false }

    func connect(to endpoint: TransportEndpoint, context: ConnectionContext,
                 timeout: Duration?) async throws(ProximityError) -> any MdocTransport {
        throw .transportFailed(.unsupportedEndpoint)
    }

    func listen(context: ConnectionContext) async throws(ProximityError) -> any MdocTransportListener {
        throw .transportFailed(.unsupportedEndpoint)
    }
}

/// What the transaction log records of each exchange.
public struct TransactionLogOptions: Sendable, Equatable {
    /// Whether exchanges are recorded at all (default: yes).
    public var isEnabled: Bool
    /// Whether the disclosed (or received) claim values are kept too, encrypted in the
    /// store (default: no; only claim paths are kept).
    public var recordsClaimValues: Bool

    /// Options; by default every exchange is recorded without claim values.
    public init(isEnabled: Bool = true, recordsClaimValues: Bool = false) {
        self.isEnabled = isEnabled
        self.recordsClaimValues = recordsClaimValues
    }
}
