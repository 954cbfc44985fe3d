-- baseline: 0046_pause_asked
--> statement-breakpoint
-- Written by `npm run db:baseline` (test/tables/baseline.test.ts): the schema every migration makes.
--> statement-breakpoint
CREATE TABLE `job_permit` (
	`pool` text NOT NULL,
	`permit_id` text NOT NULL,
	`job_seq` integer NOT NULL,
	`lease_token` text NOT NULL,
	`hold_until` integer,
	PRIMARY KEY(`pool`, `permit_id`)
);
--> statement-breakpoint
CREATE TABLE `type_pause` (
	`type` text PRIMARY KEY NOT NULL
);
--> statement-breakpoint
CREATE TABLE `type_count` (
	`type` text PRIMARY KEY NOT NULL,
	`pending` integer DEFAULT 0 NOT NULL,
	`running` integer DEFAULT 0 NOT NULL,
	`completed` integer DEFAULT 0 NOT NULL,
	`cancelled` integer DEFAULT 0 NOT NULL,
	`superseded` integer DEFAULT 0 NOT NULL,
	`failed_retries_exhausted` integer DEFAULT 0 NOT NULL,
	`failed_fatal` integer DEFAULT 0 NOT NULL,
	`failed_stalled` integer DEFAULT 0 NOT NULL,
	`failed_timeout` integer DEFAULT 0 NOT NULL,
	`minute` integer DEFAULT 0 NOT NULL,
	`m_enqueued` integer DEFAULT 0 NOT NULL,
	`m_started` integer DEFAULT 0 NOT NULL,
	`m_completed` integer DEFAULT 0 NOT NULL,
	`m_failed` integer DEFAULT 0 NOT NULL,
	`m_retried` integer DEFAULT 0 NOT NULL,
	`m_cancelled` integer DEFAULT 0 NOT NULL
, `waiting` integer DEFAULT 0 NOT NULL, `expired` integer DEFAULT 0 NOT NULL, `failed_nondeterminism` integer DEFAULT 0 NOT NULL) WITHOUT ROWID;
--> statement-breakpoint
CREATE TABLE "job_step" (
	`job_seq` integer NOT NULL,
	`seq` integer NOT NULL,
	`name` text NOT NULL,
	`kind` text NOT NULL,
	`result` text,
	`started_at` integer NOT NULL,
	`finished_at` integer,
	`attempt` integer NOT NULL,
	`wake_at` integer,
	`bytes` integer NOT NULL, `ref` text,
	PRIMARY KEY(`job_seq`, `seq`)
) WITHOUT ROWID;
--> statement-breakpoint
CREATE TABLE "job_tombstone" (
	`id` text PRIMARY KEY NOT NULL,
	`expires_at` integer NOT NULL
) WITHOUT ROWID;
--> statement-breakpoint
CREATE TABLE "metric_minute" (
	`minute` integer NOT NULL,
	`type` text NOT NULL,
	`enqueued` integer DEFAULT 0 NOT NULL,
	`started` integer DEFAULT 0 NOT NULL,
	`completed` integer DEFAULT 0 NOT NULL,
	`failed` integer DEFAULT 0 NOT NULL,
	`retried` integer DEFAULT 0 NOT NULL,
	`cancelled` integer DEFAULT 0 NOT NULL,
	PRIMARY KEY(`minute`, `type`)
) WITHOUT ROWID;
--> statement-breakpoint
CREATE TABLE "meta" (
	`key` text PRIMARY KEY NOT NULL,
	`value` text NOT NULL
) WITHOUT ROWID;
--> statement-breakpoint
CREATE TABLE `job_signal` (
	`job_seq` integer NOT NULL,
	`kind` text NOT NULL,
	`name` text NOT NULL,
	`n` integer NOT NULL,
	`data` text NOT NULL,
	`sent_at` integer NOT NULL,
	`expires_at` integer NOT NULL,
	PRIMARY KEY(`job_seq`, `kind`, `name`, `n`)
) WITHOUT ROWID;
--> statement-breakpoint
CREATE TABLE `outbox` (
	`seq` integer PRIMARY KEY NOT NULL,
	`kind` text NOT NULL,
	`target` text NOT NULL,
	`body` text NOT NULL,
	`tries` integer DEFAULT 0 NOT NULL,
	`next_at` integer NOT NULL
);
--> statement-breakpoint
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
CREATE TABLE `topic_event` (
	`event_id` text PRIMARY KEY NOT NULL,
	`payload` text NOT NULL,
	`at` integer NOT NULL
);
--> statement-breakpoint
CREATE TABLE `callback_out` (
	`seq` integer PRIMARY KEY NOT NULL,
	`job_seq` integer NOT NULL,
	`state` text NOT NULL,
	`ended_at` integer NOT NULL,
	`next_at` integer NOT NULL,
	`tries` integer DEFAULT 0 NOT NULL,
	`last_error` text,
	`dead_at` integer
, `ending` text);
--> statement-breakpoint
CREATE TABLE "job_stage" (
	`batch` text NOT NULL,
	`idx` integer NOT NULL,
	`job` text NOT NULL,
	`staged_at` integer NOT NULL,
	`decider` text NOT NULL,
	PRIMARY KEY(`batch`, `idx`)
) WITHOUT ROWID;
--> statement-breakpoint
CREATE TABLE "batch_decision" (
	`batch` text PRIMARY KEY NOT NULL,
	`decision` text NOT NULL,
	`decided_at` integer NOT NULL
) WITHOUT ROWID;
--> statement-breakpoint
CREATE TABLE "job_transition" (
	`id` integer NOT NULL,
	`job_seq` integer NOT NULL,
	`at` integer NOT NULL,
	`state` text NOT NULL,
	`attempt` integer NOT NULL,
	`note` text,
	`started_at` integer, `version` text,
	PRIMARY KEY(`job_seq`, `id`)
) WITHOUT ROWID;
--> statement-breakpoint
CREATE TABLE "job_log" (
	`id` integer NOT NULL,
	`job_seq` integer NOT NULL,
	`at` integer NOT NULL,
	`attempt` integer NOT NULL,
	`message` text NOT NULL,
	`fields` text,
	PRIMARY KEY(`job_seq`, `id`)
) WITHOUT ROWID;
--> statement-breakpoint
CREATE TABLE `error_group` (
	`type` text NOT NULL,
	`fingerprint` text NOT NULL,
	`kind` text NOT NULL,
	`message` text NOT NULL,
	`frame` text,
	`sample` text NOT NULL,
	`first_at` integer NOT NULL,
	`first_job` text NOT NULL,
	`last_at` integer NOT NULL,
	`last_job` text NOT NULL,
	`total` integer NOT NULL,
	`buckets` text NOT NULL,
	`recent` text NOT NULL,
	PRIMARY KEY(`type`, `fingerprint`)
) WITHOUT ROWID;
--> statement-breakpoint
CREATE TABLE "job" (
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
	`dedupe_mode` text,
	`scheduled_for` integer,
	`backoff` text,
	`tags` text NOT NULL,
	`last_error` text,
	`result` text,
	`cancel_reason` text,
	`lease_token` text,
	`lease_owner` text,
	`lease_expires_at` integer,
	`lease_ms` integer,
	`lease_kept` integer DEFAULT 1 NOT NULL,
	`held` integer DEFAULT 0 NOT NULL,
	`logs` text,
	`history` text,
	`rerun_of` text,
	`reruns` text,
	`code_version` text,
	`created_at` integer NOT NULL,
	`updated_at` integer NOT NULL,
	`started_at` integer,
	`finished_at` integer,
	`tally` integer DEFAULT 0 NOT NULL,
	`own_id` integer DEFAULT 1 NOT NULL,
	`id_seq` integer DEFAULT 0 NOT NULL,
	`limit_key` text,
	`ordered` integer DEFAULT 1 NOT NULL,
	`wait` text,
	`parent_id` text,
	`parent_step` text,
	`parent_seq` integer,
	`children_open` integer DEFAULT 0 NOT NULL,
	`expires_at` integer,
	`progress` text,
	`progress_at` integer,
	`callback` text,
	`trace` text,
	`journal` text, `pause_asked` integer,
	CONSTRAINT "job_state_check" CHECK(state IN ('pending', 'running', 'waiting', 'completed', 'failed', 'cancelled', 'superseded', 'expired')),
	CONSTRAINT "job_failure_kind_check" CHECK((state = 'failed') = (failure_kind IS NOT NULL) AND (failure_kind IS NULL OR failure_kind IN ('retries_exhausted', 'fatal', 'stalled', 'timeout', 'nondeterminism'))),
	CONSTRAINT "job_finished_check" CHECK((state IN ('completed', 'failed', 'cancelled', 'superseded', 'expired')) = (finished_at IS NOT NULL)),
	CONSTRAINT "job_lease_check" CHECK((state = 'running') = (lease_token IS NOT NULL) AND (state = 'running') = (lease_expires_at IS NOT NULL)),
	CONSTRAINT "job_wait_check" CHECK((state = 'waiting') = (wait IS NOT NULL))
);
--> statement-breakpoint
CREATE INDEX `job_permit_job_idx` ON `job_permit` (`job_seq`);
--> statement-breakpoint
CREATE INDEX `job_tombstone_expires_idx` ON `job_tombstone` (`expires_at`);
--> statement-breakpoint
CREATE INDEX `job_signal_expires_idx` ON `job_signal` (`expires_at`);
--> statement-breakpoint
CREATE INDEX `outbox_next_idx` ON `outbox` (`next_at`);
--> statement-breakpoint
CREATE INDEX `event_waiter_match_idx` ON `event_waiter` (`fields`,`match`);
--> statement-breakpoint
CREATE INDEX `event_waiter_until_idx` ON `event_waiter` (`until`);
--> statement-breakpoint
CREATE INDEX `topic_event_at_idx` ON `topic_event` (`at`);
--> statement-breakpoint
CREATE INDEX `batch_decision_at_idx` ON `batch_decision` (`decided_at`);
--> statement-breakpoint
CREATE UNIQUE INDEX `job_dedupe_pending_idx` ON `job` (`dedupe_key`) WHERE dedupe_key IS NOT NULL AND state = 'pending' AND started_at IS NULL;
--> statement-breakpoint
CREATE INDEX `job_ordered_live_idx` ON `job` (`type`,`seq`) WHERE ordered = 1 AND state IN ('pending', 'running', 'waiting');
--> statement-breakpoint
CREATE INDEX `job_key_idx` ON `job` (`dedupe_key`) WHERE dedupe_key IS NOT NULL;
--> statement-breakpoint
CREATE UNIQUE INDEX `job_id_idx` ON `job` (`id`) WHERE id_seq = 0;
--> statement-breakpoint
CREATE INDEX `job_lease_idx` ON `job` (`lease_expires_at`) WHERE state = 'running' AND lease_kept = 1;
--> statement-breakpoint
CREATE INDEX `job_finished_idx` ON `job` (`state`,`finished_at`) WHERE finished_at IS NOT NULL AND state <> 'completed';
--> statement-breakpoint
CREATE INDEX `job_wait_idx` ON `job` (`run_at`) WHERE state = 'waiting';
--> statement-breakpoint
CREATE INDEX `job_key_claim_idx` ON `job` (`type`,`limit_key`,"priority" DESC,`run_at`,`seq`,`dedupe_key`) WHERE state = 'pending' AND limit_key IS NOT NULL;
--> statement-breakpoint
CREATE INDEX `job_expiry_idx` ON `job` (`expires_at`) WHERE state = 'pending' AND started_at IS NULL AND expires_at IS NOT NULL;
--> statement-breakpoint
CREATE INDEX `job_claim_idx` ON `job` (`type`,"priority" DESC,`run_at`,`seq`,`dedupe_key`) WHERE state = 'pending' AND held = 0;
--> statement-breakpoint
CREATE TRIGGER job_signal_delete AFTER DELETE ON job BEGIN
  DELETE FROM job_signal WHERE job_seq = old.seq;
