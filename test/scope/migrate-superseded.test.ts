/**
 * Migration 0013 rebuilds the job table for the `superseded` state (SQLite
 * cannot change a CHECK in place). An object upgraded with jobs in it keeps
 * every row, count and index, and gets every trigger back.
 */
import { runInDurableObject } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { migrations, migrationsBefore } from "../helpers/migrations";
import { migrateStorage } from "../../src/tables/migrate";
import { allCounts } from "../../src/scope/jobs/counts";
import { metricsForReport } from "../../src/scope/report/minute-counters";
import { env } from "../helpers/scope";

const before = migrationsBefore;

const JOB = `INSERT INTO job (id, type, payload, state, priority, run_at, attempts, max_attempts, tags, created_at, updated_at,
  lease_token, lease_expires_at, finished_at, dedupe_key) VALUES (?, 't', '{}', ?, 0, 1, ?, 3, '[]', 1, 1, ?, ?, ?, ?)`;

describe("migration superseded_state", () => {
  it("keeps rows, counts and indexes and re-creates every trigger", async () => {
    // A WaitDO keeps nothing in SQLite: its storage is a scratch database here.
    const scratch = env.WAIT.getByName(`scratch:${crypto.randomUUID()}`);
    await runInDurableObject(scratch, async (_o, state) => {
      const sql = state.storage.sql;
      await migrateStorage(state.storage, before("0013_superseded_state"), "scope");
      sql.exec(JOB, "a", "pending", 0, null, null, null, "k");
      sql.exec(JOB, "b", "running", 1, "tok", 9_999_999_999_999, null, "k2");
      sql.exec(JOB, "c", "cancelled", 1, null, null, 5, null);
      const seqOf = (id: string) => sql.exec<{ seq: number }>("SELECT seq FROM job WHERE id = ?", id).one().seq;
      sql.exec("INSERT INTO job_log (job_seq, at, attempt, message) VALUES (?, 1, 1, 'm')", seqOf("c"));
      sql.exec("INSERT INTO job_step (job_seq, seq, name, kind, started_at, attempt, bytes) VALUES (?, 0, 's', 'step', 1, 1, 1)", seqOf("c"));
      // Before: job_count's rows; after, read the way the object reads them (a later migration replaced job_count by type_count).
      const countsBefore = sql.exec("SELECT type, state, n FROM job_count WHERE n > 0 ORDER BY state").toArray();
      const counts = () => allCounts(sql).map(({ type, state, n }) => ({ type, state, n })).sort((a, b) => (a.state < b.state ? -1 : 1));

      await migrateStorage(state.storage, migrations, "scope");

      expect(sql.exec("SELECT id, state FROM job ORDER BY seq").toArray()).toEqual([
        { id: "a", state: "pending" },
        { id: "b", state: "running" },
        { id: "c", state: "cancelled" },
      ]);
      expect(counts()).toEqual(countsBefore);
      const names = (kind: string) => sql.exec<{ name: string }>("SELECT name FROM sqlite_master WHERE type = ? AND tbl_name = 'job' ORDER BY name", kind).toArray().map((r) => r.name);
      expect(names("trigger")).toEqual(["job_callback", "job_callback_delete", "job_callback_undone", "job_child_end", "job_count_insert", "job_count_update", "job_held_clear", "job_history_delete", "job_history_update", "job_log_delete", "job_signal_delete", "job_step_delete"]);
      expect(names("index")).toEqual(expect.arrayContaining(["job_claim_idx", "job_dedupe_pending_idx", "job_finished_idx", "job_id_idx", "job_lease_idx"]));
      expect(sql.exec<{ sql: string }>("SELECT sql FROM sqlite_master WHERE name = 'job_claim_idx'").one().sql).toContain('"priority" DESC');

      // The new state is accepted, counted by the triggers, and its metric is a cancel.
      sql.exec("UPDATE job SET state = 'superseded', lease_token = NULL, lease_expires_at = NULL, finished_at = 7, updated_at = 60000 WHERE id = 'b'");
      expect(allCounts(sql).find((c) => c.state === "superseded")?.n).toBe(1);
      expect(metricsForReport(sql, 0, 60_000).find((m) => m.minute === 60000)?.cancelled).toBe(1);
      // The delete triggers still clean up after a job.
      sql.exec("DELETE FROM job WHERE id = 'c'");
      expect(sql.exec("SELECT (SELECT count(*) FROM job_log) + (SELECT count(*) FROM job_step) AS n").one().n).toBe(0);
    });
  });
});
