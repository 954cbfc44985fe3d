/**
 * Hostile input, property-based (fast-check, seeded): random and malformed
 * bodies, wrong types, huge strings, deep nesting, prototype-pollution keys,
 * invalid cursors and ids, unicode edge cases — against every declared
 * operation, over HTTP and over the RPC entrypoint. No answer is a 500; every
 * refusal has the API's error shape; a refused enqueue writes nothing.
 */
import { EdgeQueue } from "../../src/coordinator/rpc";
import { exports } from "cloudflare:workers";
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { OPERATION_LIST } from "../../src/api";
import { ERROR_STATUS } from "../../src/errors";
import { typeHome } from "../../src/job/home";
import { api } from "../helpers/api";
import { fuzzSettings } from "../helpers/random";
import { env } from "../helpers/scope";

const { seed: SEED, runs: RUNS } = fuzzSettings(60, 20261129);

const nasty = fc.oneof(
  fc.string(),
  fc.string({ unit: "binary", maxLength: 40 }),
  fc.constantFrom("__proto__", "constructor", "prototype", "", " ", "\u0000", "\uD800", "\uFFFF", "💩", "a/b", "..", "%2F", "%E0%A4%A", "x".repeat(5000)),
  fc.integer().map(String),
);
const jsonish = fc.letrec((tie) => ({
  value: fc.oneof(
    { depthSize: "small" },
    fc.constant(null),
    fc.boolean(),
    fc.double(),
    fc.integer(),
    nasty,
    fc.array(tie("value"), { maxLength: 4 }),
    fc.dictionary(nasty, tie("value"), { maxKeys: 4 }),
  ),
})).value;
const deep = fc.integer({ min: 50, max: 3000 }).map((n) => "[".repeat(n) + "]".repeat(n));
const rawBody = fc.oneof(
  jsonish.map((v) => JSON.stringify(v) ?? "null"),
  fc.string(),
  deep.map((d) => `{"type":"t","payload":{"d":${d}}}`),
  fc.constantFrom('{"__proto__":{"polluted":1},"type":"t","payload":{}}', '{"type":"t","payload":{"constructor":{"prototype":{"x":1}}}}', "{", "[]", "null", "1e400", '"str"'),
);

/** pct: percent-encode any string, lone surrogates included (encodeURIComponent throws on those). Some params go raw. */
function pct(s: string): string {
  if (s.startsWith("%")) return s; // a raw (possibly malformed) escape, as a hostile client would send it
  return Array.from(new TextEncoder().encode(s), (b) => `%${b.toString(16).padStart(2, "0")}`).join("") || "x";
}

function concretePath(path: string, params: string[]): string {
  let i = 0;
  return path.replace(/\{(\w+)\}/g, () => pct(params[i++] ?? "x"));
}

async function expectWellFormed(r: { status: number; body: any }, what: string) {
  expect(r.status, `${what} → ${r.status} ${JSON.stringify(r.body)?.slice(0, 300)}`).not.toBe(500);
  if (r.status >= 400) {
    expect(typeof r.body?.error?.code, what).toBe("string");
    expect(typeof r.body.error.message, what).toBe("string");
    expect(ERROR_STATUS[r.body.error.code as keyof typeof ERROR_STATUS], `${what}: code ${r.body.error.code} for ${r.status}`).toBe(r.status);
  }
}

async function rawCall(method: string, path: string, body: string | undefined, query = "") {
  const res = await (exports as any).default.fetch(`http://queue.test${path}${query}`, {
    method: method.toUpperCase(),
    headers: { authorization: "Bearer test-token", "content-type": "application/json" },
    body: method === "get" ? undefined : body,
  });
  const text = await res.text();
  let parsed: unknown = null;
  try {
    parsed = text ? JSON.parse(text) : null;
  } catch {
    parsed = { unparsable: text.slice(0, 200) };
  }
  return { status: res.status as number, body: parsed as any };
}

