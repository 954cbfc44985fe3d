CREATE TABLE `job` (
	`seq` integer PRIMARY KEY NOT NULL,
	`id` text NOT NULL,
	`type` text NOT NULL,
	`payload` text NOT NULL,
	`scope_type` text,
	`scope_id` text,
	`state` text NOT NULL,
	`failure_kind` text,
	`priority` integer NOT NULL,
	`run_at` integer NOT NULL,
	`attempts` integer NOT NULL,
	`max_attempts` integer NOT NULL,
	`timeout_ms` integer,
	`dedupe_key` text,
	`tags` text NOT NULL,
	`last_error` text,
	`result` text,
	`cancel_reason` text,
	`lease_token` text,
	`lease_owner` text,
	`lease_expires_at` integer,
	`lease_ms` integer,
	`created_at` integer NOT NULL,
	`updated_at` integer NOT NULL,
	`started_at` integer,
	`finished_at` integer,
	CONSTRAINT "job_state_check" CHECK(state IN ('pending', 'running', 'completed', 'failed', 'cancelled')),
	CONSTRAINT "job_failure_kind_check" CHECK((state = 'failed') = (failure_kind IS NOT NULL) AND (failure_kind IS NULL OR failure_kind IN ('retries_exhausted', 'fatal', 'stalled', 'timeout'))),
	CONSTRAINT "job_finished_check" CHECK((state IN ('completed', 'failed', 'cancelled')) = (finished_at IS NOT NULL)),
	CONSTRAINT "job_lease_check" CHECK((state = 'running') = (lease_token IS NOT NULL) AND (state = 'running') = (lease_expires_at IS NOT NULL))
);
--> statement-breakpoint
CREATE UNIQUE INDEX `job_id_idx` ON `job` (`id`);--> statement-breakpoint
CREATE INDEX `job_claim_idx` ON `job` (`type`,"priority" DESC,`run_at`,`seq`) WHERE state = 'pending';--> statement-breakpoint
CREATE INDEX `job_due_idx` ON `job` (`type`,`run_at`) WHERE state = 'pending';--> statement-breakpoint
CREATE INDEX `job_lease_idx` ON `job` (`lease_expires_at`) WHERE state = 'running';--> statement-breakpoint
CREATE INDEX `job_finished_idx` ON `job` (`state`,`finished_at`) WHERE finished_at IS NOT NULL;--> statement-breakpoint
CREATE UNIQUE INDEX `job_dedupe_idx` ON `job` (`dedupe_key`) WHERE dedupe_key IS NOT NULL AND state IN ('pending', 'running');--> statement-breakpoint
CREATE TABLE `job_count` (
	`type` text NOT NULL,
	`state` text NOT NULL,
	`failure_kind` text NOT NULL,
	`n` integer NOT NULL,
	PRIMARY KEY(`type`, `state`, `failure_kind`)
);
--> statement-breakpoint
CREATE TABLE `meta` (
	`key` text PRIMARY KEY NOT NULL,
	`value` text NOT NULL
);
