CREATE TABLE `job_step` (
	`job_seq` integer NOT NULL,
	`seq` integer NOT NULL,
	`name` text NOT NULL,
	`kind` text NOT NULL,
	`result` text,
	`started_at` integer NOT NULL,
	`finished_at` integer,
	`attempt` integer NOT NULL,
	`wake_at` integer,
	`bytes` integer NOT NULL,
	PRIMARY KEY(`job_seq`, `seq`)
);
