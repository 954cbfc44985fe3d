/**
 * Orphaned pushed attempts (scope/push/orphans.ts): given back unspent after a
 * restart — but a job whose attempts keep ending that way is counted after
 * ORPHAN_FREE_RELEASES in a row, so a job that crashes its object cannot
 * loop for ever.
 */
import { runInDurableObject } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import type { ScopeDO } from "../../src/scope/scope-do";
import { ORPHAN_FREE_RELEASES, releaseOrphans } from "../../src/scope/push/orphans";
import { PUSH_WORKER } from "../../src/scope/jobs/pushed-leases";
import { freshScope, newJob } from "../helpers/scope";

/** As the dispatcher leases a pushed job: running, its lease owner `push`. */
const LEASE_AS_PUSHED = `UPDATE job SET state = 'running', lease_owner = '${PUSH_WORKER}', lease_token = 't', started_at = ?1, updated_at = ?1,
  lease_expires_at = ?1 + 30000, attempts = attempts + 1, lease_kept = ?3 WHERE id = ?2`;

describe("orphaned attempts", () => {
  // test.job: a pulled type, its counted end in the claim index; demo.noop: a straight type whose pushed lease is held
  // in memory, its counted end held (jobs/held-retries.ts) and its timeline entry in the row — the tally reads both.
  for (const [type, kept] of [["test.job", 1], ["demo.noop", 0]] as const) {
    it(`cost nothing the first times in a row; the next one counts, and a counted end starts the tally again (${type})`, async () => {
      const { home, stub } = await freshScope();
      const ends = await runInDurableObject(stub, async (o: ScopeDO) => {
        const put = await o.enqueue([newJob(home, { type, maxAttempts: 5, delayMs: 3_600_000 })]);
        if (!put.ok) throw new Error(put.message);
        const id = put.results[0]!.job!.id;
        const out: { released: number; counted: number; attempts: number; state: string; held: number }[] = [];
        for (let i = 0; i < ORPHAN_FREE_RELEASES + 2; i++) {
          const now = o.clock.now() + i * 60_000;
          o.store.sql.exec(LEASE_AS_PUSHED, now, id, kept);
          const r = releaseOrphans(o.store, now);
          const row = o.store.sql.exec<{ attempts: number; state: string; held: number }>("SELECT attempts, state, held FROM job WHERE id = ?", id).one();
          out.push({ released: r.released.length, counted: r.counted.length, ...row });
        }
        return out;
      });
      const free = { released: 1, counted: 0, attempts: 0, state: "pending", held: 0 };
      expect(ends).toEqual([
        ...Array.from({ length: ORPHAN_FREE_RELEASES }, () => free),
        { released: 0, counted: 1, attempts: 1, state: "pending", held: 1 - kept },
        { released: 1, counted: 0, attempts: 1, state: "pending", held: 0 },
      ]);
    });
  }
});
