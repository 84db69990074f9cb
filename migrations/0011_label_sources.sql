-- Label imports (issue 11, items 6 and 8): who imported which labels from which file,
-- and a staging area so a large import neither shows half of itself nor holds the
-- write lock for long.
--
-- label_imports records each import: the campaign, the importing account (user_id;
-- NULL for the command line without -as and the program's own demo loader), the name
-- shown for the importer, the file, and the state:
--   staging    rows are going into label_import_rows in short transactions; nothing is
--              visible; a failure, a cancel or a killed process discards them;
--   publishing every row is staged and checked: the rows move into label_events in
--              short transactions and the import is finished even after a restart;
--   done       every row is a label event.
-- label_events.import_id names the import an event came from (NULL: given on a page).
CREATE TABLE label_imports (
    id           INTEGER PRIMARY KEY,
    campaign_id  INTEGER NOT NULL REFERENCES campaigns (id) ON DELETE CASCADE,
    user_id      INTEGER REFERENCES users (id),
    imported_by  TEXT NOT NULL,
    file         TEXT NOT NULL,
    state        TEXT NOT NULL CHECK (state IN ('staging', 'publishing', 'done')),
    rows         INTEGER NOT NULL DEFAULT 0,
    published    INTEGER NOT NULL DEFAULT 0, -- staged rows (by seq) already gone through
    added        INTEGER NOT NULL DEFAULT 0, -- of those, appended to label_events (the rest said what stood already)
    created_at   TEXT NOT NULL,
    heartbeat_at TEXT NOT NULL,
    finished_at  TEXT NOT NULL DEFAULT ''
) STRICT;
CREATE INDEX label_imports_campaign ON label_imports (campaign_id);
CREATE INDEX label_imports_user ON label_imports (user_id);
CREATE INDEX label_imports_unfinished ON label_imports (state, heartbeat_at) WHERE state != 'done';

-- A staged row, checked and resolved to document ids (doc_a < doc_b) and the annotator
-- name it will carry; seq is its order in the file.
CREATE TABLE label_import_rows (
    import_id INTEGER NOT NULL REFERENCES label_imports (id) ON DELETE CASCADE,
    seq       INTEGER NOT NULL,
    doc_a     INTEGER NOT NULL,
    doc_b     INTEGER NOT NULL,
    annotator TEXT NOT NULL,
    kind      TEXT NOT NULL CHECK (kind IN ('label', 'adjudication')),
    category  TEXT NOT NULL,
    duplicate INTEGER NOT NULL CHECK (duplicate IN (0, 1)),
    note      TEXT NOT NULL DEFAULT '',
    PRIMARY KEY (import_id, seq)
) STRICT, WITHOUT ROWID;

ALTER TABLE label_events ADD COLUMN import_id INTEGER REFERENCES label_imports (id);
CREATE INDEX label_events_import ON label_events (import_id);
