/**
 * The meters (src/metering/): what each object is billed for, counted exactly — rows from each statement's
 * cursor, one request per method call — and rolled up by the catalog into /v1/metrics.
 */
import { evictDurableObject, runDurableObjectAlarm, runInDurableObject } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { Meter, meterOf, statementTrace } from "../../src/metering/meter";
import { sendUsageWhenIdle } from "../../src/metering/usage-sender";
import { OBJECT_KINDS, zeroUsage, type KindUsage, type ObjectKind, type UsageReport } from "../../src/metering/usage";
import type { ScopeDO } from "../../src/scope/scope-do";
import type { CatalogDO } from "../../src/catalog/catalog-do";
import { dropStale, UsageBook, usageTotals } from "../../src/catalog/usage-store";
import { catalogOf, env, freshScope, newJob } from "../helpers/scope";
import { TOKEN } from "../helpers/api";
import { rowsWrittenBy } from "../helpers/rows-written";
import { exports } from "cloudflare:workers";

const auth = { authorization: `Bearer ${TOKEN}` };
const fetchQueue = (path: string, headers: Record<string, string>) => (exports as any).default.fetch(`http://queue.test${path}`, { headers }) as Promise<Response>;

describe("a scope object's meter", () => {
  it("counts one request per RPC call and the rows each statement's cursor reports", async () => {
    const { home, stub } = await freshScope();
    const before = await runInDurableObject(stub, (o: ScopeDO) => ({ ...meterOf(o)!.total }));
    await stub.enqueue([newJob(home)]);
    await stub.get("nope");
    const after = await runInDurableObject(stub, (o: ScopeDO, state) => {
      // The same statement run again, outside the meter's count, says what one enqueue's insert alone writes.
      return { total: { ...meterOf(o)!.total }, jobs: state.storage.sql.exec("SELECT count(*) AS n FROM job").one().n };
    });
    expect(after.jobs).toBe(1);
    expect(after.total.requests - before.requests).toBe(2);
    // The job row and its index entries at least; the exact breakdown is test/cost.
    expect(after.total.rowsWritten - before.rowsWritten).toBeGreaterThanOrEqual(4);
    expect(after.total.rowsRead - before.rowsRead).toBeGreaterThan(0);
  });

  it("sends its instance's total with each summary; the catalog holds what grew and its alarm writes it, and /v1/metrics shows it", async () => {
    const { home, stub } = await freshScope();
    await stub.enqueue([newJob(home)]);
    await stub.flushCatalog();
    const catalog = catalogOf(home);
    const sent = await runInDurableObject(stub, (o: ScopeDO) => meterOf(o)!.report());
    const senderRow = () =>
      runInDurableObject(catalog, (_o: CatalogDO, state) =>
        state.storage.sql.exec<{ instance: string; rows_written: number; requests: number }>("SELECT instance, rows_written, requests FROM usage_sender WHERE name = ?", `scope:${home}`).toArray()[0],
      );
    // Held, not written, until the shard's alarm (catalog/usage-store.ts UsageBook), which the report armed.
    expect(await senderRow()).toBeUndefined();
    expect(await runDurableObjectAlarm(catalog)).toBe(true);
    // The sender's row holds the instance's total as the catalog took it.
    const row = (await senderRow())!;
    expect(row.instance).toBe(sent.instance);
    expect(row.requests).toBeGreaterThanOrEqual(1);
    const text = await (await fetchQueue("/v1/metrics", { ...auth, accept: "text/plain" })).text();
    for (const family of [
      "edgequeue_storage_rows_written_total",
      "edgequeue_storage_rows_read_total",
      "edgequeue_object_requests_total",
      "edgequeue_object_active_seconds_total",
      "edgequeue_storage_setup_rows_written_total",
    ]) {
      expect(text).toContain(`# TYPE ${family} counter`);
      expect(text).toMatch(new RegExp(`^${family}\\{object="scope"\\} \\d+`, "m"));
    }
    const json = (await (await fetchQueue("/v1/metrics", auth)).json()) as { objects: { object: string; rowsWritten: number }[] };
    expect(json.objects.find((u) => u.object === "scope")!.rowsWritten).toBeGreaterThan(0);
  });

  it("a pool object, which sends no summaries, reports to the catalog when its request ends", async () => {
    const pool = env.POOL.getByName(`pool:meter-${crypto.randomUUID()}`);
    const before = await runInDurableObject(env.CATALOG.getByName("catalog"), async (o: CatalogDO) => (await o.overview(5, null)).usage.find((u) => u.object === "pool")!);
    await pool.status({ concurrency: 1, ratePerMinute: null });
    // The send is not awaited by the request: give it the turn it needs; the shard writes what it holds at its alarm.
    await expect
      .poll(async () => {
        await runDurableObjectAlarm(env.CATALOG.getByName("catalog"));
        return (await runInDurableObject(env.CATALOG.getByName("catalog"), async (o: CatalogDO) => (await o.overview(5, null)).usage.find((u) => u.object === "pool")!)).requests;
      })
      .toBeGreaterThan(before.requests);
  });

  it("a send that fails never fails the request it counted, and the next report carries everything since the instance began", async () => {
    const meter = new Meter("pool", "pool:p");
    const sent: number[] = [];
    let fail = true;
    sendUsageWhenIdle(meter, async (r) => {
      if (fail) throw new Error("no catalog here");
      sent.push(r.total.requests);
    }, (p) => void p);
    expect(meter.request(() => 7)).toBe(7);
    await new Promise((r) => setTimeout(r, 0));
    meter.onIdle = () => {
      throw new Error("thrown in the hook");
    };
    expect(await meter.request(async () => "still answered")).toBe("still answered");
    fail = false;
    sendUsageWhenIdle(meter, async (r) => void sent.push(r.total.requests), (p) => void p);
    meter.request(() => undefined);
    await new Promise((r) => setTimeout(r, 0));
    expect(sent).toEqual([3]);
  });
});

