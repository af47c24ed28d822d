import Foundation
import JOSE
import WalletCrypto
import WalletEncoding
import WalletRuntime
import WalletStorage

/// How the client identifies itself and whom it trusts.
public struct IssuanceConfig: Sendable {
    /// The OAuth `client_id` (default `wallet-dev`).
    public var clientId: String
    /// Where the authorization server sends the browser back (default `eudi-wallet://authorize`).
    public var redirectUri: String
    /// Roots the issuers' certificates must chain to (SD-JWT VC `x5c`, mdoc `x5chain`,
    /// `signed_metadata`). Empty: signatures are still checked, with the issuer's JWT VC
    /// Issuer Metadata key or the certificate's key, but no chain is required.
    public var issuerTrustAnchors: [X509Certificate]
    /// Makes key attestations when a configuration requires them.
    public var keyAttestationProvider: (any KeyAttestationProvider)?
    /// Whether `http` URLs are allowed, and then only to loopback hosts (local issuers, tests).
    public var allowHTTP: Bool
    /// How long each HTTP exchange may take.
    public var requestTimeout: Duration
    /// How new holder keys are protected in the secure area (their algorithm follows the
    /// issuer's proof algorithms).
    public var holderKeyProtection: KeyProtection
    /// What unlocks protected holder keys when the session signs its proofs (a hardware
    /// area may prompt instead; a dismissed prompt ends the session with
    /// `.unexpected(.keyOperation(.userCancelled))`).
    public var holderKeyUnlock: (any KeyUnlockData)?

    /// A configuration; the defaults are the spec's.
    public init(clientId: String = "wallet-dev", redirectUri: String = "eudi-wallet://authorize",
                issuerTrustAnchors: [X509Certificate] = [], keyAttestationProvider: (any KeyAttestationProvider)? = nil,
                allowHTTP: Bool = false, requestTimeout: Duration = .seconds(30), holderKeyProtection: KeyProtection = .none,
                holderKeyUnlock: (any KeyUnlockData)? = nil) {
        self.clientId = clientId
        self.redirectUri = redirectUri
        self.issuerTrustAnchors = issuerTrustAnchors
        self.keyAttestationProvider = keyAttestationProvider
        self.allowHTTP = allowHTTP
        self.requestTimeout = requestTimeout
        self.holderKeyProtection = holderKeyProtection
        self.holderKeyUnlock = holderKeyUnlock
    }
}

/// Where issued credentials and their keys go: a secure area and the store that uses it.
public struct IssuanceStorage: Sendable {
    /// Where holder and DPoP keys are created.
    public let secureArea: any SecureArea
    /// Where credentials are saved (it must use `secureArea` for their keys).
    public let store: CredentialStore

    /// Storage over `secureArea` and `store`.
    public init(secureArea: any SecureArea, store: CredentialStore) {
        self.secureArea = secureArea
        self.store = store
    }

    /// A software secure area and a store, both in memory: gone when the process ends.
    public static func inMemory() throws(StorageError) -> IssuanceStorage {
        let area = try SoftwareSecureArea(location: .inMemory, wrapping: try EphemeralWrappingProvider())
        let store = try CredentialStore(location: .inMemory, secureArea: area, wrapping: try EphemeralWrappingProvider())
        return IssuanceStorage(secureArea: area, store: store)
    }
}

/// What to issue: a configuration of a resolved offer, or of an issuer the wallet names.
public struct IssuanceRequest: Sendable {
    enum Source: Sendable {
        case offer(CredentialOffer, txCode: String?)
        case issuer(String)
    }

    let source: Source
    /// The credential configuration to issue.
    public let configurationId: String
    /// How many instances to ask for and how they are used.
    public let policy: CredentialPolicy

    /// Issues `configurationId` of `offer`; `txCode` is the transaction code if already
    /// known (otherwise the session pauses at `.txCodeRequired` when the offer needs one).
    public static func fromOffer(_ offer: CredentialOffer, configurationId: String, txCode: String? = nil,
                                 policy: CredentialPolicy = CredentialPolicy()) -> IssuanceRequest {
        IssuanceRequest(source: .offer(offer, txCode: txCode), configurationId: configurationId, policy: policy)
    }

