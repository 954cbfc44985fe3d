/**
 * Stand-ins for the queue, for unit tests of the pull worker's own seams:
 * fakeQueueApi is its HTTP API behind a fetch — it leases what was put in,
 * answers heartbeats as the test says, and keeps every request (time is
 * Date.now, vitest's fake clock when faked, shifted by `clockOffsetMs`: the
 * queue's clock need not be the worker's); fakeCall is one module's `Call`.
 */
import type { LeasedJob } from "../../../src/job/schemas";
import { ApiError } from "../../../src/pull-worker/answers";
import type { Call, CallOptions } from "../../../src/pull-worker/api";

export interface Sent {
  method: string;
  path: string;
  body: Record<string, unknown>;
  at: number;
}

/** leasedJob: a job as a claim answers it (only what the worker reads is meaningful). */
export function leasedJob(id: string, type: string, startedAt: number, leaseMs: number, more: Partial<LeasedJob> = {}): LeasedJob {
  return {
    id,
    type,
    payload: {},
    attempts: 1,
    maxAttempts: 3,
    scope: null,
    runAt: startedAt,
    scheduledFor: null,
    tags: [],
    startedAt,
    leaseToken: `token-${id}`,
    leaseExpiresAt: startedAt + leaseMs,
    ...more,
  } as unknown as LeasedJob;
}

export function fakeQueueApi(options: { types?: string[]; clockOffsetMs?: number } = {}) {
  const offset = options.clockOffsetMs ?? 0;
  const queueNow = () => Date.now() + offset;
  const sent: Sent[] = [];
  const due: { id: string; type: string }[] = [];
  const leases = new Map<string, number>();
  const state = {
    /** How a heartbeat is answered: confirmed, refused (lease_lost), or never reaching the queue. */
    heartbeats: "ok" as "ok" | "lease_lost" | "unreachable",
  };
  const json = (body: unknown, status = 200) => new Response(JSON.stringify(body), { status, headers: { "content-type": "application/json" } });
  const fetch = (async (input: string | URL | Request, init?: RequestInit) => {
    const path = new URL(String(input)).pathname;
    const method = init?.method ?? "GET";
    const body = init?.body ? (JSON.parse(String(init.body)) as Record<string, unknown>) : {};
    sent.push({ method, path, body, at: Date.now() });
    if (method === "GET" && path === "/v1/types") return json({ items: (options.types ?? []).map((type) => ({ type })) });
    if (path === "/v1/claim") {
      const leaseMs = body.leaseMs as number;
      const jobs = due.splice(0, body.limit as number).map((j) => leasedJob(j.id, j.type, queueNow(), leaseMs));
      for (const j of jobs) leases.set(j.id, leaseMs);
      const completed = Array.isArray(body.complete) ? body.complete.map((c: { id: string }) => ({ id: c.id, ok: true })) : undefined;
      return json({ jobs, ...(completed ? { completed } : {}) });
    }
    if (path === "/v1/jobs/complete") return json({ results: (body.items as { id: string }[]).map((c) => ({ id: c.id, ok: true })) });
    const heartbeat = /^\/v1\/jobs\/([^/]+)\/heartbeat$/.exec(path);
    if (heartbeat) {
      if (state.heartbeats === "unreachable") throw new TypeError("fetch failed (injected: the queue is unreachable)");
      if (state.heartbeats === "lease_lost") return json({ error: { code: "lease_lost", message: "the lease is gone" } }, 409);
      return json({ leaseExpiresAt: queueNow() + (leases.get(decodeURIComponent(heartbeat[1]!)) ?? 30_000) });
    }
    return json({ ok: true });
  }) as typeof globalThis.fetch;
  return {
    fetch,
    sent,
    state,
    /** Makes a job due: the next claim leases it. */
    put(id: string, type: string) {
      due.push({ id, type });
    },
    /** The POSTs about job `id` after the claim (heartbeats excepted): what the worker wrote for it. */
    writesFor(id: string) {
      return sent.filter((s) => s.method === "POST" && !s.path.endsWith("/heartbeat") && (s.path.includes(`/v1/jobs/${id}/`) || JSON.stringify(s.body.items ?? s.body.complete ?? []).includes(`"${id}"`)));
    },
  };
}

/** One call a module made through its `Call` (pull-worker/api.ts). */
export interface CallMade {
  method: string;
  path: string;
  body: Record<string, unknown> | undefined;
  options: CallOptions | undefined;
}

/** fakeCall: a `Call` that keeps what it was asked and answers with `answer` (throw to refuse). */
export function fakeCall(answer: (c: CallMade) => unknown = () => ({})) {
  const calls: CallMade[] = [];
  const call: Call = async <T>(method: string, path: string, body?: unknown, options?: CallOptions) => {
    const c = { method, path, body: body as Record<string, unknown> | undefined, options };
    calls.push(c);
    return (await answer(c)) as T;
  };
  return { call, calls };
}

/** refusal: the queue's error answer, as the worker's calls throw it. */
export const refusal = (code: string, message = code, status = 409, details?: unknown) => new ApiError(status, code, message, details);
