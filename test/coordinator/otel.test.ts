/**
 * OpenTelemetry (docs/operating.md "OpenTelemetry"): an enqueue's W3C trace context (traceparent header, `trace`
 * field, the clients' active context) is kept with the job, handed to its handler as ctx.trace (its attempt's span
 * as parent), and the queue's spans — publish, each attempt with its outcome — arrive at a real OTLP/HTTP receiver
 * (test/receiver.mjs) as JSON, in that trace.
 */
import { exports } from "cloudflare:workers";
import { describe, expect, it, vi } from "vitest";
import { attemptSpanId, enqueueSpanId } from "../../src/job/trace";
import { createHttpClient } from "../../src/sdk";
import { api, TOKEN, uniqueType, waitForJob } from "../helpers/api";
import { env } from "../helpers/scope";

const RECEIVER = (env as unknown as { RECEIVER_URL: string }).RECEIVER_URL;
type Span = { traceId: string; spanId: string; parentSpanId?: string; name: string; kind: number; startTimeUnixNano: string; endTimeUnixNano: string; attributes: { key: string; value: Record<string, string> }[]; status: { code: number; message?: string } };
type Export = { headers: Record<string, string>; body: { resourceSpans: { resource: { attributes: { key: string; value: { stringValue: string } }[] }; scopeSpans: { spans: Span[] }[] }[] } };

const hex = (n: number) => Array.from(crypto.getRandomValues(new Uint8Array(n)), (b) => b.toString(16).padStart(2, "0")).join("");
const exports_ = async (): Promise<Export[]> => (await fetch(`${RECEIVER}/traces`)).json();
const spansOf = async (traceId: string) => (await exports_()).flatMap((e) => e.body.resourceSpans.flatMap((r) => r.scopeSpans.flatMap((s) => s.spans))).filter((s) => s.traceId === traceId);
const attr = (s: Span, key: string) => {
  const v = s.attributes.find((a) => a.key === key)?.value;
  return v?.stringValue ?? (v?.intValue === undefined ? undefined : Number(v.intValue));
};

