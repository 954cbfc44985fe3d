/**
 * createHttpClient: the same typed client over the HTTP API, for Node,
 * browsers and anything outside Cloudflare.
 *
 * @example
 * const queue = createHttpClient("https://edgequeue.example.workers.dev", process.env.QUEUE_TOKEN!);
 * await queue.enqueue({ type: "email.send", payload: { to: "a@b.c" } });
 *
 * @module
 */
import { QueueClientError } from "./errors";
import type { QueueClient } from "./rpc-client";
import type { LeasedJob } from "../job/schemas";
import { runClaimed, type LeaseOps } from "./run-claimed";

export interface HttpClientOptions {
  /** A fetch to use instead of the global one (tests, proxies, service bindings). */
  fetch?: (input: string, init: RequestInit) => Promise<Response>;
}

export function createHttpClient(baseUrl: string, token: string, options: HttpClientOptions = {}): QueueClient {
  const doFetch = options.fetch ?? ((input: string, init: RequestInit) => fetch(input, init));
  const root = baseUrl.replace(/\/+$/, "");

  async function call<T>(method: string, path: string, body?: unknown): Promise<T> {
    const res = await doFetch(`${root}${path}`, {
      method,
      headers: { authorization: `Bearer ${token}`, ...(body === undefined ? {} : { "content-type": "application/json" }) },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    const text = await res.text();
    let parsed: unknown = null;
    try {
      parsed = text ? JSON.parse(text) : null;
    } catch {
      throw new QueueClientError("internal", `the queue answered ${res.status} with a body that is not JSON`, undefined, res.status);
    }
    if (!res.ok) {
      const e = (parsed as { error?: { code: string; message: string; details?: unknown } })?.error;
      throw new QueueClientError(e?.code ?? "internal", e?.message ?? `HTTP ${res.status}`, e?.details, res.status);
    }
    return parsed as T;
  }

  const q = (query: Record<string, unknown>) => {
    const params = new URLSearchParams();
    for (const [k, v] of Object.entries(query)) if (v !== undefined) params.set(k, String(v));
    const s = params.toString();
    return s ? `?${s}` : "";
  };
  const job = (id: string) => `/v1/jobs/${encodeURIComponent(id)}`;
  const leaseOps: LeaseOps = {
    heartbeat: (id, leaseToken) => call("POST", `${job(id)}/heartbeat`, { leaseToken }),
    complete: (id, leaseToken, result) => call("POST", `${job(id)}/complete`, { leaseToken, ...(result ? { result } : {}) }),
    fail: (id, leaseToken, error) => call("POST", `${job(id)}/fail`, { leaseToken, error: error.slice(0, 4000) || "error" }),
    claimKey: async (req) => (await call<{ leased: LeasedJob | null }>("POST", "/v1/jobs/claim-key", req)).leased,
  };

  return {
    enqueue: (input) => call("POST", "/v1/jobs", input),
    enqueueMany: async (inputs) => (await call<{ results: never[] }>("POST", "/v1/jobs/batch", { jobs: inputs })).results,
    get: async (id) => (await call<{ job: never }>("GET", job(id))).job,
    cancel: async (id, reason) => (await call<{ job: never }>("POST", `${job(id)}/cancel`, reason === undefined ? {} : { reason })).job,
    list: (query = {}) => call("GET", `/v1/jobs${q({ ...query })}`),
    stats: (type) => call("GET", `/v1/stats${q({ type })}`),
    metrics: (query = {}) => call("GET", `/v1/metrics${q({ ...query })}`),
    retryFailed: (filter = {}) => call("POST", "/v1/retry", filter),
    claimOrEnqueue: async (input, o = {}) =>
      (await call<{ leased: LeasedJob | null }>("POST", "/v1/jobs/claim-or-enqueue", { job: input, worker: o.worker ?? "inline", ...(o.leaseMs ? { leaseMs: o.leaseMs } : {}) })).leased,
    runClaimed: (handle, fn, o) => runClaimed(leaseOps, handle, fn, o),
  };
}
