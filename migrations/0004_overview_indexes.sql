-- The start page counts documents by source and language: covering indexes keep those
-- counts off the (large) text column.
CREATE INDEX documents_source ON documents (dataset_id, source);
CREATE INDEX documents_lang ON documents (dataset_id, lang);
CREATE INDEX label_pairs_campaign ON label_pairs (campaign_id, id);
