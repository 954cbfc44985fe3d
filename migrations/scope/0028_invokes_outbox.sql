CREATE TABLE `outbox` (
	`seq` integer PRIMARY KEY NOT NULL,
	`kind` text NOT NULL,
	`target` text NOT NULL,
	`body` text NOT NULL,
	`tries` integer DEFAULT 0 NOT NULL,
	`next_at` integer NOT NULL
);
--> statement-breakpoint
CREATE INDEX `outbox_next_idx` ON `outbox` (`next_at`);--> statement-breakpoint
ALTER TABLE `job` ADD `parent_id` text;--> statement-breakpoint
ALTER TABLE `job` ADD `parent_step` text;--> statement-breakpoint
ALTER TABLE `job` ADD `parent_seq` integer;--> statement-breakpoint
ALTER TABLE `job` ADD `children_open` integer DEFAULT 0 NOT NULL;--> statement-breakpoint
ALTER TABLE `job_step` ADD `ref` text;
--> statement-breakpoint
-- A child's end goes to its parent's object (scope/invokes.ts): owed in the transaction that ended it, whatever ended
-- it (a completion, the last failure, a cancel, a supersede). 5000: scope/outbox.ts OUTBOX_GRACE_MS — the send right
-- after the commit goes first; the alarm sends it only if that one did not land.
CREATE TRIGGER job_child_end AFTER UPDATE OF state ON job
WHEN new.parent_id IS NOT NULL AND new.finished_at IS NOT NULL AND old.finished_at IS NULL BEGIN
  INSERT INTO outbox (kind, target, body, next_at)
  VALUES ('child_ended', new.parent_id,
          json_object('step', new.parent_step, 'seq', new.parent_seq, 'child', new.id, 'state', new.state, 'result', json(coalesce(new.result, 'null')),
                      'error', new.last_error, 'failureKind', new.failure_kind, 'reason', new.cancel_reason),
          new.updated_at + 5000);
END;
