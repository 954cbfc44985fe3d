/**
 * Completion callbacks (docs/http-api.md "Completion callbacks"): a job enqueued with `callback` has its view POSTed
 * to the URL when it ends in a state of `on`, signed (Edgequeue-Signature, HMAC-SHA256 of "<t>.<body>" under
 * EDGEQUEUE_CALLBACK_SECRET), retried with backoff from the alarm, never sent again once a 2xx acknowledged it, and
 * dead after its last try (GET /v1/callbacks/dead). Against a real local receiver (test/receiver.mjs).
 */
import { runDurableObjectAlarm } from "cloudflare:test";
import { describe, expect, it, vi } from "vitest";
import { loadConfig } from "../../src/config/load";
import { QueueOps } from "../../src/coordinator/operations";
import { QueueError } from "../../src/errors";
import { scopeRpc } from "../../src/scope/api";
import { CALLBACK_TRIES } from "../../src/scope/callbacks";
import { api, waitForJob } from "../helpers/api";
import { env, freshScope, newJob, put } from "../helpers/scope";

const RECEIVER = (env as unknown as { RECEIVER_URL: string }).RECEIVER_URL;
const SECRET = "test-callback-secret";
type Received = { status: number; headers: Record<string, string>; body: string };
const received = async (name: string): Promise<Received[]> => (await fetch(`${RECEIVER}/cb/${name}`)).json();
const lease = { worker: "w", types: null, limit: 10, leaseMs: 20_000 };

/** verify: the README's few lines — check the signature as a receiver does. */
async function verify(header: string, body: string, secret = SECRET): Promise<boolean> {
  const { t, v1 } = Object.fromEntries(header.split(",").map((kv) => kv.split("=") as [string, string]));
  const key = await crypto.subtle.importKey("raw", new TextEncoder().encode(secret), { name: "HMAC", hash: "SHA-256" }, false, ["sign"]);
  const mac = new Uint8Array(await crypto.subtle.sign("HMAC", key, new TextEncoder().encode(`${t}.${body}`)));
  return [...mac].map((b) => b.toString(16).padStart(2, "0")).join("") === v1;
}

