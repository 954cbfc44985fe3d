-- Custom SQL migration file, put your code below! --
-- The statements that move many jobs at once — the enqueue's insert, a claim, a completion and the
-- retention sweep — count their own moves in job_count and metric_minute, one upsert per type for all
-- their rows (src/scope/tallies.ts), where these triggers wrote one per row. Such a statement bumps the
-- row's `tally`, and the count triggers skip a row whose `tally` changed; every other statement is
-- counted by trigger as before. The sweep is the only statement that deletes jobs; it counts its own.
DROP TRIGGER job_count_insert;
--> statement-breakpoint
DROP TRIGGER job_count_update;
--> statement-breakpoint
DROP TRIGGER job_count_delete;
--> statement-breakpoint
DROP TRIGGER job_history_update;
--> statement-breakpoint
CREATE TRIGGER job_count_insert AFTER INSERT ON job WHEN new.tally = 0 BEGIN
  INSERT INTO job_count (type, state, failure_kind, n) VALUES (new.type, new.state, coalesce(new.failure_kind, ''), 1)
  ON CONFLICT (type, state, failure_kind) DO UPDATE SET n = n + 1;
END;
--> statement-breakpoint
CREATE TRIGGER job_count_update AFTER UPDATE OF state, failure_kind ON job
WHEN (old.state IS NOT new.state OR old.failure_kind IS NOT new.failure_kind) AND new.tally = old.tally BEGIN
  UPDATE job_count SET n = n - 1 WHERE type = old.type AND state = old.state AND failure_kind = coalesce(old.failure_kind, '');
  INSERT INTO job_count (type, state, failure_kind, n) VALUES (new.type, new.state, coalesce(new.failure_kind, ''), 1)
  ON CONFLICT (type, state, failure_kind) DO UPDATE SET n = n + 1;
END;
--> statement-breakpoint
CREATE TRIGGER job_history_update AFTER UPDATE OF state ON job WHEN old.state IS NOT new.state BEGIN
  INSERT INTO job_transition (job_seq, at, state, attempt, note, started_at)
  SELECT new.seq, old.finished_at, old.state, old.attempts,
         CASE old.state WHEN 'failed' THEN old.failure_kind || coalesce(': ' || substr(old.last_error, 1, 500), '') ELSE old.cancel_reason END,
         old.started_at
   WHERE new.state = 'pending' AND old.state IN ('failed', 'cancelled', 'superseded');
  INSERT INTO job_transition (job_seq, at, state, attempt, note, started_at)
  SELECT new.seq, new.updated_at, 'pending', new.attempts,
         CASE WHEN old.state IN ('failed', 'cancelled', 'superseded') THEN 'manual retry' ELSE substr(new.last_error, 1, 500) END,
         CASE WHEN old.state = 'running' THEN old.started_at END
   WHERE new.state = 'pending';
END;
--> statement-breakpoint
CREATE TRIGGER job_metric_update AFTER UPDATE OF state ON job WHEN old.state IS NOT new.state AND new.tally = old.tally BEGIN
  INSERT INTO metric_minute (minute, type, started, completed, failed, retried, cancelled)
  VALUES (new.updated_at / 60000 * 60000, new.type, new.state = 'running', new.state = 'completed', new.state = 'failed',
          new.state = 'pending', new.state IN ('cancelled', 'superseded'))
  ON CONFLICT (minute, type) DO UPDATE SET
    started = started + excluded.started, completed = completed + excluded.completed, failed = failed + excluded.failed,
    retried = retried + excluded.retried, cancelled = cancelled + excluded.cancelled;
END;
