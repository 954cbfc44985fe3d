/**
 * Names that are not well-formed Unicode (a lone UTF-16 surrogate) are refused
 * with a 400 naming the field, over HTTP and RPC, and nothing is written
 * (docs/http-api.md "Semantics worth knowing", Names). Before, a type, scope
 * type or id answered 500 and a schedule stored a mangled type.
 */
import { exports } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import type { EdgeQueue } from "../../src/coordinator/rpc";
import { loneSurrogateAt } from "../../src/job/names";
import { parseConfig } from "../../src/config/load";
import { api, uniqueScope, uniqueType } from "../helpers/api";

const queue = (exports as unknown as { EdgeQueue: Service<EdgeQueue> }).EdgeQueue;

/** A lone high surrogate: JSON.stringify sends it as the escape \ud800, which JSON.parse turns back into one. */
const LONE = "\ud800";
const MESSAGE = /must be well-formed Unicode: a lone surrogate \(\\uD800\) at character \d+/;

/** The jobs a scope holds (read from its own object, so nothing written can hide behind the catalog's lag). */
async function jobsIn(scope: { type: string; id: string }): Promise<unknown[]> {
  const r = await api("GET", `/v1/jobs?scopeType=${scope.type}&scopeId=${scope.id}`);
  expect(r.status).toBe(200);
  return r.body.items;
}

function refused(r: { status: number; body: any }, path: string): void {
  expect(r.status, JSON.stringify(r.body)).toBe(400);
  expect(r.body.error.code).toBe("invalid_request");
  expect(r.body.error.message).toMatch(new RegExp(`^${path.replace(/[[\].]/g, "\\$&")}: `));
  expect(r.body.error.details).toContainEqual({ path, message: expect.stringMatching(MESSAGE) });
}

