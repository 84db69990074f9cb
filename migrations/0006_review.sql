-- Removal manifests in use: what a run over a dataset computed, the review of every
-- proposed removal, approvals bound to the manifest's content hash, sign-off records,
-- tombstones that can be restored, and a hash-chained audit log.
--
-- Manifest states keep the words of 0001: draft, in_review, signed (signed off),
-- applied (exported: its removals are tombstones) and reverted (revoked).

ALTER TABLE manifests ADD COLUMN campaign_id INTEGER REFERENCES campaigns (id) ON DELETE SET NULL; -- the labels it was scored on
ALTER TABLE manifests ADD COLUMN dataset_hash TEXT NOT NULL DEFAULT '';      -- the dataset snapshot it was computed on
ALTER TABLE manifests ADD COLUMN approvals_required INTEGER NOT NULL DEFAULT 1 CHECK (approvals_required >= 1);
ALTER TABLE manifests ADD COLUMN comparison TEXT NOT NULL DEFAULT '[]' CHECK (json_valid(comparison)); -- every policy on the same run
ALTER TABLE manifests ADD COLUMN estimates TEXT NOT NULL DEFAULT '{}' CHECK (json_valid(estimates));   -- the configuration scored against the labels
ALTER TABLE manifests ADD COLUMN updated_at TEXT NOT NULL DEFAULT '';
CREATE INDEX manifests_dataset ON manifests (dataset_id, id);
CREATE INDEX manifests_campaign ON manifests (campaign_id);

-- A cluster's diagnostics as computed (links, the longest chain, the suggested cut) and
-- the member it is least sure of.
ALTER TABLE clusters ADD COLUMN size INTEGER NOT NULL DEFAULT 0;
ALTER TABLE clusters ADD COLUMN chained_members INTEGER NOT NULL DEFAULT 0;
ALTER TABLE clusters ADD COLUMN weakest_id INTEGER REFERENCES documents (id);
ALTER TABLE clusters ADD COLUMN links TEXT NOT NULL DEFAULT '[]' CHECK (json_valid(links));
ALTER TABLE clusters ADD COLUMN chain TEXT NOT NULL DEFAULT '{}' CHECK (json_valid(chain));
ALTER TABLE clusters ADD COLUMN cut TEXT NOT NULL DEFAULT '{}' CHECK (json_valid(cut));
CREATE INDEX review_clusters_manifest ON clusters (manifest_id, id);
CREATE INDEX clusters_weakest ON clusters (weakest_id);

-- A removal's similarities to its keeper and its review: decision 'remove' with reviewed
-- 0 is a proposal, 'remove' with reviewed 1 an approved removal, 'keep' an exclusion.
-- row_hash is the hash of the row as the manifest's content hash reads it.
ALTER TABLE manifest_items ADD COLUMN estimate REAL;
ALTER TABLE manifest_items ADD COLUMN exact REAL;
ALTER TABLE manifest_items ADD COLUMN reviewed INTEGER NOT NULL DEFAULT 0 CHECK (reviewed IN (0, 1));
ALTER TABLE manifest_items ADD COLUMN decided_by INTEGER REFERENCES users (id);
ALTER TABLE manifest_items ADD COLUMN decided_at TEXT;
ALTER TABLE manifest_items ADD COLUMN bulk_bar REAL;
ALTER TABLE manifest_items ADD COLUMN row_hash TEXT NOT NULL DEFAULT '';
ALTER TABLE manifest_items ADD COLUMN bucket INTEGER NOT NULL DEFAULT 0; -- review.Bucket(document_id)
CREATE INDEX review_items_cluster ON manifest_items (cluster_id, document_id);
-- A change rehashes the buckets of the rows it touched (review.ManifestHash): their row
-- hashes come from this index alone; the bucket hashes are kept per manifest.
CREATE INDEX review_items_bucket ON manifest_items (manifest_id, bucket, document_id, row_hash);
CREATE TABLE manifest_buckets (
    manifest_id INTEGER NOT NULL REFERENCES manifests (id) ON DELETE CASCADE,
    bucket      INTEGER NOT NULL,
    hash        TEXT NOT NULL,
    PRIMARY KEY (manifest_id, bucket)
) STRICT, WITHOUT ROWID;
CREATE INDEX manifest_items_decided_by ON manifest_items (decided_by);

