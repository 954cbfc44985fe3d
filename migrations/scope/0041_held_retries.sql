-- Custom SQL after drizzle's index and column. A pushed job's retry held by its object's dispatcher (`held` = 1:
-- scope/jobs/held-retries.ts) is pending without a job_claim_idx entry, so the index leaves held rows out. A held
-- row that leaves pending by a path that does not clear `held` itself (a cancel) has it cleared here, so that a
-- later return to pending (a manual retry) is claimable again; the restart clears it in its own update, and this
-- trigger then does nothing.
DROP INDEX `job_claim_idx`;--> statement-breakpoint
ALTER TABLE `job` ADD `held` integer DEFAULT 0 NOT NULL;--> statement-breakpoint
CREATE INDEX `job_claim_idx` ON `job` (`type`,"priority" DESC,`run_at`,`seq`,`dedupe_key`) WHERE state = 'pending' AND held = 0;--> statement-breakpoint
CREATE TRIGGER job_held_clear AFTER UPDATE OF state ON job WHEN new.held = 1 AND new.state <> 'pending' BEGIN
  UPDATE job SET held = 0 WHERE seq = new.seq;
END;
