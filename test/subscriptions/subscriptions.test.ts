/**
 * Live subscriptions (docs/http-api.md "Live subscriptions"): POST /v1/subscriptions mints a signed URL for a job, a
 * key's jobs or a scope's jobs; the URL opens as a hibernatable WebSocket or as Server-Sent Events with no token,
 * first the current state, then each change; a forged or expired URL is 401 before the upgrade, the object's bound
 * is 429, and a slow consumer is dropped.
 */
import { runInDurableObject } from "cloudflare:test";
import { exports } from "cloudflare:workers";
import { describe, expect, it, vi } from "vitest";
import { subscribe, watchJob } from "../../src/client/subscribe";
import { signSubscription } from "../../src/job/subscription";
import { scopeHome } from "../../src/job/home";
import { api, TOKEN, uniqueScope, uniqueType, waitForJob } from "../helpers/api";
import { env, partsOf } from "../helpers/scope";
import { ManualClock } from "../../src/clock";
import { mint, socket, stream, type Msg } from "../helpers/watch";
import { SOCKET_MESSAGES_PER_SECOND, STREAM_HIGH_WATER, SUBSCRIPTION_HEADER } from "../../src/scope/watching/watchers";

const events = (ms: Msg[]) => ms.map((m) => (m.event === "state" ? `state:${m.job?.state ?? `jobs:${m.jobs.length}`}` : m.event === "progress" ? `progress:${JSON.stringify(m.progress)}` : m.event));

/** A pulled job, claimed: the test drives its progress and end by hand. */
async function claimed(type: string, body: Record<string, unknown> = {}) {
  const id = (await api("POST", "/v1/jobs", { type, payload: {}, ...body })).body.job.id as string;
  return id;
}

describe("minting a subscription URL", () => {
  it("answers a URL on the request's origin, its path and expiry; bad input names the field", async () => {
    const type = uniqueType("mint");
    const id = await claimed(type);
    const r = await api("POST", "/v1/subscriptions", { jobId: id, ttlMs: 60_000 });
    expect(r.status).toBe(200);
    expect(r.body.url).toBe(`http://queue.test${r.body.path}`);
    expect(r.body.path).toMatch(/^\/v1\/subscriptions\/[A-Za-z0-9_-]+\.[A-Za-z0-9_-]{22}$/);
    expect(r.body.expiresAt).toBeGreaterThan(Date.now() + 50_000);
    for (const [body, path] of [
      [{}, "jobId"],
      [{ type }, "dedupeKey"],
      [{ dedupeKey: "k" }, "type"],
      [{ jobId: id, scope: uniqueScope() }, "scope"],
      [{ jobId: id, ttlMs: 10 }, "ttlMs"],
      [{ jobId: id, extra: 1 }, "extra"],
    ] as const) {
      const bad = await api("POST", "/v1/subscriptions", body);
      expect([bad.status, bad.body.error.details[0].path]).toEqual([400, path]);
    }
    expect((await api("POST", "/v1/subscriptions", { jobId: id }, null)).status).toBe(401);
  });

  it("a forged, altered or expired URL is 401 before any upgrade; an unknown job 404", async () => {
    const type = uniqueType("forged");
    const id = await claimed(type);
    const url = await mint({ jobId: id });
    const tampered = url.slice(0, -3) + (url.endsWith("AAA") ? "BBB" : "AAA");
    const home = (await api("GET", `/v1/jobs/${id}`)).body.job.id.split(".")[0];
    const expired = `http://queue.test/v1/subscriptions/${await signSubscription(TOKEN, { kind: "job", id, home: `type:${type}:0`, exp: Date.now() - 1 })}`;
    const otherKey = `http://queue.test/v1/subscriptions/${await signSubscription("another-token", { kind: "job", id, home: `type:${type}:0`, exp: Date.now() + 60_000 })}`;
    for (const [u, says] of [
      [tampered, "not signed by this queue"],
      [otherKey, "not signed by this queue"],
      [expired, "expired"],
      ["http://queue.test/v1/subscriptions/nonsense", "not a subscription URL"],
    ] as const) {
      for (const open of [() => socket(u), async () => { const s = await stream(u); throw Object.assign(new Error(), { status: s.status, body: await s.res.json() }); }]) {
        const e = (await open().catch((x: unknown) => x)) as { status: number; body: { error: { code: string; message: string } } };
        expect([e.status, e.body.error.code]).toEqual([401, "unauthorized"]);
        expect(e.body.error.message).toContain(says);
      }
    }
    expect(home).toBeTruthy();
    // Minting asks no object; opening a URL for a job its object does not hold is 404.
    const gone = (await socket(await mint({ jobId: `${id}x` })).catch((e: unknown) => e)) as { status: number; body: { error: { code: string } } };
    expect([gone.status, gone.body.error.code]).toEqual([404, "not_found"]);
  });
});

