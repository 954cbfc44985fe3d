/**
 * edgequeue/server's createQueue in the Workers runtime (README "Add edgequeue
 * to a Worker"): the config given in code is checked at startup with messages
 * that point at edgequeue.config.ts; a Worker whose config is invalid, or that
 * misses a binding, a class export or the handlers' export, still starts and
 * answers every request with one error that says what to fix, over HTTP and
 * over RPC, and its Durable Objects refuse their calls with it.
 */
import { createExecutionContext, env, runInDurableObject } from "cloudflare:test";
import { describe, expect, it, vi } from "vitest";
import { defineHandlers } from "../../src/handler/index";
import { queueFrom } from "../../src/server/create-queue";
import { REFUSED_ALARM_AGAIN_MS } from "../../src/server/refusing-object";
import type { Env as QueueEnv } from "../../src/env";

const handlers = defineHandlers({ "local.job": async () => ({ ok: true }) });
const get = (path: string) => new Request(`http://queue${path}`, { headers: { authorization: "Bearer test-token" } });

/** The Worker's bindings without the EDGEQUEUE_CONFIG var: a Worker given its config in code has none. */
const { EDGEQUEUE_CONFIG: _var, ...bindings } = env as unknown as Record<string, unknown>;

/** body: a refused answer's error. */
const refusedWith = async (res: Response) => {
  expect(res.status).toBe(503);
  const body = (await res.json()) as { error: { code: string; message: string } };
  expect(body.error.code).toBe("misconfigured");
  return body.error.message;
};

const TYPO = 'Invalid config in the config given to createQueue (edgequeue.config.ts):\n  - config.types["email.send"]: Unrecognized key: "concurreny"; did you mean "concurrency"?';

