/**
 * Migration 0031 rebuilds the job table for the `expired` state and its `expires_at` column (SQLite cannot change a
 * CHECK in place). An object upgraded with jobs in it keeps every row and count, gets every trigger back, and
 * counts an expiry as the new triggers say: `expired` in type_count, in the minute's `cancelled`, a manual retry
 * written to the history, a child's expiry owed to its parent.
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
  lease_token, lease_expires_at, finished_at, parent_id, parent_step, parent_seq) VALUES (?, 't', '{}', ?, 0, 1, ?, 3, '[]', 1, 1, ?, ?, ?, ?, ?, ?)`;

describe("migration expired_state", () => {
  it("keeps rows and counts, re-creates every trigger, and counts expired jobs", async () => {
    const scratch = env.WAIT.getByName(`scratch:${crypto.randomUUID()}`);
    await runInDurableObject(scratch, async (_o, state) => {
      const sql = state.storage.sql;
      await migrateStorage(state.storage, before("0031_expired_state"), "scope");
      sql.exec(JOB, "a", "pending", 0, null, null, null, null, null, null);
      sql.exec(JOB, "b", "running", 1, "tok", 9_999_999_999_999, null, null, null, null);
      sql.exec(JOB, "c", "pending", 0, null, null, null, "parent-1", "child", 0);
      const countsBefore = sql.exec("SELECT type, pending, running FROM type_count").toArray();

      await migrateStorage(state.storage, migrations, "scope");

      expect(sql.exec("SELECT id, state, expires_at, parent_id FROM job ORDER BY seq").toArray()).toEqual([
        { id: "a", state: "pending", expires_at: null, parent_id: null },
        { id: "b", state: "running", expires_at: null, parent_id: null },
        { id: "c", state: "pending", expires_at: null, parent_id: "parent-1" },
      ]);
      expect(countsBefore).toEqual([{ type: "t", pending: 2, running: 1 }]);
      const names = (kind: string) => sql.exec<{ name: string }>("SELECT name FROM sqlite_master WHERE type = ? AND tbl_name = 'job' ORDER BY name", kind).toArray().map((r) => r.name);
      expect(names("trigger")).toEqual(["job_callback", "job_callback_delete", "job_callback_undone", "job_child_end", "job_count_insert", "job_count_update", "job_held_clear", "job_history_delete", "job_history_update", "job_log_delete", "job_signal_delete", "job_step_delete"]);
      expect(sql.exec<{ sql: string }>("SELECT sql FROM sqlite_master WHERE name = 'job_claim_idx'").one().sql).toContain('"priority" DESC');
      expect(sql.exec<{ sql: string }>("SELECT sql FROM sqlite_master WHERE name = 'job_key_claim_idx'").one().sql).toContain('"priority" DESC');

      // Expired needs a finish time (the CHECK), is counted as expired and in the minute's cancelled.
      expect(() => sql.exec("UPDATE job SET state = 'expired' WHERE id = 'a'")).toThrow(/CHECK/);
      sql.exec("UPDATE job SET state = 'expired', finished_at = 60000, updated_at = 60000, cancel_reason = 'not started before it expired' WHERE id IN ('a', 'c')");
      expect(allCounts(sql).map(({ state, n }) => [state, n]).sort()).toEqual([
        ["expired", 2],
        ["running", 1],
      ]);
      expect(metricsForReport(sql, 0, 60_000).find((m) => m.minute === 60000)?.cancelled).toBe(2);
      // The child's end is owed its parent.
      expect(sql.exec("SELECT kind, target, body ->> 'state' AS state FROM outbox").toArray()).toEqual([{ kind: "child_ended", target: "parent-1", state: "expired" }]);
      // A manual retry writes the end it undoes to the history.
      sql.exec("UPDATE job SET state = 'pending', finished_at = NULL, cancel_reason = NULL, updated_at = 61000 WHERE id = 'a'");
      expect(sql.exec("SELECT state, note FROM job_transition ORDER BY at").toArray()).toEqual([
        { state: "expired", note: "not started before it expired" },
        { state: "pending", note: "manual retry" },
      ]);
    });
  });
});