describe("following one job", () => {
  it("a WebSocket gets the current state first, then progress and each state, the result, and closes when the job ends", async () => {
    const type = uniqueType("ws");
    const id = await claimed(type);
    const s = await socket(await mint({ jobId: id }));
    await s.until((m) => m.length === 1);
    expect(s.messages[0]).toMatchObject({ event: "state", job: { id, state: "pending", progress: null } });
    const [leased] = (await api("POST", "/v1/claim", { worker: "w", types: [type] })).body.jobs;
    await api("POST", `/v1/jobs/${id}/progress`, { leaseToken: leased.leaseToken, progress: 40 });
    await api("POST", `/v1/jobs/${id}/progress`, { leaseToken: leased.leaseToken, progress: { stage: "upload" } });
    await api("POST", `/v1/jobs/${id}/complete`, { leaseToken: leased.leaseToken, result: { url: "https://x" } });
    expect(await s.closedWith()).toEqual({ code: 1000, reason: "the job ended" });
    expect(events(s.messages)).toEqual(["state:pending", "state:running", "progress:40", 'progress:{"stage":"upload"}', "state:completed", "result"]);
    expect(s.messages.at(-1)).toEqual({ event: "result", id, result: { url: "https://x" } });
    expect(s.messages[3]).toMatchObject({ id, at: expect.any(Number) });
  });

  it("Server-Sent Events carry the same messages to any origin, and end with the job", async () => {
    const type = uniqueType("sse");
    const id = await claimed(type);
    const sse = await stream(await mint({ jobId: id }), { origin: "https://app.example" });
    expect(sse.status).toBe(200);
    expect(sse.headers.get("content-type")).toBe("text/event-stream");
    expect(sse.headers.get("access-control-allow-origin")).toBe("*");
    const [leased] = (await api("POST", "/v1/claim", { worker: "w", types: [type] })).body.jobs;
    await api("POST", `/v1/jobs/${id}/progress`, { leaseToken: leased.leaseToken, progress: 99 });
    await api("POST", `/v1/jobs/${id}/fail`, { leaseToken: leased.leaseToken, error: "boom", fatal: true });
    expect(events(await sse.messages())).toEqual(["state:pending", "state:running", "progress:99", "state:failed"]);
  });

  it("a job that ended already: its state (and result) at once, then the end", async () => {
    const id = (await api("POST", "/v1/jobs", { type: "demo.echo", payload: { hello: 1 } })).body.job.id;
    await waitForJob(id, (j) => j.state === "completed");
    const s = await socket(await mint({ jobId: id }));
    expect((await s.closedWith()).code).toBe(1000);
    expect(events(s.messages)).toEqual(["state:completed", "result"]);
  });

  it("a pushed job's progress arrives live and the last is 100 before it completes (demo.progress)", async () => {
    const id = (await api("POST", "/v1/jobs", { type: "demo.progress", payload: { steps: 3, ms: 300 } })).body.job.id;
    const s = await socket(await mint({ jobId: id }));
    await s.closedWith();
    const progress = s.messages.filter((m) => m.event === "progress").map((m) => m.progress as number);
    expect(progress.length).toBeGreaterThanOrEqual(1);
    expect(progress).toEqual([...progress].sort((a, b) => a - b));
    expect(progress.at(-1)).toBe(100);
    expect(s.messages.at(-1)).toMatchObject({ event: "result", result: { done: true } });
  });
});

