/**
 * Tokens with names and roles (docs/operating.md "Tokens and roles"): the vitest config's QUEUE_TOKENS holds the
 * SHA-256 of `<name>-token` for ops (operator), shop (producer), mailer (a producer of email.send only), tenant-a (a
 * producer of Tenant scopes only), pull (worker) and viewer (reader); QUEUE_TOKEN is the admin. A refusal is a 403
 * naming the token and what the call needs, and nothing changed; an operator's action is in the audit list.
 */
import { describe, expect, it } from "vitest";
import { parseTokens } from "../../src/auth/tokens";
import { api, uniqueScope, uniqueType } from "../helpers/api";

const as = (name: string) => `${name}-token`;
const enqueue = async (type: string, token = "test-token", more: Record<string, unknown> = {}) => api("POST", "/v1/jobs", { type, payload: { to: "a@example.com" }, ...more }, token);

describe("roles", () => {
  it("a producer enqueues, and is refused a cancel with 403 naming its role and the roles that may; nothing changed", async () => {
    const type = uniqueType("roles");
    const made = await enqueue(type, as("shop"));
    expect(made.status).toBe(201);
    const id = made.body.job.id as string;
    const refused = await api("POST", `/v1/jobs/${id}/cancel`, {}, as("shop"));
    expect(refused.status).toBe(403);
    expect(refused.body.error).toMatchObject({ code: "forbidden", details: { token: "shop", role: "producer", needs: ["admin", "operator"] } });
    expect(refused.body.error.message).toBe('token "shop" (role producer) may not call cancelJob: it needs the role admin or operator');
    expect((await api("GET", `/v1/jobs/${id}`)).body.job.state).toBe("pending");
    // A producer follows the job it made, but lists nothing.
    expect((await api("GET", `/v1/jobs/${id}`, undefined, as("shop"))).status).toBe(200);
    expect((await api("GET", `/v1/jobs?type=${type}`, undefined, as("shop"))).status).toBe(403);
  });

  it("a reader reads and is refused every change; a worker claims and is refused an enqueue; an unknown token is 401", async () => {
    const type = uniqueType("reader");
    await enqueue(type);
    expect((await api("GET", `/v1/jobs?type=${type}`, undefined, as("viewer"))).body.items).toHaveLength(1);
    expect((await api("POST", `/v1/types/${type}/pause`, {}, as("viewer"))).status).toBe(403);
    expect((await enqueue(type, as("viewer"))).status).toBe(403);
    const claimed = await api("POST", "/v1/claim", { worker: "w", types: [type] }, as("pull"));
    expect(claimed.body.jobs).toHaveLength(1);
    const job = claimed.body.jobs[0];
    expect((await api("POST", `/v1/jobs/${job.id}/complete`, { leaseToken: job.leaseToken }, as("pull"))).status).toBe(200);
    expect((await enqueue(type, as("pull"))).status).toBe(403);
    expect((await api("GET", "/v1/stats", undefined, "nobody-token")).status).toBe(401);
    // Every role reads the API's description.
    expect((await api("GET", "/v1/openapi.json", undefined, as("pull"))).status).toBe(200);
  });

  it("an operator's actions are in the audit list with its name, without the payloads they carried", async () => {
    const type = uniqueType("audited");
    const id = (await enqueue(type)).body.job.id as string;
    expect((await api("POST", `/v1/jobs/${id}/cancel`, { reason: "by hand" }, as("ops"))).status).toBe(200);
    expect((await api("POST", `/v1/jobs/${id}/rerun`, { payload: { secret: "card 4242" } }, as("ops"))).status).toBe(200);
    expect((await api("POST", `/v1/types/${type}/pause`, {}, as("ops"))).status).toBe(200);
    expect((await api("POST", `/v1/types/${type}/resume`, {}, "test-token")).status).toBe(200);
    const audit = await api("GET", "/v1/audit?limit=500", undefined, as("ops"));
    expect(audit.status).toBe(200);
    const mine = (audit.body.items as { token: string; role: string; action: string; detail: { params?: { id?: string; type?: string }; body?: Record<string, unknown> } }[]).filter(
      (e) => e.detail.params?.id === id || e.detail.params?.type === type,
    );
    expect(mine.map((e) => `${e.token}/${e.role} ${e.action}`)).toEqual(["admin/admin resumeType", "ops/operator pauseType", "ops/operator rerunJob", "ops/operator cancelJob"]);
    expect(mine.find((e) => e.action === "cancelJob")!.detail.body).toEqual({ reason: "by hand" });
    expect(JSON.stringify(mine)).not.toContain("4242");
    // Reads are not recorded, and a reader may not read the list.
    expect((await api("GET", "/v1/audit", undefined, as("viewer"))).status).toBe(403);
    expect((await api("GET", `/v1/audit?token=ops&action=pauseType`, undefined, "test-token")).body.items.every((e: { token: string; action: string }) => e.token === "ops" && e.action === "pauseType")).toBe(true);
  });
});