    /// Issues `configurationId` from `credentialIssuer` (wallet-initiated, authorization
    /// code flow: the session pauses at `.authorizationRequired`).
    public static func fromIssuer(_ credentialIssuer: String, configurationId: String,
                                  policy: CredentialPolicy = CredentialPolicy()) -> IssuanceRequest {
        IssuanceRequest(source: .issuer(credentialIssuer), configurationId: configurationId, policy: policy)
    }
}

/// The OpenID4VCI 1.0 client: resolves offers and starts issuance sessions that store
/// verified credentials, with their holder keys, in the wallet.
///
/// ```swift
/// let client = Openid4VciClient(http: http, rng: rng, clock: clock, credentialEncryption: .preferred)
/// let offer = try await client.resolveOffer(offerUri)
/// let session = client.start(.fromOffer(offer, configurationId: offer.credentialConfigurationIds[0]))
/// ```
/// Without `storage`, credentials go to an in-memory store created on first use.
public final class Openid4VciClient: Sendable {
    private let environment: IssuanceEnvironment

    /// A client over the given seams.
    /// - Parameters:
    ///   - http: the network (an app may supply pinning or a proxy; tests an in-process server).
    ///   - rng: the source of `state`, PKCE verifiers, DPoP `jti`s and credential ids.
    ///   - clock: "now" for proofs and every validity check; the sleeping seam.
    ///   - credentialEncryption: when to encrypt credential responses (and so requests).
    ///   - config: client id, redirect URI, trust anchors, key attestations, http.
    ///   - storage: the secure area and store; in memory when nil.
    ///   - logger: receives request lines and warnings, never tokens or credentials.
    public init(http: any HTTPClient, rng: any RandomSource = SystemRandom(), clock: any WalletClock = SystemClock(),
                credentialEncryption: CredentialEncryption = .whenRequired, config: IssuanceConfig = IssuanceConfig(),
                storage: IssuanceStorage? = nil, logger: any Logger = SilentLogger()) {
        let lazyStorage = LazyStorage(storage)
        environment = IssuanceEnvironment(http: http, random: rng, clock: clock, logger: logger, config: config,
                                          encryption: credentialEncryption,
                                          storage: { () throws(StorageError) in try lazyStorage.get() })
    }

    /// The storage the client saves to (created now if it is the default in-memory one).
    public func storage() throws(StorageError) -> IssuanceStorage { try environment.storage() }

    // MARK: Offers

    /// Resolves an offer given as a deep link (`openid-credential-offer://…`, an `https`
    /// link), a QR code's text, or raw JSON: fetches it when passed by reference, then
    /// the issuer's metadata, and checks that every offered configuration exists.
    public func resolveOffer(_ offer: String) async throws(IssuanceError) -> CredentialOffer {
        let policy = environment.urlPolicy
        let object: CredentialOfferObject
        switch try OfferInput.parse(offer, policy: policy) {
        case .value(let value):
            object = value
        case .reference(let url):
            let response = try await get(url)
            guard response.status == 200 else { throw .invalidOffer(.fetchFailed(status: response.status)) }
            object = try OfferInput.object(fromJSON: response.body)
        }
        guard policy.url(object.credentialIssuer) != nil,
              let url = URLPolicy.wellKnown(CredentialIssuerMetadata.wellKnownSuffix, insertedInto: object.credentialIssuer) else {
            throw .invalidOffer(.insecureURL(object.credentialIssuer))
        }
        let response = try await get(url)
        guard response.status == 200 else { throw .invalidOffer(.issuerMetadata(.unavailable(status: response.status))) }
        let metadata: CredentialIssuerMetadata
        do {
            metadata = try CredentialIssuerMetadata(
                json: try JSONValue.parseObject(response.body), expectedIssuer: object.credentialIssuer, policy: policy,
                trustAnchors: environment.config.issuerTrustAnchors, now: environment.clock.now)
        } catch let error as JSONError {
            throw .invalidOffer(.issuerMetadata(.notJSON(error)))
        } catch let problem as MetadataProblem {
            throw .invalidOffer(.issuerMetadata(problem))
        } catch {
            throw .invalidOffer(.issuerMetadata(.invalidMember("credential_issuer")))
        }
        for id in object.credentialConfigurationIds where metadata.configuration(id) == nil {
            throw .invalidOffer(.unknownConfiguration(id))
        }
        return CredentialOffer(offer: object, issuerMetadata: metadata)
    }

