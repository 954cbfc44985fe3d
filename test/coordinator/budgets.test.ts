/**
 * Spend caps (docs/operating.md "Spend caps"): the vitest config's budget "loop-attempts" counts the attempts of
 * budget.loop per UTC hour (soft 3, hard 5). A retry loop crossing it pauses its type — new jobs are kept, none
 * starts — says so on GET /v1/budgets and /v1/health, and a lift resumes it for the rest of the window; the window's
 * turn resumes what a budget paused, and a queue-wide budget pauses every type it knows but those an operator paused.
 */
import { runDurableObjectAlarm, runInDurableObject } from "cloudflare:test";
import { exports } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { apply, check, lift, spend } from "../../src/catalog/budgets";
import type { BudgetSettings } from "../../src/config/budgets";
import type { CatalogDO } from "../../src/catalog/catalog-do";
import { meterOf } from "../../src/metering/meter";
import { api, flushJobs } from "../helpers/api";
import { env } from "../helpers/scope";

const TYPE = "budget.loop";
const main = () => env.CATALOG.getByName("catalog");
/** dashboard: the overview's HTML for a session of this token. */
async function dashboard(token: string): Promise<string> {
  const app = (exports as unknown as { default: Fetcher }).default;
  const login = await app.fetch("http://queue.test/dashboard/login", {
    method: "POST",
    headers: { "content-type": "application/x-www-form-urlencoded", origin: "http://queue.test" },
    body: new URLSearchParams({ token, next: "/dashboard" }).toString(),
    redirect: "manual",
  });
  const cookie = /^(edgequeue_session=[^;]+)/.exec(login.headers.get("set-cookie") ?? "")![1]!;
  return (await app.fetch("http://queue.test/dashboard", { headers: { cookie } })).text();
}
const claim = async () => (await api("POST", "/v1/claim", { worker: "loop", types: [TYPE] })).body.jobs as { id: string; leaseToken: string }[];

describe("a budget of a type's attempts", () => {
  it("a retry loop crossing it pauses the type (new jobs kept), shows on /v1/budgets and /v1/health; a lift resumes it", async () => {
    const id = (await api("POST", "/v1/jobs", { type: TYPE, payload: {} })).body.job.id as string;
    // The loop: each attempt fails and is due again at once.
    for (let i = 0; i < 5; i++) {
      const [job] = await claim();
      expect(job?.id).toBe(id);
      expect((await api("POST", `/v1/jobs/${id}/fail`, { leaseToken: job!.leaseToken, error: "boom" })).status).toBe(200);
    }
    await flushJobs(id);
    // What the main catalog's alarm runs once the counters reached it: it comes back when the hour turns.
    const turn = await main().checkBudgets();
    const [budget] = (await api("GET", "/v1/budgets")).body.items;
    expect(turn).toBe(budget.windowEnd);
    expect(budget).toMatchObject({ name: "loop-attempts", unit: "attempts", spent: 5, paused: [TYPE] });
    expect(budget.softCrossedAt).not.toBeNull();
    expect(budget.hardCrossedAt).not.toBeNull();
    expect((await api("GET", "/v1/health", undefined, null)).body).toMatchObject({ ok: true, budgets: { paused: ["loop-attempts"], warned: ["loop-attempts"] } });
    expect((await api("GET", "/v1/types")).body.items.find((t: { type: string }) => t.type === TYPE)).toMatchObject({ paused: true });
    // Paused: the job is not handed out, and a new one is taken and kept.
    expect(await claim()).toEqual([]);
    const kept = await api("POST", "/v1/jobs", { type: TYPE, payload: { n: 2 } });
    expect(kept.status).toBe(201);
    // Checked again in the same window: no second pause, no second event.
    await main().checkBudgets();
    // The dashboard's overview says so, with a Lift for an operator.
    const overview = await dashboard("ops-token");
    expect(overview).toMatch(/data-budget="loop-attempts"[^>]*>\s*Budget loop-attempts crossed its hard limit \(5 of 5 attempts this hour\): paused budget\.loop/);
    expect(overview).toContain('action="/dashboard/budgets/lift"');
    expect(await dashboard("viewer-token")).not.toContain('action="/dashboard/budgets/lift"');
    // A reader may not lift it; an operator may, and it is in the audit list.
    expect((await api("POST", "/v1/budgets/loop-attempts/lift", {}, "viewer-token")).status).toBe(403);
    const lifted = await api("POST", "/v1/budgets/loop-attempts/lift", {}, "ops-token");
    expect(lifted.body.budget).toMatchObject({ paused: [] });
    expect(lifted.body.budget.liftedAt).not.toBeNull();
    expect((await api("GET", "/v1/audit?action=liftBudget")).body.items[0]).toMatchObject({ token: "ops", detail: { params: { name: "loop-attempts" } } });
    expect((await claim()).length).toBeGreaterThan(0);
    // Lifted, it pauses nothing more this window, however much more is spent, and holds no alarm for the turn.
    expect(await main().checkBudgets()).toBeNull();
    expect((await api("GET", "/v1/types")).body.items.find((t: { type: string }) => t.type === TYPE)).toMatchObject({ paused: false });
    expect((await api("POST", "/v1/budgets/nope/lift", {})).status).toBe(404);
  });
});

