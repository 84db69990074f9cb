-- The audit log's chain is written whole by its one writer (internal/db), in the
-- transaction that inserts each row: no row exists without its hashes. The store used
-- to seal rows with empty hashes whenever it opened (for rows written before 0006), and
-- the update trigger allowed exactly that, so a row forged with empty hashes was sealed
-- into the chain by the next start (or by "audit verify", which opened the file to write).
-- Rows from before 0006 are now sealed once, when 0006 itself is applied; after that no
-- update of any kind is allowed, and an insert must carry its hash, link to the row before
-- it and take the next id, so the chain has no gaps and nothing joins it half-written.
DROP TRIGGER audit_log_no_update;
CREATE TRIGGER audit_log_no_update BEFORE UPDATE ON audit_log
BEGIN
    SELECT RAISE(ABORT, 'audit_log is append-only');
END;
CREATE TRIGGER audit_log_chained BEFORE INSERT ON audit_log
WHEN length(NEW.hash) != 64
  OR NEW.prev_hash IS NOT coalesce((SELECT hash FROM audit_log ORDER BY id DESC LIMIT 1), '')
  OR NEW.id IS NOT coalesce((SELECT max(id) FROM audit_log), 0) + 1
BEGIN
    SELECT RAISE(ABORT, 'audit_log rows are inserted with their hashes, next in the chain');
END;
DROP INDEX audit_log_unsealed;
