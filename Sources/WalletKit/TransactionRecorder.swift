import Foundation
import OpenID4VP
import SDJWT
import WalletEncoding
import WalletRuntime
import WalletStorage

/// Writes the transaction log for every flow the facade runs, under the app's options:
/// claim values only when the app opted in; a failure to write is logged and never
/// changes the outcome of the exchange.
final class TransactionRecorder: Sendable {
    let store: CredentialStore
    let options: TransactionLogOptions
    let clock: any WalletClock
    let logger: any Logger
    /// Each recorded entry (and nothing else) is announced here, for observers and tests.
    let recorded = StateStream<TransactionLogEntry?>(initial: nil)

    init(store: CredentialStore, options: TransactionLogOptions, clock: any WalletClock, logger: any Logger) {
        self.store = store
        self.options = options
        self.clock = clock
        self.logger = logger
    }

    /// Records one exchange that ended now.
    func record(kind: TransactionKind, counterparty: TransactionCounterparty, credentials: [TransactionCredential],
                outcome: TransactionOutcome, claimValues: JSONObject?) async {
        guard options.isEnabled else { return }
        let entry = TransactionLogEntry(time: clock.now, kind: kind, counterparty: counterparty, credentials: credentials,
                                        outcome: outcome, claimValues: options.recordsClaimValues ? claimValues : nil)
        do {
            let stored = try await store.record(entry)
            recorded.send(stored)
        } catch {
            logger.log(.warning, "transaction log: the \(kind.rawValue) with \(counterparty.identifier) was not recorded (\(Self.caseName(error)))", module: "WalletKit")
        }
    }

    /// The name of an enum case without its associated values (`invalidRequest` of
    /// `.invalidRequest(...)`): what a log may keep of an error, never data inside it.
    static func caseName(_ value: some Any) -> String {
        let text = String(describing: value)
        let name = text.prefix { $0 != "(" }
        return String(name.hasPrefix(".") ? name.dropFirst() : name)
    }
}

/// The claims of a stored credential as JSON (DCQL's view: disclosures applied for SD-JWT
/// VC, element values by namespace for mdoc), for the paths and values the log keeps.
struct CredentialClaims: Sendable {
    let credential: DcqlCredential

    init?(_ stored: StoredCredential) {
        guard let instance = stored.instances.first else { return nil }
        switch stored.format {
        case .sdJwtVc:
            guard let credential = try? DcqlCredential(sdJwt: instance.raw, id: stored.id) else { return nil }
            self.init(credential)
        case .msoMdoc:
            self.init(mdoc: instance.raw, id: stored.id)
        }
    }

    init?(mdoc raw: [UInt8], id: CredentialId) {
        guard let credential = try? DcqlCredential(mdoc: raw, id: id) else { return nil }
        self.init(credential)
    }

    init(_ credential: DcqlCredential) { self.credential = credential }

    /// The paths of every claim of the subject: top-level claim names for SD-JWT VC,
    /// `[namespace, element]` for mdoc, in a stable order.
    var paths: [ClaimPath] {
        switch credential.claims {
        case .json(let claims):
            return claims.keys.filter { !SDJWT.technicalClaimNames.contains($0) }.sorted().map { ClaimPath([.key($0)]) }
        case .mdoc(let nameSpaces):
            return nameSpaces.keys.sorted().flatMap { nameSpace in
                (nameSpaces[nameSpace] ?? [:]).keys.sorted().map { ClaimPath([.key(nameSpace), .key($0)]) }
            }
        }
    }

    /// The values `path` selects: one value, or an array when it selects several.
    func value(at path: ClaimPath) -> JSONValue? {
        switch credential.claims {
        case .json(let claims):
            guard let values = DcqlMatcher.select(path, in: claims) else { return nil }
            return values.count == 1 ? values[0] : .array(values)
        case .mdoc(let nameSpaces):
            guard path.elements.count == 2, case .key(let nameSpace) = path.elements[0],
                  case .key(let element) = path.elements[1] else { return nil }
            return nameSpaces[nameSpace]?[element]
        }
    }

    /// The log's view of `paths` of this credential, and their values.
    func logged(_ paths: [ClaimPath], type: String) -> (TransactionCredential, JSONObject) {
        var values = JSONObject()
        for path in paths { values[path.description] = value(at: path) }
        return (TransactionCredential(credentialId: credential.id, type: type, claimPaths: paths.map { $0.elements.map(\.jsonValue) }),
                values)
    }

    /// What a presentation of `paths` of the SD-JWT VC `raw` shows its verifier, as the
    /// log keeps it: ``RevealedClaims/leafPaths`` and the revealed values. Nil when `raw`
    /// does not present.
    static func loggedPresentation(ofSDJWT raw: [UInt8], disclosing paths: [ClaimPath], id: CredentialId,
                                   type: String) -> (TransactionCredential, JSONObject)? {
        guard let text = UTF8Validation.string(raw), let credential = try? SDJWT(compact: text),
              let revealed = try? credential.revealedClaims(disclosing: paths) else { return nil }
        let view = CredentialClaims(DcqlCredential(id: id, format: DcqlFormat.sdJwtVc, type: type,
                                                   claims: .json(revealed.claims),
                                                   isHolderBound: credential.payload.members["cnf"] != nil))
        return view.logged(revealed.leafPaths, type: type)
    }
}
