-- A running job asked to pause (POST /v1/jobs/{id}/pause; src/scope/jobs/job-pause.ts, docs/http-api.md "Pause and
-- resume one job"): it pauses at its next step, or where its attempt would go back to pending. A paused job is
-- `waiting` with a `pause` entry in `wait`, which job_wait_check allows already; a running row may hold no `wait`,
-- so its ask is this column of its own — added in place, no rebuild.
ALTER TABLE `job` ADD `pause_asked` integer;
