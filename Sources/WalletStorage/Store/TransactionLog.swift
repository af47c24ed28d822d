import Foundation
import WalletEncoding
import WalletCrypto

/// What kind of exchange a transaction-log entry records.
public enum TransactionKind: String, Sendable, Hashable, CaseIterable {
    /// Credentials received from an issuer (OpenID4VCI), including deferred and reissued ones.
    case issuance
    /// A remote presentation (OpenID4VP over a URL or QR code).
    case remotePresentation = "remote_presentation"
    /// A presentation through the platform's Digital Credentials API.
    case dcApiPresentation = "dc_api_presentation"
    /// An ISO 18013-5 proximity presentation to a reader.
    case proximityPresentation = "proximity_presentation"
}

/// How an exchange ended.
public enum TransactionOutcome: Sendable, Hashable {
    /// It completed: credentials were received or presented.
    case completed
    /// The issuer accepted but has not issued yet.
    case deferred
    /// The user (or the app for them) declined.
    case declined
    /// It failed; `reason` is the error's case name (e.g. `verifierNotTrusted`,
    /// `invalid_grant`), never a message with data in it.
    case failed(reason: String)
    /// The session was cancelled.
    case cancelled
}

/// Who the wallet dealt with.
public struct TransactionCounterparty: Sendable, Hashable {
    /// The verifier's `client_id`, the Credential Issuer Identifier, or the reader
    /// certificate's subject.
    public let identifier: String
    /// A display name (the certificate's common name, the issuer's display name).
    public let name: String?
    /// Whether the counterparty was authenticated against the configured trust anchors
    /// (nil when the exchange has no such check).
    public let trusted: Bool?

    /// A counterparty.
    public init(identifier: String, name: String? = nil, trusted: Bool? = nil) {
        self.identifier = identifier
        self.name = name
        self.trusted = trusted
    }
}

/// One credential an exchange touched, and the claims it disclosed.
public struct TransactionCredential: Sendable, Hashable {
    /// The stored credential's id.
    public let credentialId: CredentialId
    /// Its `vct` or `docType`.
    public let type: String
    /// The claim paths disclosed, each a JSON array in the DCQL claims path pointer form
    /// (OpenID4VP 1.0 §7: strings, integers, null); for mdoc `[namespace, element]`.
    public let claimPaths: [[JSONValue]]

    /// A credential of an entry.
    public init(credentialId: CredentialId, type: String, claimPaths: [[JSONValue]] = []) {
        self.credentialId = credentialId
        self.type = type
        self.claimPaths = claimPaths
    }
}

/// One exchange in the transaction log. Claim values are absent unless the app opted
/// in; no secrets (keys, tokens, nonces) are ever logged.
public struct TransactionLogEntry: Sendable, Hashable, CustomStringConvertible {
    /// The entry's id (a UUID, set when recorded).
    public let id: String
    /// When the exchange ended.
    public let time: Date
    /// The kind of exchange.
    public let kind: TransactionKind
    /// Who the wallet dealt with.
    public let counterparty: TransactionCounterparty
    /// The credentials received or presented.
    public let credentials: [TransactionCredential]
    /// How it ended.
    public let outcome: TransactionOutcome
    /// The disclosed claim values, only when the app opted in (stored encrypted).
    public let claimValues: JSONObject?

    /// An entry to record; the store assigns `id` when it is empty.
    public init(id: String = "", time: Date, kind: TransactionKind, counterparty: TransactionCounterparty,
                credentials: [TransactionCredential], outcome: TransactionOutcome, claimValues: JSONObject? = nil) {
        self.id = id
        self.time = time
        self.kind = kind
        self.counterparty = counterparty
        self.credentials = credentials
        self.outcome = outcome
        self.claimValues = claimValues
    }

    /// Kind, counterparty, credential count and outcome; never claim values.
    public var description: String {
        "TransactionLogEntry(\(kind.rawValue), \(counterparty.identifier), \(credentials.count) credentials, \(outcome))"
    }
}

