/**
 * Encryption at rest and sensitive values (docs/operating.md). The suites run with EDGEQUEUE_ENCRYPTION_KEYS set
 * (vitest.config.mts: "t2" seals, "t1" still opens): a stored payload, result, step value, log line and signal's
 * data is unreadable in the object's SQLite and read back opened by the API; a value sealed with the older key still
 * opens; a type marked `sensitive` (demo.sensitive, in the example handler) and a step run `{ sensitive: true }`
 * show "[redacted]" on every surface — the API, a listing, its steps and logs, a subscription, a callback, the
 * dashboard — while their handler got every value. Bad key secrets are refused, naming the entry and field.
 */
import { createExecutionContext, runInDurableObject } from "cloudflare:test";
import { exports } from "cloudflare:workers";
import { describe, expect, it, vi } from "vitest";
import { decodeBytes } from "../../src/base64url";
import { createWorker } from "../../src/pull-worker";
import { homeOfJobId } from "../../src/job/home";
import { parseKeys } from "../../src/sealing/keys";
import { REDACTED } from "../../src/sealing/lens";
import { Vault } from "../../src/sealing/vault";
import { queueFrom } from "../../src/server/create-queue";
import { api, TOKEN, uniqueType, waitForJob } from "../helpers/api";
import { env, opened } from "../helpers/scope";
import { mint, stream } from "../helpers/watch";

const SECRET = "4242-4242-4242";
const RECEIVER = (env as unknown as { RECEIVER_URL: string }).RECEIVER_URL;
const start = { at: Date.now(), seed: "seed" };
const scopeOf = (id: string) => env.SCOPE.getByName(homeOfJobId(id)!.name);

/** stored: every row of the tables that keep values, in the job's object, as SQLite holds them. */
async function stored(id: string): Promise<string> {
  return runInDurableObject(scopeOf(id), (_o, state) =>
    ["job", "job_step", "job_log", "job_signal", "outbox", "callback_out", "job_transition"].map((t) => JSON.stringify(state.storage.sql.exec(`SELECT * FROM ${t}`).toArray())).join("\n"),
  );
}

const storedPayload = (id: string) => runInDurableObject(scopeOf(id), (_o, state) => state.storage.sql.exec<{ payload: string }>("SELECT payload FROM job WHERE id = ?", id).one().payload);