describe("hostile input over HTTP", () => {
  it.each(OPERATION_LIST.map((r) => [`${r.method.toUpperCase()} ${r.path}`, r] as const))("%s: never a 500, always the error shape", async (_name, route) => {
    await fc.assert(
      fc.asyncProperty(fc.array(nasty, { minLength: 3, maxLength: 3 }), rawBody, fc.dictionary(nasty, nasty, { maxKeys: 4 }), async (params, body, query) => {
        const qs = Object.keys(query).length ? `?${Object.entries(query).map(([k, v]) => `${pct(k)}=${pct(v)}`).join("&")}` : "";
        const r = await rawCall(route.method, concretePath(route.path, params), body, qs);
        await expectWellFormed(r, `${route.method} ${route.path} ${body.slice(0, 80)} ${qs.slice(0, 80)}`);
      }),
      { numRuns: RUNS, seed: SEED },
    );
  });

  it("a refused enqueue writes nothing", async () => {
    const type = `fuzz.${crypto.randomUUID().slice(0, 8)}`;
    const mutations = fc.oneof(
      fc.record({ payload: fc.oneof(fc.constant([]), fc.constant("x"), fc.constant(null), fc.integer()) }),
      fc.record({ maxAttempts: fc.oneof(fc.constant(0), fc.constant(1.5), fc.constant("3")) }),
      fc.record({ priority: fc.oneof(fc.constant("high"), fc.constant(1e12)) }),
      fc.record({ runAt: fc.constant(1), delayMs: fc.constant(1) }),
      fc.record({ dedupeMode: fc.constant("pending") }),
      fc.record({ id: nasty.filter((s) => !/^[A-Za-z0-9._:@-]{1,128}$/.test(s)) }),
      fc.record({ tags: fc.constant([""]) }),
      fc.record({ extra: jsonish }),
    );
    await fc.assert(
      fc.asyncProperty(mutations, async (mutation) => {
        const r = await api("POST", "/v1/jobs", { type, payload: { ok: true }, ...mutation });
        expect(r.status, JSON.stringify(mutation)).toBe(400);
      }),
      { numRuns: RUNS, seed: SEED },
    );
    const batch = await api("POST", "/v1/jobs/batch", { jobs: [{ type, payload: {} }, { type, payload: {}, maxAttempts: 0 }] });
    expect(batch.status).toBe(400);
    const page = await env.SCOPE.getByName(typeHome(type, 0).name).list({ types: [type] }, 0, 10);
    expect(page.jobs).toEqual([]);
  });

  it("invalid cursors and ids are refused or not found, never a 500", async () => {
    await fc.assert(
      fc.asyncProperty(nasty, async (s) => {
        await expectWellFormed(await api("GET", `/v1/jobs?cursor=${pct(s)}`), `cursor ${s.slice(0, 40)}`);
        await expectWellFormed(await api("GET", `/v1/jobs/${pct(s)}`), `id ${s.slice(0, 40)}`);
        await expectWellFormed(await api("POST", `/v1/jobs/${pct(s)}/complete`, { leaseToken: s || "t" }), `complete ${s.slice(0, 40)}`);
      }),
      { numRuns: RUNS, seed: SEED },
    );
  });

  it("prototype-pollution keys stay data and pollute nothing", async () => {
    const r = await rawCall("post", "/v1/jobs", '{"type":"fuzz.proto","payload":{"__proto__":{"isAdmin":true},"constructor":{"prototype":{"isAdmin":true}}}}');
    expect(r.status).toBe(201);
    expect(({} as Record<string, unknown>).isAdmin).toBeUndefined();
    expect(Object.keys(r.body.job.payload)).toEqual(["__proto__", "constructor"]);
  });
});

describe("hostile input over RPC", () => {
  const queue = (exports as any).EdgeQueue;
  // Every method the entrypoint has (one per declared operation), so a new one is fuzzed without being listed.
  const methods = Object.getOwnPropertyNames(EdgeQueue.prototype).filter((m) => m !== "constructor");
  it("covers the whole entrypoint", () => {
    expect(methods).toEqual(expect.arrayContaining(["enqueue", "metrics", "jobTimeline", "retryFailed", "setPoolLimits"]));
  });
  const arg = fc.oneof(jsonish, fc.date({ noInvalidDate: true }), fc.constant(undefined), fc.bigInt(), fc.constant(new Map([["a", 1]])), fc.constant(NaN));

  it.each(methods)("%s: answers ok or a refusal, never an internal error", async (method) => {
    await fc.assert(
      fc.asyncProperty(fc.array(arg, { maxLength: 3 }), async (args) => {
        let out: any;
        try {
          out = await queue[method](...args);
        } catch (e) {
          // A value the RPC layer itself cannot carry never reaches the queue.
          if (/serializ|clone|DataCloneError/i.test(String(e))) return;
          throw e;
        }
        expect(out?.ok === true || out?.ok === false, `${method}(${String(args).slice(0, 80)}) → ${JSON.stringify(out)?.slice(0, 200)}`).toBe(true);
        if (out.ok === false) expect(out.error.code, `${method}: ${out.error.message}`).not.toBe("internal");
      }),
      { numRuns: 40, seed: SEED },
    );
  });
});
