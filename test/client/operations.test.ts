/**
 * One declaration per operation (docs/design.md "Operations, declared once"): every operation
 * declared in src/api/ is served over HTTP, is a method of the EdgeQueue RPC entrypoint, is a method
 * of both clients and is in the OpenAPI document — each list computed from the declarations, so a new
 * declaration is checked here without being named. And the derived types are exact.
 */
import { exports } from "cloudflare:workers";
import { describe, expect, expectTypeOf, it } from "vitest";
import { OPERATION_LIST, operationUrl, OPERATIONS, type OperationId } from "../../src/api";
import type { EdgeQueue, RpcResult } from "../../src/coordinator/rpc";
import { createClient, createHttpClient, type Job, type QueueBinding, type Scope } from "../../src/sdk";
import type { Schedule } from "../../src/job/schedule-spec";
import { api, TOKEN } from "../helpers/api";

const entrypoint = (exports as unknown as { EdgeQueue: Service<EdgeQueue> }).EdgeQueue;
const rpc = createClient((exports as unknown as { EdgeQueue: QueueBinding }).EdgeQueue);
const http = createHttpClient("http://queue.test/", TOKEN, {
  fetch: (input, init) => (exports as unknown as { default: Fetcher }).default.fetch(input, init),
});
const concrete = (path: string) => path.replace(/\{\w+\}/g, "x");

describe("every declared operation", () => {
  it.each(OPERATION_LIST.map((op) => [op.operationId, op] as const))("%s is served over HTTP at its method and path", async (_id, op) => {
    const r = await api(op.method.toUpperCase(), concrete(op.path), op.body ? {} : undefined);
    // Whatever the operation answers (an empty input is mostly refused), the router found it.
    expect(r.status, JSON.stringify(r.body)).not.toBe(405);
    if (r.status === 404) expect(r.body.error.message).not.toMatch(/^no route for/);
  });

  it.each(OPERATION_LIST.map((op) => op.operationId))("%s is a method of the RPC entrypoint, answering ok or a refusal", async (id) => {
    // No arguments: refused field by field where the operation needs input, answered otherwise.
    const out = (await (entrypoint as unknown as Record<string, () => Promise<RpcResult<object>>>)[id]!()) as RpcResult<object>;
    expect(typeof out.ok, JSON.stringify(out).slice(0, 200)).toBe("boolean");
    if (!out.ok) expect(out.error.code, out.error.message).not.toBe("internal");
  });

  it("is a method of both clients, by its operationId", () => {
    const missing = (client: object) => OPERATION_LIST.map((op) => op.operationId).filter((id) => typeof (client as Record<string, unknown>)[id] !== "function");
    expect(missing(rpc)).toEqual([]);
    expect(missing(http)).toEqual([]);
  });

  it("is in the OpenAPI document under its method and path, with its operationId", async () => {
    const doc = (await api("GET", "/v1/openapi.json")).body;
    for (const op of OPERATION_LIST) expect(doc.paths[op.path]?.[op.method]?.operationId, `${op.method} ${op.path}`).toBe(op.operationId);
    const served = Object.values(doc.paths as Record<string, object>).flatMap((methods) => Object.keys(methods));
    // One more, described by hand: opening a subscription URL is a WebSocket or an event stream, no JSON call.
    expect(served).toHaveLength(OPERATION_LIST.length + 1);
    expect(doc.paths["/v1/subscriptions/{token}"].get.operationId).toBe("openSubscription");
  });

  it("answers the same through both clients", async () => {
    for (const client of [rpc, http]) {
      expect(await client.health()).toMatchObject({ ok: true, version: "0.1.0" });
      expect((await client.listPools()).pools.map((p) => p.name)).toEqual((await http.listPools()).pools.map((p) => p.name));
      expect(await client.getSchedule("nope").catch((e: unknown) => e)).toMatchObject({ code: "not_found" });
      expect((await client.getOpenApiDocument()).openapi).toBe("3.1.0");
    }
  });

  it("has exact types, derived from its declaration", () => {
    expectTypeOf<EdgeQueue["getJob"]>().toEqualTypeOf<(id: string, query?: { type?: string; scopeType?: string; scopeId?: string }) => Promise<RpcResult<{ job: Job }>>>();
    expectTypeOf<Parameters<EdgeQueue["resolveStep"]>>().toEqualTypeOf<[string, string, { result: unknown }]>();
    expectTypeOf<Parameters<EdgeQueue["cancelScope"]>>().toEqualTypeOf<[{ type: string; id: string }, { pendingOnly?: boolean; reason?: string }?]>();
    expectTypeOf<Parameters<EdgeQueue["setPoolLimits"]>>().toEqualTypeOf<[string, { concurrency?: number | null; ratePerMinute?: number | null; key?: string }]>();
    expectTypeOf<Parameters<EdgeQueue["retryJob"]>>().toEqualTypeOf<[string]>();
    expectTypeOf<Parameters<EdgeQueue["listDead"]>>().toEqualTypeOf<[string, { consumer?: string; limit?: number; cursor?: string }?]>();
    expectTypeOf(http.resolveStep).toEqualTypeOf<(id: string, name: string, result: unknown) => Promise<Job>>();
    expectTypeOf(rpc.getSchedule).toEqualTypeOf<(name: string) => Promise<Schedule>>();
    expectTypeOf(http.cancelScope).parameters.toEqualTypeOf<[{ type: string; id: string }, { pendingOnly?: boolean; reason?: string }?]>();
    expectTypeOf<Awaited<ReturnType<typeof http.putSchedule>>>().toEqualTypeOf<{ schedule: Schedule; created: boolean }>();
    expectTypeOf<Awaited<ReturnType<typeof rpc.listScopes>>["items"][number]["scope"]>().toEqualTypeOf<Scope | null>();
    expectTypeOf<keyof typeof OPERATIONS>().toEqualTypeOf<OperationId>();
  });
});

describe("operationUrl", () => {
  it("fills path parameters encoded, and a query with lists as commas", () => {
    expect(operationUrl("resolveStep", OPERATIONS.resolveStep, { params: { id: "a/b", name: "s 1" } })).toBe("/v1/jobs/a%2Fb/steps/s%201/resolve");
    expect(operationUrl("listJobs", OPERATIONS.listJobs, { query: { type: ["a", "b"], limit: 5, cursor: undefined } })).toBe("/v1/jobs?type=a%2Cb&limit=5");
    expect(() => operationUrl("getJob", OPERATIONS.getJob)).toThrow(/getJob: the path parameter id is missing/);
  });
});
