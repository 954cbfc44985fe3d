-- Custom SQL migration file, put your code below! --
-- Every state change of a job writes its timeline step and counts in its
-- minute, inside the statement that changed it: no transition can be missed
-- or counted twice, whatever crashes afterwards. Minutes are the job's own
-- created_at / updated_at, truncated to the minute (epoch ms). Creation writes
-- no timeline row: the job row itself says when it was created (history.ts),
-- and enqueue is the hot path.
CREATE TRIGGER job_history_insert AFTER INSERT ON job BEGIN
  INSERT INTO metric_minute (minute, type, enqueued) VALUES (new.created_at / 60000 * 60000, new.type, 1)
  ON CONFLICT (minute, type) DO UPDATE SET enqueued = enqueued + 1;
END;
--> statement-breakpoint
CREATE TRIGGER job_history_update AFTER UPDATE OF state ON job WHEN old.state IS NOT new.state BEGIN
  INSERT INTO job_transition (job_seq, at, state, attempt, note) VALUES (new.seq, new.updated_at, new.state, new.attempts,
    CASE
      WHEN new.state = 'failed' THEN new.failure_kind || coalesce(': ' || substr(new.last_error, 1, 500), '')
      WHEN new.state = 'cancelled' THEN new.cancel_reason
      WHEN new.state = 'pending' AND old.state IN ('failed', 'cancelled') THEN 'manual retry'
      WHEN new.state = 'pending' THEN substr(new.last_error, 1, 500)
    END);
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