describe("steps and log lines", () => {
  it("a pull worker's log lines and journaled steps arrive as they are written; a completion's lines before its end", async () => {
    const type = uniqueType("feed");
    const id = await claimed(type);
    const s = await socket(await mint({ jobId: id, include: ["steps", "logs", "result"] }));
    await s.until((m) => m.length === 1);
    const [leased] = (await api("POST", "/v1/claim", { worker: "w", types: [type] })).body.jobs;
    const leaseToken = leased.leaseToken;
    await api("POST", `/v1/jobs/${id}/logs`, { leaseToken, items: [{ at: 5, message: "fetched", fields: { rows: 3 } }] });
    const start = { at: 1, seed: "s" };
    expect((await api("POST", `/v1/jobs/${id}/steps`, { leaseToken, op: "commit", seq: 0, name: "charge", result: { ok: true }, startedAt: 2, start })).status).toBe(200);
    await api("POST", "/v1/jobs/complete", { items: [{ id, leaseToken, logs: [{ at: 9, message: "done" }] }] });
    await s.closedWith();
    expect(events(s.messages)).toEqual(["state:pending", "state:running", "log", "step", "log", "state:completed", "result"]);
    expect(s.messages[2]).toEqual({ event: "log", id, line: { at: 5, attempt: 1, message: "fetched", fields: { rows: 3 } } });
    expect(s.messages[3]).toMatchObject({ event: "step", id, step: { seq: 0, name: "charge", kind: "step", startedAt: 2, finishedAt: expect.any(Number), attempt: 1 } });
    expect(s.messages[4]).toMatchObject({ event: "log", line: { message: "done" } });
  });

  it("a pushed handler's steps arrive as journaled, its lines with its outcome (demo.steps, demo.log)", async () => {
    const scope = uniqueScope("pushed");
    const sse = await stream(await mint({ scope, include: ["progress", "steps", "logs", "result"] }));
    const steps = (await api("POST", "/v1/jobs", { type: "demo.steps", payload: {}, scope })).body.job.id;
    const logs = (await api("POST", "/v1/jobs", { type: "demo.log", payload: { lines: 2 }, scope })).body.job.id;
    await waitForJob(steps, (j) => j.state === "completed");
    await waitForJob(logs, (j) => j.state === "completed");
    const s = await socket(await mint({ scope }));
    await s.until((m) => m.length === 1);
    s.ws.close(1000, "done");
    // Read what the stream got so far: cancel it once both jobs' results are in.
    const reader = sse.res.body!.getReader();
    let text = "";
    while (!(text.includes(`"result","id":"${steps}"`) && text.includes(`"result","id":"${logs}"`))) text += new TextDecoder().decode((await reader.read()).value);
    await reader.cancel();
    const got = text.split("\n\n").filter((f) => f.startsWith("data: ")).map((f) => JSON.parse(f.slice(6)) as Msg);
    const of = (id: string) => events(got.filter((m) => m.id === id || m.job?.id === id));
    expect(of(steps)).toEqual(["state:pending", "state:running", "step", "step", "step", "state:completed", "result"]);
    expect(of(logs)).toEqual(["state:pending", "state:running", "log", "log", "state:completed", "result"]);
  });
});

