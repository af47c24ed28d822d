import Foundation
import MdocProximity
import OpenID4VCI
import OpenID4VP
import WalletCrypto
import WalletRuntime
import WalletStorage

/// A holder wallet: the one object an app creates. It opens the wallet's storage and
/// offers every flow of the SDK over it.
///
/// ```swift
/// let wallet = try await Wallet(config: WalletConfig(storage: .sqlite(at: folder)))
/// let offer = try await wallet.issuance.resolveOffer(offerUri)              // OpenID4VCI
/// let session = wallet.presentation.start(requestUri)                      // OpenID4VP, or startDcApi
/// try await wallet.proximity.createEngagement(.qr, config: wallet.engagementConfig)  // ISO 18013-5
/// for await credentials in wallet.credentials.changes { ... }
/// let log = try await wallet.transactionLog.entries()
/// ```
/// Every issuance and presentation (remote, DC API, proximity) leaves one entry in the
/// transaction log. Opening the wallet finishes what an interrupted run left half done
/// (``recovery``). One wallet at a time owns a storage folder.
public final class Wallet: Sendable {
    /// The configuration the wallet was opened with.
    public let config: WalletConfig
    /// Where holder keys live.
    public let secureArea: any SecureArea
    /// The credential store (credentials, instances, the transaction log).
    public let store: CredentialStore
    /// Receiving credentials (OpenID4VCI).
    public let issuance: WalletIssuance
    /// Presenting remotely and over the Digital Credentials API (OpenID4VP).
    public let presentation: WalletPresentation
    /// Presenting in proximity (ISO 18013-5): the engagement manager. Answer its requests
    /// with ``documentProvider(for:consent:credentials:)``.
    public let proximity: MdocEngagementManager
    /// The stored credentials.
    public let credentials: WalletCredentials
    /// The record of every exchange.
    public let transactionLog: WalletTransactionLog
    /// An engagement configuration with the reader anchors of the trust configuration
    /// (readers' requests are authenticated against them) and the proximity
    /// configuration's ``ProximityConfig/requireReaderAuthentication``; pass it to
    /// `proximity.createEngagement`, changed as needed.
    public let engagementConfig: EngagementConfig
    /// What opening the storage repaired.
    public let recovery: StorageRecovery

    let unlock: (@Sendable (CredentialId) async -> (any KeyUnlockData)?)?
    let proximityDisclosures = ProximityDisclosures()
    let credentialMonitor: CredentialMonitor
    private let proximityRecorder: ProximityRecorder
    /// Held (shared) while the wallet has its folder open; released by ``close()`` or
    /// when the wallet goes.
    private let folderLock: StorageFolderLock?

