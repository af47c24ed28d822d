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
    /// Proximity (ISO 18013-5) settings: the carrier and NFC.
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
public struct ProximityConfig: Sendable {
    /// The carrier engagements listen and connect on: a platform BLE connector on a
    /// device; the SDK's TCP (the default, loopback) or simulated BLE in tests and tools.
    public var connector: any MdocTransportConnector
    /// How NFC engagements are served.
    public var nfcSettings: NFCEngagementSettings

    /// Settings; by default TCP on 127.0.0.1 and the default NFC settings.
    public init(connector: any MdocTransportConnector = TCPConnector(), nfcSettings: NFCEngagementSettings = NFCEngagementSettings()) {
        self.connector = connector
        self.nfcSettings = nfcSettings
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
