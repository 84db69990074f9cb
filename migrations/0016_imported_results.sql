-- Manifests brought back from the engines that run at scale (datatrove, text-dedup, a
-- Milvus search, a table of pairs, the dedup command): where each came from, and the
-- stratified sample of its clusters that people review when there are too many to read.
--
-- origin is review.Origin as JSON ('{}' for a manifest computed by a run here): the
-- format, the file and its SHA-256, what was read, skipped and built, who chose the
-- keepers, and the sample's design (strata, sizes, seed).
ALTER TABLE manifests ADD COLUMN origin TEXT NOT NULL DEFAULT '{}' CHECK (json_valid(origin));
-- A cluster drawn into the review sample names its stratum (review.StratumKey); NULL when
-- it was not drawn, or when the manifest has no sample.
ALTER TABLE clusters ADD COLUMN sample_stratum TEXT;
-- The weakest link the engine's own scores give the cluster (the lowest score on its
-- maximum spanning tree); NULL when the engine gave no scores or the cluster was computed here.
ALTER TABLE clusters ADD COLUMN engine_weakest REAL;
CREATE INDEX clusters_sample ON clusters (manifest_id, sample_stratum) WHERE sample_stratum IS NOT NULL;
