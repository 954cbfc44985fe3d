CREATE TABLE `metric` (
	`home` text NOT NULL,
	`type` text NOT NULL,
	`minute` integer NOT NULL,
	`enqueued` integer NOT NULL,
	`started` integer NOT NULL,
	`completed` integer NOT NULL,
	`failed` integer NOT NULL,
	`retried` integer NOT NULL,
	`cancelled` integer NOT NULL,
	PRIMARY KEY(`home`, `type`, `minute`)
);
--> statement-breakpoint
CREATE INDEX `metric_minute_idx` ON `metric` (`minute`);--> statement-breakpoint
CREATE TABLE `metric_series` (
	`minute` integer NOT NULL,
	`type` text NOT NULL,
	`enqueued` integer NOT NULL,
	`started` integer NOT NULL,
	`completed` integer NOT NULL,
	`failed` integer NOT NULL,
	`retried` integer NOT NULL,
	`cancelled` integer NOT NULL,
	PRIMARY KEY(`minute`, `type`)
);
--> statement-breakpoint
CREATE TABLE `metric_total` (
	`type` text PRIMARY KEY NOT NULL,
	`enqueued` integer NOT NULL,
	`started` integer NOT NULL,
	`completed` integer NOT NULL,
	`failed` integer NOT NULL,
	`retried` integer NOT NULL,
	`cancelled` integer NOT NULL
);
