/**
 * Completion callbacks (docs/http-api.md "Completion callbacks"): a job enqueued with `callback` has its view POSTed
 * to the URL when it ends in a state of `on`, signed (Edgequeue-Signature, HMAC-SHA256 of "<t>.<url>.<body>" under
 * EDGEQUEUE_CALLBACK_SECRET), retried with backoff from the alarm, never sent again once a 2xx acknowledged it, and
 * dead after its last try (GET /v1/callbacks/dead). Against real local receivers on two ports (test/receiver.mjs):
 * nothing here sends to a non-loopback address — where a callback may not go is proven by the enqueue's 400.
 */
import { runDurableObjectAlarm, runInDurableObject } from "cloudflare:test";
import { describe, expect, it, vi } from "vitest";
import { loadConfig } from "../../src/config/load";
import { QueueOps } from "../../src/coordinator/operations";
import { QueueError } from "../../src/errors";
import { scopeRpc } from "../helpers/scope";
import { CALLBACK_TRIES } from "../../src/scope/watching/callbacks";
import { api, waitForJob } from "../helpers/api";
import { env, freshScope, newJob, put } from "../helpers/scope";

const RECEIVER = (env as unknown as { RECEIVER_URL: string }).RECEIVER_URL;
const RECEIVER2 = (env as unknown as { RECEIVER2_URL: string }).RECEIVER2_URL;
const SECRET = "test-callback-secret";
type Received = { status: number; headers: Record<string, string>; body: string };
const received = async (name: string): Promise<Received[]> => (await fetch(`${RECEIVER}/cb/${name}`)).json();
const lease = { worker: "w", types: null, limit: 10, leaseMs: 20_000 };

