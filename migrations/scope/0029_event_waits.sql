CREATE TABLE `event_waiter` (
	`job_id` text NOT NULL,
	`seq` integer NOT NULL,
	`fields` text NOT NULL,
	`match` text NOT NULL,
	`since` integer NOT NULL,
	`until` integer,
	PRIMARY KEY(`job_id`, `seq`)
);
--> statement-breakpoint
CREATE INDEX `event_waiter_match_idx` ON `event_waiter` (`fields`,`match`);--> statement-breakpoint
CREATE INDEX `event_waiter_until_idx` ON `event_waiter` (`until`);--> statement-breakpoint
CREATE TABLE `topic_event` (
	`event_id` text PRIMARY KEY NOT NULL,
	`payload` text NOT NULL,
	`at` integer NOT NULL
);
--> statement-breakpoint
CREATE INDEX `topic_event_at_idx` ON `topic_event` (`at`);