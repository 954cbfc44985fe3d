/**
 * What a job costs one scope object in rows written and read — the units
 * SQLite storage is billed in — summed from each statement's own cursor
 * (rowsWritten, rowsRead), over enqueue → claim → complete, retention sweep
 * not included. Counts are exact, so each has a ceiling at today's value:
 * a change that writes more fails here, one that writes less lowers it.
 */
import { runInDurableObject } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import type { ScopeDO } from "../../src/scope/scope-do";
import { freshScope, newJob } from "../helpers/scope";

/** metered: while `act` runs, every statement's cursor is kept; their rows written and read are summed after. */
async function metered(o: ScopeDO, act: () => Promise<void>): Promise<{ written: number; read: number; statements: number }> {
  const sql = o.store.sql as unknown as { exec: (...a: unknown[]) => SqlStorageCursor<Record<string, SqlStorageValue>> };
  const real = sql.exec;
  const cursors: SqlStorageCursor<Record<string, SqlStorageValue>>[] = [];
  sql.exec = (...a: unknown[]) => {
    const c = real.apply(sql, a);
    cursors.push(c);
    return c;
  };
  try {
    await act();
  } finally {
    sql.exec = real;
  }
  return { written: cursors.reduce((n, c) => n + c.rowsWritten, 0), read: cursors.reduce((n, c) => n + c.rowsRead, 0), statements: cursors.length };
}

/** lifecycle: `n` pulled jobs enqueued in one call, claimed in one, completed in one; per job. */
async function lifecycle(n: number, keyed: boolean) {
  const { home, stub } = await freshScope();
  return runInDurableObject(stub, async (o: ScopeDO) => {
    // A warm object, as a busy one is: its first write also writes its name and migration marks.
    await o.enqueue([newJob(home, { type: "warm.up" })]);
    await o.flushCatalog();
    // Enqueued without an id, as most are: the object makes each id from its seq (no id index entry).
    const jobs = Array.from({ length: n }, (_, i) => newJob(home, { type: "test.job", ownId: false, idFromQueue: true, ...(keyed ? { dedupeKey: `k${i}` } : {}) }));
    const enq = await metered(o, async () => void (await o.enqueue(jobs)));
    let leased: { id: string; leaseToken: string }[] = [];
    const claim = await metered(o, async () => void (leased = await o.claim({ worker: "w", types: ["test.job"], limit: n, leaseMs: 30_000 })));
    const done = await metered(o, async () => void (await o.completeMany(leased.map((j) => ({ id: j.id, token: j.leaseToken, result: null })))));
    expect(leased).toHaveLength(n);
    const per = (x: number) => Math.round((x / n) * 10) / 10;
    return {
      written: { enqueue: per(enq.written), claim: per(claim.written), complete: per(done.written), total: per(enq.written + claim.written + done.written) },
      read: per(enq.read + claim.read + done.read),
    };
  });
}

describe("rows per job in one scope object (pulled: enqueue, claim, complete)", () => {
  // Measured 2026-12-02 (test runtime); they were 24 / 17.1 / 23.1 written before issue 24's cuts (docs/design.md
  // "What a job costs"), 12 / 7.1 / 9.1 before ids were made from the seq (no id index entry), and one more each
  // before completed jobs lost their finished index entry (completed-sweep.ts). A keyed job is
  // inserted on its own, so it reads the table's last seq once per job. Reads were mostly the due-types query after each
  // write, which read a row per configured push type (the test config declares many: every pushed demo and test type
  // added 3 to 18 to one job's reads and 0.1 to 0.3 to a batched one's, up to 577 and 29.6); since it matches the
  // configured types as text (scope/jobs/claim.ts, jobDueTypesAmong), reads no longer grow with the config: 143, 25.2
  // and 32.2. Expiry before start added 1 read per claim statement (the lease statement's expiry
  // guard: 7 → 8 for one job) and no row written to a job without an expiry. The whole life across every object,
  // retention included, is test/cost/lifecycle.test.ts.
  it.each([
    ["one job per call", 1, false, 10, 143],
    ["a 100-job batch", 100, false, 5.1, 25.2],
    ["a 100-job batch, each job keyed", 100, true, 7.1, 32.2],
  ] as const)("%s (%d jobs, keyed: %s): at most %d rows written and %d read per job", async (_name, n, keyed, written, read) => {
    const cost = await lifecycle(n, keyed);
    expect(cost.written.total).toBeLessThanOrEqual(written);
    expect(cost.read).toBeLessThanOrEqual(read);
  });
});