describe("encryption at rest", () => {
  it("a pulled job's payload, step, log line, signal data and result are sealed in SQLite and read back opened", async () => {
    const type = uniqueType("sealed");
    const made = await api("POST", "/v1/jobs", { type, payload: { card: SECRET } });
    expect(made.status).toBe(201);
    expect(made.body.job.payload).toEqual({ card: SECRET });
    const claimed = (await api("POST", "/v1/claim", { worker: "w", types: [type] })).body.jobs[0];
    expect(claimed.payload).toEqual({ card: SECRET });
    const id = claimed.id as string;
    const leaseToken = claimed.leaseToken as string;
    expect((await api("POST", `/v1/jobs/${id}/steps`, { leaseToken, op: "commit", seq: 0, name: "charge", result: { charged: `${SECRET}-step` }, startedAt: start.at, start })).status).toBe(200);
    expect((await api("POST", `/v1/jobs/${id}/logs`, { leaseToken, items: [{ at: Date.now(), message: `charged ${SECRET}-log`, fields: { card: SECRET } }] })).status).toBe(200);
    // Sent before the job waits for it: kept in job_signal.
    expect((await api("POST", `/v1/jobs/${id}/signals/approved`, { data: { by: `${SECRET}-signal` } })).status).toBe(202);
    expect((await api("POST", `/v1/jobs/${id}/complete`, { leaseToken, result: { receipt: `${SECRET}-result` } })).status).toBe(200);

    const rows = await stored(id);
    expect(rows).not.toContain("4242");
    expect(rows).toContain("$sealed:v1:t2:");
    expect((await api("GET", `/v1/jobs/${id}`)).body.job).toMatchObject({ payload: { card: SECRET }, result: { receipt: `${SECRET}-result` } });
    expect((await api("GET", `/v1/jobs/${id}/steps`)).body.items[0].result).toEqual({ charged: `${SECRET}-step` });
    expect((await api("GET", `/v1/jobs/${id}/logs`)).body.items[0]).toMatchObject({ message: `charged ${SECRET}-log`, fields: { card: SECRET } });
  });

  it("each value is AES-256-GCM under the key its id names, which WebCrypto opens; a value the older key sealed still opens; one whose key is gone says so", async () => {
    const type = uniqueType("rotated");
    const id = (await api("POST", "/v1/jobs", { type, payload: { card: SECRET } })).body.job.id as string;
    const text = JSON.parse(await storedPayload(id)) as string;
    const [, , keyId, iv, ct] = text.split(":");
    expect(keyId).toBe("t2");
    const key = await crypto.subtle.importKey("raw", new Uint8Array(32).fill(2), "AES-GCM", false, ["decrypt"]);
    const plain = await crypto.subtle.decrypt({ name: "AES-GCM", iv: decodeBytes(iv!)! }, key, decodeBytes(ct!)!);
    expect(JSON.parse(new TextDecoder().decode(plain))).toEqual({ card: SECRET });

    // Sealed before the rotation, under t1, which the secret still lists second.
    const older = new Vault(parseKeys(JSON.stringify([{ id: "t1", key: btoa(String.fromCharCode(...new Uint8Array(32).fill(1))) }])));
    const gone = new Vault(parseKeys(JSON.stringify([{ id: "gone", key: btoa(String.fromCharCode(...new Uint8Array(32).fill(9))) }])));
    const put = (value: string) => runInDurableObject(scopeOf(id), (_o, state) => void state.storage.sql.exec("UPDATE job SET payload = ? WHERE id = ?", value, id));
    await put(older.sealText(JSON.stringify({ card: "old" })));
    expect((await api("GET", `/v1/jobs/${id}`)).body.job.payload).toEqual({ card: "old" });
    await put(gone.sealText(JSON.stringify({ card: "lost" })));
    const shown = (await api("GET", `/v1/jobs/${id}`)).body.job.payload as string;
    expect(shown).toMatch(/^\[sealed: a value sealed with key "gone", which EDGEQUEUE_ENCRYPTION_KEYS does not list/);
  });

  it("a job whose payload no listed key opens fails alone, at once — claimed by a pull worker, or dispatched to its handler", async () => {
    const gone = new Vault(parseKeys(JSON.stringify([{ id: "gone", key: btoa(String.fromCharCode(...new Uint8Array(32).fill(9))) }])));
    const put = (id: string) => runInDurableObject(scopeOf(id), (_o, state) => void state.storage.sql.exec("UPDATE job SET payload = ? WHERE id = ?", gone.sealText('{"lost":true}'), id));
    // Pulled: the claim answers the others; this one is failed, saying why.
    const type = uniqueType("unopened");
    const lost = (await api("POST", "/v1/jobs", { type, payload: { n: 1 } })).body.job.id as string;
    await put(lost);
    const kept = (await api("POST", "/v1/jobs", { type, payload: { n: 2 } })).body.job.id as string;
    const claimed = (await api("POST", "/v1/claim", { worker: "w", types: [type], limit: 10 })).body.jobs as { id: string; payload: unknown }[];
    expect(claimed.map((j) => [j.id, j.payload])).toEqual([[kept, { n: 2 }]]);
    expect((await api("GET", `/v1/jobs/${lost}`)).body.job).toMatchObject({ state: "failed", failureKind: "fatal", lastError: expect.stringContaining('sealed with key "gone"') });
    // Pushed: due in a moment, its payload replaced meanwhile; it fails without its handler being called.
    const pushed = (await api("POST", "/v1/jobs", { type: "demo.echo", payload: { n: 3 }, delayMs: 500 })).body.job.id as string;
    await put(pushed);
    const ended = await waitForJob(pushed, (j) => j.state === "failed" || j.state === "completed");
    expect(ended).toMatchObject({ state: "failed", failureKind: "fatal", attempts: 1, lastError: expect.stringContaining('sealed with key "gone"') });
  });

  it("a bad key secret is refused naming the entry and field, and a Worker given one answers every call 503 misconfigured", async () => {
    const b64 = (n: number) => btoa(String.fromCharCode(...new Uint8Array(n).fill(7)));
    const refused = (text: string) => {
      try {
        parseKeys(text);
      } catch (e) {
        return (e as Error).message;
      }
      return "accepted";
    };
    expect(refused("{")).toMatch(/^EDGEQUEUE_ENCRYPTION_KEYS is not JSON/);
    expect(refused("[]")).toBe("EDGEQUEUE_ENCRYPTION_KEYS: list at least one key, or leave the secret unset");
    expect(refused(JSON.stringify([{ key: b64(32) }]))).toMatch(/^EDGEQUEUE_ENCRYPTION_KEYS\[0\]\.id: /);
    expect(refused(JSON.stringify([{ id: "a", key: b64(32) }, { id: "b", key: b64(16) }]))).toBe("EDGEQUEUE_ENCRYPTION_KEYS[1].key: 16 bytes, where AES-256-GCM takes 32 (npx edgequeue keys new makes one)");
    expect(refused(JSON.stringify([{ id: "a", key: "not base64!" }]))).toMatch(/^EDGEQUEUE_ENCRYPTION_KEYS\[0\]\.key: not base64/);
    expect(refused(JSON.stringify([{ id: "a", key: b64(32) }, { id: "a", key: b64(32) }]))).toMatch(/^EDGEQUEUE_ENCRYPTION_KEYS\[1\]\.id: "a" names two keys/);
    expect(refused(JSON.stringify([{ id: "a b", key: b64(32) }]))).toMatch(/^EDGEQUEUE_ENCRYPTION_KEYS\[0\]\.id: a key id is 1 to 32 letters/);
    expect(refused(JSON.stringify([{ id: "a", key: b64(32), extra: 1 }]))).toMatch(/^EDGEQUEUE_ENCRYPTION_KEYS\[0\]: Unrecognized key/);

    const bad = { ...(env as unknown as Record<string, unknown>), EDGEQUEUE_ENCRYPTION_KEYS: JSON.stringify([{ id: "a", key: b64(16) }]) };
    const errors = vi.spyOn(console, "error").mockImplementation(() => {});
    try {
      const q = queueFrom({}, bad);
      const res = await q.worker.fetch(new Request("http://queue/v1/stats", { headers: { authorization: `Bearer ${TOKEN}` } }), bad, Object.assign(createExecutionContext(), { exports: {} }));
      expect(res.status).toBe(503);
      expect(((await res.json()) as { error: { code: string; message: string } }).error).toMatchObject({ code: "misconfigured", message: expect.stringContaining("EDGEQUEUE_ENCRYPTION_KEYS[0].key: 16 bytes") });
    } finally {
      errors.mockRestore();
    }
  });
});

describe("sensitive values", () => {
  it("a sensitive type's values are absent from every surface — the API, a listing, steps, logs, a subscription, a callback, the dashboard — and its handler had them", async () => {
    const name = crypto.randomUUID();
    const callback = { url: `${RECEIVER}/cb/${name}`, on: ["completed"] };
    // Due in a moment, so its subscription is open before it runs.
    const made = await api("POST", "/v1/jobs", { type: "demo.sensitive", payload: { card: SECRET }, delayMs: 300, callback });
    expect(made.status).toBe(201);
    const id = made.body.job.id as string;
    expect(made.body.job.payload).toBe(REDACTED);
    const sub = await stream(await mint({ jobId: id, include: ["progress", "steps", "logs", "result", "payload"] }));
    const job = await waitForJob(id, (j) => j.state === "completed");
    const messages = await sub.messages();
    expect(messages.map((m) => m.event)).toContain("log");
    expect(JSON.stringify(messages)).not.toContain("4242");
    expect(job).toMatchObject({ payload: REDACTED, result: REDACTED });

    const listed = (await api("GET", "/v1/jobs?type=demo.sensitive&limit=100")).body.items as { id: string; payload: unknown; result: unknown }[];
    expect(listed.find((j) => j.id === id)).toMatchObject({ payload: REDACTED, result: REDACTED });
    expect((await api("GET", `/v1/jobs/${id}/steps`)).body.items.map((s: { result: unknown }) => s.result)).toEqual([REDACTED]);
    expect((await api("GET", `/v1/jobs/${id}/logs`)).body.items).toMatchObject([{ message: REDACTED, fields: REDACTED }]);
    const got = await vi.waitFor(async () => {
      const r = (await (await fetch(`${RECEIVER}/cb/${name}`)).json()) as { body: string }[];
      if (r.length === 0) throw new Error("no callback yet");
      return r;
    });
    expect(JSON.parse(got[0]!.body).job).toMatchObject({ id, payload: REDACTED, result: REDACTED });
    const cookie = await signIn();
    const html = await (await page(`/dashboard/jobs/${id}`, cookie)).text();
    expect(html).toContain(REDACTED);
    expect(html).not.toContain("4242");
    expect(JSON.stringify(await api("GET", `/v1/jobs/${id}/timeline`))).not.toContain("4242");

    // Its handler had every value: it returned its payload and the step's count, kept sealed.
    const rows = await stored(id);
    expect(rows).not.toContain("4242");
    const result = await runInDurableObject(scopeOf(id), (_o, state) => state.storage.sql.exec<{ result: string }>("SELECT result FROM job WHERE id = ?", id).one().result);
    expect(JSON.parse(opened(result))).toEqual({ card: SECRET, steppedKeys: 1 });
  });

  it("a step run { sensitive: true } reads [redacted] while its job's other values show; a replay gives the handler its value", async () => {
    const id = (await api("POST", "/v1/jobs", { type: "demo.sensitive.step", payload: { token: SECRET } })).body.job.id as string;
    const job = await waitForJob(id, (j) => j.state === "completed");
    expect(job).toMatchObject({ payload: { token: SECRET }, result: { tokenLength: SECRET.length } });
    expect((await api("GET", `/v1/jobs/${id}/steps`)).body.items.map((s: { name: string; result: unknown }) => [s.name, s.result])).toEqual([
      ["token", REDACTED],
      ["shown", { length: SECRET.length }],
    ]);

    // A pulled job's sensitive step, replayed after a sleep: its claim's journal carries the value.
    const type = uniqueType("sensitive-step");
    await api("POST", "/v1/jobs", { type, payload: {} });
    const first = (await api("POST", "/v1/claim", { worker: "w", types: [type] })).body.jobs[0];
    const write = { leaseToken: first.leaseToken, op: "commit", seq: 0, name: "otp", result: { otp: SECRET }, sensitive: true, startedAt: start.at, start };
    expect((await api("POST", `/v1/jobs/${first.id}/steps`, write)).status).toBe(200);
    const slept = await api("POST", `/v1/jobs/${first.id}/sleep`, { leaseToken: first.leaseToken, seq: 1, name: "nap", until: Date.now(), durationMs: 0, startedAt: start.at, start });
    expect(slept.status, JSON.stringify(slept.body)).toBe(200);
    expect((await api("GET", `/v1/jobs/${first.id}/steps`)).body.items[0].result).toBe(REDACTED);
    const again = (await api("POST", "/v1/claim", { worker: "w", types: [type] })).body.jobs[0];
    expect(again.id).toBe(first.id);
    expect(JSON.parse(again.journal.entries[0].result)).toEqual({ otp: SECRET });
  });
});

describe("sensitive values in a pull worker", () => {
  it("its claim says so and carries every value; the worker prints its log lines redacted and keeps them with the job", async () => {
    const raw = await api("POST", "/v1/jobs", { type: "pull.sensitive", payload: { card: SECRET } });
    const id = raw.body.job.id as string;
    const claim = await api("POST", "/v1/claim", { worker: "peek", types: ["pull.sensitive"], limit: 1 });
    expect(claim.body.jobs[0]).toMatchObject({ id, sensitive: true, payload: { card: SECRET } });
    expect((await api("POST", `/v1/jobs/${id}/release`, { leaseToken: claim.body.jobs[0].leaseToken })).status).toBe(200);

    const handled: unknown[] = [];
    const w = createWorker({
      url: "http://queue.test",
      token: TOKEN,
      types: ["pull.sensitive"],
      handlers: {
        "pull.sensitive": (payload: unknown, ctx: { log(m: string, f?: object): void }) => {
          handled.push(payload);
          ctx.log(`charging ${SECRET}`, { payload });
          return { charged: true };
        },
      },
      fetch: fetchCoordinator,
      log: () => {},
    });
    const printed: string[] = [];
    const print = console.log;
    console.log = (line: unknown) => void (typeof line === "string" && line.includes('"job:log"') ? printed.push(line) : print(line));
    try {
      expect(await w.runOnce()).toBe(1);
    } finally {
      console.log = print;
      await w.stop();
    }
    expect(handled).toEqual([{ card: SECRET }]);
    expect(printed).toHaveLength(1);
    expect(JSON.parse(printed[0]!)).toMatchObject({ event: "job:log", id, message: REDACTED, fields: REDACTED });
    expect((await api("GET", `/v1/jobs/${id}`)).body.job).toMatchObject({ state: "completed", result: REDACTED });
    expect((await api("GET", `/v1/jobs/${id}/logs`)).body.items).toMatchObject([{ message: REDACTED, fields: REDACTED }]);
    expect(await stored(id)).not.toContain("4242");
  });
});

const fetchCoordinator = ((input: string, init?: RequestInit) => (exports as unknown as { default: Fetcher }).default.fetch(input, init)) as typeof fetch;
const ORIGIN = "http://queue.test";
const page = (path: string, cookie: string): Promise<Response> => (exports as any).default.fetch(`${ORIGIN}${path}`, { headers: { cookie }, redirect: "manual" });

async function signIn(): Promise<string> {
  const res: Response = await (exports as any).default.fetch(`${ORIGIN}/dashboard/login`, {
    method: "POST",
    headers: { "content-type": "application/x-www-form-urlencoded" },
    body: new URLSearchParams({ token: TOKEN, next: "/dashboard" }).toString(),
    redirect: "manual",
  });
  return /^(edgequeue_session=[^;]+)/.exec(res.headers.get("set-cookie") ?? "")![1]!;
}
