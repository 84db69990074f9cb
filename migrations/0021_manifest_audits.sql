-- A manifest's own audit (issue 23, item 4) and the team's settings.
--
-- audits: one request to audit a manifest, drawn over its removals as they stood (the
-- frame): removals R and certain C (removed documents whose normalized text is their
-- keeper's, reason 'exact': never a mistake, no label needed); the other R-C are the
-- uncertain stratum the pairs are drawn from. design names the draw on the campaign's
-- label pairs ("audit-m<manifest>"). A manifest has at most one audit that is not
-- superseded (a request after the manifest changed beyond the frame supersedes it).
--
-- audit_draws: the request and every top-up of it (more pairs drawn from the same
-- frame): how many pairs the audit held after it, the seed, who and when.
--
-- audit_frame: every (removed, keeper) pair of the manifest when the audit was
-- requested; the bound speaks for these pairs, so a removal outside them (a keeper
-- changed, a chain cut) leaves the audit behind its manifest.
--
-- audit_pairs: the drawn pairs in the order the queue serves them (position), each the
-- campaign's label pair of (removed, keeper) and the manifest item it was drawn from.
CREATE TABLE audits (
    id            INTEGER PRIMARY KEY,
    manifest_id   INTEGER NOT NULL REFERENCES manifests (id) ON DELETE CASCADE,
    campaign_id   INTEGER NOT NULL REFERENCES campaigns (id) ON DELETE CASCADE,
    design        TEXT NOT NULL,
    removals      INTEGER NOT NULL CHECK (removals >= 0),
    certain       INTEGER NOT NULL CHECK (certain >= 0 AND certain <= removals),
    requested_by  INTEGER REFERENCES users (id),
    requester     TEXT NOT NULL,
    requested_at  TEXT NOT NULL,
    superseded_at TEXT
) STRICT;
CREATE INDEX audits_manifest ON audits (manifest_id, id);
CREATE INDEX audits_campaign ON audits (campaign_id, id);
CREATE INDEX audits_requested_by ON audits (requested_by);
CREATE UNIQUE INDEX audits_one_open ON audits (manifest_id) WHERE superseded_at IS NULL;

CREATE TABLE audit_draws (
    audit_id INTEGER NOT NULL REFERENCES audits (id) ON DELETE CASCADE,
    draw     INTEGER NOT NULL CHECK (draw >= 1),
    size     INTEGER NOT NULL CHECK (size >= 0),
    seed     INTEGER NOT NULL CHECK (seed >= 0),
    user_id  INTEGER REFERENCES users (id),
    actor    TEXT NOT NULL,
    at       TEXT NOT NULL,
    PRIMARY KEY (audit_id, draw)
) STRICT, WITHOUT ROWID;
CREATE INDEX audit_draws_user ON audit_draws (user_id);

CREATE TABLE audit_frame (
    audit_id    INTEGER NOT NULL REFERENCES audits (id) ON DELETE CASCADE,
    document_id INTEGER NOT NULL REFERENCES documents (id),
    keeper_id   INTEGER NOT NULL REFERENCES documents (id),
    certain     INTEGER NOT NULL CHECK (certain IN (0, 1)),
    PRIMARY KEY (audit_id, document_id)
) STRICT, WITHOUT ROWID;
CREATE INDEX audit_frame_document ON audit_frame (document_id);
CREATE INDEX audit_frame_keeper ON audit_frame (keeper_id);

CREATE TABLE audit_pairs (
    audit_id    INTEGER NOT NULL REFERENCES audits (id) ON DELETE CASCADE,
    position    INTEGER NOT NULL CHECK (position >= 1),
    draw        INTEGER NOT NULL CHECK (draw >= 1),
    pair_id     INTEGER NOT NULL REFERENCES label_pairs (id) ON DELETE CASCADE,
    document_id INTEGER NOT NULL,
    keeper_id   INTEGER NOT NULL,
    item_id     INTEGER NOT NULL, -- the manifest item drawn (items are re-derived with their clusters: no key)
    PRIMARY KEY (audit_id, position),
    UNIQUE (audit_id, pair_id),
    FOREIGN KEY (audit_id, document_id) REFERENCES audit_frame (audit_id, document_id) ON DELETE CASCADE
) STRICT;
CREATE INDEX audit_pairs_pair ON audit_pairs (pair_id);
CREATE INDEX audit_pairs_frame ON audit_pairs (audit_id, document_id);

-- Settings of the whole team, one row a key; every change is in the audit log too.
--   audit_gate_target: the largest upper end (percent of the removals) a manifest's
--   audit may show when the last approval would sign it off; absent: no such rule.
CREATE TABLE team_settings (
    key        TEXT PRIMARY KEY,
    value      TEXT NOT NULL,
    updated_by INTEGER REFERENCES users (id),
    updater    TEXT NOT NULL,
    updated_at TEXT NOT NULL
) STRICT, WITHOUT ROWID;
CREATE INDEX team_settings_updated_by ON team_settings (updated_by);
