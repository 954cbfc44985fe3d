-- A job's journal (job_step) goes with the job: retention, prune and any other delete
-- (src/schema/scope.ts, README "Durable steps").
CREATE TRIGGER job_step_delete AFTER DELETE ON job BEGIN
  DELETE FROM job_step WHERE job_seq = old.seq;
END;