END;
--> statement-breakpoint
CREATE TRIGGER job_step_delete AFTER DELETE ON job BEGIN
  DELETE FROM job_step WHERE job_seq = old.seq;
END;
--> statement-breakpoint
CREATE TRIGGER job_count_insert AFTER INSERT ON job WHEN new.tally = 0 BEGIN
  INSERT INTO type_count (type) VALUES (new.type) ON CONFLICT (type) DO NOTHING;
  UPDATE type_count SET
    pending = pending + (new.state = 'pending'),
    running = running + (new.state = 'running'),
    waiting = waiting + (new.state = 'waiting'),
    completed = completed + (new.state = 'completed'),
    cancelled = cancelled + (new.state = 'cancelled'),
    superseded = superseded + (new.state = 'superseded'),
    expired = expired + (new.state = 'expired'),
    failed_retries_exhausted = failed_retries_exhausted + (new.state = 'failed' AND new.failure_kind IS 'retries_exhausted'),
    failed_fatal = failed_fatal + (new.state = 'failed' AND new.failure_kind IS 'fatal'),
    failed_stalled = failed_stalled + (new.state = 'failed' AND new.failure_kind IS 'stalled'),
    failed_timeout = failed_timeout + (new.state = 'failed' AND new.failure_kind IS 'timeout'),
    failed_nondeterminism = failed_nondeterminism + (new.state = 'failed' AND new.failure_kind IS 'nondeterminism')
   WHERE type = new.type;
