-- Custom SQL after drizzle's two columns. The completing attempt's ctx.log lines kept in its job's row (`logs`:
-- scope/jobs/job-logs.ts), written by the completion's own update. And a held retry's timeline entry kept in the row
-- (`history`: scope/jobs/timeline.ts), written by the retry's own update: the history trigger leaves a move whose
-- statement wrote the row's history (it differs from the old), and numbers its rows after the row's entries, so the
-- two places read as one list in order.
ALTER TABLE `job` ADD `logs` text;--> statement-breakpoint
ALTER TABLE `job` ADD `history` text;--> statement-breakpoint
DROP TRIGGER job_history_update;--> statement-breakpoint
CREATE TRIGGER job_history_update AFTER UPDATE OF state ON job WHEN old.state IS NOT new.state AND new.state IN ('pending', 'waiting') AND new.history IS old.history BEGIN
  INSERT INTO job_transition (id, job_seq, at, state, attempt, note, started_at)
  SELECT max((SELECT coalesce(max(t.id), 0) FROM job_transition AS t WHERE t.job_seq = new.seq), coalesce(new.history ->> '$[#-1][0]', 0)) + 1, new.seq, old.finished_at, old.state, old.attempts,
         CASE old.state WHEN 'failed' THEN old.failure_kind || coalesce(': ' || substr(old.last_error, 1, 500), '') ELSE old.cancel_reason END,
         old.started_at
   WHERE new.state = 'pending' AND old.state IN ('failed', 'cancelled', 'superseded', 'expired');
  INSERT INTO job_transition (id, job_seq, at, state, attempt, note, started_at)
  SELECT max((SELECT coalesce(max(t.id), 0) FROM job_transition AS t WHERE t.job_seq = new.seq), coalesce(new.history ->> '$[#-1][0]', 0)) + 1, new.seq, new.updated_at, 'waiting', new.attempts, NULL, old.started_at
   WHERE new.state = 'waiting';
  INSERT INTO job_transition (id, job_seq, at, state, attempt, note, started_at)
  SELECT max((SELECT coalesce(max(t.id), 0) FROM job_transition AS t WHERE t.job_seq = new.seq), coalesce(new.history ->> '$[#-1][0]', 0)) + 1, new.seq, new.updated_at, 'pending', new.attempts,
         CASE WHEN old.state IN ('failed', 'cancelled', 'superseded', 'expired') THEN 'manual retry' WHEN old.state = 'waiting' THEN NULL ELSE substr(new.last_error, 1, 500) END,
         CASE WHEN old.state = 'running' THEN old.started_at END
   WHERE new.state = 'pending';
END;
