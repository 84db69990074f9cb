-- Reserved: migration 0005 belongs to another branch. This placeholder keeps the numbers
-- contiguous on the review branch (i10) until that migration is merged; the merge
-- replaces it. It changes nothing.
SELECT 1;