describe("the statement trace (bench/cost.mjs --trace)", () => {
  it("adds each statement's rows written under its object kind while on, and nothing while off", async () => {
    const { home, stub } = await freshScope();
    statementTrace.rows.clear();
    await stub.enqueue([newJob(home)]); // off: nothing recorded
    expect(statementTrace.rows.size).toBe(0);
    statementTrace.on = true;
    try {
      await runInDurableObject(stub, (_o: ScopeDO, state) => void state.storage.sql.exec("INSERT INTO meta (key, value) VALUES ('trace-test', '1')"));
    } finally {
      statementTrace.on = false;
    }
    expect(statementTrace.rows.get("scope | INSERT INTO meta (key, value) VALUES ('trace-test', '1')")).toBe(1);
    statementTrace.rows.clear();
  });
});

const freshCatalog = () => env.CATALOG.getByName(`catalog-meter-${crypto.randomUUID()}`);
const usageOf = async (c: DurableObjectStub<CatalogDO>) => (await c.overview(5, null)).usage;
const kindOf = (us: KindUsage[], k: ObjectKind) => us.find((u) => u.object === k)!;
const report = (instance: string, rowsWritten: number, requests: number): UsageReport => ({
  name: "pool:p",
  kind: "pool",
  instance,
  total: { ...zeroUsage(), rowsWritten, rowsRead: rowsWritten * 2, requests },
});
const FIELDS = ["rowsWritten", "rowsRead", "requests", "setupRowsWritten"] as const;
/** grows: no total of `after` is below `before`'s. */
function expectGrown(before: KindUsage[], after: KindUsage[]): void {
  for (const k of OBJECT_KINDS) for (const f of FIELDS) expect(kindOf(after, k)[f], `${k}.${f}`).toBeGreaterThanOrEqual(kindOf(before, k)[f]);
}

