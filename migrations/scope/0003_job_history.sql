CREATE TABLE `job_transition` (
	`id` integer PRIMARY KEY NOT NULL,
	`job_seq` integer NOT NULL,
	`at` integer NOT NULL,
	`state` text NOT NULL,
	`attempt` integer NOT NULL,
	`note` text,
	`started_at` integer
);
--> statement-breakpoint
CREATE INDEX `job_transition_job_idx` ON `job_transition` (`job_seq`,`id`);--> statement-breakpoint
CREATE TABLE `metric_minute` (
	`minute` integer NOT NULL,
	`type` text NOT NULL,
	`enqueued` integer DEFAULT 0 NOT NULL,
	`started` integer DEFAULT 0 NOT NULL,
	`completed` integer DEFAULT 0 NOT NULL,
	`failed` integer DEFAULT 0 NOT NULL,
	`retried` integer DEFAULT 0 NOT NULL,
	`cancelled` integer DEFAULT 0 NOT NULL,
	PRIMARY KEY(`minute`, `type`)
);
