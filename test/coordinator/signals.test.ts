/**
 * A signal's answer says what the job waits for (docs/workflows.md "Signals"): a signal kept by a job that waits for
 * something else — a misspelled name — names that wait instead of leaving the job waiting in silence. Over HTTP, both
 * clients (RPC and HTTP, typed from the declaration) and in the OpenAPI document, against the real coordinator and
 * the demo handler Worker. (The CLI's `signal` command, which warns on such an answer, runs against a real queue in
 * test/browser/dashboard.test.ts: commander does not load in workerd.)
 */
import { exports } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { createClient, createHttpClient, type QueueBinding } from "../../src/sdk";
import { api, isTerminal, TOKEN, uniqueType, waitForJob } from "../helpers/api";

const rpc = createClient((exports as unknown as { EdgeQueue: QueueBinding }).EdgeQueue);
const http = createHttpClient("http://queue.test/", TOKEN, { fetch: (input, init) => (exports as unknown as { default: Fetcher }).default.fetch(input, init) });

async function waitingApproval(payload: Record<string, unknown> = {}, extra: Record<string, unknown> = {}): Promise<string> {
  const r = await api("POST", "/v1/jobs", { type: "demo.approve", payload, ...extra });
  expect(r.status, JSON.stringify(r.body)).toBe(201);
  await waitForJob(r.body.job.id, (j) => j.state === "waiting");
  return r.body.job.id as string;
}

describe("a signal's answer says what the job waits for", () => {
  it("a misspelled name is kept and names the wait the job is in; the right name resumes it and it waits for nothing", async () => {
    const id = await waitingApproval({ timeoutMs: 3_600_000 });
    const job = (await api("GET", `/v1/jobs/${id}`)).body.job;
    const wrong = await api("POST", `/v1/jobs/${id}/signals/aprove`, { data: { by: "ann" } });
    expect(wrong).toMatchObject({ status: 202 });
    expect(wrong.body).toEqual({ id, delivered: "kept", waitingFor: [{ kind: "signal", name: "approve", until: job.waitingFor[0].until }] });
    expect(job.waitingFor[0].until).toBeGreaterThan(Date.now());
    // Still waiting, for the same thing.
    expect((await api("GET", `/v1/jobs/${id}`)).body.job).toMatchObject({ state: "waiting", waitingFor: job.waitingFor });

    const right = await api("POST", `/v1/jobs/${id}/signals/approve`, { data: { by: "bob" } });
    expect(right.body).toEqual({ id, delivered: "resumed", waitingFor: null });
    expect(await waitForJob(id, isTerminal)).toMatchObject({ state: "completed", result: { approved: { by: "bob" } } });
  });

  it("a job that waits for nothing yet (pending) keeps the signal and answers waitingFor null; a key's signal answers the same fields", async () => {
    const type = uniqueType("pull.signalled");
    const { body } = await api("POST", "/v1/jobs", { type, payload: {}, dedupeKey: "k1" });
    expect((await api("POST", `/v1/jobs/${body.job.id}/signals/go`, {})).body).toEqual({ id: body.job.id, delivered: "kept", waitingFor: null });
    expect((await api("POST", "/v1/signals", { type, dedupeKey: "k1", name: "go" })).body).toEqual({ id: body.job.id, delivered: "kept", waitingFor: null });

    const waiting = await waitingApproval({}, { dedupeKey: `approve-${type}` });
    expect((await api("POST", "/v1/signals", { type: "demo.approve", dedupeKey: `approve-${type}`, name: "nope" })).body).toEqual({
      id: waiting,
      delivered: "kept",
      waitingFor: [{ kind: "signal", name: "approve", until: null }],
    });
    await api("POST", `/v1/jobs/${waiting}/cancel`, {});
  });

  it("a wait token's completion answers the same fields", async () => {
    const r = await api("POST", "/v1/jobs", { type: "demo.token", payload: {} });
    const id = r.body.job.id as string;
    const waiting = await waitForJob(id, (j) => j.state === "waiting");
    expect(waiting.waitingFor).toEqual([{ kind: "token", name: "ok", until: null }]);
    const token = (await api("GET", `/v1/jobs/${id}/steps`)).body.items.find((s: { kind: string }) => s.kind === "token").result as { path: string };
    expect((await api("POST", token.path, { data: 1 }, null)).body).toEqual({ id, delivered: "resumed", waitingFor: null });
  });

  it("both clients answer it, typed from the declaration", async () => {
    const id = await waitingApproval();
    const viaRpc = await rpc.signal(id, "aprove", 1);
    const viaHttp = await http.signal(id, "aprove", 2);
    for (const answer of [viaRpc, viaHttp]) {
      // Typed: waitingFor is the job view's list of waits, or null (a wrong type here would not compile).
      const waits: { kind: "signal" | "token" | "invoke" | "event" | "pause"; name: string; until: number | null }[] | null = answer.waitingFor;
      expect(waits).toEqual([{ kind: "signal", name: "approve", until: null }]);
    }
    expect(await rpc.signal(id, "approve", "yes")).toEqual({ id, delivered: "resumed", waitingFor: null });
  });

  it("the OpenAPI document describes waitingFor in the answer of every signal operation", async () => {
    const doc = (await api("GET", "/v1/openapi.json")).body;
    for (const [path, ok] of [["/v1/jobs/{id}/signals/{name}", "202"], ["/v1/signals", "202"], ["/v1/tokens/{token}", "202"]] as const) {
      let schema = doc.paths[path].post.responses[ok].content["application/json"].schema;
      if (schema.$ref) schema = doc.components.schemas[schema.$ref.split("/").pop()];
      expect(schema.required, path).toContain("waitingFor");
      expect(JSON.stringify(schema.properties.waitingFor), path).toMatch(/"null"/);
      expect(schema.properties.waitingFor.description, path).toContain("waits for something else");
    }
  });
});