END;
--> statement-breakpoint
CREATE TRIGGER job_count_update AFTER UPDATE OF state, failure_kind ON job
WHEN (old.state IS NOT new.state OR old.failure_kind IS NOT new.failure_kind) AND new.tally = old.tally BEGIN
  INSERT INTO metric_minute (minute, type, enqueued, started, completed, failed, retried, cancelled)
  SELECT minute, type, m_enqueued, m_started, m_completed, m_failed, m_retried, m_cancelled FROM type_count
   WHERE type = new.type AND minute < (new.updated_at / 60000 * 60000)
     AND m_enqueued + m_started + m_completed + m_failed + m_retried + m_cancelled > 0
  ON CONFLICT (minute, type) DO UPDATE SET
    enqueued = enqueued + excluded.enqueued, started = started + excluded.started, completed = completed + excluded.completed,
    failed = failed + excluded.failed, retried = retried + excluded.retried, cancelled = cancelled + excluded.cancelled;
  INSERT INTO metric_minute (minute, type, started, completed, failed, retried, cancelled)
  SELECT (new.updated_at / 60000 * 60000), new.type, new.state = 'running', new.state = 'completed', new.state = 'failed', new.state = 'pending' AND old.state IS NOT 'waiting', new.state IN ('cancelled', 'superseded', 'expired')
    FROM type_count WHERE type = new.type AND minute > (new.updated_at / 60000 * 60000) AND old.state IS NOT new.state
  ON CONFLICT (minute, type) DO UPDATE SET
    started = started + excluded.started, completed = completed + excluded.completed, failed = failed + excluded.failed,
    retried = retried + excluded.retried, cancelled = cancelled + excluded.cancelled;
  UPDATE type_count SET
    pending = pending + (new.state = 'pending') - (old.state = 'pending'),
    running = running + (new.state = 'running') - (old.state = 'running'),
    waiting = waiting + (new.state = 'waiting') - (old.state = 'waiting'),
    completed = completed + (new.state = 'completed') - (old.state = 'completed'),
    cancelled = cancelled + (new.state = 'cancelled') - (old.state = 'cancelled'),
    superseded = superseded + (new.state = 'superseded') - (old.state = 'superseded'),
    expired = expired + (new.state = 'expired') - (old.state = 'expired'),
    failed_retries_exhausted = failed_retries_exhausted + (new.state = 'failed' AND new.failure_kind IS 'retries_exhausted') - (old.state = 'failed' AND old.failure_kind IS 'retries_exhausted'),
    failed_fatal = failed_fatal + (new.state = 'failed' AND new.failure_kind IS 'fatal') - (old.state = 'failed' AND old.failure_kind IS 'fatal'),
    failed_stalled = failed_stalled + (new.state = 'failed' AND new.failure_kind IS 'stalled') - (old.state = 'failed' AND old.failure_kind IS 'stalled'),
    failed_timeout = failed_timeout + (new.state = 'failed' AND new.failure_kind IS 'timeout') - (old.state = 'failed' AND old.failure_kind IS 'timeout'),
    failed_nondeterminism = failed_nondeterminism + (new.state = 'failed' AND new.failure_kind IS 'nondeterminism') - (old.state = 'failed' AND old.failure_kind IS 'nondeterminism'),
    m_enqueued = CASE WHEN minute < (new.updated_at / 60000 * 60000) THEN 0 ELSE m_enqueued END,
    m_started = CASE WHEN minute < (new.updated_at / 60000 * 60000) THEN 0 ELSE m_started END + (minute <= (new.updated_at / 60000 * 60000) AND old.state IS NOT new.state AND new.state = 'running'),
    m_completed = CASE WHEN minute < (new.updated_at / 60000 * 60000) THEN 0 ELSE m_completed END + (minute <= (new.updated_at / 60000 * 60000) AND old.state IS NOT new.state AND new.state = 'completed'),
    m_failed = CASE WHEN minute < (new.updated_at / 60000 * 60000) THEN 0 ELSE m_failed END + (minute <= (new.updated_at / 60000 * 60000) AND old.state IS NOT new.state AND new.state = 'failed'),
    m_retried = CASE WHEN minute < (new.updated_at / 60000 * 60000) THEN 0 ELSE m_retried END + (minute <= (new.updated_at / 60000 * 60000) AND old.state IS NOT new.state AND new.state = 'pending' AND old.state IS NOT 'waiting'),
    m_cancelled = CASE WHEN minute < (new.updated_at / 60000 * 60000) THEN 0 ELSE m_cancelled END + (minute <= (new.updated_at / 60000 * 60000) AND old.state IS NOT new.state AND new.state IN ('cancelled', 'superseded', 'expired')),
    minute = max(minute, (new.updated_at / 60000 * 60000))
   WHERE type = new.type;
