-- Dedup Studio schema, version 1. Times are RFC 3339 UTC text.

CREATE TABLE users (
    id            INTEGER PRIMARY KEY,
    name          TEXT NOT NULL UNIQUE COLLATE NOCASE,
    password_hash TEXT NOT NULL DEFAULT '',
    role          TEXT NOT NULL CHECK (role IN ('annotator', 'reviewer', 'approver', 'admin')),
    disabled_at   TEXT,
    created_at    TEXT NOT NULL
) STRICT;

CREATE TABLE sessions (
    token_hash   BLOB PRIMARY KEY,
    user_id      INTEGER NOT NULL REFERENCES users (id) ON DELETE CASCADE,
    created_at   TEXT NOT NULL,
    expires_at   TEXT NOT NULL,
    last_seen_at TEXT NOT NULL
) STRICT;
CREATE INDEX sessions_user ON sessions (user_id);

-- A dataset is one import: a name and a version, invisible until its state is 'ready'.
CREATE TABLE datasets (
    id           INTEGER PRIMARY KEY,
    name         TEXT NOT NULL,
    version      INTEGER NOT NULL,
    state        TEXT NOT NULL CHECK (state IN ('importing', 'ready')),
    source_file  TEXT NOT NULL,
    content_hash TEXT NOT NULL DEFAULT '',
    doc_count    INTEGER NOT NULL DEFAULT 0,
    rejected     INTEGER NOT NULL DEFAULT 0,
    created_by   INTEGER REFERENCES users (id),
    created_at   TEXT NOT NULL,
    heartbeat_at TEXT NOT NULL, -- an import in progress touches it; stale ones are removed
    UNIQUE (name, version)
) STRICT;

CREATE TABLE documents (
    id           INTEGER PRIMARY KEY,
    dataset_id   INTEGER NOT NULL REFERENCES datasets (id) ON DELETE CASCADE,
    ext_id       TEXT NOT NULL,
    text         TEXT NOT NULL,
    content_hash TEXT NOT NULL,
    bytes        INTEGER NOT NULL,
    source       TEXT NOT NULL DEFAULT '',
    domain       TEXT NOT NULL DEFAULT '',
    lang         TEXT NOT NULL DEFAULT '',
    meta         TEXT NOT NULL DEFAULT '{}' CHECK (json_valid(meta)),
    UNIQUE (dataset_id, ext_id)
) STRICT;
CREATE INDEX documents_content ON documents (dataset_id, content_hash);

-- A representation is an lsh.Spec: its canonical text and its ID.
CREATE TABLE representations (
    id         TEXT PRIMARY KEY,
    spec       TEXT NOT NULL UNIQUE,
    created_at TEXT NOT NULL
) STRICT;

CREATE TABLE signatures (
    representation_id TEXT NOT NULL REFERENCES representations (id) ON DELETE CASCADE,
    document_id       INTEGER NOT NULL REFERENCES documents (id) ON DELETE CASCADE,
    signature         BLOB NOT NULL,
    PRIMARY KEY (representation_id, document_id)
) STRICT, WITHOUT ROWID;

-- A labeling campaign over one dataset, with its own category list (JSON array of
-- {"key","name","duplicate"}) and overlap (labels wanted per pair).
CREATE TABLE campaigns (
    id         INTEGER PRIMARY KEY,
    dataset_id INTEGER NOT NULL REFERENCES datasets (id) ON DELETE CASCADE,
    name       TEXT NOT NULL,
    categories TEXT NOT NULL CHECK (json_valid(categories)),
    overlap    INTEGER NOT NULL DEFAULT 1 CHECK (overlap >= 1),
    threshold  REAL NOT NULL DEFAULT 0.8,
    created_at TEXT NOT NULL,
    UNIQUE (dataset_id, name)
) STRICT;

CREATE TABLE label_pairs (
    id          INTEGER PRIMARY KEY,
    campaign_id INTEGER NOT NULL REFERENCES campaigns (id) ON DELETE CASCADE,
    doc_a       INTEGER NOT NULL REFERENCES documents (id) ON DELETE CASCADE,
    doc_b       INTEGER NOT NULL REFERENCES documents (id) ON DELETE CASCADE,
    origin      TEXT NOT NULL DEFAULT '',
    created_at  TEXT NOT NULL,
    CHECK (doc_a < doc_b),
    UNIQUE (campaign_id, doc_a, doc_b)
) STRICT;

-- Label events are appended, never updated: an edit is a new event naming the one it
-- replaces. The current label of (pair, annotator) is the newest event.
CREATE TABLE label_events (
    id          INTEGER PRIMARY KEY,
    pair_id     INTEGER NOT NULL REFERENCES label_pairs (id) ON DELETE CASCADE,
    annotator   TEXT NOT NULL,
    user_id     INTEGER REFERENCES users (id),
    kind        TEXT NOT NULL DEFAULT 'label' CHECK (kind IN ('label', 'adjudication', 'skip', 'flag')),
    category    TEXT NOT NULL,
    duplicate   INTEGER NOT NULL CHECK (duplicate IN (0, 1)),
    note        TEXT NOT NULL DEFAULT '',
    previous_id INTEGER REFERENCES label_events (id),
    created_at  TEXT NOT NULL
) STRICT;
CREATE INDEX label_events_pair ON label_events (pair_id, annotator, id);

