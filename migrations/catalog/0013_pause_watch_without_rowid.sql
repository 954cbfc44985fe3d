-- Custom SQL (drizzle made only the index's drop): the pause promises keyed by their home alone, rebuilt WITHOUT
-- ROWID, and no index on `until` — a renewal writes its row alone, where it wrote its row and its until index
-- entry (and a new home its primary key's entry too); a pause or resume, rare, reads the table whole
-- (catalog/pause-store.ts).
DROP INDEX `pause_watch_until_idx`;--> statement-breakpoint
CREATE TABLE `__new_pause_watch` (
	`home` text PRIMARY KEY NOT NULL,
	`until` integer NOT NULL
) WITHOUT ROWID;
--> statement-breakpoint
INSERT INTO `__new_pause_watch`("home", "until") SELECT "home", "until" FROM `pause_watch`;--> statement-breakpoint
DROP TABLE `pause_watch`;--> statement-breakpoint
ALTER TABLE `__new_pause_watch` RENAME TO `pause_watch`;
