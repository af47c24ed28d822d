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
        // Version 3: the issuing protocol's context (wrapped like the refresh token).
        (3, """
        ALTER TABLE credentials ADD COLUMN issuance_context BLOB;
        """),
    ]

    static var latest: Int { migrations.map(\.version).max() ?? 0 }
}