CREATE TABLE sweeps (
    id          INTEGER PRIMARY KEY,
    campaign_id INTEGER NOT NULL REFERENCES campaigns (id) ON DELETE CASCADE,
    name        TEXT NOT NULL,
    grid        TEXT NOT NULL CHECK (json_valid(grid)),
    state       TEXT NOT NULL CHECK (state IN ('queued', 'running', 'done', 'failed', 'cancelled')),
    progress    REAL NOT NULL DEFAULT 0,
    note        TEXT NOT NULL DEFAULT '',
    created_by  INTEGER REFERENCES users (id),
    created_at  TEXT NOT NULL,
    finished_at TEXT
) STRICT;

CREATE TABLE sweep_results (
    id                INTEGER PRIMARY KEY,
    sweep_id          INTEGER NOT NULL REFERENCES sweeps (id) ON DELETE CASCADE,
    representation_id TEXT NOT NULL REFERENCES representations (id),
    bands             INTEGER NOT NULL,
    rows              INTEGER NOT NULL,
    threshold         REAL NOT NULL,
    metrics           TEXT NOT NULL CHECK (json_valid(metrics))
) STRICT;
CREATE INDEX sweep_results_sweep ON sweep_results (sweep_id);

-- A manifest proposes removals; it is reviewed, signed off against its content hash, and
-- only then applied (as tombstones that can be restored).
CREATE TABLE manifests (
    id              INTEGER PRIMARY KEY,
    dataset_id      INTEGER NOT NULL REFERENCES datasets (id),
    sweep_result_id INTEGER REFERENCES sweep_results (id),
    state           TEXT NOT NULL CHECK (state IN ('draft', 'in_review', 'signed', 'applied', 'reverted')),
    params          TEXT NOT NULL CHECK (json_valid(params)),
    content_hash    TEXT NOT NULL DEFAULT '',
    prepared_by     INTEGER REFERENCES users (id),
    created_at      TEXT NOT NULL
) STRICT;

CREATE TABLE clusters (
    id           INTEGER PRIMARY KEY,
    manifest_id  INTEGER NOT NULL REFERENCES manifests (id) ON DELETE CASCADE,
    keeper_id    INTEGER NOT NULL REFERENCES documents (id),
    keeper_rule  TEXT NOT NULL,
    chained      INTEGER NOT NULL DEFAULT 0 CHECK (chained IN (0, 1)),
    weakest_link REAL NOT NULL DEFAULT 1,
    override     TEXT NOT NULL DEFAULT ''
) STRICT;

CREATE TABLE manifest_items (
    id          INTEGER PRIMARY KEY,
    manifest_id INTEGER NOT NULL REFERENCES manifests (id) ON DELETE CASCADE,
    cluster_id  INTEGER REFERENCES clusters (id) ON DELETE CASCADE,
    document_id INTEGER NOT NULL REFERENCES documents (id),
    keeper_id   INTEGER NOT NULL REFERENCES documents (id),
    score       REAL NOT NULL,
    decision    TEXT NOT NULL CHECK (decision IN ('remove', 'keep')),
    reason      TEXT NOT NULL DEFAULT '',
    UNIQUE (manifest_id, document_id)
) STRICT;

CREATE TABLE reviews (
    id            INTEGER PRIMARY KEY,
    manifest_id   INTEGER NOT NULL REFERENCES manifests (id) ON DELETE CASCADE,
    user_id       INTEGER NOT NULL REFERENCES users (id),
    verdict       TEXT NOT NULL CHECK (verdict IN ('approve', 'reject', 'comment')),
    manifest_hash TEXT NOT NULL,
    comment       TEXT NOT NULL DEFAULT '',
    dismissed_at  TEXT,
    created_at    TEXT NOT NULL
) STRICT;

CREATE TABLE tombstones (
    document_id INTEGER PRIMARY KEY REFERENCES documents (id),
    manifest_id INTEGER NOT NULL REFERENCES manifests (id),
    removed_at  TEXT NOT NULL,
    restored_at TEXT
) STRICT;

-- The audit log is append-only: the triggers refuse changes to what is written.
CREATE TABLE audit_log (
    id      INTEGER PRIMARY KEY,
    at      TEXT NOT NULL,
    actor   TEXT NOT NULL DEFAULT '',
    user_id INTEGER REFERENCES users (id),
    action  TEXT NOT NULL,
    subject TEXT NOT NULL DEFAULT '',
    detail  TEXT NOT NULL DEFAULT '{}' CHECK (json_valid(detail))
) STRICT;
CREATE TRIGGER audit_log_no_update BEFORE UPDATE ON audit_log
BEGIN
    SELECT RAISE(ABORT, 'audit_log is append-only');
END;
CREATE TRIGGER audit_log_no_delete BEFORE DELETE ON audit_log
BEGIN
    SELECT RAISE(ABORT, 'audit_log is append-only');
END;