describe("OpenTelemetry", () => {
  it("one trace from the enqueuing request through the handler arrives at the OTLP receiver", async () => {
    const traceId = hex(16);
    const caller = hex(8);
    const res = await (exports as unknown as { default: Fetcher }).default.fetch("http://queue.test/v1/jobs", {
      method: "POST",
      headers: { authorization: `Bearer ${TOKEN}`, "content-type": "application/json", traceparent: `00-${traceId}-${caller}-01`, tracestate: "vendor=1" },
      body: JSON.stringify({ type: "test.trace", payload: {} }),
    });
    const { job } = (await res.json()) as { job: { id: string; trace: unknown } };
    expect(job.trace).toEqual({ traceparent: `00-${traceId}-${caller}-01`, tracestate: "vendor=1" });
    const done = await waitForJob(job.id, (j) => j.state === "completed");
    // The handler continues the trace under its attempt's span.
    expect(done.result).toEqual({ trace: { traceparent: `00-${traceId}-${attemptSpanId(job.id, 1)}-01`, tracestate: "vendor=1" } });
    const spans = await vi.waitFor(
      async () => {
        const got = await spansOf(traceId);
        if (got.length < 2) throw new Error(`${got.length} spans so far`);
        return got;
      },
      { timeout: 10_000, interval: 100 },
    );
    const publish = spans.find((s) => s.name === "publish test.trace")!;
    const process = spans.find((s) => s.name === "process test.trace")!;
    expect(publish).toMatchObject({ spanId: enqueueSpanId(job.id), parentSpanId: caller, kind: 4 });
    expect(process).toMatchObject({ spanId: attemptSpanId(job.id, 1), parentSpanId: publish.spanId, kind: 5, status: { code: 1 } });
    for (const [key, value] of [
      ["messaging.system", "edgequeue"],
      ["messaging.operation", "process"],
      ["messaging.destination.name", "test.trace"],
      ["messaging.message.id", job.id],
      ["edgequeue.outcome", "completed"],
      ["edgequeue.attempt", 1],
    ] as const)
      expect(attr(process, key), key).toBe(value);
    expect(attr(publish, "messaging.operation")).toBe("publish");
    expect(BigInt(process.endTimeUnixNano)).toBeGreaterThanOrEqual(BigInt(process.startTimeUnixNano));
    const resource = (await exports_()).find((e) => e.body.resourceSpans[0]!.scopeSpans[0]!.spans.some((s) => s.traceId === traceId))!;
    expect(resource.body.resourceSpans[0]!.resource.attributes).toContainEqual({ key: "service.name", value: { stringValue: "edgequeue" } });
    expect(resource.headers["content-type"]).toBe("application/json");
  });

  it("a pull worker's job carries its trace; a retried attempt's span has an error status and the retry's time", async () => {
    const type = uniqueType("traced");
    const traceId = hex(16);
    const id = (await api("POST", "/v1/jobs", { type, payload: {}, trace: { traceparent: `00-${traceId}-${hex(8)}-01` } })).body.job.id;
    const [leased] = (await api("POST", "/v1/claim", { worker: "w", types: [type] })).body.jobs;
    expect(leased.trace.traceparent).toContain(traceId);
    await api("POST", `/v1/jobs/${id}/fail`, { leaseToken: leased.leaseToken, error: "upstream 503", retryAfterMs: 60_000 });
    const spans = await vi.waitFor(
      async () => {
        const got = (await spansOf(traceId)).filter((s) => s.name.startsWith("process"));
        if (got.length < 1) throw new Error("no attempt span yet");
        return got;
      },
      { timeout: 10_000, interval: 100 },
    );
    expect(spans[0]).toMatchObject({ spanId: attemptSpanId(id, 1), status: { code: 2, message: "upstream 503" } });
    expect(attr(spans[0]!, "edgequeue.outcome")).toBe("retry");
    expect(attr(spans[0]!, "edgequeue.retry_at")).toBeGreaterThan(Date.now() + 50_000);
  });

  it("an attempt that ends in a durable sleep has its span (outcome sleeping) and a sleep span until it is due", async () => {
    const type = uniqueType("sleepy");
    const traceId = hex(16);
    const id = (await api("POST", "/v1/jobs", { type, payload: {}, trace: { traceparent: `00-${traceId}-${hex(8)}-01` } })).body.job.id;
    const [leased] = (await api("POST", "/v1/claim", { worker: "w", types: [type] })).body.jobs;
    const now = Date.now();
    const slept = await api("POST", `/v1/jobs/${id}/sleep`, { leaseToken: leased.leaseToken, seq: 0, name: "nap", until: now + 60_000, durationMs: 60_000, startedAt: now, start: { at: now, seed: "s" } });
    expect(slept.status).toBe(200);
    const spans = await vi.waitFor(
      async () => {
        const got = await spansOf(traceId);
        if (!got.some((s) => s.name.startsWith("sleep"))) throw new Error(`spans so far: ${got.map((s) => s.name)}`);
        return got;
      },
      { timeout: 10_000, interval: 100 },
    );
    const process = spans.find((s) => s.name === `process ${type}`)!;
    const sleep = spans.find((s) => s.name === `sleep ${type}`)!;
    expect(attr(process, "edgequeue.outcome")).toBe("sleeping");
    expect(sleep.parentSpanId).toBe(enqueueSpanId(id));
    expect(Number(BigInt(sleep.endTimeUnixNano) / 1_000_000n)).toBeGreaterThanOrEqual(now + 59_000);
  });

  it("a bad traceparent in the body names the field; a bad header is ignored; a job without one exports nothing", async () => {
    const bad = await api("POST", "/v1/jobs", { type: "demo.echo", payload: {}, trace: { traceparent: "00-abc-def-01" } });
    expect([bad.status, bad.body.error.details[0].path]).toEqual([400, "trace.traceparent"]);
    const res = await (exports as unknown as { default: Fetcher }).default.fetch("http://queue.test/v1/jobs", {
      method: "POST",
      headers: { authorization: `Bearer ${TOKEN}`, "content-type": "application/json", traceparent: "garbage" },
      body: JSON.stringify({ type: "demo.echo", payload: {} }),
    });
    expect(((await res.json()) as { job: { trace: unknown } }).job.trace).toBeNull();
  });

  it("the clients continue the active OpenTelemetry context when the process registered the API", async () => {
    const key = Symbol.for("opentelemetry.js.api.1");
    const traceparent = `00-${hex(16)}-${hex(8)}-01`;
    (globalThis as Record<symbol, unknown>)[key] = {
      context: { active: () => ({}) },
      propagation: { inject: (_ctx: unknown, carrier: Record<string, string>, setter: { set(c: Record<string, string>, k: string, v: string): void }) => setter.set(carrier, "traceparent", traceparent) },
    };
    try {
      const http = createHttpClient("http://queue.test/", TOKEN, { fetch: (input, init) => (exports as unknown as { default: Fetcher }).default.fetch(input as string, init) });
      const { job } = await http.enqueue({ type: "demo.echo", payload: {} });
      expect(job!.trace).toEqual({ traceparent });
      const own = `00-${hex(16)}-${hex(8)}-00`;
      expect((await http.enqueue({ type: "demo.echo", payload: {}, trace: { traceparent: own } })).job!.trace).toEqual({ traceparent: own });
    } finally {
      delete (globalThis as Record<symbol, unknown>)[key];
    }
  });
});