    private func get(_ url: URL) async throws(IssuanceError) -> HTTPResponse {
        do {
            return try await environment.http.send(
                HTTPRequest(method: .get, url: url, headers: ["Accept": "application/json"],
                            timeout: environment.config.requestTimeout))
        } catch {
            throw .unexpected(.transport(error))
        }
    }

    // MARK: Sessions

    /// Starts issuing what `request` names; observe the session's `states`.
    public func start(_ request: IssuanceRequest) -> IssuanceSession {
        let mode: IssuanceMode = switch request.source {
        case .offer(let offer, let txCode): .offer(offer, configurationId: request.configurationId, txCode: txCode)
        case .issuer(let issuer): .issuer(issuer, configurationId: request.configurationId)
        }
        return IssuanceSession(environment: environment, mode: { mode }, policy: request.policy)
    }

    /// Asks the issuer's deferred endpoint for a credential stored as deferred. Ends
    /// `.completed` when it is ready, `.deferred` again (with a new `retryAfter`) when not.
    public func resumeDeferred(_ credentialId: CredentialId) -> IssuanceSession {
        let environment = self.environment
        return IssuanceSession(environment: environment, mode: { () throws(IssuanceError) in
            let (stored, context) = try await Self.load(credentialId, environment: environment)
            return .deferred(stored, context)
        }, policy: CredentialPolicy())
    }

    /// Renews a credential with its stored refresh token: for `.oneTime` credentials,
    /// as many new instances as presentations spent are added to the unused ones (all
    /// are renewed when none was spent); `.rotate` credentials are renewed whole.
    public func reissue(_ credentialId: CredentialId) -> IssuanceSession {
        let environment = self.environment
        return IssuanceSession(environment: environment, mode: { () throws(IssuanceError) in
            let (stored, context) = try await Self.load(credentialId, environment: environment)
            return .reissue(stored, context)
        }, policy: CredentialPolicy())
    }

    private static func load(_ id: CredentialId, environment: IssuanceEnvironment) async throws(IssuanceError)
        -> (StoredCredential, IssuanceContext) {
        let storage: IssuanceStorage
        do { storage = try environment.storage() } catch { throw .storage(error) }
        let stored: StoredCredential?
        do { stored = try await storage.store.credential(id: id) } catch { throw .storage(error) }
        guard let stored else { throw .unexpected(.credentialNotFound(id)) }
        guard let bytes = stored.issuanceContext, let context = IssuanceContext(encoded: bytes) else {
            throw .unexpected(.noIssuanceContext(id))
        }
        return (stored, context)
    }

    // MARK: Deletion

    /// Deletes a credential and its keys, telling the issuer first (`credential_deleted`,
    /// OpenID4VCI 1.0 §11) when it gave a notification id. The notification is best
    /// effort: a failure to send it does not keep the credential.
    public func deleteCredential(_ credentialId: CredentialId) async throws(IssuanceError) {
        let storage: IssuanceStorage
        do { storage = try environment.storage() } catch { throw .storage(error) }
        let stored: StoredCredential?
        do { stored = try await storage.store.credential(id: credentialId) } catch { throw .storage(error) }
        guard let stored else { throw .unexpected(.credentialNotFound(credentialId)) }
        let context = stored.issuanceContext.flatMap(IssuanceContext.init(encoded:))
        var current = stored
        if let context, context.belongs(to: stored), let notificationId = context.notificationId, let token = context.accessToken {
            await notifyDeleted(stored, notificationId: notificationId, accessToken: token, context: context, storage: storage)
            // A renewal may have committed during the round trip, with keys (a new DPoP
            // key, a pending renewal's) the record read before did not name.
            // The issuer was told: the record goes whatever this read does.
            current = ((try? await storage.store.credential(id: credentialId)) ?? nil) ?? stored
        }
        do { try await storage.deleteRecord(current) } catch { throw .storage(error) }
    }