describe("completion callbacks", () => {
  it("a receiver that fails twice gets the job's view three times, signed; acknowledged once, never sent again", async () => {
    const name = crypto.randomUUID();
    const { home, stub, clock } = await freshScope();
    const row = (await put(stub, [newJob(home, { callback: JSON.stringify({ url: `${RECEIVER}/cb/${name}?fail=2`, on: ["completed", "failed"] }) })]))[0]!.row;
    const [job] = await scopeRpc(stub).claim(lease);
    await scopeRpc(stub).complete(job!.id, job!.leaseToken!, JSON.stringify({ shipped: true }));
    // Sent right after the commit.
    await vi.waitFor(async () => expect(await received(name)).toHaveLength(1), { timeout: 5_000, interval: 20 });
    // Then from the alarm, backing off: 1 s, 2 s.
    for (const [advance, n] of [[1_000, 2], [2_000, 3]] as const) {
      clock!.advance(advance);
      await runDurableObjectAlarm(stub);
      await vi.waitFor(async () => expect(await received(name)).toHaveLength(n), { timeout: 5_000, interval: 20 });
    }
    clock!.advance(3_600_000);
    await runDurableObjectAlarm(stub);
    const got = await received(name);
    expect(got.map((r) => r.status)).toEqual([500, 500, 200]);
    for (const r of got) {
      expect(r.headers["content-type"]).toBe("application/json");
      expect(r.headers["edgequeue-delivery"]).toBe(got[0]!.headers["edgequeue-delivery"]);
      expect(await verify(r.headers["edgequeue-signature"]!, r.body)).toBe(true);
      expect(await verify(r.headers["edgequeue-signature"]!, r.body, "another-secret")).toBe(false);
      expect(JSON.parse(r.body)).toMatchObject({ job: { id: row.id, state: "completed", result: { shipped: true }, callback: { url: `${RECEIVER}/cb/${name}?fail=2`, on: ["completed", "failed"] } } });
    }
    expect((await scopeRpc(stub).deadCallbacks(10))).toEqual([]);
  });

  it("after its last try a callback is dead and listed by GET /v1/callbacks/dead; `on` picks the end states", async () => {
    const name = crypto.randomUUID();
    const { home, stub, clock } = await freshScope();
    const url = `${RECEIVER}/cb/${name}?fail=1000`;
    await put(stub, [newJob(home, { callback: JSON.stringify({ url, on: ["cancelled"] }) }), newJob(home, { callback: JSON.stringify({ url, on: ["cancelled"] }) })]);
    const [a, b] = await scopeRpc(stub).claim(lease);
    await scopeRpc(stub).complete(a!.id, a!.leaseToken!, null); // completed: not in `on`
    await scopeRpc(stub).cancel(b!.id, "no longer wanted");
    for (let i = 1; i <= CALLBACK_TRIES; i++) {
      await vi.waitFor(async () => expect(await received(name)).toHaveLength(i), { timeout: 5_000, interval: 20 });
      clock!.advance(300_000);
      await runDurableObjectAlarm(stub);
    }
    expect((await received(name)).every((r) => JSON.parse(r.body).job.id === b!.id)).toBe(true);
    const scopeId = home.split(":").slice(2).join(":");
    const dead = await api("GET", `/v1/callbacks/dead?scopeType=Test&scopeId=${scopeId}`);
    expect(dead.body).toEqual({ items: [{ jobId: b!.id, type: "test.job", url, state: "cancelled", tries: CALLBACK_TRIES, lastError: "answered 500", deadAt: expect.any(Number) }], nextCursor: null });
    clock!.advance(3_600_000);
    await runDurableObjectAlarm(stub);
    expect(await received(name)).toHaveLength(CALLBACK_TRIES);
  });

  it("each ending is its own delivery; a failing callback keeps its backoff when other jobs end meanwhile", async () => {
    const name = crypto.randomUUID();
    const other = crypto.randomUUID();
    const { home, stub, clock } = await freshScope();
    const url = `${RECEIVER}/cb/${name}?fail=1`;
    const row = (await put(stub, [newJob(home, { callback: JSON.stringify({ url, on: ["failed"] }) })]))[0]!.row;
    let [job] = await scopeRpc(stub).claim(lease);
    await scopeRpc(stub).fail(job!.id, job!.leaseToken!, { error: "first", fatal: true });
    await vi.waitFor(async () => expect(await received(name)).toHaveLength(1), { timeout: 5_000, interval: 20 });
    // Another job of the object ends: its callback goes at once, the failed one waits out its backoff.
    await put(stub, [newJob(home, { callback: JSON.stringify({ url: `${RECEIVER}/cb/${other}`, on: ["completed"] }) })]);
    const [second] = await scopeRpc(stub).claim(lease);
    await scopeRpc(stub).complete(second!.id, second!.leaseToken!, null);
    await vi.waitFor(async () => expect(await received(other)).toHaveLength(1), { timeout: 5_000, interval: 20 });
    expect(await received(name)).toHaveLength(1);
    clock!.advance(1_000);
    await runDurableObjectAlarm(stub);
    await vi.waitFor(async () => expect((await received(name)).map((r) => r.status)).toEqual([500, 200]), { timeout: 5_000, interval: 20 });
    // Retried by hand, it ends again: a second delivery, with an id of its own.
    clock!.advance(1_000);
    expect((await scopeRpc(stub).retry(row.id)).ok).toBe(true);
    [job] = await scopeRpc(stub).claim(lease);
    await scopeRpc(stub).fail(job!.id, job!.leaseToken!, { error: "second", fatal: true });
    await vi.waitFor(async () => expect(await received(name)).toHaveLength(3), { timeout: 5_000, interval: 20 });
    const ids = (await received(name)).map((r) => r.headers["edgequeue-delivery"]);
    expect(ids[0]).toBe(ids[1]);
    expect(ids[2]).not.toBe(ids[1]);
    expect(JSON.parse((await received(name))[2]!.body).job.lastError).toBe("second");
  });

  it("through the API: a pushed job's callback arrives once; bad callbacks and a queue without the secret are refused naming the field", async () => {
    const name = crypto.randomUUID();
    const r = await api("POST", "/v1/jobs", { type: "demo.echo", payload: { x: 1 }, callback: { url: `${RECEIVER}/cb/${name}` } });
    expect(r.body.job.callback).toEqual({ url: `${RECEIVER}/cb/${name}`, on: ["completed", "failed"] });
    await waitForJob(r.body.job.id, (j) => j.state === "completed");
    await vi.waitFor(async () => expect((await received(name)).map((x) => x.status)).toEqual([200]), { timeout: 5_000, interval: 20 });
    for (const [callback, path] of [
      [{ url: "ftp://x" }, "callback.url"],
      [{ url: "not a url" }, "callback.url"],
      [{ url: `${RECEIVER}/cb/x`, on: ["running"] }, "callback.on[0]"],
      [{ url: `${RECEIVER}/cb/x`, extra: 1 }, "callback.extra"],
    ] as const) {
      const bad = await api("POST", "/v1/jobs", { type: "demo.echo", payload: {}, callback });
      expect([bad.status, bad.body.error.details[0].path]).toEqual([400, path]);
    }
    const batch = await api("POST", "/v1/jobs/batch", { jobs: [{ type: "demo.echo", payload: {} }, { type: "demo.echo", payload: {}, callback: { url: "mailto:a@b" } }] });
    expect([batch.status, batch.body.error.details[0].path]).toEqual([400, "jobs[1].callback.url"]);
    const noSecret = new QueueOps({ ...env, EDGEQUEUE_CALLBACK_SECRET: undefined }, loadConfig(env));
    const refused = await noSecret.jobs.enqueue({ type: "demo.echo", payload: {}, callback: { url: `${RECEIVER}/cb/x` } }).catch((e: unknown) => e);
    expect(refused).toBeInstanceOf(QueueError);
    expect((refused as QueueError).code).toBe("invalid_request");
    expect((refused as QueueError).message).toContain("callback: a callback is signed with the queue's EDGEQUEUE_CALLBACK_SECRET");
    const inline = await noSecret.claims.claimOrEnqueue({ worker: "w", leaseMs: 30_000, job: { type: "pull.inline.cb", payload: {}, dedupeKey: "k", callback: { url: `${RECEIVER}/cb/x` } } } as never).catch((e: unknown) => e);
    expect((inline as QueueError).message).toContain("job.callback: a callback is signed");
  });
});