END;
--> statement-breakpoint
CREATE TRIGGER job_child_end AFTER UPDATE OF state ON job
WHEN new.parent_id IS NOT NULL AND new.finished_at IS NOT NULL AND old.finished_at IS NULL BEGIN
  INSERT INTO outbox (kind, target, body, next_at)
  VALUES ('child_ended', new.parent_id,
          json_object('step', new.parent_step, 'seq', new.parent_seq, 'child', new.id, 'state', new.state, 'result', json(coalesce(new.result, 'null')),
                      'error', new.last_error, 'failureKind', new.failure_kind, 'reason', new.cancel_reason),
          new.updated_at + 5000);
END;
--> statement-breakpoint
CREATE TRIGGER job_callback AFTER UPDATE OF state ON job
WHEN new.callback IS NOT NULL AND new.finished_at IS NOT NULL AND old.finished_at IS NULL
 AND EXISTS (SELECT 1 FROM json_each(new.callback, '$.on') WHERE value = new.state) BEGIN
  INSERT INTO callback_out (job_seq, state, ended_at, next_at) VALUES (new.seq, new.state, new.finished_at, new.finished_at + 5000);
END;
--> statement-breakpoint
CREATE TRIGGER job_callback_delete AFTER DELETE ON job WHEN old.callback IS NOT NULL BEGIN
  DELETE FROM callback_out WHERE job_seq = old.seq;
