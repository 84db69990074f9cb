-- Double submits (a form posted twice by a double click, or a POST replayed) must not
-- start two sweeps or two runs. Each form carries a one-time token in a hidden field.
-- A sweep records the token of the form that started it, unique, so the second post of
-- the same form finds the first sweep instead of creating another; NULL for sweeps
-- started without a form (the command line, re-runs, sweeps stored before this).
ALTER TABLE sweeps ADD COLUMN request_token TEXT;
CREATE UNIQUE INDEX sweeps_request_token ON sweeps (request_token) WHERE request_token IS NOT NULL;

-- Runs are background jobs that end in a draft manifest; their forms' tokens are kept
-- here with where the first post led (the run's page), so a replayed post is sent there
-- too. target is '' while the first post is still starting its run.
CREATE TABLE form_tokens (
    token      TEXT PRIMARY KEY,
    kind       TEXT NOT NULL CHECK (kind IN ('run')),
    target     TEXT NOT NULL DEFAULT '',
    created_at TEXT NOT NULL
) STRICT;