describe("what a subscription carries", () => {
  it("by default no payload and no log lines; `include` chosen at minting is signed into the URL", async () => {
    const type = uniqueType("carry");
    const scope = uniqueScope("carry");
    const id = (await api("POST", "/v1/jobs", { type, payload: { card: "4242" }, scope })).body.job.id as string;
    const minted = await api("POST", "/v1/subscriptions", { jobId: id });
    expect(minted.body.include).toEqual(["progress", "steps", "result"]);
    const plain = await socket(minted.body.url);
    const all = await socket(await mint({ jobId: id, include: ["payload", "logs", "result", "progress", "steps"] }));
    const bare = await socket(await mint({ jobId: id, include: [] }));
    const scoped = await socket(await mint({ scope }));
    for (const s of [plain, all, bare, scoped]) await s.until((m) => m.length === 1);
    const [leased] = (await api("POST", "/v1/claim", { worker: "w", types: [type] })).body.jobs;
    await api("POST", `/v1/jobs/${id}/progress`, { leaseToken: leased.leaseToken, progress: 50 });
    await api("POST", `/v1/jobs/${id}/logs`, { leaseToken: leased.leaseToken, items: [{ at: 5, message: "charging 4242" }] });
    await api("POST", `/v1/jobs/${id}/complete`, { leaseToken: leased.leaseToken, result: { ok: true } });
    for (const s of [plain, all, bare]) await s.closedWith();
    await scoped.until((m) => m.some((x) => x.event === "result"));
    scoped.ws.close(1000, "done");
    expect(events(plain.messages)).toEqual(["state:pending", "state:running", "progress:50", "state:completed", "result"]);
    expect(events(all.messages)).toEqual(["state:pending", "state:running", "progress:50", "log", "state:completed", "result"]);
    expect(events(bare.messages)).toEqual(["state:pending", "state:running", "state:completed"]);
    // The payload is in no message unless asked for; nor is anything the URL does not carry.
    for (const s of [plain, bare, scoped]) expect(JSON.stringify(s.messages)).not.toContain("4242");
    expect(JSON.stringify(scoped.messages[0])).not.toContain("payload");
    expect(all.messages[0]).toMatchObject({ job: { payload: { card: "4242" } } });
    expect(bare.messages.at(-1)).not.toHaveProperty("job.result");
    expect(bare.messages.at(-1)).not.toHaveProperty("job.progress");
    expect(plain.messages.at(-2)).toMatchObject({ job: { state: "completed", result: { ok: true }, progress: 50 } });
    for (const [body, path] of [
      [{ jobId: id, include: ["secrets"] }, "include[0]"],
      [{ jobId: id, include: ["logs", "logs"] }, "include"],
    ] as const) {
      const bad = await api("POST", "/v1/subscriptions", body);
      expect([bad.status, bad.body.error.details[0].path]).toEqual([400, path]);
    }
  });
});

describe("following a key's jobs and a scope's jobs", () => {
  it("a key: its live jobs first, then every job of the type under the key, the next one too", async () => {
    const type = uniqueType("key");
    const scope = uniqueScope("key");
    const s = await socket(await mint({ type, dedupeKey: "order-1", scope }));
    await s.until((m) => m.length === 1);
    expect(s.messages[0]).toEqual({ event: "state", jobs: [], more: false });
    const first = await claimed(type, { dedupeKey: "order-1", scope });
    await claimed(type, { dedupeKey: "order-2", scope });
    await s.until((m) => m.length === 2);
    expect(s.messages[1]).toMatchObject({ event: "state", job: { id: first, dedupeKey: "order-1", state: "pending" } });
    await api("POST", `/v1/jobs/${first}/cancel`, {});
    const second = await claimed(type, { dedupeKey: "order-1", scope });
    await s.until((m) => m.length === 4);
    expect(events(s.messages)).toEqual(["state:jobs:0", "state:pending", "state:cancelled", "state:pending"]);
    expect(s.messages[3]!.job.id).toBe(second);
    // A key's socket stays open when one of its jobs ends.
    expect(s.closed).toBeNull();
    s.ws.close(1000, "done");
  });

  it("a scope: its live jobs first (listed), then each of its jobs' changes", async () => {
    const type = uniqueType("scope");
    const scope = uniqueScope("sc");
    const before = await claimed(type, { scope });
    const sse = await stream(await mint({ scope, include: ["progress", "steps", "logs", "result"] }));
    const s = await socket(await mint({ scope }));
    await s.until((m) => m.length === 1);
    expect(s.messages[0]).toMatchObject({ event: "state", jobs: [{ id: before, state: "pending" }], more: false });
    const after = await claimed(type, { scope });
    await api("POST", `/v1/jobs/${before}/cancel`, {});
    await s.until((m) => m.length === 3);
    expect(s.messages.slice(1).map((m) => [m.job.id, m.job.state])).toEqual([
      [after, "pending"],
      [before, "cancelled"],
    ]);
    s.ws.close(1000, "done");
    sse.res.body!.cancel();
  });
});

