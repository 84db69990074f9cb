-- A sweep's label snapshot (issue 25.5) moves out of sweeps into a table of its own.
-- At a million labeled pairs a snapshot is tens of megabytes of JSON, stored in
-- sweeps.labels ahead of columns such as summary, created_at and left_out: SQLite reads
-- a column past a large value by walking the value's overflow pages, so listing a
-- campaign's sweeps or reading one sweep's row walked every snapshot (most of the 400 ms
-- of a three-sweep list page). The snapshot is read only where it is needed: to score a
-- sweep again (resume, the slider) and to compare it with the campaign's labels.
--
-- Every sweep's snapshot is copied over; sweeps.labels keeps its default, the empty
-- list (the column stays: dropping it would rebuild sweeps under the tables that
-- reference it). Nothing writes it any more.
CREATE TABLE sweep_labels (
    sweep_id INTEGER PRIMARY KEY REFERENCES sweeps (id) ON DELETE CASCADE,
    labels   TEXT NOT NULL CHECK (json_valid(labels))
) STRICT;

INSERT INTO sweep_labels (sweep_id, labels) SELECT id, labels FROM sweeps;
UPDATE sweeps SET labels = '[]' WHERE labels <> '[]';
