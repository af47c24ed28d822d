import Foundation
import OpenID4VCI
import WalletRuntime
import WalletStorage

/// The wallet's credentials: list, read, delete, and follow changes.
///
/// ```swift
/// for await credentials in wallet.credentials.changes {   // the current list first
///     render(credentials)
/// }
/// ```
public final class WalletCredentials: Sendable {
    private let store: CredentialStore
    private let monitor: CredentialMonitor
    private let issuance: Openid4VciClient

    init(store: CredentialStore, monitor: CredentialMonitor, issuance: Openid4VciClient) {
        self.store = store
        self.monitor = monitor
        self.issuance = issuance
    }

    /// The stored credentials matching `filter` (all by default), oldest first.
    public func list(_ filter: CredentialFilter = CredentialFilter()) async throws(WalletError) -> [StoredCredential] {
        do { return try await store.list(filter) } catch { throw .storage(error) }
    }

    /// The credential `id`, or nil.
    public func get(_ id: CredentialId) async throws(WalletError) -> StoredCredential? {
        do { return try await store.credential(id: id) } catch { throw .storage(error) }
    }

    /// How many presentations credential `id` can still make: unused instances of a
    /// `.oneTime` credential (time to `reissue` when it runs low), all of a `.rotate` one.
    public func remainingInstances(of id: CredentialId) async throws(WalletError) -> Int {
        do { return try await store.remainingInstances(of: id) } catch { throw .storage(error) }
    }

    /// Deletes credential `id` with its keys, telling its issuer first
    /// (`credential_deleted`, OpenID4VCI 1.0 §11) when the issuance left a notification
    /// id; a notification that cannot be sent does not keep the credential.
    public func delete(_ id: CredentialId) async throws(WalletError) {
        do { try await issuance.deleteCredential(id) } catch { throw .issuance(error) }
        await monitor.refresh()
    }

    /// The stored credentials now and after every change the wallet makes (an issuance,
    /// a deletion, a presentation that spends an instance): each value is the whole
    /// list, the current one first. Any number of observers may follow it.
    public var changes: AsyncStream<[StoredCredential]> { monitor.stream.states }

    /// The list as last published on ``changes``.
    public var current: [StoredCredential] { monitor.stream.current }
}

/// Publishes the store's list after each change, so that a newer list is never
/// overtaken by an older one.
actor CredentialMonitor {
    let stream = StateStream<[StoredCredential]>(initial: [])
    /// Reads the list (the store's `list()`; a test may slow one read down).
    private let read: @Sendable () async throws -> [StoredCredential]
    private let logger: any Logger
    /// Refreshes started, and the latest started of those that published. The actor is
    /// reentrant across the store read: a refresh that started earlier (before the change
    /// a later one was started for) and finishes later must not publish its list over
    /// the later one's. The last refresh started publishes unless its read fails (then an
    /// earlier one may publish, and the next refresh corrects the list), and it began
    /// after the last change.
    private var started = 0
    private var published = 0

    init(store: CredentialStore, logger: any Logger) {
        self.init(read: { try await store.list() }, logger: logger)
    }

    init(read: @escaping @Sendable () async throws -> [StoredCredential], logger: any Logger) {
        self.read = read
        self.logger = logger
    }

    /// Reads the list again and publishes it when it changed.
    func refresh() async {
        started += 1
        let ticket = started
        do {
            let list = try await read()
            guard ticket > published else { return }
            published = ticket
            if list != stream.current { stream.send(list) }
        } catch {
            logger.log(.warning, "credentials: the list could not be read (\(TransactionRecorder.caseName(error)))", module: "WalletKit")
        }
    }
}
