-- The labeling queue and the adjudication queue (issue 8). A pair's place in the queue
-- (queue_rank, set by internal/campaign so the first pairs a person sees span the
-- similarity bins) and its standing labels (labels_n: annotators whose newest
-- label-setting event is not a retract; adjudicated: an adjudication stands; answers:
-- distinct category and duplicate answers among the standing labels; labelers: who
-- holds them), kept by the
-- triggers below on every event, so that the next pair is a walk down one index and the
-- disagreements one index lookup, not passes over every label event of the campaign.

ALTER TABLE label_pairs ADD COLUMN queue_rank INTEGER;
ALTER TABLE label_pairs ADD COLUMN labels_n INTEGER NOT NULL DEFAULT 0;
ALTER TABLE label_pairs ADD COLUMN adjudicated INTEGER NOT NULL DEFAULT 0 CHECK (adjudicated IN (0, 1));
ALTER TABLE label_pairs ADD COLUMN answers INTEGER NOT NULL DEFAULT 0;
-- The annotators with a standing label, each between two U+001F (a control character
-- no account name holds): the queue tells a person's own pairs from the index alone.
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

-- The standing label-setting event of each annotator on a pair: the newest of its
-- label, adjudication and retract events (SQLite takes the bare columns from the row
-- with the max(id)).
UPDATE label_pairs SET
    labels_n = (SELECT count(*) FROM (SELECT kind, max(id) FROM label_events e
        WHERE e.pair_id = label_pairs.id AND e.kind IN ('label', 'adjudication', 'retract') GROUP BY e.annotator)
        WHERE kind != 'retract'),
    adjudicated = (SELECT count(*) > 0 FROM (SELECT kind, max(id) FROM label_events e
        WHERE e.pair_id = label_pairs.id AND e.kind IN ('label', 'adjudication', 'retract') GROUP BY e.annotator)
        WHERE kind = 'adjudication'),
    answers = (SELECT count(DISTINCT category || ':' || duplicate) FROM (SELECT kind, category, duplicate, max(id) FROM label_events e
        WHERE e.pair_id = label_pairs.id AND e.kind IN ('label', 'adjudication', 'retract') GROUP BY e.annotator)
        WHERE kind = 'label'),
    labelers = coalesce((SELECT char(31) || group_concat(annotator, char(31)) || char(31) FROM (SELECT annotator, kind, max(id) FROM label_events e
        WHERE e.pair_id = label_pairs.id AND e.kind IN ('label', 'adjudication', 'retract') GROUP BY e.annotator)
        WHERE kind != 'retract'), '');
CREATE TRIGGER label_events_standing AFTER INSERT ON label_events
WHEN NEW.kind IN ('label', 'adjudication', 'retract')
BEGIN
    UPDATE label_pairs SET
        labels_n = (SELECT count(*) FROM (SELECT kind, max(id) FROM label_events e
            WHERE e.pair_id = NEW.pair_id AND e.kind IN ('label', 'adjudication', 'retract') GROUP BY e.annotator)
            WHERE kind != 'retract'),
        adjudicated = (SELECT count(*) > 0 FROM (SELECT kind, max(id) FROM label_events e
            WHERE e.pair_id = NEW.pair_id AND e.kind IN ('label', 'adjudication', 'retract') GROUP BY e.annotator)
            WHERE kind = 'adjudication'),
        answers = (SELECT count(DISTINCT category || ':' || duplicate) FROM (SELECT kind, category, duplicate, max(id) FROM label_events e
            WHERE e.pair_id = NEW.pair_id AND e.kind IN ('label', 'adjudication', 'retract') GROUP BY e.annotator)
            WHERE kind = 'label'),
        labelers = coalesce((SELECT char(31) || group_concat(annotator, char(31)) || char(31) FROM (SELECT annotator, kind, max(id) FROM label_events e
            WHERE e.pair_id = NEW.pair_id AND e.kind IN ('label', 'adjudication', 'retract') GROUP BY e.annotator)
            WHERE kind != 'retract'), '')
    WHERE id = NEW.pair_id;
END;

-- The queue's walk: in order, and covering the check "not one of mine" (labelers).
CREATE INDEX label_pairs_queue ON label_pairs (campaign_id, queue_stage, queue_rank, labelers);
-- Disagreements: two or more distinct answers, no adjudication.
CREATE INDEX label_pairs_disputed ON label_pairs (campaign_id) WHERE answers >= 2 AND adjudicated = 0;
