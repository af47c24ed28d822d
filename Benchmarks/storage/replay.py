#!/usr/bin/env python3
"""Replays what CredentialStore.save does to SQLite, with Python's sqlite3, to see where
the save's pages go without the SDK around it (docs/performance.md, 2026-12-04, second
session).

The schema is read from Sources/WalletStorage/Store/CredentialSchema.swift, with every
migration applied in order, so it is always the store's own. The save's statements are
the ones CredentialStore.save runs for a new credential with one instance. They are
written out below, so they must follow that function if it changes.

Prints, for the store's schema, the schema with `credentials` WITHOUT ROWID, and the
bare one-table insert that wallet-bench times as the floor:
- microseconds per save, and the ratio to the bare insert, in rounds of 100 in turn;
- WAL frames per commit, from the WAL's growth over 400 commits after 2,000, with
  automatic checkpoints off.

    python3 Benchmarks/storage/replay.py [saves, default 5000]
"""
import os
import re
import shutil
import sqlite3
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
SCHEMA = os.path.join(ROOT, "Sources/WalletStorage/Store/CredentialSchema.swift")


def migrations():
    """The SQL of every migration, in version order."""
    text = open(SCHEMA, encoding="utf-8").read()
    found = re.findall(r'\((\d+),\s*"""\n(.*?)"""\)', text, re.S)
    if not found:
        sys.exit("replay.py: no migrations found in " + SCHEMA)
    return [sql for _, sql in sorted(found, key=lambda pair: int(pair[0]))]


def open_store(path, without_rowid=False):
    db = sqlite3.connect(path, isolation_level=None)
    db.execute("PRAGMA journal_mode = WAL")
    db.execute("PRAGMA foreign_keys = ON")
    db.execute("PRAGMA synchronous = FULL")
    for sql in migrations():
        if without_rowid:
            # Migration 1's credentials table, keyed by its TEXT primary key alone.
            sql = re.sub(r"(CREATE TABLE credentials \(.*?\n\s*\));", r"\1 WITHOUT ROWID;", sql, count=1, flags=re.S)
        db.executescript(sql)
    return db


RAW = bytes(2048)
TOKEN = bytes(60)  # the sealed refresh token's size
METADATA = bytes(246)  # what wallet-bench's bare insert writes besides the raw bytes


def save(db, number):
    """CredentialStore.save of a new credential with one instance."""
    identifier, alias = f"credential-{number}", f"key-{number}"
    now = time.time()
    db.execute("BEGIN IMMEDIATE")
    db.execute("SELECT created_at FROM credentials WHERE id = ?", (identifier,)).fetchall()
    db.execute("SELECT credential_id FROM credential_instances WHERE key_alias = ? AND credential_id <> ?",
               (alias, identifier)).fetchall()
    db.execute("INSERT INTO credentials (id, format, type, issuer_id, issuer_display, display, batch_size, key_use, state, "
               "transaction_id, retry_after, refresh_token, created_at, updated_at, issuance_context) "
               "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
               (identifier, "dc+sd-jwt", "urn:eudi:pid:1", f"https://issuer{number % 7}.example", '[{"name":"Issuer"}]',
                f'[{{"name":"Credential {number}","locale":"en"}}]', 1, "rotate", "issued", None, None, TOKEN, now, now, None))
    db.execute("INSERT INTO credential_instances (credential_id, idx, key_alias, raw, use_count, last_used_at, key_deleted) "
               "VALUES (?, ?, ?, ?, ?, ?, ?)", (identifier, 0, alias, RAW, 0, None, 0))
    db.execute("COMMIT")


def open_bare(path):
    db = sqlite3.connect(path, isolation_level=None)
    db.execute("PRAGMA journal_mode = WAL")
    db.execute("PRAGMA synchronous = FULL")
    db.execute("CREATE TABLE t (id TEXT PRIMARY KEY NOT NULL, metadata BLOB NOT NULL, raw BLOB NOT NULL)")
    return db


def insert(db, number):
    db.execute("BEGIN IMMEDIATE")
    db.execute("INSERT INTO t (id, metadata, raw) VALUES (?, ?, ?)", (f"credential-{number}", METADATA, RAW))
    db.execute("COMMIT")


def frames_per_commit(db, path, write):
    db.execute("PRAGMA wal_autocheckpoint = 0")
    for number in range(2000):
        write(db, number)
    db.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    before = os.path.getsize(path + "-wal")
    for number in range(2000, 2400):
        write(db, number)
    page = db.execute("PRAGMA page_size").fetchone()[0]
    return (os.path.getsize(path + "-wal") - before) / (page + 24) / 400


def main():
    saves = int(sys.argv[1]) if len(sys.argv) > 1 else 5000
    directory = tempfile.mkdtemp(prefix="wallet-storage-replay-")
    try:
        cases = {
            "store": (open_store(os.path.join(directory, "store.sqlite")), save),
            "store, credentials WITHOUT ROWID": (open_store(os.path.join(directory, "wr.sqlite"), True), save),
            "bare insert": (open_bare(os.path.join(directory, "bare.sqlite")), insert),
        }
        spent = {name: 0.0 for name in cases}
        for start in range(0, saves, 100):
            for name, (db, write) in cases.items():
                began = time.perf_counter()
                for number in range(start, start + 100):
                    write(db, number)
                spent[name] += time.perf_counter() - began
        for name, (db, _) in cases.items():
            db.close()
        bare = spent["bare insert"]
        for name, seconds in spent.items():
            print(f"{name:34s} {seconds / saves * 1e6:8.1f} µs a save   {seconds / bare:5.3f}x the bare insert")
        for name, writer, opener in [("store", save, open_store), ("bare insert", insert, open_bare)]:
            path = os.path.join(directory, "frames-" + name.replace(" ", "-") + ".sqlite")
            db = opener(path)
            print(f"{name:34s} {frames_per_commit(db, path, writer):5.2f} WAL frames a commit")
            db.close()
        path = os.path.join(directory, "frames-wr.sqlite")
        db = open_store(path, True)
        print(f"{'store, credentials WITHOUT ROWID':34s} {frames_per_commit(db, path, save):5.2f} WAL frames a commit")
        db.close()
    finally:
        shutil.rmtree(directory, ignore_errors=True)


if __name__ == "__main__":
    main()