describe("bounds", () => {
  it("past limits.subscribersPerObject an open is 429 before the upgrade; a closed socket makes room", async () => {
    const scope = uniqueScope("full");
    const url = await mint({ scope });
    const open = [];
    for (let i = 0; i < 20; i++) open.push(await socket(url));
    const refused = (await socket(url).catch((e: unknown) => e)) as { status: number; body: { error: { code: string; message: string } } };
    expect([refused.status, refused.body.error.code]).toEqual([429, "too_many_subscribers"]);
    expect(refused.body.error.message).toContain("limits.subscribersPerObject");
    const sse = await stream(url);
    expect(sse.status).toBe(429);
    open[0]!.ws.close(1000, "bye");
    const again = await vi_waitForOpen(url);
    again.ws.close(1000, "bye");
    for (const s of open.slice(1)) s.ws.close(1000, "bye");
  });

  it("a stream whose reader falls behind is dropped; a socket sent too much in a second is closed 1013", async () => {
    const scope = uniqueScope("slow");
    const home = scopeHome(scope).name;
    const stub = env.SCOPE.getByName(home);
    await api("POST", "/v1/jobs", { type: uniqueType("slow"), payload: {}, scope });
    const s = await socket(await mint({ scope }));
    await s.until((m) => m.length === 1);
    await runInDurableObject(stub, async (o) => {
      // One second by the object's clock: the sockets' rate is counted per second, and a real one may turn mid-loop.
      o.clock = new ManualClock(Date.now());
      const w = partsOf(o).watching.watchers;
      const sub = JSON.stringify({ kind: "scope", home, exp: Date.now() + 60_000 });
      // A stream nobody reads.
      const res = w.open(new Request("https://scope/subscribe", { headers: { accept: "text/event-stream", [SUBSCRIPTION_HEADER]: sub } }));
      expect(res.status).toBe(200);
      expect(w.count).toBe(2);
      const row = o.store.sql.exec("SELECT * FROM job LIMIT 1").one() as never;
      for (let i = 0; i <= Math.max(STREAM_HIGH_WATER, SOCKET_MESSAGES_PER_SECOND); i++) w.changed([], [row]);
      expect(w.count).toBe(0);
    });
    expect((await s.closedWith()).code).toBe(1013);
  });
});

async function vi_waitForOpen(url: string) {
  const { vi } = await import("vitest");
  return vi.waitFor(() => socket(url), { timeout: 5_000, interval: 20 });
}

