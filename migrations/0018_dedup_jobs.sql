-- Whole-corpus runs started from the web UI: the dedup pipeline (internal/bulk) over a
-- corpus file under the server's corpus root, as a background job whose record survives
-- a restart (a row found 'running' at start was left by a dead process: 'interrupted',
-- and resumable from the run's stage markers in out_dir).
--
-- settings is the settings.json the run reads (handoff's JSON, as exported); source says
-- where it came from ("manifest 3", "sweep 2, configuration 5"). corpus is the file's
-- path relative to the corpus root. summary is internal/bulk's summary.json once done.
-- manifest_id is the draft manifest its removals were imported as; import_note says why
-- there is none yet (no dataset of the corpus, a refused import).
CREATE TABLE dedup_jobs (
    id           INTEGER PRIMARY KEY,
    source       TEXT NOT NULL,
    source_manifest_id INTEGER,
    settings     TEXT NOT NULL CHECK (json_valid(settings)),
    corpus       TEXT NOT NULL,
    state        TEXT NOT NULL CHECK (state IN ('running', 'done', 'failed', 'cancelled', 'interrupted')),
    error        TEXT NOT NULL DEFAULT '',
    summary      TEXT NOT NULL DEFAULT '{}' CHECK (json_valid(summary)),
    manifest_id  INTEGER,
    import_note  TEXT NOT NULL DEFAULT '',
    started_by   INTEGER,
    started_name TEXT NOT NULL DEFAULT '',
    created_at   TEXT NOT NULL,
    started_at   TEXT NOT NULL,
    finished_at  TEXT
) STRICT;
CREATE INDEX dedup_jobs_state ON dedup_jobs (state);
