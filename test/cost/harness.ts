/**
 * What a workload costs across every object it touches, over the jobs' whole
 * lives — enqueue, run, retention sweep, and the tombstone's own expiry — in
 * what Cloudflare bills a Durable Object for: rows written, rows read and
 * requests (src/metering/). Each object's meter counts exactly; this sums
 * every meter of the test's process (one workerd per test file) before and
 * after, so nothing the workload causes is left out: the catalog's reports,
 * its usage flush, pools, the claim-wait objects, the schedule object.
 *
 * Time: the jobs run on the real clock; for retention each home's clock is
 * moved past it and its alarm fired (runDurableObjectAlarm), twice — once for
 * the jobs, once for the tombstones they leave.
 */
import { runDurableObjectAlarm, runInDurableObject } from "cloudflare:test";
import { ManualClock } from "../../src/clock";
import { loadConfig } from "../../src/config/load";
import { catalogName } from "../../src/catalog/shards";
import { homeOfJobId } from "../../src/job/home";
import { isolateUsage, meterOf, objectUsage } from "../../src/metering/meter";
import { OBJECT_KINDS, type ObjectKind, type Usage } from "../../src/metering/usage";
import type { ScopeDO } from "../../src/scope/scope-do";
import { env, partsOf } from "../helpers/scope";

const DAY_MS = 86_400_000;

export interface Cost {
  /** Per job (or per event, for `per: "event"`), summed over every object kind. */
  rowsWritten: number;
  rowsRead: number;
  requests: number;
  /** Rows written per job by object kind. */
  byObject: Partial<Record<ObjectKind, number>>;
}

/** look: read inside a scope object without the meter counting it (the workload's cost is what is measured). */
function look<T>(home: string, fn: (sql: SqlStorage) => T): Promise<T> {
  return runInDurableObject(env.SCOPE.getByName(home), (o: ScopeDO, state) => meterOf(o)!.quietly(() => fn(state.storage.sql)));
}

/** warm: start these homes' objects (migrations, name) before the count begins: a busy queue's objects are warm. */
export async function warm(homes: readonly string[]): Promise<void> {
  for (const home of homes) await runInDurableObject(env.SCOPE.getByName(home), () => undefined);
}

/** settled: every job of these homes is terminal and there are `n` of them (polled without being counted). */
async function settled(homes: readonly string[], n: number, timeoutMs = 15_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    let total = 0;
    let live = 0;
    for (const home of homes) {
      const c = await look(home, (sql) => sql.exec<{ total: number; live: number }>("SELECT count(*) AS total, coalesce(sum(finished_at IS NULL), 0) AS live FROM job").one());
      total += c.total;
      live += c.live;
    }
    if (total >= n && live === 0) return;
    if (Date.now() > deadline) throw new Error(`not settled: ${total} of ${n} jobs, ${live} live`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

/** sweep: move each home past retention and fire its alarm; then past the tombstones' expiry and fire it again. */
async function sweep(homes: readonly string[]): Promise<void> {
  const r = loadConfig(env).retention;
  const steps = [Math.max(r.completedMs ?? 0, r.failedMs ?? 0, r.cancelledMs ?? 0) + 60_000, r.idempotencyMs + 60_000];
  let at = Date.now();
  for (const step of steps) {
    at += step;
    for (const home of homes) {
      const stub = env.SCOPE.getByName(home);
      await runInDurableObject(stub, (o: ScopeDO) => void (o.clock = new ManualClock(at)));
      await runDurableObjectAlarm(stub);
      await runInDurableObject(stub, (o: ScopeDO) => partsOf(o).reporter.flush());
    }
  }
  const left = await Promise.all(homes.map((h) => look(h, (sql) => sql.exec<{ n: number }>("SELECT (SELECT count(*) FROM job) + (SELECT count(*) FROM job_tombstone) AS n").one().n)));
  if (left.some((n) => n > 0)) throw new Error(`the sweep left ${left.join(", ")} rows`);
}

/** flushCatalogs: every shard writes the usage it holds (its alarm, as every 10 s in production). */
async function flushCatalogs(): Promise<void> {
  const shards = loadConfig(env).catalogShards;
  for (let k = 0; k < shards; k++) await runDurableObjectAlarm(env.CATALOG.getByName(catalogName(k)));
}

function minus(a: Record<ObjectKind, Usage>, b: Record<ObjectKind, Usage>): Record<ObjectKind, Usage> {
  const out = {} as Record<ObjectKind, Usage>;
  for (const k of OBJECT_KINDS) out[k] = { rowsWritten: a[k].rowsWritten - b[k].rowsWritten, rowsRead: a[k].rowsRead - b[k].rowsRead, requests: a[k].requests - b[k].requests, activeMs: 0 };
  return out;
}

/**
 * measure: run `work` (it answers the ids of the jobs it made, `units` of which are counted: jobs, or events),
 * wait for every job to end, sweep them through retention, and answer the cost per unit.
 */
export async function measure(units: number, work: () => Promise<string[]>): Promise<Cost> {
  await flushCatalogs();
  const before = isolateUsage();
  const objectsBefore = objectUsage();
  const ids = await work();
  const homes = [...new Set(ids.map((id) => homeOfJobId(id)!.name))];
  await settled(homes, ids.length);
  await sweep(homes);
  await flushCatalogs();
  const used = minus(isolateUsage(), before);
  // No object may start cold during the count: its migration would be counted as the jobs' cost (a busy queue's
  // objects are warm). warm() it first.
  for (const [name, u] of objectUsage()) {
    if (!objectsBefore.has(name) && u.rowsWritten > 0) throw new Error(`${name} started during the workload (${u.rowsWritten} rows): warm it first`);
  }
  const per = (n: number) => Math.round((n / units) * 100) / 100;
  const sum = (f: keyof Usage) => OBJECT_KINDS.reduce((n, k) => n + used[k][f], 0);
  return {
    rowsWritten: per(sum("rowsWritten")),
    rowsRead: per(sum("rowsRead")),
    requests: per(sum("requests")),
    byObject: Object.fromEntries(OBJECT_KINDS.filter((k) => used[k].rowsWritten > 0).map((k) => [k, per(used[k].rowsWritten)])),
  };
}