describe("the catalog's totals (docs/operating.md \"What the meters count\")", () => {
  it("a report is held until the shard's alarm; one lost with an evicted instance comes again whole with the sender's next; sent twice, late or after a lost answer, it counts once", async () => {
    const c = freshCatalog();
    await c.usage(report("i1", 100, 5));
    await evictDurableObject(c); // before its alarm: what it held is gone
    expect(kindOf(await usageOf(c), "pool")).toMatchObject({ rowsWritten: 0, requests: 0 });
    // The sender's next report carries its instance's whole total: nothing of the first is lost.
    await c.usage(report("i1", 110, 5));
    expect(await runDurableObjectAlarm(c)).toBe(true);
    expect(kindOf(await usageOf(c), "pool")).toMatchObject({ rowsWritten: 110, rowsRead: 220, requests: 5 });
    await c.usage(report("i1", 110, 5)); // the same again (an answer lost)
    await c.usage(report("i1", 150, 7)); // the instance grew
    await c.usage(report("i1", 120, 6)); // an older report, overtaken
    await c.usage(report("i2", 10, 1)); // a new instance counts from zero
    expect(await runDurableObjectAlarm(c)).toBe(true);
    expect(kindOf(await usageOf(c), "pool")).toMatchObject({ rowsWritten: 160, rowsRead: 320, requests: 8 });
  });

  it("the reports held between two alarms are written as one row per sender and one per kind and minute", async () => {
    const c = freshCatalog();
    const got = await runInDurableObject(c, (_o: CatalogDO, state) => {
      const sql = state.storage.sql;
      const t0 = Date.UTC(2031, 0, 1);
      const book = new UsageBook();
      // Ten reports of two senders within a minute, each instance's total growing.
      for (let i = 1; i <= 5; i++) for (const name of ["pool:a", "pool:b"]) book.take(sql, { ...report("i1", i * 10, i), name }, t0 + i * 1_000);
      const written = rowsWrittenBy(sql, () => book.write(sql)).written;
      return { written, pool: kindOf(usageTotals(sql), "pool") };
    });
    // Two senders' rows and the pool kind's minute, where each report wrote two.
    expect(got.written).toBe(3);
    expect(got.pool).toMatchObject({ rowsWritten: 100, rowsRead: 200, requests: 10 });
  });

  it("a report writes its sender's row and its minute's; a minute dropped past retention stays in the totals", async () => {
    const c = freshCatalog();
    const got = await runInDurableObject(c, (_o: CatalogDO, state) => {
      const sql = state.storage.sql;
      const day = 24 * 3600_000;
      const written = (fn: () => void) => rowsWrittenBy(sql, fn).written;
      // Each report taken and written alone, as an alarm with one report held writes it.
      const takeUsage = (r: UsageReport, at: number) => {
        const book = new UsageBook();
        book.take(sql, r, at);
        book.write(sql);
      };
      const t0 = Date.UTC(2031, 0, 1);
      // A new sender's first report: its row and the minute's (a table keyed by its primary key alone writes each once).
      const first = written(() => takeUsage(report("i1", 100, 5), t0));
      const again = written(() => takeUsage(report("i1", 150, 7), t0 + 1_000));
      takeUsage(report("i1", 170, 9), t0 + day + 120_000);
      const before = kindOf(usageTotals(sql), "pool");
      // A day and more on: the first minute goes, its usage into the totals' base.
      dropStale(sql, t0 + day + 180_000);
      const minutes = sql.exec<{ n: number }>("SELECT count(*) AS n FROM usage_minute WHERE object = 'pool'").one().n;
      return { first, again, before, after: kindOf(usageTotals(sql), "pool"), minutes };
    });
    expect(got.first).toBe(2);
    expect(got.again).toBe(2);
    expect(got.minutes).toBe(1);
    expect(got.before).toMatchObject({ rowsWritten: 170, requests: 9 });
    expect(got.after).toEqual(got.before);
  });

  it("a shard's own usage — its migrations, its reads — is written by its alarm, and its totals never fall across evictions", async () => {
    const c = freshCatalog();
    const reads: KindUsage[][] = [await usageOf(c)];
    for (let i = 0; i < 3; i++) {
      expect(await runDurableObjectAlarm(c)).toBe(true); // armed by the request before, within 5 s
      reads.push(await usageOf(c));
      await evictDurableObject(c);
      reads.push(await usageOf(c));
    }
    for (let i = 1; i < reads.length; i++) expectGrown(reads[i - 1]!, reads[i]!);
    const own = kindOf(reads.at(-1)!, "catalog");
    // Its migrations were counted, apart too; and its requests, the alarms' among them.
    expect(own.setupRowsWritten).toBeGreaterThan(0);
    expect(own.requests).toBeGreaterThanOrEqual(6);
    // An alarm's own writes are counted by the next one (not when the instance is evicted between: the floor).
    expect(await runDurableObjectAlarm(c)).toBe(true);
    await usageOf(c);
    expect(await runDurableObjectAlarm(c)).toBe(true);
    const later = kindOf(await usageOf(c), "catalog");
    expect(later.rowsWritten).toBeGreaterThan(own.rowsWritten);
  });

  it("end to end: /v1/metrics read through a fresh queue's first jobs and across an eviction of the catalog never falls, and holds what the scope's meter sent", async () => {
    const { home, stub } = await freshScope(null);
    const catalog = catalogOf(home);
    const read = async () => ((await (await fetchQueue("/v1/metrics", auth)).json()) as { objects: KindUsage[] }).objects;
    const reads = [await read()];
    for (let i = 0; i < 3; i++) {
      await stub.enqueue([newJob(home)]);
      await stub.flushCatalog();
      reads.push(await read());
      await runDurableObjectAlarm(catalog);
      reads.push(await read());
      await evictDurableObject(catalog);
      reads.push(await read());
      await runDurableObjectAlarm(catalog);
      reads.push(await read());
    }
    for (let i = 1; i < reads.length; i++) expectGrown(reads[i - 1]!, reads[i]!);
    const sent = await runInDurableObject(stub, (o: ScopeDO) => meterOf(o)!.report());
    const taken = await runInDurableObject(catalog, (_o: CatalogDO, state) =>
      state.storage.sql.exec<{ rows_written: number; setup_rows_written: number }>("SELECT rows_written, setup_rows_written FROM usage_sender WHERE name = ?", `scope:${home}`).one(),
    );
    // What the catalog took of this object: everything up to its last summary; its migrations among it.
    expect(taken.rows_written).toBeLessThanOrEqual(sent.total.rowsWritten);
    expect(taken.setup_rows_written).toBe(sent.total.setupRowsWritten);
    // Its schema made from the baseline (src/tables/migrate.ts): 74 rows.
    expect(taken.setup_rows_written).toBeGreaterThan(50);
  });
});
