-- The labeling queue and the adjudication queue (issue 8).
--
-- standing_labels holds each annotator's standing label on a pair: their newest label or
-- adjudication event, unless an undo (retract) followed it. A trigger keeps it on every
-- label-setting event, and with it four columns of the pair: labels_n (standing
-- labels), adjudicated (an adjudication stands), answers (distinct category and
-- duplicate answers among the standing labels) and labelers (who holds them, each
-- between two U+001F, a control character no account name holds). So the next pair is
-- a walk down one index that tells a person's own pairs apart by itself, and the
-- disagreements one index lookup: no pass over every label event of the campaign.
--
-- queue_rank is a pair's place in the queue, set by internal/campaign (Rank) so the
-- first pairs a person sees span the similarity bins.

CREATE TABLE standing_labels (
    pair_id   INTEGER NOT NULL REFERENCES label_pairs (id) ON DELETE CASCADE,
    annotator TEXT NOT NULL,
    event_id  INTEGER NOT NULL, -- the label_events row (deleted with the pair, as this is)
    kind      TEXT NOT NULL CHECK (kind IN ('label', 'adjudication')),
    category  TEXT NOT NULL,
    duplicate INTEGER NOT NULL CHECK (duplicate IN (0, 1)),
    PRIMARY KEY (pair_id, annotator)
) STRICT, WITHOUT ROWID;

ALTER TABLE label_pairs ADD COLUMN queue_rank INTEGER;
ALTER TABLE label_pairs ADD COLUMN labels_n INTEGER NOT NULL DEFAULT 0;
ALTER TABLE label_pairs ADD COLUMN adjudicated INTEGER NOT NULL DEFAULT 0 CHECK (adjudicated IN (0, 1));
ALTER TABLE label_pairs ADD COLUMN answers INTEGER NOT NULL DEFAULT 0;
ALTER TABLE label_pairs ADD COLUMN labelers TEXT NOT NULL DEFAULT '';
-- 0: started by someone, wants more labels (served first, to complete double labels);
-- 1: nobody labeled it yet; 2: done (all wanted labels, or adjudicated).
ALTER TABLE label_pairs ADD COLUMN queue_stage INTEGER GENERATED ALWAYS AS (
    CASE WHEN adjudicated = 1 OR labels_n >= wanted THEN 2 WHEN labels_n > 0 THEN 0 ELSE 1 END) VIRTUAL;

-- Pairs not ranked yet (new ones, until their campaign is ranked again) come after the
-- ranked ones, in the order they came.
UPDATE label_pairs SET queue_rank = 1099511627776 + id;
CREATE TRIGGER label_pairs_unranked AFTER INSERT ON label_pairs WHEN NEW.queue_rank IS NULL
BEGIN
    UPDATE label_pairs SET queue_rank = 1099511627776 + NEW.id WHERE id = NEW.id;
END;

-- The events there are: each annotator's newest label-setting event per pair (SQLite
-- takes the bare columns from the row with the max(id)), unless it is an undo.
INSERT INTO standing_labels (pair_id, annotator, event_id, kind, category, duplicate)
    SELECT pair_id, annotator, id, kind, category, duplicate FROM (
        SELECT pair_id, annotator, max(id) AS id, kind, category, duplicate FROM label_events
        WHERE kind IN ('label', 'adjudication', 'retract') GROUP BY pair_id, annotator)
    WHERE kind != 'retract';
UPDATE label_pairs SET
    labels_n = (SELECT count(*) FROM standing_labels s WHERE s.pair_id = label_pairs.id),
    adjudicated = (SELECT count(*) > 0 FROM standing_labels s WHERE s.pair_id = label_pairs.id AND s.kind = 'adjudication'),
    answers = (SELECT count(DISTINCT s.category || ':' || s.duplicate) FROM standing_labels s WHERE s.pair_id = label_pairs.id AND s.kind = 'label'),
    labelers = coalesce((SELECT char(31) || group_concat(s.annotator, char(31)) || char(31) FROM standing_labels s WHERE s.pair_id = label_pairs.id), '');

-- Events are appended with ever larger ids, so the one inserted is the annotator's
-- newest on the pair.
CREATE TRIGGER label_events_standing AFTER INSERT ON label_events
WHEN NEW.kind IN ('label', 'adjudication', 'retract')
BEGIN
    DELETE FROM standing_labels WHERE pair_id = NEW.pair_id AND annotator = NEW.annotator;
    INSERT INTO standing_labels (pair_id, annotator, event_id, kind, category, duplicate)
        SELECT NEW.pair_id, NEW.annotator, NEW.id, NEW.kind, NEW.category, NEW.duplicate WHERE NEW.kind != 'retract';
    UPDATE label_pairs SET
        labels_n = (SELECT count(*) FROM standing_labels s WHERE s.pair_id = NEW.pair_id),
        adjudicated = (SELECT count(*) > 0 FROM standing_labels s WHERE s.pair_id = NEW.pair_id AND s.kind = 'adjudication'),
        answers = (SELECT count(DISTINCT s.category || ':' || s.duplicate) FROM standing_labels s WHERE s.pair_id = NEW.pair_id AND s.kind = 'label'),
        labelers = coalesce((SELECT char(31) || group_concat(s.annotator, char(31)) || char(31) FROM standing_labels s WHERE s.pair_id = NEW.pair_id), '')
    WHERE id = NEW.pair_id;
END;

-- The queue's walk: in order, and covering the check "not one of mine" (labelers).
CREATE INDEX label_pairs_queue ON label_pairs (campaign_id, queue_stage, queue_rank, labelers);
-- Disagreements: two or more distinct answers, no adjudication.
CREATE INDEX label_pairs_disputed ON label_pairs (campaign_id, similarity) WHERE answers >= 2 AND adjudicated = 0;