/// Which entries `CredentialStore.transactions(_:)` returns; nil fields match anything.
public struct TransactionFilter: Sendable, Hashable {
    /// Only this kind.
    public var kind: TransactionKind?
    /// Only entries that touched this credential.
    public var credentialId: CredentialId?
    /// Only this counterparty identifier.
    public var counterparty: String?
    /// Only entries at or after this time.
    public var since: Date?
    /// Only entries before this time.
    public var until: Date?

    /// A filter; the default matches every entry.
    public init(kind: TransactionKind? = nil, credentialId: CredentialId? = nil, counterparty: String? = nil,
                since: Date? = nil, until: Date? = nil) {
        self.kind = kind
        self.credentialId = credentialId
        self.counterparty = counterparty
        self.since = since
        self.until = until
    }
}

extension CredentialStore {
    static func claimValuesAAD(_ id: String) -> [UInt8] {
        Array("WalletStorage.CredentialStore.claim_values".utf8) + [0] + Array(id.utf8)
    }

    /// Records `entry` (one transaction); returns it with its id. Claim values, when
    /// present, are encrypted like refresh tokens.
    @discardableResult
    public func record(_ entry: TransactionLogEntry) throws(StorageError) -> TransactionLogEntry {
        let id = entry.id.isEmpty ? SystemRandom().uuid().uuidString.lowercased() : entry.id
        let (outcome, reason): (String, String?) = switch entry.outcome {
        case .completed: ("completed", nil)
        case .deferred: ("deferred", nil)
        case .declined: ("declined", nil)
        case .cancelled: ("cancelled", nil)
        case .failed(let reason): ("failed", reason)
        }
        let credentials = JSONValue.array(entry.credentials.map { credential in
            ["id": .string(credential.credentialId), "type": .string(credential.type),
             "paths": .array(credential.claimPaths.map { JSONValue.array($0) })]
        }).serialized
        let sealedValues = try entry.claimValues.map { (values) throws(StorageError) -> [UInt8] in
            try wrapping.wrap(Array(JSONValue.object(values).serializedBytes), aad: Self.claimValuesAAD(id))
        }
        let trusted: SQLValue = entry.counterparty.trusted.map { .integer($0 ? 1 : 0) } ?? .null
        try connection.transaction { () throws(StorageError) in
            try connection.run(
                """
                INSERT INTO transaction_log (id, time, kind, counterparty, counterparty_name, trusted, credentials,
                    outcome, failure_reason, claim_values) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
                """,
                [.text(id), .real(entry.time.timeIntervalSince1970), .text(entry.kind.rawValue),
                 .text(entry.counterparty.identifier), entry.counterparty.name.map { .text($0) } ?? .null, trusted,
                 .text(credentials), .text(outcome), reason.map { .text($0) } ?? .null,
                 sealedValues.map { .blob($0) } ?? .null])
            for credential in Set(entry.credentials.map(\.credentialId)) {
                try connection.run("INSERT INTO transaction_log_credentials (transaction_id, credential_id) VALUES (?, ?)",
                                   [.text(id), .text(credential)])
            }
        }
        return TransactionLogEntry(id: id, time: entry.time, kind: entry.kind, counterparty: entry.counterparty,
                                   credentials: entry.credentials, outcome: entry.outcome, claimValues: entry.claimValues)
    }

