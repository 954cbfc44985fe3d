/**
 * What a workload costs across every object it touches, over the jobs' whole
 * lives — enqueue, run, retention sweep, and the tombstone's own expiry — in
 * what Cloudflare bills a Durable Object for: rows written, rows read and
 * requests (src/metering/). Each object's meter counts exactly; this sums
 * every meter of the test's process (one workerd per test file) before and
 * after, so nothing the workload causes is left out: the catalog's reports,
 * its usage flush, pools, the claim-wait objects, the schedule object.
 *
 * Time: the counts must not depend on how long a workload took on the machine
 * that ran it (summaries go at most once a second, usage reports at most every
 * 5 s, by each object's clock). So during a workload the clocks of its homes,
 * the catalog shards and the pools it names are stopped, an hour ahead of the
 * real one (no real alarm fires; the coordinator's timestamps are due), and
 * move only when every job is waiting for time: to the earliest run time, and
 * the homes' alarms are fired. Backoff's jitter is seeded. What a workload is
 * counted with is then what its moves cause, the same on an idle and on a
 * loaded machine. For retention each home's clock is moved past it and its
 * alarm fired (runDurableObjectAlarm), twice — once for the jobs, once for the
 * tombstones they leave.
 */
import { runDurableObjectAlarm, runInDurableObject } from "cloudflare:test";
import { ManualClock, systemClock, type Clock } from "../../src/clock";
import type { CatalogDO } from "../../src/catalog/catalog-do";
import type { PoolDO } from "../../src/pool/pool-do";
import { loadConfig } from "../../src/config/load";
import { catalogName } from "../../src/catalog/shards";
import { homeOfJobId } from "../../src/job/home";
import { isolateUsage, meterOf, objectUsage, statementTrace } from "../../src/metering/meter";
import { addUsage, OBJECT_KINDS, type ObjectKind, type Usage } from "../../src/metering/usage";
import type { ScopeDO } from "../../src/scope/scope-do";
import { env, partsOf, useClock } from "../helpers/scope";

const DAY_MS = 86_400_000;

export interface Cost {
  /** Per job (or per event, for `per: "event"`), summed over every object kind. */
  rowsWritten: number;
  rowsRead: number;
  requests: number;
  /** Rows written per job by object kind. */
  byObject: Partial<Record<ObjectKind, number>>;
  /** Of rowsWritten, new objects' migrations (setup): nonzero only in a workload that starts objects (`cold`). */
  setupRowsWritten: number;
  /**
   * With COST_TRACE=1 (`node bench/cost.mjs --trace`): rows written per unit by statement, largest first — each
   * line `rows | object kind | statement` (src/metering/meter.ts statementTrace).
   */
  trace?: string[];
}

const tracing = () => Boolean((env as unknown as { COST_TRACE?: string }).COST_TRACE);

/** traceLines: the statements' rows per unit, the largest `top`. */
function traceLines(units: number, top = 30): string[] {
  return [...statementTrace.rows]
    .sort((a, b) => b[1] - a[1])
    .slice(0, top)
    .map(([statement, rows]) => `${(Math.round((rows / units) * 100) / 100).toFixed(2).padStart(8)} | ${statement}`);
}

/** look: read inside a scope object without the meter counting it (the workload's cost is what is measured). */
function look<T>(home: string, fn: (sql: SqlStorage) => T): Promise<T> {
  return runInDurableObject(env.SCOPE.getByName(home), (o: ScopeDO, state) => meterOf(o)!.quietly(() => fn(state.storage.sql)));
}

/** warm: start these homes' objects (migrations, name) before the count begins: a busy queue's objects are warm. */
export async function warm(homes: readonly string[]): Promise<void> {
  for (const home of homes) await runInDurableObject(env.SCOPE.getByName(home), () => undefined);
}

/** seeded: a fixed sequence in [0, 1) (backoff's jitter), the same on every run. */
function seeded(seed = 42): () => number {
  let x = seed;
  return () => ((x = (x * 1103515245 + 12345) % 2147483648) / 2147483648);
}

/** The objects a workload stops the clocks of (see the module's note): its homes, and the pools it names. */
export interface Stopped {
  homes?: readonly string[];
  pools?: readonly string[];
  /** The workload starts these homes' objects itself (a new tenant's setup is what it counts). */
  cold?: boolean;
  /** The stopped clock, when the workload set others' clocks to it before (stoppedClock()). */
  clock?: ManualClock;
}

/**
 * stoppedClock: a minute's first second, an hour ahead: no real alarm fires for it, the coordinator's timestamps are
 * due by it, per-minute rows (counters, usage) start a minute as they would at any moment, and a workload's few
 * simulated minutes never cross a time they should not.
 */
export function stoppedClock(aheadMs = 3600_000): ManualClock {
  return new ManualClock(Math.floor((Date.now() + aheadMs) / 60_000) * 60_000 + 1_000);
}

/** stop: these objects' clocks, and every catalog shard's, stopped at `clock`'s time (it moves only when told). */
async function stop(clock: Clock, { homes = [], pools = [] }: Stopped): Promise<void> {
  for (const home of homes) {
    await useClock(env.SCOPE.getByName(home), clock as ManualClock, seeded());
    // The paused set as a busy object knows it, by its new clock (its promise is counted on that clock).
    await runInDurableObject(env.SCOPE.getByName(home), (o: ScopeDO) => partsOf(o).pause.ensure());
  }
  for (const pool of pools) await runInDurableObject(env.POOL.getByName(pool), (o: PoolDO) => void (o.clock = clock));
  const shards = loadConfig(env).catalogShards;
  // The default config has no budgets; the test config's one (test/coordinator/budgets.test.ts) is left out of the count.
  for (let k = 0; k < shards; k++) {
    await runInDurableObject(env.CATALOG.getByName(catalogName(k)), (o: CatalogDO) => {
      o.clock = clock;
      o.budgetPass.enabled = false;
    });
  }
}

