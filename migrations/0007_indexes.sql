-- Every foreign key column gets an index. Without one, deleting a parent row (a
-- document of a failed import, say) scans the child table once per row while holding
-- the write lock: 5.9 ms per document with a 12.5k-pair campaign, minutes for a large
-- import. internal/db's TestEveryForeignKeyIsIndexed fails on any foreign key left
-- without one, in tables added later too.
CREATE INDEX datasets_created_by ON datasets (created_by);
CREATE INDEX signatures_document ON signatures (document_id);
CREATE INDEX label_pairs_doc_a ON label_pairs (doc_a);
CREATE INDEX label_pairs_doc_b ON label_pairs (doc_b);
CREATE INDEX label_events_user ON label_events (user_id);
CREATE INDEX label_events_previous ON label_events (previous_id);
CREATE INDEX sweeps_campaign ON sweeps (campaign_id);
CREATE INDEX sweeps_created_by ON sweeps (created_by);
CREATE INDEX sweep_results_representation ON sweep_results (representation_id);
CREATE INDEX manifests_sweep_result ON manifests (sweep_result_id);
CREATE INDEX manifests_prepared_by ON manifests (prepared_by);
CREATE INDEX clusters_manifest ON clusters (manifest_id);
CREATE INDEX clusters_keeper ON clusters (keeper_id);
CREATE INDEX manifest_items_cluster ON manifest_items (cluster_id);
CREATE INDEX manifest_items_document ON manifest_items (document_id);
CREATE INDEX manifest_items_keeper ON manifest_items (keeper_id);
CREATE INDEX reviews_manifest ON reviews (manifest_id);
CREATE INDEX reviews_user ON reviews (user_id);
CREATE INDEX tombstones_manifest ON tombstones (manifest_id);
CREATE INDEX audit_log_user ON audit_log (user_id);
CREATE INDEX invites_created_by ON invites (created_by);
CREATE INDEX invites_used_by ON invites (used_by);

-- A campaign's pairs change (drawn, imported, rescored, wanted more often) in several
-- places and processes; this revision counts every change, so what is computed from
-- the pairs in memory (the campaign page's tallies) knows when to read them again.
-- Label events need no counter: they are only ever appended, with growing ids.
CREATE TABLE pair_revisions (
    campaign_id INTEGER PRIMARY KEY, -- not a foreign key: a counter outlives nothing
    revision    INTEGER NOT NULL
) STRICT;
INSERT INTO pair_revisions (campaign_id, revision) SELECT id, 1 FROM campaigns;
CREATE TRIGGER label_pairs_revise_insert AFTER INSERT ON label_pairs
BEGIN
    INSERT INTO pair_revisions (campaign_id, revision) VALUES (NEW.campaign_id, 1)
        ON CONFLICT (campaign_id) DO UPDATE SET revision = revision + 1;
END;
-- An UPDATE that changes nothing (wanted = max(wanted, n) on every pair) is not a change.
CREATE TRIGGER label_pairs_revise_update AFTER UPDATE ON label_pairs
WHEN OLD.campaign_id IS NOT NEW.campaign_id OR OLD.doc_a IS NOT NEW.doc_a OR OLD.doc_b IS NOT NEW.doc_b
    OR OLD.origin IS NOT NEW.origin OR OLD.similarity IS NOT NEW.similarity OR OLD.estimate IS NOT NEW.estimate
    OR OLD.wanted IS NOT NEW.wanted
BEGIN
    INSERT INTO pair_revisions (campaign_id, revision) VALUES (NEW.campaign_id, 1)
        ON CONFLICT (campaign_id) DO UPDATE SET revision = revision + 1;
END;
CREATE TRIGGER label_pairs_revise_delete AFTER DELETE ON label_pairs
BEGIN
    INSERT INTO pair_revisions (campaign_id, revision) VALUES (OLD.campaign_id, 1)
        ON CONFLICT (campaign_id) DO UPDATE SET revision = revision + 1;
END;
