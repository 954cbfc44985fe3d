/**
 * The meters (src/metering/): what each object is billed for, counted exactly — rows from each statement's
 * cursor, one request per method call — and rolled up by the catalog into /v1/metrics.
 */
import { runDurableObjectAlarm, runInDurableObject } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { Meter, meterOf } from "../../src/metering/meter";
import { sendUsageWhenIdle } from "../../src/metering/usage-sender";
import type { ScopeDO } from "../../src/scope/scope-do";
import type { CatalogDO } from "../../src/catalog/catalog-do";
import { catalogOf, env, freshScope, newJob } from "../helpers/scope";
import { TOKEN } from "../helpers/api";
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

  it("sends what it used with its summary, and the catalog adds it to /v1/metrics", async () => {
    const { home, stub } = await freshScope();
    await stub.enqueue([newJob(home)]);
    await stub.flushCatalog();
    const catalog = catalogOf(home);
    const held = await runInDurableObject(catalog, async (o: CatalogDO) => (await o.overview(5, null)).usage.find((u) => u.object === "scope")!);
    expect(held.requests).toBeGreaterThanOrEqual(1);
    expect(held.rowsWritten).toBeGreaterThan(0);
    // Written by the catalog's alarm (at most every 10 s): the totals are the same after.
    expect(await runDurableObjectAlarm(catalog)).toBe(true);
    const written = await runInDurableObject(catalog, async (o: CatalogDO, state) => ({
      rows: state.storage.sql.exec("SELECT count(*) AS n FROM object_usage").one().n as number,
      scope: (await o.overview(5, null)).usage.find((u) => u.object === "scope")!,
    }));
    expect(written.rows).toBeGreaterThanOrEqual(1);
    expect(written.scope.rowsWritten).toBeGreaterThanOrEqual(held.rowsWritten);

    const text = await (await fetchQueue("/v1/metrics", { ...auth, accept: "text/plain" })).text();
    for (const family of ["edgequeue_storage_rows_written_total", "edgequeue_storage_rows_read_total", "edgequeue_object_requests_total", "edgequeue_object_active_seconds_total"]) {
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
    // The send is not awaited by the request: give it the turn it needs.
    await expect
      .poll(async () => (await runInDurableObject(env.CATALOG.getByName("catalog"), async (o: CatalogDO) => (await o.overview(5, null)).usage.find((u) => u.object === "pool")!)).requests)
      .toBeGreaterThan(before.requests);
  });

  it("a send that throws or fails never fails the request it counted, and its usage goes with the next send", async () => {
    const meter = new Meter("pool");
    const sent: number[] = [];
    let fail = true;
    sendUsageWhenIdle(meter, async (_kind, u) => {
      if (fail) throw new Error("no catalog here");
      sent.push(u.requests);
    }, (p) => void p);
    expect(meter.request(() => 7)).toBe(7);
    await new Promise((r) => setTimeout(r, 0));
    expect(meter.pending()).toBe(true); // given back
    meter.onIdle = () => {
      throw new Error("thrown in the hook");
    };
    expect(await meter.request(async () => "still answered")).toBe("still answered");
    fail = false;
    sendUsageWhenIdle(meter, async (_kind, u) => void sent.push(u.requests), (p) => void p);
    meter.request(() => undefined);
    await new Promise((r) => setTimeout(r, 0));
    expect(sent).toEqual([3]);
  });
});
