-- The labeling queue (issue 8). A pair's place in the queue (queue_rank, set by
-- internal/campaign so the first pairs a person sees span the similarity bins) and its
-- standing labels (labels_n: annotators whose newest label-setting event is not a
-- retract; adjudicated: an adjudication stands), kept by the triggers below on every
-- event, so that the next pair is a walk down one index and not a pass over every
-- label event of the campaign.

ALTER TABLE label_pairs ADD COLUMN queue_rank INTEGER;
ALTER TABLE label_pairs ADD COLUMN labels_n INTEGER NOT NULL DEFAULT 0;
ALTER TABLE label_pairs ADD COLUMN adjudicated INTEGER NOT NULL DEFAULT 0 CHECK (adjudicated IN (0, 1));
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

UPDATE label_pairs SET
    labels_n = (SELECT count(*) FROM (SELECT kind, max(id) FROM label_events e
        WHERE e.pair_id = label_pairs.id AND e.kind IN ('label', 'adjudication', 'retract') GROUP BY e.annotator)
        WHERE kind != 'retract'),
    adjudicated = (SELECT count(*) > 0 FROM (SELECT kind, max(id) FROM label_events e
        WHERE e.pair_id = label_pairs.id AND e.kind IN ('label', 'adjudication', 'retract') GROUP BY e.annotator)
        WHERE kind = 'adjudication');
CREATE TRIGGER label_events_standing AFTER INSERT ON label_events
WHEN NEW.kind IN ('label', 'adjudication', 'retract')
BEGIN
    UPDATE label_pairs SET
        labels_n = (SELECT count(*) FROM (SELECT kind, max(id) FROM label_events e
            WHERE e.pair_id = NEW.pair_id AND e.kind IN ('label', 'adjudication', 'retract') GROUP BY e.annotator)
            WHERE kind != 'retract'),
        adjudicated = (SELECT count(*) > 0 FROM (SELECT kind, max(id) FROM label_events e
            WHERE e.pair_id = NEW.pair_id AND e.kind IN ('label', 'adjudication', 'retract') GROUP BY e.annotator)
            WHERE kind = 'adjudication')
    WHERE id = NEW.pair_id;
END;

CREATE INDEX label_pairs_queue ON label_pairs (campaign_id, queue_stage, queue_rank);
-- Pairs with two or more standing labels and no adjudication: where disagreements are.
CREATE INDEX label_pairs_contested ON label_pairs (campaign_id) WHERE labels_n >= 2 AND adjudicated = 0;
