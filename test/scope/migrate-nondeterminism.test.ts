/**
 * Migration 0045 rebuilds the job table for the failure kind `nondeterminism` (SQLite cannot change a CHECK in
 * place) and adds the code version an attempt ran on (`job.code_version`, `job_transition.version`). An object
 * upgraded with jobs in it keeps every row and count, gets every trigger and index back, counts the new kind in
 * type_count, and writes an attempt's version into the timeline row its end writes.
 */
import { runInDurableObject } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { migrations, migrationsBefore } from "../helpers/migrations";
import { migrateStorage } from "../../src/tables/migrate";
import { allCounts } from "../../src/scope/jobs/counts";
import { env } from "../helpers/scope";

const before = migrationsBefore;

const JOB = `INSERT INTO job (id, type, payload, state, priority, run_at, attempts, max_attempts, tags, created_at, updated_at,
  lease_token, lease_expires_at, started_at, failure_kind, finished_at) VALUES (?, 't', '{}', ?, 0, 1, ?, 3, '[]', 1, 1, ?, ?, ?, ?, ?)`;

describe("migration nondeterminism_and_code_version", () => {
  it("keeps rows and counts, re-creates every trigger and index, counts the new kind and keeps versions", async () => {
    const scratch = env.WAIT.getByName(`scratch:${crypto.randomUUID()}`);
    await runInDurableObject(scratch, async (_o, state) => {
      const sql = state.storage.sql;
      await migrateStorage(state.storage, before("0045_nondeterminism_and_code_version"), "scope");
      sql.exec(JOB, "a", "running", 1, "tok-a", 9_999_999_999_999, 5, null, null);
      sql.exec(JOB, "b", "running", 1, "tok-b", 9_999_999_999_999, 5, null, null);
      sql.exec(JOB, "c", "failed", 3, null, null, 5, "fatal", 50);
      // The new kind is refused before it.
      expect(() => sql.exec("UPDATE job SET failure_kind = 'nondeterminism' WHERE id = 'c'")).toThrow(/CHECK/);
      const indexes = sql.exec<{ name: string }>("SELECT name FROM sqlite_master WHERE type = 'index' AND tbl_name = 'job' AND sql IS NOT NULL ORDER BY rowid").toArray().map((r) => r.name);

      await migrateStorage(state.storage, migrations, "scope");

      expect(sql.exec("SELECT id, state, failure_kind, code_version FROM job ORDER BY seq").toArray()).toEqual([
        { id: "a", state: "running", failure_kind: null, code_version: null },
        { id: "b", state: "running", failure_kind: null, code_version: null },
        { id: "c", state: "failed", failure_kind: "fatal", code_version: null },
      ]);
      const names = (kind: string) => sql.exec<{ name: string }>("SELECT name FROM sqlite_master WHERE type = ? AND tbl_name = 'job' ORDER BY name", kind).toArray().map((r) => r.name);
      expect(names("trigger")).toEqual(["job_callback", "job_callback_delete", "job_callback_undone", "job_child_end", "job_count_insert", "job_count_update", "job_held_clear", "job_history_delete", "job_history_update", "job_log_delete", "job_signal_delete", "job_step_delete"]);
      // The same indexes, in the same order (where two fit a statement equally, SQLite's choice follows it).
      expect(sql.exec<{ name: string }>("SELECT name FROM sqlite_master WHERE type = 'index' AND tbl_name = 'job' AND sql IS NOT NULL ORDER BY rowid").toArray().map((r) => r.name)).toEqual(indexes);
      expect(sql.exec<{ sql: string }>("SELECT sql FROM sqlite_master WHERE name = 'job_claim_idx'").one().sql).toContain('"priority" DESC');

      // a: fails for nondeterminism, counted as its own kind.
      sql.exec("UPDATE job SET state = 'failed', failure_kind = 'nondeterminism', finished_at = 60, updated_at = 60, lease_token = NULL, lease_expires_at = NULL, code_version = 'v2' WHERE id = 'a'");
      const counts = Object.fromEntries(allCounts(sql).map(({ state, n }) => [state, n]));
      expect(counts).toMatchObject({ running: 1 });
      expect(sql.exec("SELECT failed_fatal, failed_nondeterminism FROM type_count WHERE type = 't'").one()).toEqual({ failed_fatal: 1, failed_nondeterminism: 1 });
      // b: its attempt ends back in pending on code v1: the timeline row the trigger writes carries it.
      sql.exec("UPDATE job SET state = 'pending', attempts = 1, run_at = 70, updated_at = 70, last_error = 'boom', lease_token = NULL, lease_expires_at = NULL, code_version = 'v1' WHERE id = 'b'");
      expect(sql.exec("SELECT state, note, started_at, version FROM job_transition").toArray()).toEqual([{ state: "pending", note: "boom", started_at: 5, version: "v1" }]);
      // c failed on code v2; a manual retry undoes its end, whose timeline row keeps the version that failed.
      sql.exec("UPDATE job SET code_version = 'v2' WHERE id = 'c'");
      sql.exec("UPDATE job SET state = 'pending', failure_kind = NULL, finished_at = NULL, attempts = 0, updated_at = 80 WHERE id = 'c'");
      expect(sql.exec("SELECT state, version FROM job_transition WHERE job_seq = (SELECT seq FROM job WHERE id = 'c') ORDER BY id").toArray()).toEqual([
        { state: "failed", version: "v2" },
        { state: "pending", version: null },
      ]);
    });
  });
});
