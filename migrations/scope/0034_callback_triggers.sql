-- A completion callback is owed in the transaction that ended its job (scope/callbacks.ts), whatever ended it — a
-- completion, the last failure, a cancel, a supersede, an expiry — when the job's `callback.on` names that state.
-- 5000: scope/callbacks.ts CALLBACK_GRACE_MS — the send right after the commit goes first; the alarm sends it only if
-- that one did not land (an alarm per ended job would cost a catalog summary each).
CREATE TRIGGER job_callback AFTER UPDATE OF state ON job
WHEN new.callback IS NOT NULL AND new.finished_at IS NOT NULL AND old.finished_at IS NULL
 AND EXISTS (SELECT 1 FROM json_each(new.callback, '$.on') WHERE value = new.state) BEGIN
  INSERT INTO callback_out (job_seq, state, ended_at, next_at) VALUES (new.seq, new.state, new.finished_at, new.finished_at + 5000);
END;
--> statement-breakpoint
-- What was owed for a job goes with it (retention, prune).
CREATE TRIGGER job_callback_delete AFTER DELETE ON job WHEN old.callback IS NOT NULL BEGIN
  DELETE FROM callback_out WHERE job_seq = old.seq;
END;