/**
 * settled: every job of these homes is terminal and there are `n` of them (polled without being counted). While jobs
 * are live but none runs and none is due by the stopped clock, the clock moves to the earliest run time and the
 * homes' alarms fire (a retry's backoff, a sleep).
 */
export async function settled(homes: readonly string[], n: number, clock?: ManualClock, pools: readonly string[] = [], timeoutMs = 20_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  let last = "";
  let stillSince = Date.now();
  for (;;) {
    let total = 0;
    let live = 0;
    let waitingFor = Infinity;
    let busy = false;
    for (const home of homes) {
      const c = await look(home, (sql) =>
        sql
          .exec<{ total: number; live: number; running: number; next: number | null }>(
            "SELECT count(*) AS total, coalesce(sum(finished_at IS NULL), 0) AS live, coalesce(sum(state = 'running'), 0) AS running, min(CASE WHEN state = 'pending' THEN run_at END) AS next FROM job",
          )
          .one(),
      );
      total += c.total;
      live += c.live;
      if (c.running > 0) busy = true;
      if (c.next !== null) waitingFor = Math.min(waitingFor, c.next);
    }
    if (total >= n && live === 0) return;
    const seen = `${total}/${live}/${busy}/${waitingFor}`;
    if (seen !== last) [last, stillSince] = [seen, Date.now()];
    // Nothing runs: every live job waits for time — its run time, or, under a guard (`pools`), a permit's retry a
    // second or so later once nothing moved for a while. The clock moves there and the homes' (and pools') alarms fire.
    const waiting = live > 0 && waitingFor !== Infinity;
    const idle = clock && !busy && waiting && (waitingFor > clock.now() || (pools.length > 0 && Date.now() - stillSince > 200));
    if (idle) {
      clock.set(waitingFor > clock.now() ? waitingFor : clock.now() + 1_000);
      for (const home of homes) await runDurableObjectAlarm(env.SCOPE.getByName(home));
      for (const pool of pools) await runDurableObjectAlarm(env.POOL.getByName(pool));
      last = "";
      continue;
    }
    if (Date.now() > deadline) throw new Error(`not settled: ${total} of ${n} jobs, ${live} live`);
    await new Promise((r) => setTimeout(r, 10));
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
      await runInDurableObject(stub, (o: ScopeDO) => partsOf(o).report.reporter.flush());
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
  for (const k of OBJECT_KINDS) out[k] = addUsage({ ...a[k], activeMs: 0 }, { ...b[k], activeMs: 0 }, -1);
  return out;
}

/** Every scope object and pool a measured workload used (the idle check reads their alarms after). */
export const touched = { homes: new Set<string>(), pools: new Set<string>() };

/**
 * measure: run `work` (it answers the ids of the jobs it made, `units` of which are counted: jobs, or events),
 * wait for every job to end, sweep them through retention, and answer the cost per unit.
 */
export async function measure(units: number, work: (clock: ManualClock) => Promise<string[]>, stopped: Stopped = {}): Promise<Cost> {
  const clock = stopped.clock ?? stoppedClock();
  await stop(clock, stopped);
  await flushCatalogs();
  const before = isolateUsage();
  const objectsBefore = objectUsage();
  statementTrace.rows.clear();
  statementTrace.on = tracing();
  const ids = await work(clock);
  const homes = [...new Set(ids.map((id) => homeOfJobId(id)!.name))];
  if (homes.some((h) => !(stopped.homes ?? []).includes(h))) throw new Error(`homes ${homes.join(", ")} are not all stopped (${(stopped.homes ?? []).join(", ")}): name them in measure()`);
  for (const h of homes) touched.homes.add(h);
  for (const p of stopped.pools ?? []) touched.pools.add(p);
  await settled(homes, ids.length, clock, stopped.pools);
  // The summaries held back by the stopped clock go now, once: a second later, each home's alarm.
  clock.advance(2_000);
  for (const home of homes) await runDurableObjectAlarm(env.SCOPE.getByName(home));
  await sweep(homes);
  await flushCatalogs();
  await stop(systemClock, { pools: stopped.pools });
  const used = minus(isolateUsage(), before);
  // No object may start cold during the count: its migration would be counted as the jobs' cost (a busy queue's
  // objects are warm). warm() it first.
  for (const [name, u] of objectUsage()) {
    if (!stopped.cold && !objectsBefore.has(name) && u.rowsWritten > 0) throw new Error(`${name} started during the workload (${u.rowsWritten} rows): warm it first`);
  }
  const per = (n: number) => Math.round((n / units) * 100) / 100;
  const sum = (f: keyof Usage) => OBJECT_KINDS.reduce((n, k) => n + used[k][f], 0);
  const trace = statementTrace.on ? traceLines(units) : undefined;
  statementTrace.on = false;
  return {
    rowsWritten: per(sum("rowsWritten")),
    rowsRead: per(sum("rowsRead")),
    requests: per(sum("requests")),
    byObject: Object.fromEntries(OBJECT_KINDS.filter((k) => used[k].rowsWritten > 0).map((k) => [k, per(used[k].rowsWritten)])),
    setupRowsWritten: per(sum("setupRowsWritten")),
    ...(trace ? { trace } : {}),
  };
}