END;
--> statement-breakpoint
CREATE TRIGGER job_callback_undone AFTER UPDATE OF state ON job
WHEN old.callback IS NOT NULL AND old.finished_at IS NOT NULL AND new.finished_at IS NULL BEGIN
  UPDATE callback_out
     SET ending = json_object('state', old.state, 'run_at', old.run_at, 'attempts', old.attempts, 'last_error', old.last_error,
                              'failure_kind', old.failure_kind, 'result', old.result, 'cancel_reason', old.cancel_reason,
                              'finished_at', old.finished_at, 'started_at', old.started_at, 'expires_at', old.expires_at,
                              'updated_at', old.updated_at)
   WHERE job_seq = old.seq AND ended_at = old.finished_at AND ending IS NULL;
END;
--> statement-breakpoint
CREATE TRIGGER job_history_delete AFTER DELETE ON job BEGIN
  DELETE FROM job_transition WHERE job_seq = old.seq;
END;
--> statement-breakpoint
CREATE TRIGGER job_log_delete AFTER DELETE ON job BEGIN
  DELETE FROM job_log WHERE job_seq = old.seq;
END;
--> statement-breakpoint
CREATE TRIGGER job_held_clear AFTER UPDATE OF state ON job WHEN new.held = 1 AND new.state <> 'pending' BEGIN
  UPDATE job SET held = 0 WHERE seq = new.seq;