describe("the client's subscribe and watchJob", () => {
  const queueFetch = ((input: string, init?: RequestInit) => (exports as unknown as { default: Fetcher }).default.fetch(input, init)) as typeof fetch;

  it("watchJob follows one job over Server-Sent Events to its final view, with its progress", async () => {
    const type = uniqueType("watch");
    const id = await claimed(type);
    const seen: unknown[] = [];
    const states: string[] = [];
    const done = watchJob(await mint({ jobId: id }), { progress: (p) => seen.push(p), state: (j) => states.push(j.state) }, { transport: "sse", fetch: queueFetch });
    const [leased] = (await api("POST", "/v1/claim", { worker: "w", types: [type] })).body.jobs;
    await api("POST", `/v1/jobs/${id}/progress`, { leaseToken: leased.leaseToken, progress: 50 });
    await api("POST", `/v1/jobs/${id}/complete`, { leaseToken: leased.leaseToken, result: { n: 1 } });
    const job = await done;
    expect(job).toMatchObject({ id, state: "completed", result: { n: 1 }, progress: 50 });
    expect(seen).toEqual([50]);
    expect(states).toEqual(["pending", "running", "completed"]);
  });

  it("a dropped connection reconnects from its cursor: what it missed first — steps and lines — and nothing twice", async () => {
    const type = uniqueType("resume");
    const id = await claimed(type);
    // A fetch whose connections the test cuts, and whose next connection waits until the test lets it through.
    const asked: string[] = [];
    let cut: (() => void) | null = null;
    let gate: Promise<void> = Promise.resolve();
    let open: () => void = () => {};
    const cuttable = (async (input: string, init?: RequestInit) => {
      asked.push(input);
      await gate;
      const res = await queueFetch(input, init);
      const reader = res.body!.getReader();
      let ctl!: ReadableStreamDefaultController<Uint8Array>;
      const body = new ReadableStream<Uint8Array>({
        start: (c) => void (ctl = c),
        pull: async (c) => {
          const { value, done } = await reader.read().catch(() => ({ value: undefined, done: true }));
          if (done) c.close();
          else c.enqueue(value);
        },
      });
      cut = () => {
        ctl.error(new Error("the connection was cut"));
        void reader.cancel().catch(() => undefined);
      };
      return new Response(body, { status: res.status, headers: res.headers });
    }) as typeof fetch;
    const got: Msg[] = [];
    const sub = subscribe(await mint({ jobId: id, include: ["steps", "logs", "result"] }), (m) => got.push(m as Msg), { transport: "sse", fetch: cuttable, reconnect: { delayMs: 5 } });
    await vi.waitFor(() => expect(events(got)).toEqual(["state:pending"]), { timeout: 5_000, interval: 10 });
    const [leased] = (await api("POST", "/v1/claim", { worker: "w", types: [type] })).body.jobs;
    const leaseToken = leased.leaseToken;
    await api("POST", `/v1/jobs/${id}/logs`, { leaseToken, items: [{ at: Date.now(), message: "before the cut" }] });
    await vi.waitFor(() => expect(events(got)).toEqual(["state:pending", "state:running", "log"]), { timeout: 5_000, interval: 10 });

    gate = new Promise((resolve) => (open = resolve));
    cut!();
    await vi.waitFor(() => expect(asked).toHaveLength(2), { timeout: 5_000, interval: 5 });
    // Written while it is away.
    await api("POST", `/v1/jobs/${id}/logs`, { leaseToken, items: [{ at: Date.now(), message: "while away" }] });
    expect((await api("POST", `/v1/jobs/${id}/steps`, { leaseToken, op: "commit", seq: 0, name: "charge", result: { ok: true }, startedAt: Date.now(), start: { at: Date.now(), seed: "s" } })).status).toBe(200);
    open();
    await vi.waitFor(() => expect(events(got)).toEqual(["state:pending", "state:running", "log", "log", "step"]), { timeout: 5_000, interval: 10 });
    expect(asked[1]).toMatch(new RegExp(`[?&]after=${got[1]!.job!.updatedAt}$`));
    expect(got.filter((m) => m.event === "log").map((m) => (m as unknown as { line: { message: string } }).line.message)).toEqual(["before the cut", "while away"]);

    await api("POST", `/v1/jobs/${id}/complete`, { leaseToken, result: { n: 1 } });
    expect(await sub.closed).toEqual({ code: 1000, reason: "the stream ended" });
    expect(events(got)).toEqual(["state:pending", "state:running", "log", "log", "step", "state:completed", "result"]);
  });

  it("an after the URL did not carry from a message is a 400 naming it", async () => {
    const id = await claimed(uniqueType("resume"));
    const res = await queueFetch(`${await mint({ jobId: id })}?after=soon`, { headers: { accept: "text/event-stream" } });
    expect(res.status).toBe(400);
    expect(((await res.json()) as { error: { message: string } }).error.message).toMatch(/^after: /);
  });

  it("a refused URL rejects watchJob with the queue's reason; subscribe's close ends the stream", async () => {
    const expired = `http://queue.test/v1/subscriptions/${await signSubscription(TOKEN, { kind: "scope", home: "scope:T:x", exp: Date.now() - 1 })}`;
    await expect(watchJob(expired, {}, { transport: "sse", fetch: queueFetch })).rejects.toThrow(/4401: this subscription URL expired/);
    const got: string[] = [];
    const sub = subscribe(await mint({ scope: uniqueScope("close") }), (m) => got.push(m.event), { transport: "sse", fetch: queueFetch });
    await vi.waitFor(() => expect(got).toEqual(["state"]), { timeout: 5_000, interval: 10 });
    sub.close();
    expect(await sub.closed).toEqual({ code: 1000, reason: "closed by the subscriber" });
  });
});
