-- The labeling workflow: a campaign has a representation and a share of pairs labeled
-- twice; a pair remembers how it was sampled and its similarity; label events gain the
-- 'retract' kind (an undo appends, it never deletes).

ALTER TABLE campaigns ADD COLUMN spec TEXT NOT NULL DEFAULT '';
ALTER TABLE campaigns ADD COLUMN double_share REAL NOT NULL DEFAULT 0.2 CHECK (double_share BETWEEN 0 AND 1);

ALTER TABLE label_pairs ADD COLUMN similarity REAL;         -- exact Jaccard under the campaign's spec
ALTER TABLE label_pairs ADD COLUMN estimate REAL;           -- MinHash estimate under the campaign's spec
ALTER TABLE label_pairs ADD COLUMN wanted INTEGER NOT NULL DEFAULT 1 CHECK (wanted >= 1);

CREATE TABLE label_events_new (
    id          INTEGER PRIMARY KEY,
    pair_id     INTEGER NOT NULL REFERENCES label_pairs (id) ON DELETE CASCADE,
    annotator   TEXT NOT NULL,
    user_id     INTEGER REFERENCES users (id),
    kind        TEXT NOT NULL DEFAULT 'label' CHECK (kind IN ('label', 'adjudication', 'skip', 'flag', 'unflag', 'retract')),
    category    TEXT NOT NULL,
    duplicate   INTEGER NOT NULL CHECK (duplicate IN (0, 1)),
    note        TEXT NOT NULL DEFAULT '',
    previous_id INTEGER REFERENCES label_events_new (id),
    created_at  TEXT NOT NULL
) STRICT;
INSERT INTO label_events_new (id, pair_id, annotator, user_id, kind, category, duplicate, note, previous_id, created_at)
    SELECT id, pair_id, annotator, user_id, kind, category, duplicate, note, previous_id, created_at FROM label_events;
DROP TABLE label_events;
ALTER TABLE label_events_new RENAME TO label_events;
CREATE INDEX label_events_pair ON label_events (pair_id, annotator, id);
CREATE INDEX label_events_annotator ON label_events (annotator, id);