/** verify: the README's few lines — check the signature as a receiver does, over the URL it registered. */
async function verify(header: string, url: string, body: string, secret = SECRET): Promise<boolean> {
  const { t, v1 } = Object.fromEntries(header.split(",").map((kv) => kv.split("=") as [string, string]));
  const key = await crypto.subtle.importKey("raw", new TextEncoder().encode(secret), { name: "HMAC", hash: "SHA-256" }, false, ["sign"]);
  const mac = new Uint8Array(await crypto.subtle.sign("HMAC", key, new TextEncoder().encode(`${t}.${url}.${body}`)));
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
      expect(await verify(r.headers["edgequeue-signature"]!, `${RECEIVER}/cb/${name}?fail=2`, r.body)).toBe(true);
      expect(await verify(r.headers["edgequeue-signature"]!, `${RECEIVER}/cb/${name}?fail=2`, r.body, "another-secret")).toBe(false);
      // Signed for this URL: replayed to another receiver, it does not verify there.
      expect(await verify(r.headers["edgequeue-signature"]!, `${RECEIVER2}/cb/${name}`, r.body)).toBe(false);
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
      [{ url: `${RECEIVER}/cb/x`, on: ["failed", "failed"] }, "callback.on"],
      [{ url: `${RECEIVER}/cb/x`, on: Array(100_000).fill("failed") }, "callback.on"],
      [{ url: `${RECEIVER}/${"x".repeat(2100)}` }, "callback.url"],
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

  it("a URL the queue must not call is refused at the enqueue naming callback.url, and nothing is written", async () => {
    // The queue as deployed: no host let through (the repo's npm start config allows 127.0.0.1 and localhost).
    const config = loadConfig({ EDGEQUEUE_CONFIG: { ...(env.EDGEQUEUE_CONFIG as object), callbacks: undefined } } as never);
    const ops = new QueueOps(env, config);
    const refused = [
      "http://127.0.0.1/x",
      "http://127.1.2.3:8080/x",
      "http://localhost/x",
      "http://LOCALHOST./x",
      "http://api.localhost/x",
      "http://0.0.0.0/x",
      "http://0/x",
      "http://2130706433/x", // decimal 127.0.0.1
      "http://0x7f.1/x", // hex
      "http://0177.0.0.1/x", // octal
      "http://10.1.2.3/x",
      "http://172.20.0.1/x",
      "http://192.168.1.1/x",
      "http://169.254.169.254/latest/meta-data/", // cloud metadata
      "http://100.64.0.1/x",
      "http://224.0.0.1/x",
      "http://255.255.255.255/x",
      "http://[::1]/x",
      "http://[::]/x",
      "http://[::ffff:127.0.0.1]/x", // IPv4-mapped
      "http://[::ffff:8.8.8.8]/x",
      "http://[fe80::1]/x",
      "http://[fd00::1]/x",
      "http://[64:ff9b::a00:1]/x", // NAT64 of 10.0.0.1
      "http://[2002:c0a8:101::1]/x", // 6to4 of 192.168.1.1
      "http://metadata/computeMetadata/v1/", // no domain
      "http://printer.local/x",
      "http://db.internal/x",
      "http://user:pass@example.com/x",
      "http://user@example.com/x",
      "http:///x", // no host
      "https:/example.com/x",
      "http:\\\\example.com/x",
    ];
    const scope = { type: "Test", id: `cb-${crypto.randomUUID()}` };
    for (const url of refused) {
      const out = await ops.jobs.enqueue({ type: "demo.echo", payload: {}, scope, callback: { url } } as never).catch((e: unknown) => e);
      expect(out, url).toBeInstanceOf(QueueError);
      expect((out as QueueError).code, url).toBe("invalid_request");
      expect(JSON.stringify((out as QueueError).toBody()), url).toContain('"path":"callback.url"');
    }
    const listed = await api("GET", `/v1/jobs?scopeType=Test&scopeId=${scope.id}`);
    expect(listed.body.items).toEqual([]);
    // Through HTTP the schema's part answers the same way, before the config's.
    const http = await api("POST", "/v1/jobs", { type: "demo.echo", payload: {}, callback: { url: "http:///x" } });
    expect([http.status, http.body.error.details[0].path]).toEqual([400, "callback.url"]);
    // A public host passes (refusals end here: nothing is sent to it, its job is cancelled before it runs).
    const allowed = await ops.jobs.enqueue({ type: "demo.echo", payload: {}, delayMs: 3_600_000, callback: { url: "https://hooks.example.com/edgequeue?x=1" } });
    expect(allowed.job!.callback?.url).toBe("https://hooks.example.com/edgequeue?x=1");
    await ops.jobs.cancel(allowed.job!.id, "test");
    // The allow-list lets a loopback receiver through by host, or host and port; the mapped form is not that host.
    const local = loadConfig({ EDGEQUEUE_CONFIG: { ...(env.EDGEQUEUE_CONFIG as object), callbacks: { allowHosts: ["127.0.0.1:9", "[::1]"] } } } as never);
    const localOps = new QueueOps(env, local);
    for (const url of ["http://127.0.0.1:9/x", "http://[::1]/x"]) {
      const ok = await localOps.jobs.enqueue({ type: "demo.echo", payload: {}, delayMs: 3_600_000, callback: { url } });
      await localOps.jobs.cancel(ok.job!.id, "test");
    }
    for (const url of ["http://127.0.0.1:10/x", "http://[::ffff:127.0.0.1]:9/x"]) {
      await expect(localOps.jobs.enqueue({ type: "demo.echo", payload: {}, callback: { url } } as never), url).rejects.toBeInstanceOf(QueueError);
    }
  });

  it("a redirect is never followed: a 307 to another host is a failed try, recorded, and the other host hears nothing", async () => {
    const name = crypto.randomUUID();
    const { home, stub, clock } = await freshScope();
    const target = `${RECEIVER2}/cb/${name}`;
    const url = `${RECEIVER}/redirect/${name}?to=${encodeURIComponent(target)}`;
    await put(stub, [newJob(home, { callback: JSON.stringify({ url, on: ["completed"] }) })]);
    const [job] = await scopeRpc(stub).claim(lease);
    await scopeRpc(stub).complete(job!.id, job!.leaseToken!, null);
    await vi.waitFor(async () => expect(await received(name)).toHaveLength(1), { timeout: 5_000, interval: 20 });
    await vi.waitFor(
      async () => {
        const owed = await runInDurableObject(stub, (_o, state) => state.storage.sql.exec<{ tries: number; last_error: string }>("SELECT tries, last_error FROM callback_out").toArray());
        expect(owed).toEqual([{ tries: 1, last_error: "answered 307: redirects are not followed (give the final URL)" }]);
      },
      { timeout: 5_000, interval: 20 },
    );
    for (let i = 2; i <= CALLBACK_TRIES; i++) {
      clock!.advance(300_000);
      await runDurableObjectAlarm(stub);
    }
    expect((await received(name)).map((r) => r.status)).toEqual(Array(CALLBACK_TRIES).fill(307));
    expect(await (await fetch(`${RECEIVER2}/cb/${name}`)).json()).toEqual([]);
    expect((await scopeRpc(stub).deadCallbacks(10)).map((d) => d.lastError)).toEqual(["answered 307: redirects are not followed (give the final URL)"]);
  });

  it("a callback owed for an ending that a manual retry undid before it was sent tells that ending, not the pending job", async () => {
    const name = crypto.randomUUID();
    const { home, stub, clock } = await freshScope();
    const row = (await put(stub, [newJob(home, { callback: JSON.stringify({ url: `${RECEIVER}/cb/${name}?fail=1`, on: ["failed"] }) })]))[0]!.row;
    const [job] = await scopeRpc(stub).claim(lease);
    await scopeRpc(stub).fail(job!.id, job!.leaseToken!, { error: "card declined", fatal: true });
    await vi.waitFor(async () => expect(await received(name)).toHaveLength(1), { timeout: 5_000, interval: 20 });
    // Retried by hand while its callback backs off.
    expect((await scopeRpc(stub).retry(row.id)).ok).toBe(true);
    clock!.advance(1_000);
    await runDurableObjectAlarm(stub);
    await vi.waitFor(async () => expect(await received(name)).toHaveLength(2), { timeout: 5_000, interval: 20 });
    const [first, second] = await received(name);
    expect(second!.headers["edgequeue-delivery"]).toBe(first!.headers["edgequeue-delivery"]);
    expect(JSON.parse(second!.body).job).toMatchObject({ id: row.id, state: "failed", failureKind: "fatal", lastError: "card declined" });
    expect(JSON.parse(second!.body)).toEqual(JSON.parse(first!.body));
  });
});