    private func notifyDeleted(_ stored: StoredCredential, notificationId: String, accessToken: String,
                               context: IssuanceContext, storage: IssuanceStorage) async {
        let policy = environment.urlPolicy
        guard let metadataURL = URLPolicy.wellKnown(CredentialIssuerMetadata.wellKnownSuffix, insertedInto: stored.issuer.identifier),
              policy.allows(metadataURL),
              let response = try? await get(metadataURL), response.status == 200,
              let object = try? JSONValue.parseObject(response.body),
              let endpointText = object["notification_endpoint"]?.stringValue,
              let endpoint = policy.url(endpointText) else { return }
        let body = JSONValue.object(["notification_id": .string(notificationId), "event": "credential_deleted"]).serializedBytes
        var nonce: String?
        // One retry when the server answers with a DPoP nonce to use (RFC 9449 §9).
        for _ in 0..<2 {
            var request = HTTPRequest(method: .post, url: endpoint, headers: ["Content-Type": "application/json"], body: body,
                                      timeout: environment.config.requestTimeout)
            if context.isDPoPBound, let alias = context.dpopKeyAlias {
                guard let signer = try? await storage.secureArea.signer(for: alias, unlock: nil),
                      let jti = try? environment.randomToken(16) else { return }
                let claims = DPoPProof.claims(method: "POST", url: endpoint, issuedAt: environment.clock.now, jwtID: jti,
                                              nonce: nonce, accessToken: accessToken)
                guard let proof = try? await DPoPProof.sign(claims: claims, signer: signer) else { return }
                request.headers["Authorization"] = "DPoP \(accessToken)"
                request.headers["DPoP"] = proof
            } else {
                request.headers["Authorization"] = "Bearer \(accessToken)"
            }
            guard let response = try? await environment.http.send(request) else { return }
            guard response.status == 401, nonce == nil, let fresh = response.dpopNonce, context.isDPoPBound else { return }
            nonce = fresh
        }
    }
}

extension IssuanceStorage {
    /// Deletes a credential's record (the store deletes its instances' keys) and the keys
    /// its issuance context names: the holder keys of a deferred transaction's proofs, and
    /// the DPoP key unless another credential of the same session still uses it. The
    /// context's keys are deleted best effort, once the record is gone.
    func deleteRecord(_ stored: StoredCredential) async throws(StorageError) {
        try await store.delete(id: stored.id)
        guard let context = stored.issuanceContext.flatMap(IssuanceContext.init(encoded:)) else { return }
        var doomed = context.pendingKeyAliases
        if let alias = context.dpopKeyAlias, let others = try? await store.list() {
            // Credentials of one session share its DPoP key: it goes with the last of them.
            // A store that cannot be listed keeps it (the recovery sweep deletes it once no
            // credential names it), rather than taking it from credentials that still bind it.
            let shared = others.contains { other in
                other.issuanceContext.flatMap(IssuanceContext.init(encoded:))?.dpopKeyAlias == alias
            }
            if !shared { doomed.append(alias) }
        }
        if !doomed.isEmpty { try? await secureArea.deleteKeys(aliases: doomed) }
    }
}

/// The client's storage, created on first use when the app gave none.
private final class LazyStorage: Sendable {
    private let box: LockedBox<IssuanceStorage?>

    init(_ storage: IssuanceStorage?) { box = LockedBox(storage) }

    func get() throws(StorageError) -> IssuanceStorage {
        if let existing = box.withLock({ $0 }) { return existing }
        let created = try IssuanceStorage.inMemory()
        return box.withLock { value in
            if let value { return value }
            value = created
            return created
        }
    }
}