describe("tokens limited to types", () => {
  it("a producer limited to email.send enqueues it, and is refused another type, naming it; nothing was written", async () => {
    expect((await enqueue("email.send", as("mailer"))).status).toBe(201);
    const other = uniqueType("other");
    const refused = await enqueue(other, as("mailer"));
    expect(refused.status).toBe(403);
    expect(refused.body.error.message).toBe(`token "mailer" is limited to job types email.send: job type "${other}" is not among them`);
    expect((await api("GET", `/v1/jobs?type=${other}`)).body.items).toHaveLength(0);
    // Nor may it follow another type's job, whose type is read first.
    const id = (await enqueue(other)).body.job.id as string;
    expect((await api("GET", `/v1/jobs/${id}`, undefined, as("mailer"))).status).toBe(403);
    // A batch with one job outside is refused whole.
    expect((await api("POST", "/v1/jobs/batch", { jobs: [{ type: "email.send", payload: {} }, { type: other, payload: {} }] }, as("mailer"))).status).toBe(403);
    // An event's consumers are any types: a limited token may not emit.
    expect((await api("POST", "/v1/topics/order.paid/events", { payload: {} }, as("mailer"))).body.error.message).toMatch(/emit is not limited to a type/);
  });

  it("a producer limited to Tenant scopes enqueues in one, and is refused an unscoped job", async () => {
    const type = uniqueType("tenants");
    expect((await enqueue(type, as("tenant-a"), { scope: uniqueScope() })).status).toBe(201);
    const refused = await enqueue(type, as("tenant-a"));
    expect(refused.status).toBe(403);
    expect(refused.body.error.message).toBe('token "tenant-a" is limited to scope types Tenant: an unscoped job is outside its scope types');
  });
});

describe("what a shared key, a lease or a subscription could reach", () => {
  it("a limited worker's lease of its type cannot invoke a child of another; nor may it make an inline claim", async () => {
    const id = (await api("POST", "/v1/jobs", { type: "render.video", payload: {} })).body.job.id as string;
    const [job] = (await api("POST", "/v1/claim", { worker: "r", types: ["render.video"] }, as("renderer"))).body.jobs;
    expect(job.id).toBe(id);
    const start = { at: Date.now(), seed: "00112233445566778899aabbccddeeff" };
    const wait = (type: string) => api("POST", `/v1/jobs/${id}/wait`, { leaseToken: job.leaseToken, start, waits: [{ seq: 0, kind: "invoke", name: "child", startedAt: Date.now(), request: { type, payload: {} } }] }, as("renderer"));
    const refused = await wait("email.send");
    expect(refused.status).toBe(403);
    expect(refused.body.error.message).toBe('token "renderer" is limited to job types render.video: job type "email.send" is not among them');
    expect((await api("POST", "/v1/jobs/claim-or-enqueue", { worker: "r", job: { type: "render.video", payload: {}, dedupeKey: "k" } }, as("renderer"))).body.error.message).toMatch(/an inline claim may lease the key's job of any type/);
  });

  it("a limited producer is not shown another type's job its key answers, and may not cancel by key", async () => {
    const scope = uniqueScope();
    const other = await api("POST", "/v1/jobs", { type: uniqueType("other"), payload: { secret: 1 }, scope, dedupeKey: "k1" });
    expect(other.status).toBe(201);
    const dup = await api("POST", "/v1/jobs", { type: "email.send", payload: {}, scope, dedupeKey: "k1" }, as("mailer"));
    expect(dup.body).toMatchObject({ id: other.body.job.id, created: false, job: null });
    expect((await api("POST", "/v1/jobs", { type: "email.send", payload: {}, scope, dedupeKey: "k1", dedupeMode: "cancelRunning" }, as("mailer"))).status).toBe(403);
    // A job of another type that does not exist yet is not followed either.
    expect((await api("POST", "/v1/subscriptions", { jobId: `${other.body.job.id}x` }, as("mailer"))).status).toBe(404);
  });

  it("a producer follows one job, not a scope; an operator signals a job as the dashboard does", async () => {
    const scope = uniqueScope();
    expect((await api("POST", "/v1/subscriptions", { scope }, as("shop"))).status).toBe(403);
    expect((await api("POST", "/v1/subscriptions", { scope }, as("viewer"))).status).toBe(200);
    const id = (await api("POST", "/v1/jobs", { type: "demo.approve", payload: {} })).body.job.id as string;
    expect((await api("POST", `/v1/jobs/${id}/signals/approve`, { data: "yes" }, as("ops"))).status).toBeLessThan(300);
    expect((await api("POST", `/v1/jobs/${id}/signals/approve`, { data: "yes" }, as("viewer"))).status).toBe(403);
  });
});

describe("QUEUE_TOKENS, read at start", () => {
  const entry = { name: "a", role: "reader", sha256: "0".repeat(64) };
  it.each([
    ["not JSON", "[{", /^QUEUE_TOKENS is not JSON/],
    ["an unknown role", JSON.stringify([{ ...entry, role: "root" }]), /^QUEUE_TOKENS\[0\]\.role: a role is one of admin, operator, producer, worker, reader$/],
    ["a token without a name", JSON.stringify([{ role: "reader", sha256: entry.sha256 }]), /^QUEUE_TOKENS\[0\]\.name: /],
    ["a malformed digest", JSON.stringify([{ ...entry, sha256: "abc" }]), /^QUEUE_TOKENS\[0\]\.sha256: the hex SHA-256 of the token/],
    ["a name twice", JSON.stringify([entry, { ...entry, role: "admin" }]), /^QUEUE_TOKENS\[1\]\.name: "a" names two tokens/],
    ["an unknown field", JSON.stringify([{ ...entry, roles: ["admin"] }]), /^QUEUE_TOKENS\[0\]: /],
  ])("%s fails naming the setting and field", async (_what, json, message) => {
    await expect(parseTokens(json, undefined)).rejects.toMatchObject({ code: "misconfigured", message: expect.stringMatching(message) });
  });

  it("QUEUE_TOKEN alone is the admin named admin", async () => {
    const [only] = await parseTokens(undefined, "s3cret");
    expect(only!.principal).toEqual({ name: "admin", role: "admin", types: null, scopeTypes: null });
  });
});