    /// Opens (or creates) the wallet's storage and repairs what an interrupted run left:
    /// key deletions are finished and keys that an unfinished issuance created but never
    /// stored a credential for are deleted. The repairs run only when no other wallet has
    /// the folder open (``StorageFolderLock``; ``StorageRecovery/isPostponed`` otherwise),
    /// so that an app and its extension, or two processes, may share one folder.
    public init(config: WalletConfig = WalletConfig()) async throws(WalletError) {
        var readerAnchors: [X509Certificate] = []
        for (index, der) in config.trust.readerAnchorsDer.enumerated() {
            guard let certificate = try? X509Certificate(derEncoded: der) else { throw .invalidReaderAnchor(index: index) }
            readerAnchors.append(certificate)
        }
        // The presentation's own anchors join these for remote requests: one that does not
        // parse would quietly trust nothing (every signed request resolving untrusted).
        for (index, der) in config.presentation.readerAnchorsDer.enumerated() where (try? X509Certificate(derEncoded: der)) == nil {
            throw .invalidReaderAnchor(index: config.trust.readerAnchorsDer.count + index)
        }
        let (area, store, lock) = try WalletStorageSetup.open(config)
        do {
            recovery = try await WalletStorageSetup.recover(area: area, store: store, lock: lock)
        } catch {
            throw .storage(error)
        }
        folderLock = lock
        self.config = config
        self.secureArea = area
        self.store = store
        self.unlock = config.credentialUnlock

        var issuanceConfig = config.issuance
        issuanceConfig.issuerTrustAnchors = config.trust.issuerAnchors + issuanceConfig.issuerTrustAnchors
        var presentationConfig = config.presentation
        presentationConfig.readerAnchorsDer = config.trust.readerAnchorsDer + presentationConfig.readerAnchorsDer
        let http = config.httpClient ?? URLSessionHTTPClient(allowInsecureHTTP: issuanceConfig.allowHTTP || presentationConfig.allowHTTP)

        let recorder = TransactionRecorder(store: store, options: config.transactionLog, clock: config.clock, logger: config.logger)
        let monitor = CredentialMonitor(store: store, logger: config.logger)
        credentialMonitor = monitor
        let vci = Openid4VciClient(http: http, rng: config.random, clock: config.clock, credentialEncryption: config.credentialEncryption,
                                   config: issuanceConfig, storage: IssuanceStorage(secureArea: area, store: store), logger: config.logger)
        issuance = WalletIssuance(client: vci, store: store, recorder: recorder, monitor: monitor,
                                  anchorsConfigured: !issuanceConfig.issuerTrustAnchors.isEmpty)
        presentation = WalletPresentation(
            client: Openid4VpClient(store: store, config: presentationConfig, httpClient: http, clock: config.clock,
                                    random: config.random, unlock: config.credentialUnlock),
            store: store, recorder: recorder, monitor: monitor)
        credentials = WalletCredentials(store: store, monitor: monitor, issuance: vci)
        transactionLog = WalletTransactionLog(store: store, recorder: recorder)
        let carrier = config.proximity.resolved
        proximity = MdocEngagementManager(connector: carrier.connector, nfcSettings: carrier.nfcSettings, clock: config.clock,
                                          executor: config.proximity.executor)
        engagementConfig = EngagementConfig(readerTrustAnchors: readerAnchors.isEmpty ? nil : readerAnchors,
                                            requireReaderAuthentication: config.proximity.requireReaderAuthentication)
        proximityRecorder = ProximityRecorder(hub: proximity.eventHub, disclosures: proximityDisclosures, recorder: recorder,
                                              monitor: monitor, readerAnchorsConfigured: !readerAnchors.isEmpty)
        await monitor.refresh()
    }

    deinit {
        proximityRecorder.stop()
    }

    /// Ends what the wallet has open: every proximity engagement (a request waiting for
    /// consent is declined, a session in progress canceled), the transaction log's
    /// observer once it has logged every session that ended (those ended here included),
    /// and the databases, checkpointed and closed. Call it before removing or moving the
    /// storage folder; the wallet is not to be used afterwards.
    public func close() async {
        await proximity.closeAll()
        await proximityRecorder.finish()
        await store.close()
        if let area = secureArea as? SoftwareSecureArea { await area.close() }
        folderLock?.release()
    }

    /// Checks the storage: the database's integrity, and that keys and credentials
    /// agree (no key without a credential, no credential without its keys).
    public func verifyStorage() async throws(WalletError) -> StorageReport {
        do { return try await WalletStorageSetup.report(area: secureArea, store: store) } catch { throw .storage(error) }
    }
}

/// The transaction log (`wallet.transactionLog`): one entry per exchange, newest first,
/// with claim values only when the configuration opts in.
public final class WalletTransactionLog: Sendable {
    private let store: CredentialStore
    private let recorder: TransactionRecorder

    init(store: CredentialStore, recorder: TransactionRecorder) {
        self.store = store
        self.recorder = recorder
    }

    /// The entries matching `filter` (all by default), newest first.
    public func entries(_ filter: TransactionFilter = TransactionFilter()) async throws(WalletError) -> [TransactionLogEntry] {
        do { return try await store.transactions(filter) } catch { throw .storage(error) }
    }

    /// Deletes entry `id`.
    public func delete(id: String) async throws(WalletError) {
        do { try await store.deleteTransaction(id: id) } catch { throw .storage(error) }
    }

    /// Deletes every entry matching `filter` (all by default); returns how many went.
    @discardableResult
    public func delete(_ filter: TransactionFilter = TransactionFilter()) async throws(WalletError) -> Int {
        do { return try await store.deleteTransactions(filter) } catch { throw .storage(error) }
    }

    /// Each entry as it is recorded (not those already in the log): for a screen that
    /// shows the log live, and for waiting until a proximity session's entry is written,
    /// which happens as its final event is handled.
    public var recorded: AsyncStream<TransactionLogEntry> {
        let states = recorder.recorded.states
        return AsyncStream { continuation in
            let task = Task {
                var first = true
                for await entry in states {
                    defer { first = false }
                    if first { continue }      // the state stream replays the last one
                    if let entry { continuation.yield(entry) }
                }
                continuation.finish()
            }
            continuation.onTermination = { _ in task.cancel() }
        }
    }
}
