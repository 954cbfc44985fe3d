CREATE TABLE `job_permit` (
	`pool` text NOT NULL,
	`permit_id` text NOT NULL,
	`job_seq` integer NOT NULL,
	`lease_token` text NOT NULL,
	`hold_until` integer,
	PRIMARY KEY(`pool`, `permit_id`)
);
--> statement-breakpoint
CREATE INDEX `job_permit_job_idx` ON `job_permit` (`job_seq`);