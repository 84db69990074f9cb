-- A staged label row keeps the sampling design it arrived with (design, stratum,
-- frame_size, as on label_pairs since 0009), so a label file that carries its draw's
-- inclusion probabilities still carries them once published: the sweeps' dataset-level
-- estimates need them.
ALTER TABLE label_import_rows ADD COLUMN design TEXT NOT NULL DEFAULT '';
ALTER TABLE label_import_rows ADD COLUMN stratum TEXT NOT NULL DEFAULT '';
ALTER TABLE label_import_rows ADD COLUMN frame_size INTEGER NOT NULL DEFAULT 0 CHECK (frame_size >= 0);
