/**
 * Driving one ScopeDO directly: a fresh object per test, an injected clock,
 * jobs built the way the coordinator builds them, and raw SQL reads for
 * checking invariants from the inside.
 */
import { runDurableObjectAlarm, runInDurableObject } from "cloudflare:test";
import { expect } from "vitest";
import { env as workersEnv } from "cloudflare:workers";
import { ManualClock } from "../../src/clock";
import type { Env } from "../../src/env";
import { catalogName, catalogShardOf } from "../../src/catalog/shards";
import { loadConfig } from "../../src/config/load";
import { jobIdFor, newLocalId, scopeHome, typeHome } from "../../src/job/home";
import type { NewJob } from "../../src/scope/jobs/enqueue";
import type { JobRow } from "../../src/scope/jobs/job-row";
import type { ScopeDO } from "../../src/scope/scope-do";
import type { ScopeParts } from "../../src/scope/scope-parts";
import { scopeRpc as rpcOf, type ScopeRpc } from "../../src/scope/api";
import { lensOf } from "../../src/sealing/lens";

export const env = workersEnv as unknown as Env;

/** catalogOf: the catalog shard a home reports to (catalog/shards.ts), under the test config. */
export function catalogOf(home: string) {
  return env.CATALOG.getByName(catalogName(catalogShardOf(home, loadConfig(env).catalogShards)));
}

/**
 * writeCatalogUsage: every catalog shard writes the usage reports it holds — its alarm, which a report arms within
 * 5 s in production (catalog/usage-store.ts UsageBook).
 */
export async function writeCatalogUsage(): Promise<void> {
  const shards = loadConfig(env).catalogShards;
  for (let k = 0; k < shards; k++) await runDurableObjectAlarm(env.CATALOG.getByName(catalogName(k)));
}

/** A fixed start time, far from the real clock, so no real alarm fires during a test. */
export const T0 = Date.UTC(2030, 0, 1);

export type ScopeStub = DurableObjectStub<ScopeDO>;

/** partsOf: an instance's parts (scope-parts.ts), for tests that replace one of them inside runInDurableObject. */
export function partsOf(o: ScopeDO): ScopeParts {
  return (o as unknown as { parts: ScopeParts }).parts;
}

/** readWakeRow: the one wake-up statement's row at `now` (scope/wake.ts), as the instance assembled it. */
export function readWakeRow(o: ScopeDO, now: number): Record<string, number | null> & { due: number | null; lease: number | null } {
  return partsOf(o).readWake(now);
}

export async function freshScope(clock: ManualClock | null = new ManualClock(T0)): Promise<{ home: string; stub: ScopeStub; clock: ManualClock | null }> {
  const home = scopeHome({ type: "Test", id: crypto.randomUUID() }).name;
  const stub = env.SCOPE.getByName(home);
  if (clock) await useClock(stub, clock);
  return { home, stub, clock };
}

export async function freshTypeHome(type: string, shard = 0, clock: ManualClock | null = new ManualClock(T0)) {
  const home = typeHome(type, shard).name;
  const stub = env.SCOPE.getByName(home);
  if (clock) await useClock(stub, clock);
  return { home, stub, clock };
}

export async function useClock(stub: ScopeStub, clock: ManualClock, random?: () => number): Promise<void> {
  await runInDurableObject(stub, (o: ScopeDO) => {
    o.clock = clock;
    if (random) o.random = random;
  });
}

let counter = 0;
export function newJob(home: string, over: Partial<NewJob> = {}): NewJob {
  return {
    id: jobIdFor(home, over.id ?? `${newLocalId(T0)}${counter++}`),
    type: "test.job",
    payload: JSON.stringify({ n: counter }),
    scope: null,
    dedupeKey: null,
    priority: 0,
    runAt: null,
    delayMs: 0,
    maxAttempts: 3,
    timeoutMs: null,
    tags: [],
    ...over,
    ...(over.id ? { id: jobIdFor(home, over.id) } : {}),
  };
}

/**
 * rows: the object's job rows, their payloads and results opened (the suites run with EDGEQUEUE_ENCRYPTION_KEYS, so
 * every stored value is sealed: test/coordinator/sealing.test.ts reads them as stored); `sealedRows` leaves them so.
 */
export async function rows(stub: ScopeStub): Promise<JobRow[]> {
  return (await sealedRows(stub)).map(openRow);
}

export async function sealedRows(stub: ScopeStub): Promise<JobRow[]> {
  return runInDurableObject(stub, (_o: ScopeDO, state) => state.storage.sql.exec<JobRow>("SELECT * FROM job ORDER BY seq").toArray());
}

/**
 * scopeRpc: a scope object's stub as the coordinator holds it (coordinator/queue-context.ts) — the values its calls
 * carry sealed on their way in and opened on their way out (sealing/rpc-values.ts).
 */
export function scopeRpc(stub: ScopeStub): ScopeRpc {
  return rpcOf(stub, lensOf(env, loadConfig(env)));
}

/** opened: a stored value's JSON text as the queue's keys open it (sealing/lens.ts). */
export function opened(text: string): string {
  return lensOf(env, loadConfig(env)).openText(text);
}

function openRow(r: JobRow): JobRow {
  return { ...r, payload: opened(r.payload), result: r.result === null ? null : opened(r.result) };
}

export async function row(stub: ScopeStub, id: string): Promise<JobRow> {
  const r = (await rows(stub)).find((x) => x.id === id);
  if (!r) throw new Error(`no row ${id}`);
  return r;
}

/** alarmAt: the armed alarm time. By default the catalog summary is flushed first, so no report deadline is in the way. */
export async function alarmAt(stub: ScopeStub, { flush = true } = {}): Promise<number | null> {
  if (flush) await stub.flushCatalog();
  return runInDurableObject(stub, (_o: ScopeDO, state) => state.storage.getAlarm());
}

/**
 * put: enqueue into a scope object directly and return the per-job results as their rows, read back by id
 * (throws on a refusal, and on an id only a tombstone holds).
 */
export async function put(stub: ScopeStub, jobs: NewJob[]): Promise<{ row: JobRow; created: boolean }[]> {
  const out = await scopeRpc(stub).enqueue(jobs);
  if (!out.ok) throw new Error(out.message);
  const all = await rows(stub);
  return out.results.map((r) => {
    if (r.id === null) throw new Error("the id is a tombstone's: nothing was created");
    const id = r.id;
    return { row: all.find((x) => x.id === id)!, created: r.created };
  });
}

/**
 * restartCold: end the object's instance (as a deploy or a crash does) and return a stub
 * to the same object that carries no name — what the runtime hands an alarm that wakes
 * it cold (src/object-name.ts). The stub given keeps working and reaches the new instance.
 */
export async function restartCold<T extends Rpc.DurableObjectBranded>(ns: DurableObjectNamespace<T>, stub: DurableObjectStub<T>): Promise<DurableObjectStub<T>> {
  await runInDurableObject(stub, (_o: unknown, state) => state.abort("restart")).catch(() => undefined);
  const cold = ns.get(ns.idFromString(stub.id.toString()));
  // The premise of every cold-wake test: the runtime does not hand this instance its name.
  expect(await runInDurableObject(cold, (_o: unknown, state) => state.id.name)).toBeUndefined();
  return cold;
}
