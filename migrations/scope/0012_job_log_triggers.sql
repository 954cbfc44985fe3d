-- A job's ctx.log lines (job_log) go with the job: retention, prune and any other delete
-- (src/schema/scope.ts, README "Logs kept with the job").
CREATE TRIGGER job_log_delete AFTER DELETE ON job BEGIN
  DELETE FROM job_log WHERE job_seq = old.seq;
END;
