-- Custom SQL (drizzle made the rebuild): a job's timeline steps keyed by (job, place) alone, WITHOUT ROWID, so a step
-- writes one row where it wrote its row and its job_transition_job_idx entry. A step's place is now counted per job
-- (the history trigger gives it: the job's last place + 1); the rows kept keep theirs, which grow within each job.
-- The two triggers that name the table go first (a rename checks every trigger) and are made again after; the
-- history trigger now runs only for a move into pending or waiting (all it writes), so a claim or a completion does
-- not read the job's last place.
DROP TRIGGER job_history_update;--> statement-breakpoint
DROP TRIGGER job_history_delete;--> statement-breakpoint
PRAGMA foreign_keys=OFF;--> statement-breakpoint
CREATE TABLE `__new_job_transition` (
	`id` integer NOT NULL,
	`job_seq` integer NOT NULL,
	`at` integer NOT NULL,
	`state` text NOT NULL,
	`attempt` integer NOT NULL,
	`note` text,
	`started_at` integer,
	PRIMARY KEY(`job_seq`, `id`)
) WITHOUT ROWID;
--> statement-breakpoint
INSERT INTO `__new_job_transition`("id", "job_seq", "at", "state", "attempt", "note", "started_at") SELECT "id", "job_seq", "at", "state", "attempt", "note", "started_at" FROM `job_transition`;--> statement-breakpoint
DROP TABLE `job_transition`;--> statement-breakpoint
ALTER TABLE `__new_job_transition` RENAME TO `job_transition`;--> statement-breakpoint
PRAGMA foreign_keys=ON;--> statement-breakpoint
CREATE TRIGGER job_history_update AFTER UPDATE OF state ON job WHEN old.state IS NOT new.state AND new.state IN ('pending', 'waiting') BEGIN
  INSERT INTO job_transition (id, job_seq, at, state, attempt, note, started_at)
  SELECT (SELECT coalesce(max(t.id), 0) + 1 FROM job_transition AS t WHERE t.job_seq = new.seq), new.seq, old.finished_at, old.state, old.attempts,
         CASE old.state WHEN 'failed' THEN old.failure_kind || coalesce(': ' || substr(old.last_error, 1, 500), '') ELSE old.cancel_reason END,
         old.started_at
   WHERE new.state = 'pending' AND old.state IN ('failed', 'cancelled', 'superseded', 'expired');
  INSERT INTO job_transition (id, job_seq, at, state, attempt, note, started_at)
  SELECT (SELECT coalesce(max(t.id), 0) + 1 FROM job_transition AS t WHERE t.job_seq = new.seq), new.seq, new.updated_at, 'waiting', new.attempts, NULL, old.started_at
   WHERE new.state = 'waiting';
  INSERT INTO job_transition (id, job_seq, at, state, attempt, note, started_at)
  SELECT (SELECT coalesce(max(t.id), 0) + 1 FROM job_transition AS t WHERE t.job_seq = new.seq), new.seq, new.updated_at, 'pending', new.attempts,
         CASE WHEN old.state IN ('failed', 'cancelled', 'superseded', 'expired') THEN 'manual retry' WHEN old.state = 'waiting' THEN NULL ELSE substr(new.last_error, 1, 500) END,
         CASE WHEN old.state = 'running' THEN old.started_at END
   WHERE new.state = 'pending';
END;
--> statement-breakpoint
CREATE TRIGGER job_history_delete AFTER DELETE ON job BEGIN
  DELETE FROM job_transition WHERE job_seq = old.seq;
END;
