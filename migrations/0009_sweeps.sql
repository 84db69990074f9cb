-- Sweeps in use (issue 9): a labeled pair remembers the sampling design that drew it, and
-- a sweep is saved, re-runnable and resumable, its results stored one row per scored
-- configuration as they complete.

-- The draw that chose a pair (design), its stratum in that draw (a similarity bin, or
-- "random") and frame_size N_h, the pairs that stratum held when the pair was drawn: each
-- labeled pair of the stratum stands for N_h / n_h pairs in the dataset-level estimates.
-- Empty and 0 when unknown (labels imported without them): such pairs count on the
-- labeled-pairs basis only.
ALTER TABLE label_pairs ADD COLUMN design TEXT NOT NULL DEFAULT '';
ALTER TABLE label_pairs ADD COLUMN stratum TEXT NOT NULL DEFAULT '';
ALTER TABLE label_pairs ADD COLUMN frame_size INTEGER NOT NULL DEFAULT 0 CHECK (frame_size >= 0);

-- sweeps and sweep_results have been in the schema since 0001 but nothing wrote them, so
-- no installation holds a row: they are rebuilt rather than altered (the state CHECK
-- gains 'interrupted'). manifests.sweep_result_id names sweep_results by name and so
-- references the rebuilt table.
DROP TABLE sweep_results;
DROP TABLE sweeps;

-- labels is the snapshot of the resolved labels the sweep is scored on (counted pairs
-- with their documents, label and design), so a resumed sweep and the threshold slider
-- score on what the table was scored on; summary the label counts, the design and the
-- exact-hash baseline (JSON, NULL until the first run returns).
CREATE TABLE sweeps (
    id            INTEGER PRIMARY KEY,
    campaign_id   INTEGER NOT NULL REFERENCES campaigns (id) ON DELETE CASCADE,
    name          TEXT NOT NULL,
    notes         TEXT NOT NULL DEFAULT '',
    grid          TEXT NOT NULL CHECK (json_valid(grid)),
    seed          INTEGER NOT NULL DEFAULT 1,
    state         TEXT NOT NULL CHECK (state IN ('queued', 'running', 'done', 'failed', 'cancelled', 'interrupted')),
    error         TEXT NOT NULL DEFAULT '',
    configs_done  INTEGER NOT NULL DEFAULT 0 CHECK (configs_done >= 0),
    configs_total INTEGER NOT NULL DEFAULT 0 CHECK (configs_total >= 0),
    label_version TEXT NOT NULL DEFAULT '',
    labels        TEXT NOT NULL DEFAULT '[]' CHECK (json_valid(labels)),
    summary       TEXT CHECK (summary IS NULL OR json_valid(summary)),
    rerun_of      INTEGER REFERENCES sweeps (id) ON DELETE SET NULL,
    created_by    INTEGER REFERENCES users (id),
    created_at    TEXT NOT NULL,
    started_at    TEXT,
    finished_at   TEXT
) STRICT;
CREATE INDEX sweeps_campaign ON sweeps (campaign_id, id);
CREATE INDEX sweeps_created_by ON sweeps (created_by);
CREATE INDEX sweeps_rerun_of ON sweeps (rerun_of);
CREATE INDEX sweeps_running ON sweeps (state) WHERE state = 'running';

-- One row per scored configuration: ordinal is its place in the grid's order
-- (sweep.Grid.Configs), config and metrics the sweep.Result as JSON; the axes are
-- columns too, for the heatmap and the slider's lookups.
CREATE TABLE sweep_results (
    id           INTEGER PRIMARY KEY,
    sweep_id     INTEGER NOT NULL REFERENCES sweeps (id) ON DELETE CASCADE,
    ordinal      INTEGER NOT NULL CHECK (ordinal >= 0),
    spec         TEXT NOT NULL,
    bands        INTEGER NOT NULL,
    rows         INTEGER NOT NULL,
    threshold    REAL NOT NULL,
    verification TEXT NOT NULL,
    policy       TEXT NOT NULL,
    metrics      TEXT NOT NULL CHECK (json_valid(metrics)),
    created_at   TEXT NOT NULL,
    UNIQUE (sweep_id, ordinal)
) STRICT;
