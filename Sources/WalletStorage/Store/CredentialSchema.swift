/// The credential database schema, one migration per version (`PRAGMA user_version`).
/// A database made by any earlier version is upgraded in place when opened; migrations
/// are never edited once released, only appended.
enum CredentialSchema {
    static let migrations: [(version: Int, sql: String)] = [
        // Version 1: credentials and their instances.
        (1, """
        CREATE TABLE credentials (
            id TEXT PRIMARY KEY NOT NULL,
            format TEXT NOT NULL,
            type TEXT NOT NULL,
            issuer_id TEXT NOT NULL,
            display TEXT NOT NULL,
            batch_size INTEGER NOT NULL,
            key_use TEXT NOT NULL,
            state TEXT NOT NULL,
            transaction_id TEXT,
            retry_after REAL,
            refresh_token BLOB,
            created_at REAL NOT NULL,
            updated_at REAL NOT NULL
        );
        CREATE TABLE credential_instances (
            credential_id TEXT NOT NULL REFERENCES credentials(id) ON DELETE CASCADE,
            idx INTEGER NOT NULL,
            key_alias TEXT NOT NULL,
            raw BLOB NOT NULL,
            use_count INTEGER NOT NULL DEFAULT 0,
            PRIMARY KEY (credential_id, idx)
        );
        """),
        // Version 2: the issuer's display metadata; per-instance last use and whether its
        // key was deleted; pending key deletions (crash-safe deletes across the two
        // databases); indexes for the list filters and for consumeInstance.
        (2, """
        ALTER TABLE credentials ADD COLUMN issuer_display TEXT NOT NULL DEFAULT '[]';
        ALTER TABLE credential_instances ADD COLUMN last_used_at REAL;
        ALTER TABLE credential_instances ADD COLUMN key_deleted INTEGER NOT NULL DEFAULT 0;
        CREATE TABLE pending_key_deletions (alias TEXT PRIMARY KEY NOT NULL);
        CREATE INDEX credentials_by_type ON credentials (format, type);
        CREATE INDEX credentials_by_issuer ON credentials (issuer_id);
        CREATE INDEX credentials_by_creation ON credentials (created_at, id);
        CREATE INDEX instances_by_alias ON credential_instances (key_alias);
        CREATE INDEX instances_by_use ON credential_instances (credential_id, use_count, idx);
        """),
        // Version 3: the transaction log. Entries outlive the credentials they name (a
        // deleted credential's history stays until the app deletes it), so there is no
        // foreign key to credentials; the link table serves the per-credential query.
        (3, """
        CREATE TABLE transaction_log (
            id TEXT PRIMARY KEY NOT NULL,
            time REAL NOT NULL,
            kind TEXT NOT NULL,
            counterparty TEXT NOT NULL,
            counterparty_name TEXT,
            trusted INTEGER,
            credentials TEXT NOT NULL,
            outcome TEXT NOT NULL,
            failure_reason TEXT,
            claim_values BLOB
        );
        CREATE TABLE transaction_log_credentials (
            transaction_id TEXT NOT NULL REFERENCES transaction_log(id) ON DELETE CASCADE,
            credential_id TEXT NOT NULL,
            PRIMARY KEY (transaction_id, credential_id)
        );
        CREATE INDEX transaction_log_by_time ON transaction_log (time);
        CREATE INDEX transaction_log_credentials_by_credential ON transaction_log_credentials (credential_id);
        """),
        // Version 4: the issuing protocol's context (wrapped like the refresh token).
        (4, """
        ALTER TABLE credentials ADD COLUMN issuance_context BLOB;
        """),
        // Version 5: fewer indexes, because every index is one more page a save writes and
        // syncs. The filters and the creation order read the credentials table, whose rows
        // are small (the credentials themselves are in credential_instances), so a scan
        // and a sort of 10,000 rows cost less than what the indexes cost each save; the
        // least-used instance is found among one credential's instances by the primary
        // key. The key-alias index stays: the save's owner check needs it.
        (5, """
        DROP INDEX credentials_by_type;
        DROP INDEX credentials_by_issuer;
        DROP INDEX credentials_by_creation;
        DROP INDEX instances_by_use;
        """),
    ]

    static var latest: Int { migrations.map(\.version).max() ?? 0 }
}