    /// The entries matching `filter`, newest first.
    public func transactions(_ filter: TransactionFilter = TransactionFilter()) throws(StorageError) -> [TransactionLogEntry] {
        var conditions: [String] = []
        var arguments: [SQLValue] = []
        if let kind = filter.kind { conditions.append("kind = ?"); arguments.append(.text(kind.rawValue)) }
        if let counterparty = filter.counterparty { conditions.append("counterparty = ?"); arguments.append(.text(counterparty)) }
        if let since = filter.since { conditions.append("time >= ?"); arguments.append(.real(since.timeIntervalSince1970)) }
        if let until = filter.until { conditions.append("time < ?"); arguments.append(.real(until.timeIntervalSince1970)) }
        if let credentialId = filter.credentialId {
            conditions.append("id IN (SELECT transaction_id FROM transaction_log_credentials WHERE credential_id = ?)")
            arguments.append(.text(credentialId))
        }
        let whereClause = conditions.isEmpty ? "" : "WHERE " + conditions.joined(separator: " AND ")
        let rows = try connection.query(
            """
            SELECT id, time, kind, counterparty, counterparty_name, trusted, credentials, outcome, failure_reason, claim_values
            FROM transaction_log \(whereClause) ORDER BY time DESC, rowid DESC
            """, arguments)
        var entries: [TransactionLogEntry] = []
        entries.reserveCapacity(rows.count)
        for row in rows { entries.append(try decodeTransaction(row)) }
        return entries
    }

    /// Deletes the entry `id` (throws `transactionNotFound` when absent).
    public func deleteTransaction(id: String) throws(StorageError) {
        let changed = try connection.transaction { () throws(StorageError) -> Int in
            try connection.run("DELETE FROM transaction_log WHERE id = ?", [.text(id)])
        }
        guard changed == 1 else { throw .transactionNotFound(id: id) }
    }

    /// Deletes every entry matching `filter`; returns how many went.
    @discardableResult
    public func deleteTransactions(_ filter: TransactionFilter = TransactionFilter()) throws(StorageError) -> Int {
        let ids = try transactions(filter).map(\.id)
        try connection.transaction { () throws(StorageError) in
            for id in ids { _ = try connection.run("DELETE FROM transaction_log WHERE id = ?", [.text(id)]) }
        }
        return ids.count
    }

    private func decodeTransaction(_ row: [SQLValue]) throws(StorageError) -> TransactionLogEntry {
        guard row.count == 10, let id = row[0].string, let time = row[1].double,
              let kind = row[2].string.flatMap(TransactionKind.init(rawValue:)), let counterparty = row[3].string,
              let credentialsText = row[6].string, let outcomeName = row[7].string else {
            throw .corruptRecord(table: "transaction_log", key: nil)
        }
        let outcome: TransactionOutcome
        switch outcomeName {
        case "completed": outcome = .completed
        case "deferred": outcome = .deferred
        case "declined": outcome = .declined
        case "cancelled": outcome = .cancelled
        case "failed": outcome = .failed(reason: row[8].string ?? "")
        default: throw .corruptRecord(table: "transaction_log", key: id)
        }
        var credentials: [TransactionCredential] = []
        guard let entries = try? JSONValue.parse(credentialsText).arrayValue else {
            throw .corruptRecord(table: "transaction_log", key: id)
        }
        for entry in entries {
            guard let object = entry.objectValue, let credentialId = try? object.string("id"),
                  let type = try? object.string("type"), let paths = try? object.array("paths") else {
                throw .corruptRecord(table: "transaction_log", key: id)
            }
            credentials.append(TransactionCredential(credentialId: credentialId, type: type,
                                                     claimPaths: paths.compactMap(\.arrayValue)))
        }
        var claimValues: JSONObject?
        if let sealed = row[9].bytes {
            var plain = try wrapping.unwrap(sealed, aad: Self.claimValuesAAD(id))
            defer { wipe(&plain) }
            guard let values = try? JSONValue.parseObject(plain) else { throw .corruptRecord(table: "transaction_log", key: id) }
            claimValues = values
        }
        let trusted = row[5].int64.map { $0 != 0 }
        return TransactionLogEntry(
            id: id, time: Date(timeIntervalSince1970: time), kind: kind,
            counterparty: TransactionCounterparty(identifier: counterparty, name: row[4].string, trusted: trusted),
            credentials: credentials, outcome: outcome, claimValues: claimValues)
    }
}
