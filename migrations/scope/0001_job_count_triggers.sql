-- Custom SQL migration file, put your code below! --
-- Keeps job_count in step with job inside the same statement, so counts can
-- never drift from rows (stats and catalog summaries read job_count, not job).
CREATE TRIGGER job_count_insert AFTER INSERT ON job BEGIN
  INSERT INTO job_count (type, state, failure_kind, n) VALUES (new.type, new.state, coalesce(new.failure_kind, ''), 1)
  ON CONFLICT (type, state, failure_kind) DO UPDATE SET n = n + 1;
END;
--> statement-breakpoint
CREATE TRIGGER job_count_update AFTER UPDATE OF state, failure_kind ON job
WHEN old.state IS NOT new.state OR old.failure_kind IS NOT new.failure_kind BEGIN
  UPDATE job_count SET n = n - 1 WHERE type = old.type AND state = old.state AND failure_kind = coalesce(old.failure_kind, '');
  INSERT INTO job_count (type, state, failure_kind, n) VALUES (new.type, new.state, coalesce(new.failure_kind, ''), 1)
  ON CONFLICT (type, state, failure_kind) DO UPDATE SET n = n + 1;
END;
--> statement-breakpoint
CREATE TRIGGER job_count_delete AFTER DELETE ON job BEGIN
  UPDATE job_count SET n = n - 1 WHERE type = old.type AND state = old.state AND failure_kind = coalesce(old.failure_kind, '');
END;
