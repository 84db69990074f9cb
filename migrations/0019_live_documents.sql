-- Nothing lost between manifests (issue 24) and the review's hardening (issue 25).
--
-- The live documents of a dataset are those under no standing tombstone. Every change
-- of that set (an export tombstones, a revocation or a restore brings back) is logged
-- here in order, so what a manifest was computed on, and what changed under it since,
-- is read from the log instead of discovered at the last approval. documents is how
-- many documents left or came back; document_id names the one a restore brought back;
-- snapshot is the dataset's snapshot hash of the live documents after the change ('' for
-- the changes read back below), so a page learns whether the live documents are still
-- those a manifest was computed on without hashing them again.
CREATE TABLE live_changes (
    id          INTEGER PRIMARY KEY,
    dataset_id  INTEGER NOT NULL REFERENCES datasets (id) ON DELETE CASCADE,
    manifest_id INTEGER NOT NULL REFERENCES manifests (id),
    kind        TEXT NOT NULL CHECK (kind IN ('export', 'revoke', 'restore')),
    documents   INTEGER NOT NULL,
    document_id INTEGER REFERENCES documents (id),
    user_id     INTEGER REFERENCES users (id),
    actor       TEXT NOT NULL DEFAULT '',
    at          TEXT NOT NULL,
    snapshot    TEXT NOT NULL DEFAULT ''
) STRICT;
CREATE INDEX live_changes_dataset ON live_changes (dataset_id, id);
CREATE INDEX live_changes_manifest ON live_changes (manifest_id);
CREATE INDEX live_changes_document ON live_changes (document_id);
CREATE INDEX live_changes_user ON live_changes (user_id);

-- The changes made before this log existed, read back from the tombstones as well as
-- they allow: one export per manifest at its first tombstone, one restoration per
-- manifest and moment (a revocation when it is the revoked manifest's last).
INSERT INTO live_changes (dataset_id, manifest_id, kind, documents, at)
SELECT dataset_id, manifest_id, kind, n, at FROM (
    SELECT m.dataset_id, t.manifest_id, 'export' AS kind, count(*) AS n, min(t.removed_at) AS at
    FROM tombstones t JOIN manifests m ON m.id = t.manifest_id GROUP BY t.manifest_id
    UNION ALL
    SELECT m.dataset_id, t.manifest_id,
        CASE WHEN m.state = 'reverted' AND t.restored_at = (SELECT max(x.restored_at) FROM tombstones x WHERE x.manifest_id = t.manifest_id)
            THEN 'revoke' ELSE 'restore' END, count(*), t.restored_at
    FROM tombstones t JOIN manifests m ON m.id = t.manifest_id WHERE t.restored_at IS NOT NULL
    GROUP BY t.manifest_id, t.restored_at
) ORDER BY at, kind;

-- live_mark: the newest live change of its dataset when the run read the documents;
-- label_mark: the newest label event when it read the labels (NULL without labels).
-- A change or a label after them makes the manifest stale. Manifests stored before this
-- get marks from their creation time.
ALTER TABLE manifests ADD COLUMN live_mark INTEGER;
ALTER TABLE manifests ADD COLUMN label_mark INTEGER;
UPDATE manifests SET live_mark = (SELECT coalesce(max(c.id), 0) FROM live_changes c
    WHERE c.dataset_id = manifests.dataset_id AND c.at <= manifests.created_at);
UPDATE manifests SET label_mark = (SELECT coalesce(max(e.id), 0) FROM label_events e WHERE e.created_at <= manifests.created_at)
    WHERE campaign_id IS NOT NULL;

-- A manifest prepared again ("prepare a new run") names the one it came from, and what
-- was carried over (review.CarriedOver as JSON; '{}' for none). approvals_lowered is
-- review.Lowering as JSON when fewer approvals than the default were asked ('' for none).
ALTER TABLE manifests ADD COLUMN carried_from INTEGER REFERENCES manifests (id);
ALTER TABLE manifests ADD COLUMN carried_over TEXT NOT NULL DEFAULT '{}' CHECK (json_valid(carried_over));
ALTER TABLE manifests ADD COLUMN approvals_lowered TEXT NOT NULL DEFAULT '';
CREATE INDEX manifests_carried_from ON manifests (carried_from);

-- Ids of clusters and removals are never handed out twice. A cluster or removal deleted
-- by a change (a new keeper, a cut) may be put back by its undo under its old id; SQLite
-- gives a new row the highest id plus one, which reused a deleted highest id (the new
-- keeper's removal took the id of the removal kept, "UNIQUE constraint failed:
-- manifest_items.id"). The store hands out ids above the floor: the highest id ever
-- deleted.
CREATE TABLE id_floors (
    tbl   TEXT PRIMARY KEY,
    floor INTEGER NOT NULL
) STRICT;
INSERT INTO id_floors (tbl, floor) SELECT 'manifest_items', coalesce(max(id), 0) FROM manifest_items;
INSERT INTO id_floors (tbl, floor) SELECT 'clusters', coalesce(max(id), 0) FROM clusters;
CREATE TRIGGER manifest_items_floor AFTER DELETE ON manifest_items
BEGIN
    UPDATE id_floors SET floor = max(floor, OLD.id) WHERE tbl = 'manifest_items';
END;
CREATE TRIGGER clusters_floor AFTER DELETE ON clusters
BEGIN
    UPDATE id_floors SET floor = max(floor, OLD.id) WHERE tbl = 'clusters';
END;

-- Runs over a dataset are background jobs; their record survives the process, so a run
-- killed while it worked (saving its manifest, say) says so on its page after a restart
-- instead of vanishing. form holds the run's settings as the run form's query, to run it
-- again; phase is where it was last.
CREATE TABLE runs (
    id           INTEGER PRIMARY KEY,
    job_id       TEXT NOT NULL,
    dataset_id   INTEGER NOT NULL REFERENCES datasets (id) ON DELETE CASCADE,
    title        TEXT NOT NULL,
    form         TEXT NOT NULL DEFAULT '',
    carried_from INTEGER REFERENCES manifests (id),
    state        TEXT NOT NULL CHECK (state IN ('running', 'done', 'failed', 'cancelled', 'interrupted')),
    phase        TEXT NOT NULL DEFAULT '',
    error        TEXT NOT NULL DEFAULT '',
    manifest_id  INTEGER REFERENCES manifests (id),
    started_by   INTEGER REFERENCES users (id),
    created_at   TEXT NOT NULL,
    finished_at  TEXT
) STRICT;
CREATE INDEX runs_job ON runs (job_id, id);
CREATE INDEX runs_dataset ON runs (dataset_id);
CREATE INDEX runs_carried_from ON runs (carried_from);
CREATE INDEX runs_manifest ON runs (manifest_id);
CREATE INDEX runs_started_by ON runs (started_by);
CREATE INDEX runs_running ON runs (state) WHERE state = 'running';

-- A sweep scores configurations over the live documents when it starts; left_out lists
-- the documents then under a standing tombstone (ids, JSON), so resuming it or
-- rescoring a result later reads the same documents whatever was exported since.
ALTER TABLE sweeps ADD COLUMN left_out TEXT NOT NULL DEFAULT '[]' CHECK (json_valid(left_out));