describe("createQueue", () => {
  it("an invalid config does not stop the Worker: it logs the problems once at startup, and every request and RPC call answers 503 misconfigured with them", async () => {
    const errors = vi.spyOn(console, "error");
    try {
      const q = queueFrom({ config: { types: { "email.send": { concurreny: 10 } as never } }, handlers }, bindings);
      const startup = errors.mock.calls.map((c) => JSON.parse(String(c[0])) as { event: string; message: string });
      expect(startup).toEqual([{ event: "setup:misconfigured", message: TYPO }]);
      const ctx = () => Object.assign(createExecutionContext(), { exports: { EdgeQueueHandlers: { run() {} } } });
      for (const path of ["/v1/health", "/v1/stats", "/dashboard", "/"]) {
        expect(await refusedWith(await q.worker.fetch(get(path), bindings, ctx())), path).toBe(TYPO);
      }
      const rpc = new q.EdgeQueue(ctx(), bindings as never);
      expect(await rpc.stats()).toEqual({ ok: false, error: { code: "misconfigured", message: TYPO } });
      expect(await rpc.enqueue({ type: "email.send", payload: {} })).toMatchObject({ ok: false, error: { code: "misconfigured" } });
      // Said once: the requests found nothing more to say.
      expect(errors).toHaveBeenCalledTimes(1);
      expect(() => q.config).toThrow(TYPO);
    } finally {
      errors.mockRestore();
    }
  });

  it("each problem the config has is named: a type with a handler here and a binding, two configs, a var that is not JSON", async () => {
    const answer = async (q: { worker: { fetch: (r: Request, e: object, c: ExecutionContext) => Response | Promise<Response> } }, e: object) => refusedWith(await q.worker.fetch(get("/v1/health"), e, Object.assign(createExecutionContext(), { exports: { EdgeQueueHandlers: { run() {} } } })));
    const both = queueFrom({ config: { types: { "local.job": { binding: "ELSEWHERE" } } }, handlers }, bindings);
    expect(await answer(both, bindings)).toMatch(/config\.types\["local\.job"\]\.binding: the type also has a handler in this Worker/);
    const withVar = { ...bindings, EDGEQUEUE_CONFIG: { strictTypes: true } };
    expect(await answer(queueFrom({ config: {} }, withVar), withVar)).toMatch(/^Two configs: createQueue was given one and the Worker also has an EDGEQUEUE_CONFIG var/);
    const notJson = { ...bindings, EDGEQUEUE_CONFIG: '{"types": ' };
    expect(await answer(queueFrom({}, notJson), notJson)).toMatch(/^EDGEQUEUE_CONFIG is not valid JSON/);
    const typoVar = { ...bindings, EDGEQUEUE_CONFIG: { types: { a: { leaseMs: 1000 } } } };
    expect(await answer(queueFrom({}, typoVar), typoVar)).toBe(
      "Invalid config in the EDGEQUEUE_CONFIG var (wrangler config `vars`, or .dev.vars):\n  - EDGEQUEUE_CONFIG.types.a.leaseMs: leaseMs applies to pushed jobs: give the type a binding too, or a handler in the queue's Worker (createQueue's handlers)",
    );
  });

  it("with an invalid config, each Durable Object class is made without throwing, refuses its calls with the message, and keeps its alarm", async () => {
    const q = queueFrom({ config: { types: { "email.send": { concurreny: 10 } as never } } }, bindings);
    const stub = (env as unknown as QueueEnv).SCOPE.getByName("create-queue-test:refusing");
    await runInDurableObject(stub, async (_real: unknown, state: DurableObjectState) => {
      const objects = { ScopeDO: new q.ScopeDO(state, bindings), CatalogDO: new q.CatalogDO(state, bindings), PoolDO: new q.PoolDO(state, bindings), ScheduleDO: new q.ScheduleDO(state, bindings), WaitDO: new q.WaitDO(state, bindings) };
      const calls: [keyof typeof objects, string, unknown[]][] = [
        ["ScopeDO", "enqueue", [[]]],
        ["ScopeDO", "get", ["x"]],
        ["CatalogDO", "stats", [null]],
        ["PoolDO", "release", [[]]],
        ["ScheduleDO", "list", []],
        ["WaitDO", "notify", ["home"]],
      ];
      for (const [cls, method, args] of calls) {
        const o = objects[cls] as unknown as Record<string, (...a: unknown[]) => Promise<unknown>>;
        await expect(o[method]!(...args), `${cls}.${method}`).rejects.toThrow(TYPO);
      }
      expect(await refusedWith(await objects.ScopeDO.fetch!(new Request("http://scope/watch")))).toBe(TYPO);
      const before = Date.now();
      await objects.ScopeDO.alarm!();
      // Kept for the Worker that runs the fixed config: the alarm comes back, nothing of it is dropped.
      expect(await state.storage.getAlarm()).toBeGreaterThanOrEqual(before + REFUSED_ALARM_AGAIN_MS);
      await state.storage.deleteAlarm();
    });
  });

  it("declares each in-Worker handler's type, pushed to the loopback binding", () => {
    const q = queueFrom({ config: { types: { "local.job": { maxAttempts: 7 } } }, handlers }, {});
    expect(q.config.typeSettings("local.job")).toMatchObject({ binding: "EdgeQueueHandlers", maxAttempts: 7 });
    expect(q.EdgeQueueHandlers).toBe(handlers);
  });

  it("a Worker without the queue's Durable Object bindings answers every request 503 misconfigured, with the lines to add", async () => {
    const q = queueFrom({ config: {} }, {});
    for (const path of ["/v1/health", "/v1/stats", "/dashboard"]) {
      const res = await q.worker.fetch(get(path), { QUEUE_TOKEN: "test-token" }, createExecutionContext());
      expect(res.status, path).toBe(503);
      const body = (await res.json()) as { error: { code: string; message: string } };
      expect(body.error.code).toBe("misconfigured");
      expect(body.error.message).toContain("no Durable Object binding SCOPE (class ScopeDO), CATALOG (class CatalogDO), POOL (class PoolDO), SCHEDULE (class ScheduleDO), WAIT (class WaitDO)");
      expect(body.error.message).toContain('{ "name": "SCOPE", "class_name": "ScopeDO" }');
      expect(body.error.message).toContain('{ "tag": "v4", "new_sqlite_classes": ["WaitDO"] }');
    }
  });

  it("in-Worker handlers that the Worker does not export answer misconfigured, naming the export; the RPC entrypoint answers the same", async () => {
    const q = queueFrom({ config: {}, handlers }, {});
    const res = await q.worker.fetch(get("/v1/health"), env, Object.assign(createExecutionContext(), { exports: {} }));
    expect(res.status).toBe(503);
    expect(((await res.json()) as { error: { message: string } }).error.message).toMatch(/ctx\.exports\.EdgeQueueHandlers, which this Worker does not export: add EdgeQueueHandlers/);
    const rpc = new q.EdgeQueue(Object.assign(createExecutionContext(), { exports: {} }), env as never);
    expect(await rpc.stats()).toMatchObject({ ok: false, error: { code: "misconfigured" } });
  });

  it("with every binding and the handlers exported, the queue answers", async () => {
    const q = queueFrom({ config: {}, handlers }, {});
    const res = await q.worker.fetch(get("/v1/types"), env, Object.assign(createExecutionContext(), { exports: { EdgeQueueHandlers: { run() {} } } }));
    expect(res.status).toBe(200);
    expect(((await res.json()) as { items: { type: string; pushed: boolean }[] }).items).toContainEqual(expect.objectContaining({ type: "local.job", pushed: true }));
  });
});
