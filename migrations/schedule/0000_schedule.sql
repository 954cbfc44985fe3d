CREATE TABLE `schedule` (
	`name` text PRIMARY KEY NOT NULL,
	`type` text NOT NULL,
	`payload` text NOT NULL,
	`scope_type` text,
	`scope_id` text,
	`cron` text,
	`every_ms` integer,
	`at` integer,
	`anchor` integer NOT NULL,
	`misfire` text NOT NULL,
	`max_catchup` integer,
	`paused` integer NOT NULL,
	`source` text NOT NULL,
	`generation` integer NOT NULL,
	`next_run_at` integer,
	`last_fired_at` integer,
	`created_at` integer NOT NULL,
	`updated_at` integer NOT NULL
);
--> statement-breakpoint
CREATE INDEX `schedule_next_idx` ON `schedule` (`next_run_at`);