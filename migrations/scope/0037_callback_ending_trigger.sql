-- A manual retry undoes an ending whose callback is still owed (scope/callbacks.ts): the callback keeps that ending's
-- own fields — what the retry clears (scope/change.ts, JOB_RETRY_IF_FAILED) — so it tells the ending it was owed for,
-- not the pending job the row has become.
CREATE TRIGGER job_callback_undone AFTER UPDATE OF state ON job
WHEN old.callback IS NOT NULL AND old.finished_at IS NOT NULL AND new.finished_at IS NULL BEGIN
  UPDATE callback_out
     SET ending = json_object('state', old.state, 'run_at', old.run_at, 'attempts', old.attempts, 'last_error', old.last_error,
                              'failure_kind', old.failure_kind, 'result', old.result, 'cancel_reason', old.cancel_reason,
                              'finished_at', old.finished_at, 'started_at', old.started_at, 'expires_at', old.expires_at,
                              'updated_at', old.updated_at)
   WHERE job_seq = old.seq AND ended_at = old.finished_at AND ending IS NULL;
END;
