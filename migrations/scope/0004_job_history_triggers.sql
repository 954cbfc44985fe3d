-- Custom SQL migration file, put your code below! --
-- Every state change of a job counts in its minute (metric_minute), inside the
-- statement that changed it: no transition can be missed or counted twice,
-- whatever crashes afterwards. Minutes are the job's updated_at, truncated to
-- the minute (epoch ms). Creation is counted by enqueue itself, once per type
-- per batch in the same transaction (src/scope/enqueue.ts): a per-row trigger
-- there cost a 1,000-job batch 1,000 upserts of one row.
--
-- The timeline (job_transition) keeps only what the job row will no longer
-- tell (src/scope/timeline.ts reads creation, the current attempt's start and
-- the final state from the row): an attempt that ended back in pending, with
-- when it started; and, when a finished job is retried by hand, the end that
-- retry undoes. A job that succeeds first time writes no timeline row.
CREATE TRIGGER job_history_update AFTER UPDATE OF state ON job WHEN old.state IS NOT new.state BEGIN
  INSERT INTO job_transition (job_seq, at, state, attempt, note, started_at)
  SELECT new.seq, old.finished_at, old.state, old.attempts,
         CASE old.state WHEN 'failed' THEN old.failure_kind || coalesce(': ' || substr(old.last_error, 1, 500), '') ELSE old.cancel_reason END,
         old.started_at
   WHERE new.state = 'pending' AND old.state IN ('failed', 'cancelled');
  INSERT INTO job_transition (job_seq, at, state, attempt, note, started_at)
  SELECT new.seq, new.updated_at, 'pending', new.attempts,
         CASE WHEN old.state IN ('failed', 'cancelled') THEN 'manual retry' ELSE substr(new.last_error, 1, 500) END,
         CASE WHEN old.state = 'running' THEN old.started_at END
   WHERE new.state = 'pending';
  INSERT INTO metric_minute (minute, type, started, completed, failed, retried, cancelled)
  VALUES (new.updated_at / 60000 * 60000, new.type, new.state = 'running', new.state = 'completed', new.state = 'failed',
          new.state = 'pending', new.state = 'cancelled')
  ON CONFLICT (minute, type) DO UPDATE SET
    started = started + excluded.started, completed = completed + excluded.completed, failed = failed + excluded.failed,
    retried = retried + excluded.retried, cancelled = cancelled + excluded.cancelled;
END;
--> statement-breakpoint
CREATE TRIGGER job_history_delete AFTER DELETE ON job BEGIN
  DELETE FROM job_transition WHERE job_seq = old.seq;
END;
