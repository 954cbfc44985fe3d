/**
 * edgequeue/server's createQueue in the Workers runtime (README "Add edgequeue
 * to a Worker"): the config given in code is checked at startup with messages
 * that point at edgequeue.config.ts; a Worker missing a binding, a class export
 * or the handlers' export answers every request with one error that says what
 * to add, over HTTP and over RPC.
 */
import { createExecutionContext, env } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { defineHandlers } from "../../src/handler/index";
import { queueFrom } from "../../src/server/create-queue";

const handlers = defineHandlers({ "local.job": async () => ({ ok: true }) });
const get = (path: string) => new Request(`http://queue${path}`, { headers: { authorization: "Bearer test-token" } });

describe("createQueue", () => {
  it("checks the config given in code at startup: every problem named from config., with the key it meant", () => {
    expect(() => queueFrom({ config: { types: { "email.send": { concurreny: 10 } as never } } }, {})).toThrow(
      /Invalid config in the config given to createQueue \(edgequeue\.config\.ts\):\n {2}- config\.types\["email\.send"\]: Unrecognized key: "concurreny"; did you mean "concurrency"\?/,
    );
    expect(() => queueFrom({ config: { types: { "local.job": { binding: "ELSEWHERE" } } }, handlers }, {})).toThrow(/config\.types\["local\.job"\]\.binding: the type also has a handler in this Worker/);
  });

  it("refuses two configs: one in code and an EDGEQUEUE_CONFIG var", () => {
    expect(() => queueFrom({ config: {} }, { EDGEQUEUE_CONFIG: { strictTypes: true } })).toThrow(/Two configs: createQueue was given one and the Worker also has an EDGEQUEUE_CONFIG var/);
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
