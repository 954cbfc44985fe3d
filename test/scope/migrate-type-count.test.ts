/**
 * Upgrading an object that holds jobs, from the last release's schema (migrations to 0016) to this one's
 * (0017–0023: tally and own_id columns, type_count in place of job_count, tables rebuilt WITHOUT ROWID, the key
 * and ordered indexes): its counts carry over into type_count, its journal steps, tombstones, minutes and meta
 * survive the rebuild, and the triggers count what comes after.
 */
import { runInDurableObject } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import migrations from "../../migrations/scope/migrations.js";
import { migrateStorage } from "../../src/tables/migrate";
import { allCounts } from "../../src/scope/jobs/counts";
import { metricsForReport } from "../../src/scope/report/minute-counters";
import { env } from "../helpers/scope";

const upTo = (tag: string) => {
  const at = migrations.journal.entries.findIndex((e) => e.tag === tag);
  return { ...migrations, journal: { ...migrations.journal, entries: migrations.journal.entries.slice(0, at + 1) } };
};

const JOB = `INSERT INTO job (id, type, payload, state, failure_kind, priority, run_at, attempts, max_attempts, tags, created_at, updated_at,
  lease_token, lease_expires_at, finished_at, dedupe_key, started_at) VALUES (?, ?, '{}', ?, ?, 0, 1, 1, 3, '[]', 1, 60000, ?, ?, ?, ?, ?)`;

describe("migration type_count", () => {
  it("carries counts, steps, tombstones, minutes and meta over, and counts what comes after", async () => {
    // A WaitDO keeps nothing in SQLite: its storage is a scratch database here.
    const scratch = env.WAIT.getByName(`scratch:${crypto.randomUUID()}`);
    await runInDurableObject(scratch, async (_o, state) => {
      const sql = state.storage.sql;
      await migrateStorage(state.storage, upTo("0016_journaled_keys"), "scope");
      sql.exec(JOB, "a", "t", "pending", null, null, null, null, "k1", null);
      sql.exec(JOB, "b", "t", "running", null, "tok", 9_999_999_999_999, null, "k2", 5);
      sql.exec(JOB, "c", "t", "failed", "fatal", null, null, 7, null, 5);
      sql.exec(JOB, "d", "u", "completed", null, null, null, 7, null, 5);
      sql.exec("INSERT INTO job_step (job_seq, seq, name, kind, started_at, attempt, bytes) VALUES ((SELECT seq FROM job WHERE id = 'b'), 0, 's', 'step', 1, 1, 1)");
      sql.exec("INSERT INTO job_tombstone (id, expires_at) VALUES ('gone', 99)");
      sql.exec("INSERT INTO meta (key, value) VALUES ('catalog_dirty_since', '42')");
      sql.exec("INSERT INTO metric_minute (minute, type, enqueued) VALUES (60000, 't', 3)");
      const before = sql.exec("SELECT type, state, failure_kind, n FROM job_count WHERE n > 0 ORDER BY type, state").toArray();

      await migrateStorage(state.storage, migrations, "scope");

      expect(allCounts(sql).map(({ type, state, failure_kind, n }) => ({ type, state, failure_kind, n })).sort((x, y) => (x.type + x.state < y.type + y.state ? -1 : 1))).toEqual(before);
      expect(sql.exec("SELECT count(*) AS n FROM job_step").one().n).toBe(1);
      expect(sql.exec("SELECT expires_at FROM job_tombstone WHERE id = 'gone'").one().expires_at).toBe(99);
      expect(sql.exec("SELECT value FROM meta WHERE key = 'catalog_dirty_since'").one().value).toBe("42");
      expect(metricsForReport(sql, 0, 60_000)).toEqual([expect.objectContaining({ minute: 60000, type: "t", enqueued: 3 })]);
      const withoutRowid = (t: string) => /WITHOUT ROWID/i.test(sql.exec<{ sql: string }>("SELECT sql FROM sqlite_master WHERE name = ?", t).one().sql);
      for (const t of ["type_count", "job_step", "job_tombstone", "metric_minute", "meta"]) expect(withoutRowid(t), t).toBe(true);
      // Jobs enqueued before have own ids (a tombstone when deleted) and count as ordered until the object says otherwise.
      expect(sql.exec("SELECT min(own_id) AS o, min(ordered) AS r FROM job").one()).toEqual({ o: 1, r: 1 });

      // A move by any statement is counted by trigger: pending → running, in the minute of the move (a later one).
      sql.exec("UPDATE job SET state = 'running', lease_token = 'x', lease_expires_at = 9999999999999, updated_at = 120000 WHERE id = 'a'");
      expect(allCounts(sql).find((c) => c.type === "t" && c.state === "running")?.n).toBe(2);
      expect(allCounts(sql).find((c) => c.type === "t" && c.state === "pending")).toBeUndefined();
      expect(metricsForReport(sql, 0, 120_000).find((m) => m.minute === 120000 && m.type === "t")?.started).toBe(1);
      // The journal still goes with its job.
      sql.exec("DELETE FROM job WHERE id = 'b'");
      expect(sql.exec("SELECT count(*) AS n FROM job_step").one().n).toBe(0);
    });
  });
});