describe("names must be well-formed Unicode", () => {
  it("loneSurrogateAt finds a lone surrogate, never a pair", () => {
    expect(loneSurrogateAt("email.send")).toBe(-1);
    expect(loneSurrogateAt("emoji.\ud83d\ude00")).toBe(-1);
    expect(loneSurrogateAt("a\ud800")).toBe(1);
    expect(loneSurrogateAt("\udc00b")).toBe(0);
    expect(loneSurrogateAt("\ude00\ud83d")).toBe(0); // a pair the wrong way round is two lone ones
  });

  it("a single enqueue with one in its type, scope type or id, dedupe key or a tag is refused, and nothing is written", async () => {
    const scope = uniqueScope("names");
    const type = uniqueType("names");
    const cases: [Record<string, unknown>, string][] = [
      [{ type: `bad${LONE}`, scope }, "type"],
      [{ type, scope: { type: `T${LONE}`, id: scope.id } }, "scope.type"],
      [{ type, scope: { type: scope.type, id: `${scope.id}${LONE}` } }, "scope.id"],
      [{ type, scope, dedupeKey: `k${LONE}` }, "dedupeKey"],
      [{ type, scope, tags: ["ok", `t${LONE}`] }, "tags[1]"],
    ];
    for (const [job, path] of cases) {
      refused(await api("POST", "/v1/jobs", { payload: {}, ...job }), path);
      const rpc = await queue.enqueue({ payload: {}, ...job } as never);
      expect(rpc).toMatchObject({ ok: false, error: { code: "invalid_request", details: [{ path, message: expect.stringMatching(MESSAGE) }] } });
    }
    expect(await jobsIn(scope)).toEqual([]);
    // The scope itself takes jobs: the refusals left it empty, not unreachable.
    expect((await api("POST", "/v1/jobs", { type, payload: {}, scope })).status).toBe(201);
    expect(await jobsIn(scope)).toHaveLength(1);
  });

  it("a batch over five scopes with four good ones is refused whole, naming the bad item's field", async () => {
    const type = uniqueType("names");
    const scopes = Array.from({ length: 5 }, (_, i) => uniqueScope(`batch${i}`));
    const jobs = scopes.map((scope, i) => ({ type, payload: { i }, scope: i === 3 ? { type: scope.type, id: `${scope.id}${LONE}` } : scope }));
    refused(await api("POST", "/v1/jobs/batch", { jobs }), "jobs[3].scope.id");
    expect(await queue.enqueueBatch({ jobs })).toMatchObject({ ok: false, error: { code: "invalid_request", details: [{ path: "jobs[3].scope.id" }] } });
    for (const scope of scopes) expect(await jobsIn(scope), scope.id).toEqual([]);
    expect((await api("GET", `/v1/stats?type=${type}`)).body).toMatchObject({ pending: 0, scheduled: 0, running: 0 });
  });

  it("cancel by keys with one in a key, the type or the scope is refused, and cancels nothing", async () => {
    const type = uniqueType("names");
    const scope = uniqueScope("cancel");
    const id = (await api("POST", "/v1/jobs", { type, payload: {}, scope, dedupeKey: "k" })).body.job.id;
    const cases: [Record<string, unknown>, string][] = [
      [{ type, scope, dedupeKeys: ["k", `k${LONE}`] }, "dedupeKeys[1]"],
      [{ type: `${type}${LONE}`, scope, dedupeKeys: ["k"] }, "type"],
      [{ type, scope: { ...scope, type: LONE }, dedupeKeys: ["k"] }, "scope.type"],
    ];
    for (const [body, path] of cases) {
      refused(await api("POST", "/v1/cancel", body), path);
      expect(await queue.cancelKeys(body as never)).toMatchObject({ ok: false, error: { code: "invalid_request", details: [{ path }] } });
    }
    expect((await api("GET", `/v1/jobs/${id}`)).body.job.state).toBe("pending");
    // Cancelling a whole scope by RPC takes the scope as an argument of its own.
    expect(await queue.cancelScope({ type: scope.type, id: `${scope.id}${LONE}` })).toMatchObject({ ok: false, error: { code: "invalid_request", details: [{ path: "id" }] } });
    expect((await api("GET", `/v1/jobs/${id}`)).body.job.state).toBe("pending");
  });

  it("a schedule PUT with one in its type or scope is refused, and no schedule is stored", async () => {
    const name = `names-${crypto.randomUUID().slice(0, 8)}`;
    const before = (await api("GET", "/v1/schedules")).body.items;
    const cases: [Record<string, unknown>, string][] = [
      [{ type: `demo.noop${LONE}`, everyMs: 1000 }, "type"],
      [{ type: "demo.noop", everyMs: 1000, scope: { type: "T", id: LONE } }, "scope.id"],
    ];
    for (const [spec, path] of cases) {
      refused(await api("PUT", `/v1/schedules/${name}`, spec), path);
      expect(await queue.putSchedule(name, spec as never)).toMatchObject({ ok: false, error: { code: "invalid_request", details: [{ path }] } });
    }
    expect((await api("GET", `/v1/schedules/${name}`)).status).toBe(404);
    expect((await api("GET", "/v1/schedules")).body.items).toEqual(before);
  });

  it("claims, keyed claims, retries, listings, pauses, topics, pools and steps refuse one too", async () => {
    const type = uniqueType("names");
    const http: [string, string, Record<string, unknown>, string][] = [
      ["POST", "/v1/claim", { worker: "w", types: [`${type}${LONE}`] }, "types[0]"],
      ["POST", "/v1/claim", { worker: `w${LONE}`, types: [type] }, "worker"],
      ["POST", "/v1/claim", { worker: "w", tags: [LONE] }, "tags[0]"],
      ["POST", "/v1/jobs/claim-key", { type, dedupeKey: LONE, worker: "w" }, "dedupeKey"],
      ["POST", "/v1/jobs/claim-or-enqueue", { job: { type, payload: {}, dedupeKey: LONE }, worker: "w" }, "job.dedupeKey"],
      ["POST", "/v1/retry", { scopeType: "T", scopeId: LONE }, "scopeId"],
    ];
    for (const [method, path, body, field] of http) refused(await api(method, path, body), field);
    // A query string cannot carry a lone surrogate (it is UTF-8); the dashboard and RPC take the same schemas as objects.
    expect(await queue.listJobs({ tag: LONE })).toMatchObject({ ok: false, error: { details: [{ path: "tag" }] } });
    expect(await queue.pauseType(LONE)).toMatchObject({ ok: false, error: { code: "invalid_request", details: [{ path: "type" }] } });
    expect(await queue.emit(`demo.topic${LONE}`, { payload: {} })).toMatchObject({ ok: false, error: { code: "invalid_request", message: expect.stringMatching(/^topic: /) } });
    expect(await queue.retryDead(LONE, "demo.consumer.bad", "e1")).toMatchObject({ ok: false, error: { code: "invalid_request", details: [{ path: "topic" }] } });
    expect(await queue.setPoolLimits(`demo-pool${LONE}`, { concurrency: 1 })).toMatchObject({ ok: false, error: { code: "invalid_request", message: expect.stringMatching(/^name: /) } });
    expect(await queue.resolveStep("x.y", LONE, { result: null })).toMatchObject({ ok: false, error: { code: "invalid_request", details: [{ path: "name" }] } });
    const journal = { leaseToken: "t", seq: 0, name: `s${LONE}`, startedAt: 0, start: { at: 0, seed: "s" } };
    expect(await queue.appendStep("x.y", { ...journal, op: "begin" })).toMatchObject({ ok: false, error: { details: [{ path: "name" }] } });
    expect(await queue.sleepJob("x.y", { ...journal, until: 1 })).toMatchObject({ ok: false, error: { details: [{ path: "name" }] } });
  });

  it("the config refuses a type it names that is not well-formed, with its path", () => {
    expect(() => parseConfig({ types: { [`a${LONE}`]: {} } })).toThrow(MESSAGE);
    expect(() => parseConfig({ types: { a: { waitsFor: [LONE] } } })).toThrow(/types\.a\.waitsFor\[0\]: must be well-formed Unicode/);
    expect(() => parseConfig({ pools: { p: { concurrency: 1, types: [LONE] } } })).toThrow(/pools\.p\.types\[0\]: must be well-formed Unicode/);
    expect(() => parseConfig({ topics: { t: { consumers: [LONE] } } })).toThrow(/topics\.t\.consumers\[0\]: must be well-formed Unicode/);
  });
});
