/**
 * Migration 0027 rebuilds the job table for the `waiting` state and its `wait` column (SQLite cannot change a CHECK
 * in place). An object upgraded with jobs in it keeps every row, count and index, gets every trigger back, and
 * counts a wait and its end as the new triggers say (a resumed wait is no retry).
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
  lease_token, lease_expires_at, finished_at, dedupe_key, id_seq, lease_kept) VALUES (?, 't', '{}', ?, 0, 1, ?, 3, '[]', 1, 1, ?, ?, ?, ?, ?, ?)`;

describe("migration waiting_state", () => {
  it("keeps rows, counts and indexes, re-creates every trigger, and takes waiting jobs", async () => {
    // A WaitDO keeps nothing in SQLite: its storage is a scratch database here.
    const scratch = env.WAIT.getByName(`scratch:${crypto.randomUUID()}`);
    await runInDurableObject(scratch, async (_o, state) => {
      const sql = state.storage.sql;
      await migrateStorage(state.storage, before("0027_waiting_state"), "scope");
      sql.exec(JOB, "a", "pending", 0, null, null, null, "k", 0, 1);
      sql.exec(JOB, "b", "running", 1, "tok", 9_999_999_999_999, null, "k2", 1, 0);
      sql.exec(JOB, "c", "cancelled", 1, null, null, 5, null, 0, 1);
      const seqOf = (id: string) => sql.exec<{ seq: number }>("SELECT seq FROM job WHERE id = ?", id).one().seq;
      sql.exec("INSERT INTO job_step (job_seq, seq, name, kind, started_at, attempt, bytes) VALUES (?, 0, 's', 'step', 1, 1, 1)", seqOf("c"));
      const counts = () => allCounts(sql).map(({ type, state, n }) => ({ type, state, n })).sort((a, b) => (a.state < b.state ? -1 : 1));
      const countsBefore = sql.exec<{ type: string; pending: number; running: number; cancelled: number }>("SELECT type, pending, running, cancelled FROM type_count").toArray();

      await migrateStorage(state.storage, migrations, "scope");

      expect(sql.exec("SELECT id, state, wait, id_seq, lease_kept FROM job ORDER BY seq").toArray()).toEqual([
        { id: "a", state: "pending", wait: null, id_seq: 0, lease_kept: 1 },
        { id: "b", state: "running", wait: null, id_seq: 1, lease_kept: 0 },
        { id: "c", state: "cancelled", wait: null, id_seq: 0, lease_kept: 1 },
      ]);
      expect(countsBefore).toEqual([{ type: "t", pending: 1, running: 1, cancelled: 1 }]);
      expect(counts()).toEqual([
        { type: "t", state: "cancelled", n: 1 },
        { type: "t", state: "pending", n: 1 },
        { type: "t", state: "running", n: 1 },
      ]);
      const names = (kind: string) => sql.exec<{ name: string }>("SELECT name FROM sqlite_master WHERE type = ? AND tbl_name = 'job' ORDER BY name", kind).toArray().map((r) => r.name);
      expect(names("trigger")).toEqual(["job_callback", "job_callback_delete", "job_callback_undone", "job_child_end", "job_count_insert", "job_count_update", "job_held_clear", "job_history_delete", "job_history_update", "job_log_delete", "job_signal_delete", "job_step_delete"]);
      expect(names("index")).toEqual(["job_claim_idx", "job_dedupe_pending_idx", "job_expiry_idx", "job_finished_idx", "job_id_idx", "job_key_claim_idx", "job_key_idx", "job_lease_idx", "job_ordered_live_idx", "job_wait_idx"]);
      expect(sql.exec<{ sql: string }>("SELECT sql FROM sqlite_master WHERE name = 'job_claim_idx'").one().sql).toContain('"priority" DESC');

      // A running job waits: counted as waiting, with a timeline row; without a `wait` the CHECK refuses it.
      expect(() => sql.exec("UPDATE job SET state = 'waiting', lease_token = NULL, lease_expires_at = NULL WHERE id = 'b'")).toThrow(/CHECK/);
      sql.exec(`UPDATE job SET state = 'waiting', wait = '[]', lease_token = NULL, lease_expires_at = NULL, updated_at = 60000 WHERE id = 'b'`);
      expect(allCounts(sql).find((c) => c.state === "waiting")?.n).toBe(1);
      expect(sql.exec("SELECT state FROM job_transition WHERE job_seq = ?", seqOf("b")).toArray()).toEqual([{ state: "waiting" }]);
      // Its end is no retry.
      sql.exec("UPDATE job SET state = 'pending', wait = NULL, updated_at = 60001 WHERE id = 'b'");
      expect(allCounts(sql).find((c) => c.state === "waiting")).toBeUndefined();
      expect(metricsForReport(sql, 0, 60_001).find((m) => m.minute === 60000)?.retried ?? 0).toBe(0);
      // Kept signals go with their job.
      sql.exec("INSERT INTO job_signal (job_seq, kind, name, n, data, sent_at, expires_at) VALUES (?, 'signal', 'x', 1, 'null', 1, 2)", seqOf("c"));
      sql.exec("DELETE FROM job WHERE id = 'c'");
      expect(sql.exec("SELECT (SELECT count(*) FROM job_signal) + (SELECT count(*) FROM job_step) AS n").one().n).toBe(0);
    });
  });
});