describe("which shard checks", () => {
  it("only the main catalog object checks; another shard's alarm asks it to (a request there arms its alarm)", async () => {
    const shard = env.CATALOG.getByName("catalog:1");
    expect(await runInDurableObject(main(), (o: CatalogDO) => o.budgetPass.isMain)).toBe(true);
    expect(await runInDurableObject(shard, (o: CatalogDO) => o.budgetPass.isMain)).toBe(false);
    // A report to the shard arms its alarm (5 s on); its pass asks the main object, and checks nothing itself.
    await shard.usage({ name: "pool:x", kind: "pool", instance: crypto.randomUUID(), total: { rowsWritten: 1, rowsRead: 0, requests: 1, activeMs: 0, setupRowsWritten: 0, setupRowsRead: 0 } });
    const requests = () => runInDurableObject(main(), (o: CatalogDO) => meterOf(o)!.total.requests);
    const before = await requests();
    expect(await runDurableObjectAlarm(shard)).toBe(true);
    expect(await runInDurableObject(shard, (_o, state) => state.storage.sql.exec<{ n: number }>("SELECT count(*) AS n FROM budget_state").one().n)).toBe(0);
    // The main object heard once (budgetPing): a request, which arms its alarm when it had none.
    expect((await requests()) - before).toBe(1);
  });
});

describe("budget checks over the catalog's tables", () => {
  const HOUR = 3600_000;
  const T = Date.UTC(2026, 11, 7, 10, 30);

  it("a window's turn resumes what its budget paused; a queue budget pauses every type it knows but one an operator paused", async () => {
    const scratch = env.CATALOG.getByName(`scratch:${crypto.randomUUID()}`);
    await runInDurableObject(scratch, async (_o, state) => {
      const sql = state.storage.sql;
      const rows: BudgetSettings = { name: "rows", window: "hour", unit: "rowsWritten", types: null, soft: null, hard: 1000 };
      sql.exec("INSERT INTO usage_minute (minute, object, rows_written, rows_read, requests, active_ms) VALUES (?, 'scope', 1500, 0, 10, 0)", T - 60_000);
      sql.exec("INSERT INTO metric_series (minute, type, enqueued, started, completed, failed, retried, cancelled) VALUES (?, 'a.one', 1, 1, 0, 0, 0, 0), (?, 'b.two', 1, 1, 0, 0, 0, 0)", T - 60_000, T - 60_000);
      sql.exec("INSERT INTO type_pause (type, paused, changed_at, version) VALUES ('b.two', 1, 0, 1)");
      // Only this hour counts: an earlier hour's rows are another window's.
      sql.exec("INSERT INTO usage_minute (minute, object, rows_written, rows_read, requests, active_ms) VALUES (?, 'pool', 99999, 0, 0, 0)", T - HOUR);
      const spent = spend(sql, [{ unit: "rowsWritten", types: null, from: T - 30 * 60_000 }]);
      expect(spent).toEqual([1500]);
      // What is decided is written once its calls are done (budget-keeper.ts): here, at once.
      const run = (spentNow: number[], at: number, budgets = [rows]) => {
        const a = check(sql, budgets, spentNow, ["c.config"], at);
        apply(sql, a);
        return a;
      };
      const crossed = run(spent, T);
      // Every type it knows (the config's, the counters'), but b.two, which an operator paused: not the budget's to lift later.
      expect(crossed.pause).toEqual(["a.one", "c.config"]);
      expect(crossed.events.map((e) => e.event)).toEqual(["budget:hard_limit"]);
      expect(run([5000], T + 60_000).pause).toEqual([]);
      // A second budget crossing in the same hour holds a.one too: its own turn does not resume what the first holds.
      const attempts: BudgetSettings = { name: "att", window: "day", unit: "attempts", types: ["a.one"], soft: null, hard: 1 };
      sql.exec("UPDATE type_pause SET paused = 1 WHERE type = 'b.two'");
      sql.exec("INSERT INTO type_pause (type, paused, changed_at, version) VALUES ('a.one', 1, 0, 2), ('c.config', 1, 0, 3)");
      expect(run([5000, 2], T + 120_000, [rows, attempts]).pause).toEqual([]);
      // The next hour: rows' window turns; a.one stays (the day's budget holds it), c.config is resumed.
      const turned = run([0, 2], T + HOUR, [rows, attempts]);
      expect(turned.resume).toEqual(["c.config"]);
      expect(turned.events.map((e) => e.event)).toEqual(["budget:window_turned"]);
      // A lift resumes what only it holds; a crossing after it in its window pauses nothing.
      expect(lift(sql, [rows, attempts], attempts, T + HOUR + 1).resume).toEqual(["a.one"]);
      apply(sql, lift(sql, [rows, attempts], attempts, T + HOUR + 1));
      // (The shards did as told: here, by hand.) The rows budget crosses again in its new hour: b.two stays the operator's.
      sql.exec("UPDATE type_pause SET paused = 0 WHERE type IN ('a.one', 'c.config')");
      expect(run([5000, 9], T + HOUR + 2, [rows, attempts]).pause).toEqual(["a.one", "c.config"]);
      // A queue budget covers the types only another shard knows (the keeper asks them while it is over).
      const far: BudgetSettings = { name: "far", window: "hour", unit: "requests", types: null, soft: null, hard: 1 };
      expect(check(sql, [rows, attempts, far], [0, 0, 5], [], T + HOUR + 3, ["z.far"]).pause).toContain("z.far");
      // A budget gone from the config gives back what it held.
      const gone = check(sql, [rows], [0], [], T + HOUR + 3);
      expect(gone.drop).toEqual(["att"]);
    });
  });
});