-- Approvers' verdicts remember the role they were given in; a comment may be about one
-- cluster.
ALTER TABLE reviews ADD COLUMN role TEXT NOT NULL DEFAULT '';
ALTER TABLE reviews ADD COLUMN cluster_id INTEGER REFERENCES clusters (id) ON DELETE SET NULL;
CREATE INDEX review_reviews_manifest ON reviews (manifest_id, id);
CREATE INDEX reviews_cluster ON reviews (cluster_id);

-- Every change a reviewer makes, with the state before and after it, so the last ones
-- can be undone; the audit log holds the same change for the record.
CREATE TABLE manifest_actions (
    id          INTEGER PRIMARY KEY,
    manifest_id INTEGER NOT NULL REFERENCES manifests (id) ON DELETE CASCADE,
    user_id     INTEGER NOT NULL REFERENCES users (id),
    action      TEXT NOT NULL,
    cluster_id  INTEGER, -- where the change happened (a cluster may be re-derived since)
    summary     TEXT NOT NULL DEFAULT '', -- what a person reads in "your last decisions"
    before      TEXT NOT NULL CHECK (json_valid(before)),
    after       TEXT NOT NULL CHECK (json_valid(after)),
    undone_at   TEXT,
    created_at  TEXT NOT NULL
) STRICT;
CREATE INDEX manifest_actions_manifest ON manifest_actions (manifest_id, user_id, id);
CREATE INDEX manifest_actions_user ON manifest_actions (user_id);

-- A sign-off binds the manifest's content hash and the dataset snapshot hash; the record
-- is what the sign-off page and signoff.json show. A change to the manifest supersedes
-- it; a revocation ends it.
CREATE TABLE signoffs (
    id            INTEGER PRIMARY KEY,
    manifest_id   INTEGER NOT NULL REFERENCES manifests (id) ON DELETE CASCADE,
    manifest_hash TEXT NOT NULL,
    dataset_hash  TEXT NOT NULL,
    record        TEXT NOT NULL CHECK (json_valid(record)),
    created_at    TEXT NOT NULL,
    superseded_at TEXT,
    revoked_by    INTEGER REFERENCES users (id),
    revoked_at    TEXT,
    revoke_reason TEXT NOT NULL DEFAULT ''
) STRICT;
CREATE INDEX signoffs_manifest ON signoffs (manifest_id, id);
CREATE INDEX signoffs_revoked_by ON signoffs (revoked_by);

ALTER TABLE tombstones ADD COLUMN restored_by INTEGER REFERENCES users (id);
CREATE INDEX review_tombstones_manifest ON tombstones (manifest_id, restored_at);
CREATE INDEX tombstones_restored_by ON tombstones (restored_by);

-- The audit log is hash-chained: each row carries the previous row's hash and its own,
-- computed by the writer (internal/db) over the row's content. Rows written before this
-- migration are sealed once, in order, when the database is next opened; the trigger
-- allows exactly that (an unsealed row getting its hashes) and nothing else.
ALTER TABLE audit_log ADD COLUMN prev_hash TEXT NOT NULL DEFAULT '';
ALTER TABLE audit_log ADD COLUMN hash TEXT NOT NULL DEFAULT '';
CREATE INDEX audit_log_unsealed ON audit_log (id) WHERE hash = '';
CREATE INDEX audit_log_subject ON audit_log (subject, id);
DROP TRIGGER audit_log_no_update;
CREATE TRIGGER audit_log_no_update BEFORE UPDATE ON audit_log
WHEN NOT (OLD.hash = '' AND NEW.hash != '' AND NEW.id = OLD.id AND NEW.at = OLD.at AND NEW.actor = OLD.actor
          AND NEW.user_id IS OLD.user_id AND NEW.action = OLD.action AND NEW.subject = OLD.subject
          AND NEW.detail = OLD.detail)
BEGIN
    SELECT RAISE(ABORT, 'audit_log is append-only');
END;