END;
--> statement-breakpoint
CREATE TRIGGER job_history_update AFTER UPDATE OF state ON job WHEN old.state IS NOT new.state AND new.state IN ('pending', 'waiting') AND new.history IS old.history BEGIN
  INSERT INTO job_transition (id, job_seq, at, state, attempt, note, started_at, version)
  SELECT max((SELECT coalesce(max(t.id), 0) FROM job_transition AS t WHERE t.job_seq = new.seq), coalesce(new.history ->> '$[#-1][0]', 0)) + 1, new.seq, old.finished_at, old.state, old.attempts,
         CASE old.state WHEN 'failed' THEN old.failure_kind || coalesce(': ' || substr(old.last_error, 1, 500), '') ELSE old.cancel_reason END,
         old.started_at, CASE WHEN old.state = 'failed' THEN old.code_version END
   WHERE new.state = 'pending' AND old.state IN ('failed', 'cancelled', 'superseded', 'expired');
  INSERT INTO job_transition (id, job_seq, at, state, attempt, note, started_at, version)
  SELECT max((SELECT coalesce(max(t.id), 0) FROM job_transition AS t WHERE t.job_seq = new.seq), coalesce(new.history ->> '$[#-1][0]', 0)) + 1, new.seq, new.updated_at, 'waiting', new.attempts, NULL, old.started_at, new.code_version
   WHERE new.state = 'waiting';
  INSERT INTO job_transition (id, job_seq, at, state, attempt, note, started_at, version)
  SELECT max((SELECT coalesce(max(t.id), 0) FROM job_transition AS t WHERE t.job_seq = new.seq), coalesce(new.history ->> '$[#-1][0]', 0)) + 1, new.seq, new.updated_at, 'pending', new.attempts,
         CASE WHEN old.state IN ('failed', 'cancelled', 'superseded', 'expired') THEN 'manual retry' WHEN old.state = 'waiting' THEN NULL ELSE substr(new.last_error, 1, 500) END,
         CASE WHEN old.state = 'running' THEN old.started_at END, CASE WHEN old.state = 'running' THEN new.code_version END
   WHERE new.state = 'pending';
END;
